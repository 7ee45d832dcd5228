// Package domaintest runs local RDAP and DNS servers on 127.0.0.1 for tests of domain facts, so no test
// touches the internet. The RDAP server answers with real registry answers recorded in testdata (see
// PROVENANCE.md there); the DNS server answers from a small zone the test describes.
package domaintest

import (
	"embed"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/miekg/dns"
)

//go:embed testdata/*.json
var answers embed.FS

// Names with special behaviour on the RDAP server. Every other name without a recorded answer gets the
// real CentralNic 404 "Object not found" answer.
const (
	RDAPErrorDomain   = "rdap-error.com"   // 503 Service Unavailable
	RDAPHangDomain    = "rdap-hang.com"    // never answers; the client's timeout must end the request
	RDAPGarbageDomain = "rdap-garbage.com" // 200 with a body that is not JSON
)

// recorded maps a domain to its recorded answer.
var recorded = map[string]string{
	"example.com": "testdata/verisign-com-domain-example.com.json",
	"google.com":  "testdata/verisign-com-domain-google.com.json",
	"example.cz":  "testdata/cznic-domain-example.cz.json",
}

// RDAPServer is an RDAP server on 127.0.0.1 serving {URL}/domain/{name}.
type RDAPServer struct {
	*httptest.Server

	mu       sync.Mutex
	requests map[string]int
}

// NewRDAPServer starts an RDAP server that stops when the test ends. Its base URL is URL + "/".
func NewRDAPServer(t testing.TB) *RDAPServer {
	t.Helper()
	s := &RDAPServer{requests: make(map[string]int)}
	s.Server = httptest.NewServer(http.HandlerFunc(s.serve))
	t.Cleanup(s.Close)
	return s
}

// Requests reports how many requests asked for name.
func (s *RDAPServer) Requests(name string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.requests[name]
}

func (s *RDAPServer) serve(w http.ResponseWriter, r *http.Request) {
	name, ok := strings.CutPrefix(r.URL.Path, "/domain/")
	if !ok {
		http.NotFound(w, r)
		return
	}
	name = strings.ToLower(name)
	s.mu.Lock()
	s.requests[name]++
	s.mu.Unlock()

	switch name {
	case RDAPErrorDomain:
		http.Error(w, "registry busy", http.StatusServiceUnavailable)
		return
	case RDAPHangDomain:
		<-r.Context().Done()
		return
	case RDAPGarbageDomain:
		w.Header().Set("Content-Type", "application/rdap+json")
		w.Write([]byte("<html>maintenance</html>"))
		return
	}
	file, ok := recorded[name]
	status := http.StatusOK
	if !ok {
		file, status = "testdata/centralnic-design-domain-notfound-404.json", http.StatusNotFound
	}
	body, err := answers.ReadFile(file)
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "application/rdap+json")
	w.WriteHeader(status)
	w.Write(body)
}

// Record is how the DNS server answers one name.
type Record struct {
	Rcode int      // dns.RcodeSuccess (default), dns.RcodeNameError, dns.RcodeServerFailure, ...
	A     []string // IPv4 addresses
	MX    []string // exchanges; "." is a null MX (RFC 7505)
	Drop  bool     // never answer, so the client times out
	// Truncate answers UDP queries with the TC bit and no records, so the client must ask again over TCP.
	Truncate bool
}

// DNSServer is a DNS server on 127.0.0.1 (UDP, random port).
type DNSServer struct {
	Addr string // host:port

	mu      sync.Mutex
	zone    map[string]Record
	queries int
}

// NewDNSServer starts a DNS server that answers from zone (keys: lower-case names without the trailing
// dot) and NXDOMAIN for any other name, over UDP and TCP on the same port. It stops when the test ends.
func NewDNSServer(t testing.TB, zone map[string]Record) *DNSServer {
	t.Helper()
	pc, ln := listenUDPAndTCP(t)
	s := &DNSServer{Addr: pc.LocalAddr().String(), zone: zone}
	for _, srv := range []*dns.Server{
		{PacketConn: pc, Handler: dns.HandlerFunc(s.serve)},
		{Listener: ln, Handler: dns.HandlerFunc(s.serve)},
	} {
		started := make(chan struct{})
		srv.NotifyStartedFunc = func() { close(started) }
		go srv.ActivateAndServe()
		<-started
		t.Cleanup(func() { srv.Shutdown() })
	}
	return s
}

// listenUDPAndTCP finds a random port free for both UDP and TCP on 127.0.0.1.
func listenUDPAndTCP(t testing.TB) (net.PacketConn, net.Listener) {
	for range 20 {
		pc, err := net.ListenPacket("udp", "127.0.0.1:0")
		if err != nil {
			t.Fatalf("domaintest: listen udp: %v", err)
		}
		ln, err := net.Listen("tcp", pc.LocalAddr().String())
		if err == nil {
			return pc, ln
		}
		pc.Close()
	}
	t.Fatal("domaintest: no port free for both UDP and TCP")
	return nil, nil
}

// Queries reports how many queries the server has received.
func (s *DNSServer) Queries() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.queries
}

func (s *DNSServer) serve(w dns.ResponseWriter, q *dns.Msg) {
	s.mu.Lock()
	s.queries++
	s.mu.Unlock()
	if len(q.Question) != 1 {
		return
	}
	qn := q.Question[0]
	rec, ok := s.zone[strings.ToLower(strings.TrimSuffix(qn.Name, "."))]
	if rec.Drop {
		return
	}
	m := new(dns.Msg)
	m.SetReply(q)
	m.RecursionAvailable = true
	if !ok {
		m.Rcode = dns.RcodeNameError
		w.WriteMsg(m)
		return
	}
	m.Rcode = rec.Rcode
	if rec.Truncate && w.LocalAddr().Network() == "udp" {
		m.Truncated = true
		w.WriteMsg(m)
		return
	}
	hdr := func(t uint16) dns.RR_Header {
		return dns.RR_Header{Name: qn.Name, Rrtype: t, Class: dns.ClassINET, Ttl: 300}
	}
	if rec.Rcode == dns.RcodeSuccess {
		switch qn.Qtype {
		case dns.TypeA:
			for _, a := range rec.A {
				m.Answer = append(m.Answer, &dns.A{Hdr: hdr(dns.TypeA), A: net.ParseIP(a)})
			}
		case dns.TypeMX:
			for _, mx := range rec.MX {
				m.Answer = append(m.Answer, &dns.MX{Hdr: hdr(dns.TypeMX), Mx: dns.Fqdn(mx)})
			}
		}
	}
	w.WriteMsg(m)
}

// DefaultZone is a zone for the domains the RDAP server knows, with their real shapes: example.com has
// A records and a null MX, google.com has A and MX records, example.cz has A and MX records.
func DefaultZone() map[string]Record {
	return map[string]Record{
		"example.com":            {A: []string{"93.184.215.14"}, MX: []string{"."}},
		"www.example.com":        {A: []string{"93.184.215.14"}},
		"google.com":             {A: []string{"142.250.185.78"}, MX: []string{"smtp.google.com"}},
		"example.cz":             {A: []string{"217.31.205.50"}, MX: []string{"mail.example.cz"}},
		"xn--bcher-kva.de":       {A: []string{"192.0.2.10"}},
		"noa.example.com":        {},
		RDAPErrorDomain:          {A: []string{"192.0.2.1"}},
		RDAPHangDomain:           {A: []string{"192.0.2.2"}},
		RDAPGarbageDomain:        {A: []string{"192.0.2.3"}},
		"servfail.example.com":   {Rcode: dns.RcodeServerFailure},
		"refused.example.com":    {Rcode: dns.RcodeRefused},
		"dnstimeout.example.com": {Drop: true},
		"big.example.com":        {A: []string{"192.0.2.20", "192.0.2.21"}, Truncate: true},
	}
}

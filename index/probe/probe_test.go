package probe

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"

	"github.com/payguard/payguard/index"
	"github.com/payguard/payguard/store"
	"github.com/payguard/payguard/store/memory"
	"github.com/payguard/payguard/x402"
)

var loopback = []netip.Prefix{netip.MustParsePrefix("127.0.0.1/32")}

func TestGuardRefusesNonPublicAddresses(t *testing.T) {
	var g Guard
	for _, a := range []string{"127.0.0.1", "127.8.9.10", "10.1.2.3", "172.16.0.1", "192.168.1.1", "169.254.169.254",
		"100.64.0.1", "0.0.0.0", "::1", "::", "fe80::1", "fd00:ec2::254", "::ffff:127.0.0.1", "::ffff:169.254.169.254",
		"64:ff9b::a9fe:a9fe", "2002:7f00:1::", "224.0.0.1", "255.255.255.255", "198.18.0.1"} {
		if g.Permitted(netip.MustParseAddr(a)) {
			t.Errorf("%s permitted", a)
		}
	}
	for _, a := range []string{"8.8.8.8", "1.1.1.1", "2606:4700:4700::1111"} {
		if !g.Permitted(netip.MustParseAddr(a)) {
			t.Errorf("%s refused", a)
		}
	}
	g.Allow = loopback
	if !g.Permitted(netip.MustParseAddr("127.0.0.1")) || g.Permitted(netip.MustParseAddr("127.0.0.2")) || g.Permitted(netip.MustParseAddr("10.0.0.1")) {
		t.Fatal("an allowed prefix must lift the guard for itself only")
	}
}

// sellerServer answers 402 with a v2 challenge on addr ("127.0.0.1:0" or another loopback address).
func sellerServer(t *testing.T, addr string, hits *atomic.Int64, h http.HandlerFunc) *httptest.Server {
	t.Helper()
	if h == nil {
		h = func(w http.ResponseWriter, r *http.Request) {
			pr := &x402.PaymentRequired{X402Version: 2, Resource: &x402.ResourceInfo{URL: "http://" + r.Host + r.URL.Path},
				Accepts: []x402.Requirement{{Scheme: "exact", Network: "eip155:8453", Amount: "10000",
					Asset: "0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913", PayTo: "0x1111111111111111111111111111111111111111", MaxTimeoutSeconds: 60}}}
			v, _ := x402.EncodeHeaderJSON(pr)
			w.Header().Set(x402.HeaderPaymentRequired, v)
			w.WriteHeader(http.StatusPaymentRequired)
			w.Write([]byte("{}"))
		}
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		t.Skipf("cannot listen on %s: %v", addr, err)
	}
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		if r.Header.Get("X-PAYMENT") != "" || r.Header.Get("PAYMENT-SIGNATURE") != "" {
			t.Error("a probe carried a payment")
		}
		h(w, r)
	}))
	srv.Listener.Close()
	srv.Listener = ln
	srv.Start()
	t.Cleanup(srv.Close)
	return srv
}

func newProber(allow []netip.Prefix) *Prober {
	return New(Options{Guard: Guard{Allow: allow}, Timeout: 2 * time.Second, MaxBodyBytes: 4096})
}

// Local servers are loopback: refused by default (and never contacted), probed only when loopback is
// explicitly allowed.
func TestProbeRefusesLoopbackUnlessAllowed(t *testing.T) {
	var hits atomic.Int64
	srv := sellerServer(t, "127.0.0.1:0", &hits, nil)
	guarded := newProber(nil)
	o, ok := guarded.Probe(context.Background(), srv.URL+"/weather")
	if ok || o.Usable || !strings.Contains(o.Error, "not public") || hits.Load() != 0 {
		t.Fatalf("default guard: %+v, %d hits", o, hits.Load())
	}
	if got := probes(t, guarded, "refused"); got != 1 {
		t.Fatalf("payguard_index_probes_total{result=refused} = %v, want 1", got)
	}
	allowed := newProber(loopback)
	o, _ = allowed.Probe(context.Background(), srv.URL+"/weather")
	if !o.Usable || o.Source != store.SourceProbe || len(o.Offers) != 1 || o.Status != 402 || hits.Load() != 1 {
		t.Fatalf("loopback allowed: %+v", o)
	}
	if probes(t, allowed, "usable") != 1 || probes(t, allowed, "refused") != 0 {
		t.Fatal("payguard_index_probes_total: want one usable probe, none refused")
	}
}

// A redirect from an allowed host to a forbidden address is refused at the dial: the forbidden server is
// never contacted. That includes the cloud metadata address.
func TestProbeRefusesRedirectsToForbiddenAddresses(t *testing.T) {
	var innerHits, outerHits atomic.Int64
	inner := sellerServer(t, "127.0.0.2:0", &innerHits, nil)
	for _, to := range []string{inner.URL + "/weather", "http://169.254.169.254/latest/meta-data/", "http://[::1]:1/x", "file:///etc/passwd"} {
		outer := sellerServer(t, "127.0.0.1:0", &outerHits, func(w http.ResponseWriter, r *http.Request) {
			http.Redirect(w, r, to, http.StatusFound)
		})
		o, _ := newProber(loopback).Probe(context.Background(), outer.URL+"/go")
		if o.Usable || o.Error == "" {
			t.Fatalf("redirect to %s: %+v", to, o)
		}
	}
	if innerHits.Load() != 0 {
		t.Fatalf("the forbidden server was contacted %d times", innerHits.Load())
	}
}

func TestProbeBoundsSizeAndTime(t *testing.T) {
	var hits atomic.Int64
	big := sellerServer(t, "127.0.0.1:0", &hits, func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusPaymentRequired)
		w.Write([]byte(strings.Repeat("x", 10000)))
	})
	o, _ := newProber(loopback).Probe(context.Background(), big.URL)
	if o.Usable || !strings.Contains(o.Error, "larger than 4096") {
		t.Fatalf("oversized body: %+v", o)
	}
	release := make(chan struct{})
	defer close(release)
	slow := sellerServer(t, "127.0.0.1:0", &hits, func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-release:
		case <-r.Context().Done():
		}
	})
	p := New(Options{Guard: Guard{Allow: loopback}, Timeout: 100 * time.Millisecond})
	if o, _ := p.Probe(context.Background(), slow.URL); o.Usable || o.Error == "" {
		t.Fatalf("a seller that never answers: %+v", o)
	}
}

// The prober reads a facilitator's discovery list (the official shape) and probes its http resources; three
// failed rounds are what require_live needs, and they reach the store as observations like any other.
func TestDiscoveryAndFailedRounds(t *testing.T) {
	var hits atomic.Int64
	seller := sellerServer(t, "127.0.0.1:0", &hits, nil)
	down := sellerServer(t, "127.0.0.1:0", &hits, func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "down", http.StatusBadGateway)
	})
	list := sellerServer(t, "127.0.0.1:0", &hits, func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintf(w, `{"x402Version":1,"items":[
			{"resource":%q,"type":"http","x402Version":2,"accepts":[],"lastUpdated":"2026-11-20T00:00:00Z","metadata":{"category":"weather"}},
			{"resource":%q,"type":"http","x402Version":1,"accepts":[],"lastUpdated":"2026-11-20T00:00:00Z"},
			{"resource":"mcp://tool/x","type":"mcp","x402Version":2,"accepts":[]}],
			"pagination":{"limit":100,"offset":0,"total":3}}`, seller.URL+"/weather", down.URL+"/gone")
	})
	st := memory.New()
	w := index.NewWriter(st, index.WriterOptions{})
	p := New(Options{Guard: Guard{Allow: loopback}, Timeout: 2 * time.Second, DiscoveryURLs: []string{list.URL + "/discovery/resources"},
		Observer: w})
	for i := 0; i < 3; i++ {
		if got := p.Round(context.Background()); len(got) != 2 {
			t.Fatalf("round %d probed %d endpoints, want 2: %+v", i, len(got), got)
		}
	}
	w.Close()
	gone, _ := index.NormalizeURL(down.URL + "/gone")
	obs, _ := st.Observations(context.Background(), gone)
	s := index.Derive(gone, obs, "GET", time.Now(), 0)
	if s.ConsecutiveFailedProbes != 3 || s.Live == nil || *s.Live || !strings.Contains(s.LastProbeError, "status 502") {
		t.Fatalf("down endpoint: %+v", s)
	}
	up, _ := index.NormalizeURL(seller.URL + "/weather")
	obs, _ = st.Observations(context.Background(), up)
	if s := index.Derive(up, obs, "GET", time.Now(), 0); s.Live == nil || !*s.Live || len(s.PayTo) != 1 {
		t.Fatalf("live endpoint: %+v", s)
	}
}

// One request per host per PerHostInterval: two endpoints of one host are asked that far apart, and the
// next round waits too; another host is not held back by the first one's pacing.
func TestProbePacesEachHost(t *testing.T) {
	const interval = 300 * time.Millisecond
	var mu sync.Mutex
	at := map[string][]time.Time{}
	record := func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		at[r.Host] = append(at[r.Host], time.Now())
		mu.Unlock()
		http.Error(w, "no", http.StatusNotFound)
	}
	var hits atomic.Int64
	a := sellerServer(t, "127.0.0.1:0", &hits, record)
	b := sellerServer(t, "127.0.0.2:0", &hits, record)
	p := New(Options{Guard: Guard{Allow: []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")}}, Timeout: 2 * time.Second,
		PerHostInterval: interval, Endpoints: []string{a.URL + "/one", b.URL + "/x", a.URL + "/two"}})
	p.Round(context.Background())
	p.Round(context.Background())
	mu.Lock()
	defer mu.Unlock()
	ha, hb := at[strings.TrimPrefix(a.URL, "http://")], at[strings.TrimPrefix(b.URL, "http://")]
	if len(ha) != 4 || len(hb) != 2 {
		t.Fatalf("requests: %d to a, %d to b", len(ha), len(hb))
	}
	// The prober spaces the starts of its requests; their arrival here varies by a little (slack).
	for i := 1; i < len(ha); i++ {
		if gap := ha[i].Sub(ha[i-1]); gap < interval*3/4 {
			t.Errorf("host a asked again after %v (< %v)", gap, interval)
		}
	}
	if gap := hb[0].Sub(ha[0]); gap >= interval*3/4 {
		t.Errorf("host b waited %v behind host a's pacing", gap)
	}
}

// probes reads payguard_index_probes_total{result}.
func probes(t *testing.T, p *Prober, result string) float64 {
	t.Helper()
	var d dto.Metric
	if err := p.probes.WithLabelValues(result).Write(&d); err != nil {
		t.Fatal(err)
	}
	return d.GetCounter().GetValue()
}

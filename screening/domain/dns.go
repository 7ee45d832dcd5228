package domain

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strings"
	"time"

	"github.com/miekg/dns"
)

// dnsAnswer is what one DNS query established.
type dnsAnswer struct {
	has *bool  // nil when the lookup failed: a failure is not "no records"
	err string // why has is nil
	// definite is true when records were found (cached with the positive TTL). NXDOMAIN, "no records"
	// and failures are cached with the negative TTL.
	definite bool
}

// dnsClient asks one recursive resolver directly with miekg/dns rather than through net.Resolver: the
// answer's RCODE is then read exactly (NXDOMAIN and NOERROR-without-records are "no records", SERVFAIL,
// REFUSED and timeouts are failures), and neither /etc/hosts nor resolv.conf search suffixes can change
// what a public name resolves to.
type dnsClient struct {
	server string // host:port; empty when no resolver could be found
}

// systemResolver returns the first nameserver of /etc/resolv.conf, or "" when there is none.
func systemResolver() string {
	conf, err := dns.ClientConfigFromFile("/etc/resolv.conf")
	if err != nil || len(conf.Servers) == 0 {
		return ""
	}
	return net.JoinHostPort(conf.Servers[0], conf.Port)
}

// lookup asks for records of qtype (dns.TypeA or dns.TypeMX) at name. ctx carries the lookup's deadline.
func (c *dnsClient) lookup(ctx context.Context, name string, qtype uint16) dnsAnswer {
	what := dns.TypeToString[qtype] + " lookup for " + name
	if c.server == "" {
		return dnsAnswer{err: what + ": no DNS resolver configured"}
	}
	q := new(dns.Msg)
	q.SetQuestion(dns.Fqdn(name), qtype)
	q.RecursionDesired = true
	q.SetEdns0(1232, false)

	timeout := time.Second
	if d, ok := ctx.Deadline(); ok {
		timeout = time.Until(d)
	}
	r, _, err := (&dns.Client{Net: "udp", Timeout: timeout}).ExchangeContext(ctx, q, c.server)
	if err == nil && r.Truncated {
		r, _, err = (&dns.Client{Net: "tcp", Timeout: timeout}).ExchangeContext(ctx, q, c.server)
	}
	if err != nil {
		var ne net.Error
		if errors.Is(err, context.DeadlineExceeded) || (errors.As(err, &ne) && ne.Timeout()) {
			return dnsAnswer{err: what + ": timed out"}
		}
		return dnsAnswer{err: fmt.Sprintf("%s: %v", what, err)}
	}
	if len(r.Question) != 1 || !strings.EqualFold(r.Question[0].Name, q.Question[0].Name) || r.Question[0].Qtype != qtype {
		return dnsAnswer{err: what + ": the answer is for a different question"}
	}
	switch r.Rcode {
	case dns.RcodeNameError:
		return dnsAnswer{has: ptr(false)}
	case dns.RcodeSuccess:
	default:
		return dnsAnswer{err: fmt.Sprintf("%s: server answered %s", what, dns.RcodeToString[r.Rcode])}
	}
	found := false
	for _, rr := range r.Answer {
		switch rr := rr.(type) {
		case *dns.A:
			found = found || qtype == dns.TypeA
		case *dns.MX:
			// A null MX (RFC 7505: preference 0, exchange ".") says the domain accepts no mail.
			found = found || (qtype == dns.TypeMX && rr.Mx != ".")
		}
	}
	return dnsAnswer{has: ptr(found), definite: found}
}

func ptr[T any](v T) *T { return &v }

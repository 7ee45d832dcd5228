// Package domain gathers a merchant domain's facts for payguard's screening: whether it reads as a public
// domain, its registration age from RDAP (IANA bootstrap, or a configured RDAP server) and whether DNS has
// A and MX records. It implements screening.Domains.
//
// Nothing is invented: an age that could not be read is unknown with the reason in AgeError, and a DNS
// lookup that failed (SERVFAIL, timeout) leaves HasA nil with the reason in DNSError, which is not the same
// as a name without A records (HasA false).
package domain

import (
	"context"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/miekg/dns"

	"github.com/payguard/payguard/internal/egress"
	"github.com/payguard/payguard/screening"
)

// Options configures a Checker. Zero values take the documented defaults.
type Options struct {
	// Offline turns every network lookup off (air-gapped sites, tests): facts then carry the normalized
	// domain and its validity, with age and DNS unknown.
	Offline bool
	// RDAPBaseURL, when set, sends every RDAP query to this server ({base}domain/{name}) instead of the
	// registry the IANA bootstrap names: for private deployments and tests. It may be http.
	RDAPBaseURL string
	// BootstrapURL is where RefreshBootstrap fetches the IANA DNS bootstrap file. Default
	// DefaultBootstrapURL.
	BootstrapURL string
	// BootstrapRefresh is Run's refresh interval. Default 24h.
	BootstrapRefresh time.Duration
	// Resolver is the recursive DNS resolver, host:port. Default: the first nameserver in
	// /etc/resolv.conf.
	Resolver string
	// RDAPTimeout bounds one RDAP lookup. Default 2s.
	RDAPTimeout time.Duration
	// DNSTimeout bounds one DNS query (UDP, plus TCP when truncated). Default 1s.
	DNSTimeout time.Duration
	// PositiveTTL keeps answers that found something (a registration date, A or MX records). Default 6h.
	PositiveTTL time.Duration
	// NegativeTTL keeps everything else: not registered, NXDOMAIN, no records, failures. Short, so a
	// fresh registration or a recovered server is seen soon; long enough to spare a rate-limited RDAP
	// server a burst of repeats. Default 1m.
	NegativeTTL time.Duration
	// CacheSize bounds each of the two caches (RDAP by registrable domain, DNS by name and type).
	// Default 10000 entries.
	CacheSize int
	// Transport carries the RDAP and bootstrap requests. Default: egress.Transport() (never through payguard itself).
	Transport http.RoundTripper
	// Now is the clock for ages and cache expiry. Default time.Now.
	Now func() time.Time
}

func (o *Options) setDefaults() {
	if o.BootstrapURL == "" {
		o.BootstrapURL = DefaultBootstrapURL
	}
	if o.BootstrapRefresh <= 0 {
		o.BootstrapRefresh = 24 * time.Hour
	}
	if o.Resolver == "" && !o.Offline {
		o.Resolver = systemResolver()
	}
	if o.RDAPTimeout <= 0 {
		o.RDAPTimeout = 2 * time.Second
	}
	if o.DNSTimeout <= 0 {
		o.DNSTimeout = time.Second
	}
	if o.PositiveTTL <= 0 {
		o.PositiveTTL = 6 * time.Hour
	}
	if o.NegativeTTL <= 0 {
		o.NegativeTTL = time.Minute
	}
	if o.CacheSize <= 0 {
		o.CacheSize = 10000
	}
	if o.Transport == nil {
		o.Transport = egress.Transport()
	}
	if o.Now == nil {
		o.Now = time.Now
	}
}

// Checker gathers domain facts. It is safe for concurrent use.
type Checker struct {
	opts      Options
	bootstrap atomic.Pointer[bootstrap]
	rdap      *rdapClient
	dns       *dnsClient
	ages      *cache[registration]
	records   *cache[dnsAnswer]
}

var _ screening.Domains = (*Checker)(nil)

// New returns a Checker. It makes no network request: the embedded IANA bootstrap is used until
// RefreshBootstrap or Run replaces it.
func New(opts Options) *Checker {
	opts.setDefaults()
	c := &Checker{
		opts:    opts,
		rdap:    newRDAPClient(opts.Transport),
		dns:     &dnsClient{server: opts.Resolver},
		ages:    newCache[registration](opts.CacheSize, opts.Now),
		records: newCache[dnsAnswer](opts.CacheSize, opts.Now),
	}
	c.bootstrap.Store(mustEmbeddedBootstrap())
	return c
}

// Facts normalizes domain (a domain or a URL) and gathers its registration age and DNS records. The RDAP
// and DNS lookups run concurrently, each bounded by its own timeout and by ctx.
func (c *Checker) Facts(ctx context.Context, domain string) screening.DomainFacts {
	n, err := normalizeMemo(domain)
	if err != nil {
		return screening.DomainFacts{
			Domain:   displayInput(domain),
			AgeError: "invalid domain: " + err.Error(),
			DNSError: "invalid domain: not looked up",
		}
	}
	f := screening.DomainFacts{Domain: n.Host, RegistrableDomain: n.Registrable, Valid: true}
	if c.opts.Offline {
		f.AgeError = "domain lookups are disabled (offline)"
		f.DNSError = "domain lookups are disabled (offline)"
		return f
	}

	var (
		reg   registration
		a, mx dnsAnswer
		now   = c.opts.Now()
		jobs  []func()
	)
	// Cached answers are read here; only the misses are looked up, concurrently. A lookup writes its answer
	// through a pointer of its own, made only for a miss: answers the jobs wrote to directly would be on the
	// heap for every call, hits too.
	var regOut *registration
	var aOut, mxOut *dnsAnswer
	if n.SharedSuffix != "" {
		reg = sharedSuffixRegistration(n)
	} else if r, ok := c.ages.peek(n.Registrable); ok {
		reg = r
	} else {
		out := new(registration)
		regOut = out
		jobs = append(jobs, func() { *out = c.registration(ctx, n) })
	}
	if r, ok := c.records.peek(recordKey(n.Host, dns.TypeA)); ok {
		a = r
	} else {
		out := new(dnsAnswer)
		aOut = out
		jobs = append(jobs, func() { *out = c.lookup(ctx, n.Host, dns.TypeA) })
	}
	if r, ok := c.records.peek(recordKey(n.Registrable, dns.TypeMX)); ok {
		mx = r
	} else {
		out := new(dnsAnswer)
		mxOut = out
		jobs = append(jobs, func() { *out = c.lookup(ctx, n.Registrable, dns.TypeMX) })
	}
	runConcurrently(jobs)
	if regOut != nil {
		reg = *regOut
	}
	if aOut != nil {
		a = *aOut
	}
	if mxOut != nil {
		mx = *mxOut
	}

	switch {
	case reg.at.IsZero():
		f.AgeError = reg.reason
	case reg.at.After(now):
		f.AgeError = "RDAP registration date " + reg.at.Format(time.RFC3339) + " is in the future"
	default:
		age := &struct { // the two facts in one allocation
			at   time.Time
			days int
		}{reg.at, int(now.Sub(reg.at) / (24 * time.Hour))}
		f.RegisteredAt, f.AgeDays = &age.at, &age.days
	}
	f.HasA, f.HasMX = a.has, mx.has
	var errs []string
	for _, e := range []string{a.err, mx.err} {
		if e != "" {
			errs = append(errs, e)
		}
	}
	f.DNSError = strings.Join(errs, "; ")
	return f
}

// registration returns the registrable domain's RDAP registration date, from the cache when fresh.
func (c *Checker) registration(ctx context.Context, n Name) registration {
	if n.SharedSuffix != "" {
		return sharedSuffixRegistration(n)
	}
	base := c.opts.RDAPBaseURL
	if base == "" {
		urls := c.bootstrap.Load().lookup(n.Registrable)
		if len(urls) == 0 {
			return registration{reason: "no RDAP service over https for ." + tldOf(n.Registrable) + " in the IANA bootstrap"}
		}
		base = urls[0]
	}
	reg, err := c.ages.get(ctx, n.Registrable, func(ctx context.Context) (registration, time.Duration) {
		ctx, cancel := context.WithTimeout(ctx, c.opts.RDAPTimeout)
		defer cancel()
		r := c.rdap.registration(ctx, base, n.Registrable)
		if r.definite {
			return r, c.opts.PositiveTTL
		}
		return r, c.opts.NegativeTTL
	})
	if err != nil {
		return registration{reason: "RDAP lookup abandoned: " + err.Error()}
	}
	return reg
}

// lookup returns one DNS answer, from the cache when fresh.
func (c *Checker) lookup(ctx context.Context, name string, qtype uint16) dnsAnswer {
	ans, err := c.records.get(ctx, recordKey(name, qtype), func(ctx context.Context) (dnsAnswer, time.Duration) {
		ctx, cancel := context.WithTimeout(ctx, c.opts.DNSTimeout)
		defer cancel()
		a := c.dns.lookup(ctx, name, qtype)
		if a.definite {
			return a, c.opts.PositiveTTL
		}
		return a, c.opts.NegativeTTL
	})
	if err != nil {
		return dnsAnswer{err: dns.TypeToString[qtype] + " lookup for " + name + " abandoned: " + err.Error()}
	}
	return ans
}

func sharedSuffixRegistration(n Name) registration {
	return registration{reason: "under the shared suffix " + n.SharedSuffix +
		": its registration date belongs to the suffix operator, not to this site"}
}

func recordKey(name string, qtype uint16) string { return dns.TypeToString[qtype] + " " + name }

// runConcurrently runs jobs at once and waits for all; the last runs on the calling goroutine.
func runConcurrently(jobs []func()) {
	if len(jobs) == 0 {
		return
	}
	var wg sync.WaitGroup
	for _, j := range jobs[:len(jobs)-1] {
		wg.Add(1)
		go func() { defer wg.Done(); j() }()
	}
	jobs[len(jobs)-1]()
	wg.Wait()
}

// CacheStats reports how many lookups were answered from the caches and how many went upstream.
func (c *Checker) CacheStats() (hits, fetches uint64) {
	return c.ages.hits.Load() + c.records.hits.Load(), c.ages.fetches.Load() + c.records.fetches.Load()
}

func tldOf(domain string) string {
	return domain[strings.LastIndexByte(domain, '.')+1:]
}

// displayInput is what an invalid input is reported as: valid UTF-8, trimmed and bounded, so a hostile
// input cannot bloat or corrupt the JSON answer.
func displayInput(s string) string {
	s = strings.ToValidUTF8(strings.TrimSpace(s), "\uFFFD")
	const max = 253
	if len(s) > max {
		s = strings.ToValidUTF8(s[:max], "") + "…"
	}
	return s
}

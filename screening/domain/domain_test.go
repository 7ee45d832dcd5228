package domain

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/payguard/payguard/config"
	"github.com/payguard/payguard/screening"
	"github.com/payguard/payguard/screening/domain/domaintest"
)

// testNow is the fixed clock of these tests.
var testNow = time.Date(2026, 11, 22, 0, 0, 0, 0, time.UTC)

type testEnv struct {
	rdap *domaintest.RDAPServer
	dns  *domaintest.DNSServer
	c    *Checker
}

func newTestEnv(t *testing.T, mutate func(*Options)) *testEnv { return newEnv(t, mutate) }

func newBenchEnv(b *testing.B) *testEnv { return newEnv(b, nil) }

func newEnv(t testing.TB, mutate func(*Options)) *testEnv {
	t.Helper()
	env := &testEnv{rdap: domaintest.NewRDAPServer(t), dns: domaintest.NewDNSServer(t, domaintest.DefaultZone())}
	opts := Options{
		RDAPBaseURL: env.rdap.URL + "/",
		Resolver:    env.dns.Addr,
		// Generous, so that a loaded CI machine never turns a prompt local answer into a timeout; the
		// timeout tests shorten them.
		RDAPTimeout: 5 * time.Second,
		DNSTimeout:  5 * time.Second,
		Now:         func() time.Time { return testNow },
	}
	if mutate != nil {
		mutate(&opts)
	}
	env.c = New(opts)
	return env
}

func TestFactsKnownAge(t *testing.T) {
	env := newTestEnv(t, nil)
	tests := []struct {
		in         string
		domain     string
		registered time.Time
		days       int
		hasMX      bool
	}{
		{"example.com", "example.com", time.Date(1995, 8, 14, 4, 0, 0, 0, time.UTC), 11422, false}, // null MX
		{"https://WWW.Example.com/shop", "www.example.com", time.Date(1995, 8, 14, 4, 0, 0, 0, time.UTC), 11422, false},
		{"google.com", "google.com", time.Date(1997, 9, 15, 4, 0, 0, 0, time.UTC), 10659, true},
		// CZ.NIC writes "+00:00" instead of "Z".
		{"example.cz", "example.cz", time.Date(2004, 8, 30, 22, 55, 0, 0, time.UTC), 8118, true},
	}
	for _, tt := range tests {
		f := env.c.Facts(context.Background(), tt.in)
		if !f.Valid || f.Domain != tt.domain {
			t.Errorf("%s: valid %v domain %q, want valid %q", tt.in, f.Valid, f.Domain, tt.domain)
		}
		if f.RegisteredAt == nil || !f.RegisteredAt.Equal(tt.registered) || f.AgeDays == nil || *f.AgeDays != tt.days {
			t.Errorf("%s: registered %v age %v (%s), want %v and %d days", tt.in, f.RegisteredAt, deref(f.AgeDays), f.AgeError, tt.registered, tt.days)
		}
		if f.AgeError != "" || f.DNSError != "" {
			t.Errorf("%s: unexpected errors: age %q dns %q", tt.in, f.AgeError, f.DNSError)
		}
		if f.HasA == nil || !*f.HasA {
			t.Errorf("%s: HasA = %v, want true", tt.in, f.HasA)
		}
		if f.HasMX == nil || *f.HasMX != tt.hasMX {
			t.Errorf("%s: HasMX = %v, want %v", tt.in, f.HasMX, tt.hasMX)
		}
	}
}

func TestFactsAgeUnknown(t *testing.T) {
	env := newTestEnv(t, nil)
	tests := []struct {
		in, reason string
	}{
		{"never-registered-zz9.com", "not registered (RDAP 404"},
		{domaintest.RDAPErrorDomain, "503"},
		{domaintest.RDAPGarbageDomain, "not RDAP JSON"},
		{"shop.github.io", "shared suffix github.io"},
	}
	for _, tt := range tests {
		f := env.c.Facts(context.Background(), tt.in)
		if !f.Valid {
			t.Errorf("%s: not valid", tt.in)
		}
		if f.RegisteredAt != nil || f.AgeDays != nil {
			t.Errorf("%s: age %v / %v invented", tt.in, f.RegisteredAt, deref(f.AgeDays))
		}
		if !strings.Contains(f.AgeError, tt.reason) {
			t.Errorf("%s: age error %q, want it to mention %q", tt.in, f.AgeError, tt.reason)
		}
	}
}

func TestFactsFutureRegistrationIsUnknown(t *testing.T) {
	env := newTestEnv(t, func(o *Options) { o.Now = func() time.Time { return time.Date(1990, 1, 1, 0, 0, 0, 0, time.UTC) } })
	f := env.c.Facts(context.Background(), "example.com")
	if f.AgeDays != nil || !strings.Contains(f.AgeError, "in the future") {
		t.Fatalf("age %v, error %q; want unknown because the date is in the future", deref(f.AgeDays), f.AgeError)
	}
}

func TestFactsYoungDomain(t *testing.T) {
	// Six days after example.com's real registration date, the same answer makes a six-day-old domain.
	env := newTestEnv(t, func(o *Options) { o.Now = func() time.Time { return time.Date(1995, 8, 20, 12, 0, 0, 0, time.UTC) } })
	f := env.c.Facts(context.Background(), "example.com")
	if f.AgeDays == nil || *f.AgeDays != 6 {
		t.Fatalf("age %v (%s), want 6 days", deref(f.AgeDays), f.AgeError)
	}
}

func TestFactsDNS(t *testing.T) {
	env := newTestEnv(t, nil)
	tests := []struct {
		in     string
		hasA   *bool
		dnsErr string // substring; "" = none
	}{
		{"www.example.com", ptr(true), ""},
		{"big.example.com", ptr(true), ""},        // truncated over UDP, answered over TCP
		{"noa.example.com", ptr(false), ""},       // NOERROR, no A records
		{"gone.example.com", ptr(false), ""},      // NXDOMAIN
		{"servfail.example.com", nil, "SERVFAIL"}, // failure, not "no A"
		{"refused.example.com", nil, "REFUSED"},   // failure, not "no A"
	}
	for _, tt := range tests {
		f := env.c.Facts(context.Background(), tt.in)
		if (f.HasA == nil) != (tt.hasA == nil) || (f.HasA != nil && *f.HasA != *tt.hasA) {
			t.Errorf("%s: HasA = %v, want %v (dns error %q)", tt.in, deref(f.HasA), deref(tt.hasA), f.DNSError)
		}
		if tt.dnsErr == "" && f.DNSError != "" || !strings.Contains(f.DNSError, tt.dnsErr) {
			t.Errorf("%s: DNSError %q, want %q", tt.in, f.DNSError, tt.dnsErr)
		}
		// MX is asked at the registrable domain, example.com, which has a null MX.
		if f.HasMX == nil || *f.HasMX {
			t.Errorf("%s: HasMX = %v, want false (null MX at example.com)", tt.in, deref(f.HasMX))
		}
	}
}

// TestFactsTimeouts uses short timeouts against servers that never answer. It asserts only the facts
// whose server hangs: under load the others could time out too.
func TestFactsTimeouts(t *testing.T) {
	env := newTestEnv(t, func(o *Options) { o.RDAPTimeout, o.DNSTimeout = 200*time.Millisecond, 200*time.Millisecond })
	f := env.c.Facts(context.Background(), domaintest.RDAPHangDomain)
	if f.AgeDays != nil || !strings.Contains(f.AgeError, "timed out") {
		t.Errorf("RDAP server that never answers: age %v, error %q; want unknown, timed out", deref(f.AgeDays), f.AgeError)
	}
	f = env.c.Facts(context.Background(), "dnstimeout.example.com")
	if f.HasA != nil || !strings.Contains(f.DNSError, "A lookup for dnstimeout.example.com: timed out") {
		t.Errorf("DNS server that never answers: HasA %v, error %q; want unknown, timed out", deref(f.HasA), f.DNSError)
	}
}

func TestFactsNoResolver(t *testing.T) {
	env := newTestEnv(t, nil)
	env.c.dns.server = ""
	f := env.c.Facts(context.Background(), "example.com")
	if f.HasA != nil || !strings.Contains(f.DNSError, "no DNS resolver") {
		t.Fatalf("HasA %v, DNSError %q; want unknown with the reason", deref(f.HasA), f.DNSError)
	}
}

func TestFactsInvalid(t *testing.T) {
	env := newTestEnv(t, nil)
	for _, in := range []string{"localhost", "10.0.0.1", "shop", "bad_label.example.com", "printer.local"} {
		f := env.c.Facts(context.Background(), in)
		if f.Valid || f.AgeDays != nil || f.HasA != nil || !strings.HasPrefix(f.AgeError, "invalid domain: ") {
			t.Errorf("%s: %+v, want invalid with nothing looked up", in, f)
		}
	}
	if env.rdap.Requests("localhost") != 0 || env.dns.Queries() != 0 {
		t.Errorf("invalid domains were looked up: rdap %d, dns %d", env.rdap.Requests("localhost"), env.dns.Queries())
	}
}

func TestFactsIDN(t *testing.T) {
	env := newTestEnv(t, nil)
	f := env.c.Facts(context.Background(), "https://Bücher.de/buy")
	if !f.Valid || f.Domain != "xn--bcher-kva.de" || f.RegistrableDomain != "xn--bcher-kva.de" {
		t.Fatalf("facts %+v, want the punycode name", f)
	}
	if env.rdap.Requests("xn--bcher-kva.de") != 1 {
		t.Errorf("RDAP was not asked for the punycode name")
	}
	if f.HasA == nil || !*f.HasA {
		t.Errorf("HasA = %v: the DNS query did not use the punycode name", deref(f.HasA))
	}
	if !strings.Contains(f.AgeError, "not registered") {
		t.Errorf("age error %q, want not registered (no recorded answer)", f.AgeError)
	}
}

func TestFactsOffline(t *testing.T) {
	env := newTestEnv(t, func(o *Options) { o.Offline = true })
	f := env.c.Facts(context.Background(), "https://example.com/")
	if !f.Valid || f.Domain != "example.com" || f.AgeDays != nil || f.HasA != nil ||
		!strings.Contains(f.AgeError, "offline") || !strings.Contains(f.DNSError, "offline") {
		t.Fatalf("offline facts %+v", f)
	}
	if env.rdap.Requests("example.com") != 0 || env.dns.Queries() != 0 {
		t.Fatal("an offline checker made a network lookup")
	}
}

func TestFactsCache(t *testing.T) {
	now := testNow
	var mu sync.Mutex
	env := newTestEnv(t, func(o *Options) {
		o.PositiveTTL = time.Hour
		o.NegativeTTL = time.Minute
		o.Now = func() time.Time { mu.Lock(); defer mu.Unlock(); return now }
	})
	advance := func(d time.Duration) { mu.Lock(); now = now.Add(d); mu.Unlock() }
	ctx := context.Background()

	first := env.c.Facts(ctx, "example.com")
	env.c.Facts(ctx, "https://www.example.com/") // same registrable domain: RDAP from the cache
	env.c.Facts(ctx, "example.com")
	if n := env.rdap.Requests("example.com"); n != 1 {
		t.Fatalf("RDAP asked %d times for example.com, want 1 (cached)", n)
	}
	queries := env.dns.Queries()
	if queries != 3 { // A example.com, MX example.com, A www.example.com
		t.Fatalf("DNS asked %d times, want 3", queries)
	}
	// The age is computed from the cached date at the time of asking.
	advance(30 * time.Minute)
	if f := env.c.Facts(ctx, "example.com"); *f.AgeDays != *first.AgeDays || env.rdap.Requests("example.com") != 1 {
		t.Fatalf("cached within the positive TTL: age %d, requests %d", *f.AgeDays, env.rdap.Requests("example.com"))
	}
	advance(31 * time.Minute)
	env.c.Facts(ctx, "example.com")
	if n := env.rdap.Requests("example.com"); n != 2 {
		t.Fatalf("after the positive TTL RDAP was asked %d times in all, want 2", n)
	}

	// A not-found answer is kept only for the negative TTL.
	env.c.Facts(ctx, "fresh-zz9.com")
	env.c.Facts(ctx, "fresh-zz9.com")
	if n := env.rdap.Requests("fresh-zz9.com"); n != 1 {
		t.Fatalf("404 asked %d times within the negative TTL, want 1", n)
	}
	advance(61 * time.Second)
	env.c.Facts(ctx, "fresh-zz9.com")
	if n := env.rdap.Requests("fresh-zz9.com"); n != 2 {
		t.Fatalf("404 asked %d times after the negative TTL, want 2", n)
	}
	if hits, _ := env.c.CacheStats(); hits == 0 {
		t.Fatal("CacheStats reports no hits")
	}
}

func TestFactsConcurrentLookupsShareOne(t *testing.T) {
	env := newTestEnv(t, nil)
	var wg sync.WaitGroup
	results := make([]screening.DomainFacts, 16)
	for i := range results {
		wg.Add(1)
		go func() { defer wg.Done(); results[i] = env.c.Facts(context.Background(), "google.com") }()
	}
	wg.Wait()
	for _, f := range results {
		if f.AgeDays == nil || *f.AgeDays != 10659 {
			t.Fatalf("a concurrent caller got age %v (%s)", deref(f.AgeDays), f.AgeError)
		}
	}
	if n := env.rdap.Requests("google.com"); n != 1 {
		t.Fatalf("RDAP asked %d times for 16 concurrent callers, want 1", n)
	}
}

func TestFactsCallerCancelled(t *testing.T) {
	env := newTestEnv(t, nil)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	f := env.c.Facts(ctx, "example.com")
	if f.AgeDays != nil && f.HasA != nil && f.AgeError == "" {
		// The shared lookup may have finished first; then the facts are complete and correct.
		return
	}
	if f.AgeDays == nil && f.AgeError == "" {
		t.Fatalf("unknown age without a reason: %+v", f)
	}
	if f.HasA == nil && f.DNSError == "" {
		t.Fatalf("unknown DNS without a reason: %+v", f)
	}
}

func deref[T any](p *T) any {
	if p == nil {
		return nil
	}
	return *p
}

func TestNewFromConfig(t *testing.T) {
	rdap := domaintest.NewRDAPServer(t)
	dnsSrv := domaintest.NewDNSServer(t, domaintest.DefaultZone())
	cfg, err := config.Default()
	if err != nil {
		t.Fatal(err)
	}
	d := cfg.Screening.Domain
	d.RDAPBaseURL, d.Resolver = rdap.URL, dnsSrv.Addr
	f := NewFromConfig(d).Facts(context.Background(), "google.com")
	if f.AgeDays == nil || f.HasA == nil || !*f.HasA {
		t.Fatalf("facts from config: %+v", f)
	}
	d.Enabled = false
	if f := NewFromConfig(d).Facts(context.Background(), "google.com"); !strings.Contains(f.AgeError, "offline") {
		t.Fatalf("disabled section: %+v", f)
	}
}

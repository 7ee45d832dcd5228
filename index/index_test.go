package index

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/payguard/payguard/policy"
	"github.com/payguard/payguard/store"
	"github.com/payguard/payguard/x402"
)

const (
	usdc   = "0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913"
	payA   = "0x1111111111111111111111111111111111111111"
	payB   = "0x2222222222222222222222222222222222222222"
	target = "https://seller.example/api"
)

var t0 = time.Date(2026, 11, 20, 10, 0, 0, 0, time.UTC)

func offer(network, payTo, amount string) store.Offer {
	return store.Offer{Scheme: "exact", Network: network, Asset: usdc, Amount: amount, PayTo: payTo}
}

func seen(at time.Duration, offers ...store.Offer) store.Observation {
	return store.Observation{URL: target, Method: "GET", ObservedAt: t0.Add(at), Status: 402, Usable: true,
		Source: store.SourceChallenge, Offers: offers}
}

func usdcOption(payTo string, usd policy.USD) policy.Option {
	return policy.Option{Scheme: "exact", Network: "base", Asset: usdc, PayTo: payTo, KnownUSDC: true, USD: usd,
		NetworkIDs: []string{"base", "eip155:8453"}}
}

func TestNormalizeURL(t *testing.T) {
	for in, want := range map[string]string{
		"HTTPS://Seller.Example:443/api?x=1#f": "https://seller.example/api",
		"http://seller.example:80":             "http://seller.example/",
		"http://user:pw@127.0.0.1:4021/w":      "http://127.0.0.1:4021/w",
		"https://[::1]:8443/a":                 "https://[::1]:8443/a",
		"mcp://API.Example:8080/tool/weather":  "mcp://api.example:8080/tool/weather",
	} {
		if got, err := NormalizeURL(in); err != nil || got != want {
			t.Errorf("NormalizeURL(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
}

// Every spelling the attack of issue 30 used to escape an endpoint's payee history (a 302 from /weather to
// each of them) is the same Index key as /weather; and RFC 3986's own equivalences are one key too.
func TestNormalizeURLOneKeyPerEndpoint(t *testing.T) {
	const want = "http://127.0.0.1:9001/weather"
	for _, in := range []string{
		"http://127.0.0.1:9001/weather",
		"http://127.0.0.1:9001/weather/",
		"http://127.0.0.1:9001/%77eather",
		"http://127.0.0.1:9001/Weather",
		"http://127.0.0.1:9001/weather;x",
		"http://[::ffff:127.0.0.1]:9001/weather",
		"http://[::ffff:7f00:1]:9001/weather",
		"HTTP://127.0.0.1:09001/WEATHER/",
		"http://127.0.0.1:9001//weather//",
		"http://127.0.0.1:9001/a/../weather",
		"http://127.0.0.1:9001/./weather/.",
		"http://127.0.0.1:9001/%2e%2E/weather",
		"http://127.0.0.1:9001/x/%2E%2e/weather;v=1/",
		"http://127.0.0.1:9001/%57%45%41%54%48%45%52",
		"http://127.0.0.1:9001/weather;jsessionid=1?q=2#frag",
		"  http://127.0.0.1:9001/weather  ",
	} {
		if got, err := NormalizeURL(in); err != nil || got != want {
			t.Errorf("NormalizeURL(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	for in, want := range map[string]string{
		"https://seller.example:443/a/b":     "https://seller.example/a/b",
		"https://SELLER.example./a":          "https://seller.example/a",
		"https://bücher.example/a":           "https://xn--bcher-kva.example/a",
		"http://seller.example:80/%7euser":   "http://seller.example/~user",
		"http://seller.example/a%2fb":        "http://seller.example/a%2Fb", // an escaped slash is not a separator
		"http://seller.example/a%2Fb":        "http://seller.example/a%2Fb",
		"http://seller.example/caf%C3%A9":    "http://seller.example/caf%C3%A9",
		"http://seller.example/caf%c3%a9":    "http://seller.example/caf%C3%A9",
		"http://seller.example/café":         "http://seller.example/caf%C3%A9",
		"http://seller.example/../../etc":    "http://seller.example/etc",
		"http://[2001:DB8:0::1]:8080/x/":     "http://[2001:db8::1]:8080/x",
		"http://seller.example/a%3Bb":        "http://seller.example/a%3Bb",
		"http://seller.example/weather-2":    "http://seller.example/weather-2",
		"http://seller.example/weather.json": "http://seller.example/weather.json",
	} {
		if got, err := NormalizeURL(in); err != nil || got != want {
			t.Errorf("NormalizeURL(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	for _, bad := range []string{"http://seller.example:99999/x", "http://seller.example:-1/x", "http:opaque"} {
		if got, err := NormalizeURL(bad); err == nil {
			t.Errorf("NormalizeURL(%q) = %q, want an error", bad, got)
		}
	}
}

func TestNormalizeURLKeepsInputs(t *testing.T) {
	for in, want := range map[string]string{
		"http://seller.example:80": "http://seller.example/",
	} {
		if got, err := NormalizeURL(in); err != nil || got != want {
			t.Errorf("NormalizeURL(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	for _, bad := range []string{"", "ftp://x/", "mcp://tool/x", "mcp://host/x", "mcp://host/tool/", "/relative", "https:///nohost"} {
		if got, err := NormalizeURL(bad); err == nil {
			t.Errorf("NormalizeURL(%q) = %q, want an error", bad, got)
		}
	}
}

// The payee history is per network and asset: a seller naming another payee on another network is not a
// change, the same payee in another letter case is not a change, and v1 names and CAIP-2 ids are one network.
func TestDerivePayeesPerNetworkAndAsset(t *testing.T) {
	obs := []store.Observation{
		seen(0, offer("base", payA, "10000"), offer("eip155:84532", payB, "10000")),
		seen(time.Hour, offer("eip155:8453", "0x1111111111111111111111111111111111111111", "10000"), offer("base-sepolia", payB, "10000")),
	}
	s := Derive(target, obs, "GET", t0.Add(2*time.Hour), 0)
	if len(s.PayTo) != 2 {
		t.Fatalf("payee histories: %+v", s.PayTo)
	}
	for _, h := range s.PayTo {
		if len(h.Changes) != 0 {
			t.Fatalf("a change where none happened: %+v", h)
		}
	}
	f := s.Facts([]policy.Option{usdcOption(payA, 10_000)}, t0.Add(2*time.Hour))
	if out := policy.Evaluate(cleanFacts(f, usdcOption(payA, 10_000))); out.Decision != policy.Allow {
		t.Fatalf("same payee: %s %q", out.Decision, out.ReasonStrings())
	}
	f = s.Facts([]policy.Option{usdcOption(payB, 10_000)}, t0.Add(2*time.Hour))
	out := policy.Evaluate(cleanFacts(f, usdcOption(payB, 10_000)))
	want := "hold: endpoint_payto_changed: payTo " + payB + " differs from " + payA + " offered for base/" + usdc + " at 2026-11-20T11:00:00Z"
	if out.Decision != policy.Hold || out.ReasonStrings()[0] != want {
		t.Fatalf("payB on base: %s %q\nwant %q", out.Decision, out.ReasonStrings(), want)
	}
}

// A change observed within seven days holds even once the new payee is the latest; after seven days it does
// not (SPEC's window), and a paid payee counts as the endpoint's.
func TestDerivePayeeChangeWindow(t *testing.T) {
	obs := []store.Observation{seen(0, offer("base", payA, "10000")), seen(time.Hour, offer("base", payB, "10000"))}
	for _, c := range []struct {
		now  time.Time
		hold bool
	}{{t0.Add(2 * time.Hour), true}, {t0.Add(7*24*time.Hour + 59*time.Minute), true}, {t0.Add(7*24*time.Hour + 61*time.Minute), false}} {
		f := Derive(target, obs, "GET", c.now, 0).Facts([]policy.Option{usdcOption(payB, 10_000)}, c.now)
		out := policy.Evaluate(cleanFacts(f, usdcOption(payB, 10_000)))
		if (out.Decision == policy.Hold) != c.hold {
			t.Fatalf("at %v: %s %q", c.now, out.Decision, out.ReasonStrings())
		}
	}
	// Paid to A, now offered B: the quote differs from what was paid.
	paid := offer("eip155:8453", payA, "10000")
	s := Derive(target, []store.Observation{FromPaid(target, "GET", paid, 200, true, t0)}, "", t0.Add(time.Hour), 0)
	if len(s.PayTo) != 1 || len(s.PayTo[0].Paid) != 1 || s.PayTo[0].Current[0] != policy.CanonicalPayee(payA) {
		t.Fatalf("paid history: %+v", s.PayTo)
	}
	f := s.Facts([]policy.Option{usdcOption(payB, 10_000)}, t0.Add(time.Hour))
	if out := policy.Evaluate(cleanFacts(f, usdcOption(payB, 10_000))); out.Decision != policy.Hold {
		t.Fatalf("payee differing from the paid one: %s %q", out.Decision, out.ReasonStrings())
	}
}

func TestDerivePriceMedianAndLiveness(t *testing.T) {
	obs := []store.Observation{
		seen(0, offer("base", payA, "10000")), seen(time.Minute, offer("base", payA, "10000")),
		{URL: target, Method: "GET", ObservedAt: t0.Add(2 * time.Minute), Source: store.SourceProbe, Error: "dial: refused"},
		{URL: target, Method: "GET", ObservedAt: t0.Add(3 * time.Minute), Source: store.SourceProbe, Error: "timeout"},
	}
	s := Derive(target, obs, "", t0.Add(time.Hour), 0)
	if len(s.Prices) != 1 || s.Prices[0].Median != "10000" || s.Prices[0].Samples != 2 {
		t.Fatalf("prices: %+v", s.Prices)
	}
	if s.ConsecutiveFailedProbes != 2 || s.Live == nil || !*s.Live || s.LastProbeError != "timeout" {
		t.Fatalf("liveness after two failures: %+v", s)
	}
	obs = append(obs, store.Observation{URL: target, Method: "GET", ObservedAt: t0.Add(4 * time.Minute), Source: store.SourceProbe, Error: "502"})
	s = Derive(target, obs, "", t0.Add(time.Hour), 0)
	if s.ConsecutiveFailedProbes != 3 || s.Live == nil || *s.Live {
		t.Fatalf("liveness after three failures: %+v", s)
	}
	out := policy.Evaluate(cleanFacts(s.Facts([]policy.Option{usdcOption(payA, 100_000)}, t0.Add(time.Hour)), usdcOption(payA, 100_000)))
	want := []string{
		"hold: endpoint_failed_last_3: the last 3 unpaid probes failed (latest: 502)",
		"hold: endpoint_price_above_category_median: $0.1 is more than 5x the median $0.01 (own_history, 2 samples)",
	}
	if got := out.ReasonStrings(); len(got) != 2 || got[0] != want[0] || got[1] != want[1] {
		t.Fatalf("reasons %q\nwant %q", got, want)
	}
	// Observations older than the retention age are not evidence.
	if s := Derive(target, obs, "", t0.Add(48*time.Hour), 24*time.Hour); s.Observations != 0 || s.Live != nil {
		t.Fatalf("stale observations used: %+v", s)
	}
}

func TestFromChallengeKeepsBazaarMetadata(t *testing.T) {
	bazaar := json.RawMessage(`{"info":{"category":"Weather","input":{"type":"http","method":"GET"}},"schema":{}}`)
	pr := &x402.PaymentRequired{X402Version: 2, Accepts: []x402.Requirement{{Scheme: "exact", Network: "base", Amount: "10000",
		Asset: usdc, PayTo: payA}}, Extensions: map[string]json.RawMessage{"bazaar": bazaar}}
	o := FromChallenge(target, "get", pr, t0)
	if o.Category != "weather" || string(o.Metadata) != string(bazaar) || o.Method != "GET" || o.Offers[0].Network != "eip155:8453" {
		t.Fatalf("observation: %+v", o)
	}
	if err := store.CheckObservation(o); err != nil {
		t.Fatal(err)
	}
}

// An option with a field past the store's bound is left out of the observation (the store would refuse the
// whole of it); the other options are kept.
func TestFromChallengeLeavesOutOversizeOffers(t *testing.T) {
	pr := &x402.PaymentRequired{X402Version: 2, Accepts: []x402.Requirement{
		{Scheme: "exact", Network: "base", Amount: "10000", Asset: usdc, PayTo: "0x" + strings.Repeat("ab", store.MaxObservedField)},
		{Scheme: "exact", Network: "base", Amount: "10000", Asset: usdc, PayTo: payA}}}
	o := FromChallenge(target, "GET", pr, t0)
	if len(o.Offers) != 1 || o.Offers[0].PayTo != payA {
		t.Fatalf("offers: %+v", o.Offers)
	}
	if err := store.CheckObservation(o); err != nil {
		t.Fatal(err)
	}
}

// cleanFacts passes every non-Index rule for opt.
func cleanFacts(ix policy.IndexFacts, opt policy.Option) policy.Facts {
	age, a := 400, true
	return policy.Facts{Options: []policy.Option{opt}, MerchantDomain: "seller.example", Rules: rulesBase(),
		Sanctions: policy.SanctionsFacts{State: policy.SanctionsScreened}, Domain: policy.DomainFacts{AgeDays: &age, HasA: &a},
		Index: ix}
}

func rulesBase() policy.Rules {
	r := policy.DefaultRules()
	r.AllowedNetworks = append(r.AllowedNetworks, "eip155:84532")
	return r
}

// An upto endpoint's offered amount is a maximum, not a price: its price history is what it settles (the
// paid observations' settled amounts), and the maximum it asks stays out of the median.
func TestDeriveUptoPricesAreSettledAmounts(t *testing.T) {
	max := store.Offer{Scheme: "upto", Network: "eip155:8453", Asset: usdc, Amount: "5000000", PayTo: payA}
	paid := func(at time.Duration, settled string) store.Observation {
		p := max
		p.Settled = settled
		return store.Observation{URL: target, Method: "GET", ObservedAt: t0.Add(at), Status: 200, Usable: true,
			Source: store.SourcePaid, Paid: &p}
	}
	obs := []store.Observation{seen(0, max), paid(time.Minute, "20000"), seen(2*time.Minute, max), paid(3*time.Minute, "40000"),
		paid(4*time.Minute, "")} // a settlement payguard did not count (alarm or none) is no price
	s := Derive(target, obs, "", t0.Add(time.Hour), 0)
	if len(s.Prices) != 1 || s.Prices[0].Samples != 2 || s.Prices[0].Points[0].Amount != "20000" || s.Prices[0].Latest != "40000" {
		t.Fatalf("prices: %+v", s.Prices)
	}
}

// An upto offer's maximum is no category price: a usage-priced endpoint does not inflate its category's median.
func TestCategoryPriceLeavesOutUptoMaxima(t *testing.T) {
	// A successful probe of a listed endpoint: evidence that may move a category sample (Costly).
	o := seen(0, store.Offer{Scheme: "upto", Network: "eip155:8453", Asset: usdc, Amount: "5000000", PayTo: payA})
	o.Source, o.Listed, o.Category = store.SourceProbe, true, "llm"
	if _, p, ok := CategoryPriceOf(o); ok {
		t.Fatalf("an upto maximum became a category price: %+v", p)
	}
	o.Offers = append(o.Offers, offer("eip155:8453", payA, "10000"))
	if _, p, ok := CategoryPriceOf(o); !ok || len(p.Offers) != 1 || p.Offers[0].Amount != "10000" || p.Offers[0].Scheme != "exact" {
		t.Fatalf("the exact offer beside it: %+v %v", p, ok)
	}
}

// LatestAtRFC3339 is LatestAt in RFC 3339: as Derive wrote it, and after LatestAt is changed.
func TestLatestAtRFC3339(t *testing.T) {
	at := time.Date(2026, 11, 27, 8, 0, 0, 0, time.UTC)
	s := Derive("https://a.example/x", []store.Observation{{URL: "https://a.example/x", Method: "GET", ObservedAt: at, Status: 402, Usable: true,
		Source: store.SourceChallenge}}, "GET", at, 0)
	for _, c := range []time.Time{s.LatestAt, at.Add(time.Hour), at.In(time.FixedZone("east", 3600)), {}} {
		s.LatestAt = c
		if got, want := s.LatestAtRFC3339(), c.Format(time.RFC3339); got != want {
			t.Fatalf("LatestAtRFC3339 = %s, want %s", got, want)
		}
	}
}

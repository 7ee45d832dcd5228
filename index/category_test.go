package index

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/payguard/payguard/store"
	"github.com/payguard/payguard/store/memory"
)

func catPrice(url, amount string, at time.Time) store.CategoryPrice {
	return store.CategoryPrice{URL: url, Host: SiteOf(url), At: at,
		Offers: []store.Offer{{Scheme: "exact", Network: "eip155:8453", Asset: usdc, Amount: amount}}}
}

func TestSiteOf(t *testing.T) {
	for in, want := range map[string]string{
		"https://api.weather.example.com/x": "example.com",
		"https://a.b.seller.co.uk:8443/":    "seller.co.uk",
		"http://127.0.0.1:4021/w":           "127.0.0.1",
		"http://LOCALHOST/":                 "localhost",
		"not a url at all::":                "",
	} {
		if got := SiteOf(in); got != want {
			t.Errorf("SiteOf(%q) = %q, want %q", in, got, want)
		}
	}
}

// Each site counts once (the lower median of its URLs), the judged endpoint's site is left out, other
// networks or assets and entries past maxAge are not comparable.
func TestCategoryMedianCountsEachSiteOnce(t *testing.T) {
	now := t0.Add(time.Hour)
	sample := []store.CategoryPrice{
		catPrice("https://a.example/w", "10000", t0),
		catPrice("https://b.example/w", "10000", t0),
		catPrice("https://c.example/w", "20000", t0),
	}
	// One seller with ten endpoints on one site (and subdomains of it) at $1: one vote.
	for i := 0; i < 10; i++ {
		sample = append(sample, catPrice(fmt.Sprintf("https://s%d.evil.example/%d", i, i), "1000000", t0))
	}
	m, hosts := CategoryMedian(sample, "https://new.example/w", "base", usdc, now, 0)
	if m != 10000 || hosts != 4 {
		t.Fatalf("median %d over %d hosts, want 10000 over 4 (each site once)", m, hosts)
	}
	// The judged site is left out of its own median: evil.example cannot compare with itself.
	if m, hosts := CategoryMedian(sample, "https://evil.example/new", "eip155:8453", usdc, now, 0); m != 10000 || hosts != 3 {
		t.Fatalf("judging evil.example: median %d over %d hosts, want 10000 over 3", m, hosts)
	}
	// Another asset is not comparable; entries older than maxAge are not used.
	if _, hosts := CategoryMedian(sample, "https://new.example/w", "base", "0xother", now, 0); hosts != 0 {
		t.Fatalf("another asset: %d hosts", hosts)
	}
	old := append([]store.CategoryPrice{}, sample[:3]...)
	old[0].At = t0.Add(-48 * time.Hour)
	if _, hosts := CategoryMedian(old, "https://new.example/w", "base", usdc, now, 24*time.Hour); hosts != 2 {
		t.Fatalf("with an expired entry: %d hosts, want 2", hosts)
	}
}

// Only evidence that cost something has a category price: a listed endpoint's usable probe, a settled
// payment (its paid amount, nothing offered beside it). An unpaid 402, an unsettled or failed payment and
// a probe of an endpoint only configured here have none, whatever they declare.
func TestCategoryPriceOf(t *testing.T) {
	o := seen(0, offer("base", payA, "30000"), offer("eip155:8453", payB, "20000"), offer("eip155:84532", payA, "5"))
	o.Source, o.Listed = store.SourceProbe, true
	if _, _, ok := CategoryPriceOf(o); ok {
		t.Fatal("an observation without a category has a category price")
	}
	o.Category = "weather"
	cat, p, ok := CategoryPriceOf(o)
	if !ok || cat != "weather" || p.Host != "seller.example" || p.URL != target || len(p.Offers) != 2 ||
		p.Offers[0] != (store.Offer{Scheme: "exact", Network: "eip155:8453", Asset: strings.ToLower(usdc), Amount: "20000"}) || p.Offers[1].Amount != "5" {
		t.Fatalf("listed probe's category price: %q %+v %v", cat, p, ok)
	}
	free := o
	free.Source, free.Listed = store.SourceChallenge, false
	if _, _, ok := CategoryPriceOf(free); ok {
		t.Fatal("an unpaid 402 has a category price")
	}
	configured := o
	configured.Listed = false
	if _, _, ok := CategoryPriceOf(configured); ok {
		t.Fatal("a probe of an unlisted endpoint has a category price")
	}
	failed := o
	failed.Usable = false
	if _, _, ok := CategoryPriceOf(failed); ok {
		t.Fatal("a failed probe has a category price")
	}
	paid := FromPaid(target, "GET", offer("base", payA, "30000"), 200, true, t0)
	paid.Category = "weather"
	cat, p, ok = CategoryPriceOf(paid)
	if !ok || cat != "weather" || len(p.Offers) != 1 ||
		p.Offers[0] != (store.Offer{Scheme: "exact", Network: "eip155:8453", Asset: strings.ToLower(usdc), Amount: "30000"}) {
		t.Fatalf("settled payment's category price: %q %+v %v", cat, p, ok)
	}
	for _, unsettled := range []store.Observation{FromPaid(target, "GET", offer("base", payA, "30000"), 200, false, t0),
		FromPaid(target, "GET", offer("base", payA, "30000"), 500, true, t0)} {
		unsettled.Category = "weather"
		if _, _, ok := CategoryPriceOf(unsettled); ok {
			t.Fatalf("an unsettled or failed payment has a category price: %+v", unsettled)
		}
	}
}

// The attack of issue 30, at the Writer: three 402s declaring "weather" at $0.0001 from three other sites,
// never paid, leave the category sample empty; the honest endpoint's median stays its own history.
func TestUnpaidChallengesDoNotMoveTheCategory(t *testing.T) {
	st := memory.New()
	w := NewWriter(st, WriterOptions{Keep: store.Retention{MaxPerURL: 10, MaxAge: 24 * time.Hour}})
	for i, host := range []string{"127.0.0.2", "127.0.0.3", "127.0.0.4"} {
		o := seen(time.Duration(i)*time.Second, offer("base", payA, "100"))
		o.URL, o.Category = "http://"+host+":9001/weather", "weather"
		w.Observe(o)
	}
	w.Close()
	if sample, err := st.CategoryPrices(context.Background(), "weather"); err != nil || len(sample) != 0 {
		t.Fatalf("free 402s entered the category sample: %v %+v", err, sample)
	}
	for _, host := range []string{"127.0.0.2", "127.0.0.3", "127.0.0.4"} {
		if obs, _ := st.Observations(context.Background(), "http://"+host+":9001/weather"); len(obs) != 1 || obs[0].Category != "weather" {
			t.Fatalf("the 402 of %s is not in its own history: %+v", host, obs)
		}
	}
}

// The Writer builds the category sample from observations off the request path (and skips repeats within
// the coalescing interval); the Cache serves it for TTL.
func TestWriterBuildsTheCategorySample(t *testing.T) {
	st := memory.New()
	w := NewWriter(st, WriterOptions{Keep: store.Retention{MaxPerURL: 10, MaxAge: 24 * time.Hour}, Coalesce: time.Hour})
	// a: a listed endpoint probed; b and c: a 402 (its category) and then a settled payment of it.
	for i, host := range []string{"a.example", "b.example", "c.example"} {
		o := seen(time.Duration(i)*time.Second, offer("base", payA, "10000"))
		o.URL, o.Category = "https://"+host+"/w", "weather"
		if i == 0 {
			o.Source, o.Listed = store.SourceProbe, true
			w.Observe(o)
			continue
		}
		w.Observe(o)
		w.Observe(FromPaid(o.URL, "GET", o.Offers[0], 200, true, o.ObservedAt.Add(time.Millisecond)))
	}
	w.Close()
	sample, err := st.CategoryPrices(context.Background(), "weather")
	if err != nil || len(sample) != 3 {
		t.Fatalf("category sample: %v %+v", err, sample)
	}
	c := NewCache(st, time.Minute)
	got, err := c.CategoryPrices(context.Background(), "weather")
	if err != nil || len(got) != 3 {
		t.Fatalf("through the cache: %v %d", err, len(got))
	}
	if m, hosts := CategoryMedian(got, "https://new.example/w", "base", usdc, t0, 0); m != 10000 || hosts != 3 {
		t.Fatalf("median %d over %d", m, hosts)
	}
	// The cache derives the sites' prices once per entry, as DeriveSitePrices does.
	sites, err := c.SitePrices(context.Background(), "weather", "eip155:8453", usdc, t0, 0)
	if m, hosts := sites.MedianExcluding("new.example"); err != nil || m != 10000 || hosts != 3 {
		t.Fatalf("cached site prices: %v %+v", err, sites)
	}
	if m, hosts := sites.MedianExcluding("a.example"); m != 10000 || hosts != 2 {
		t.Fatalf("excluding a.example: %d over %d", m, hosts)
	}
	// Within the TTL the cache does not read the store again.
	o := seen(time.Minute, offer("base", payA, "90000"))
	o.URL, o.Category, o.Source, o.Listed = "https://d.example/w", "weather", store.SourceProbe, true
	if err := st.PutCategoryPrice(context.Background(), "weather", func() store.CategoryPrice { _, p, _ := CategoryPriceOf(o); return p }(), store.Retention{}); err != nil {
		t.Fatal(err)
	}
	if got, _ := c.CategoryPrices(context.Background(), "weather"); len(got) != 3 {
		t.Fatalf("the cache read the store within its TTL: %d entries", len(got))
	}
}

// A settled payment's category is the one its endpoint's 402 declared, even when another writer (another
// replica of the fleet) recorded that 402: the writer reads it from the store.
func TestSettledPaymentTakesTheCategoryFromTheStore(t *testing.T) {
	st := memory.New()
	w1 := NewWriter(st, WriterOptions{})
	o := seen(0, offer("base", payA, "10000"))
	o.Category = "weather"
	w1.Observe(o)
	w1.Close()
	if sample, _ := st.CategoryPrices(context.Background(), "weather"); len(sample) != 0 {
		t.Fatalf("an unpaid 402 entered the sample: %+v", sample)
	}
	w2 := NewWriter(st, WriterOptions{})
	w2.Observe(FromPaid(target, "GET", o.Offers[0], 200, true, t0.Add(time.Second)))
	w2.Close()
	sample, err := st.CategoryPrices(context.Background(), "weather")
	if err != nil || len(sample) != 1 || sample[0].URL != target || sample[0].Offers[0].Amount != "10000" {
		t.Fatalf("category sample after the settled payment: %v %+v", err, sample)
	}
}

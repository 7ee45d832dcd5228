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

func TestCategoryPriceOf(t *testing.T) {
	o := seen(0, offer("base", payA, "30000"), offer("eip155:8453", payB, "20000"), offer("eip155:84532", payA, "5"))
	if _, _, ok := CategoryPriceOf(o); ok {
		t.Fatal("an observation without a category has a category price")
	}
	o.Category = "weather"
	cat, p, ok := CategoryPriceOf(o)
	if !ok || cat != "weather" || p.Host != "seller.example" || p.URL != target || len(p.Offers) != 2 ||
		p.Offers[0] != (store.Offer{Scheme: "exact", Network: "eip155:8453", Asset: strings.ToLower(usdc), Amount: "20000"}) || p.Offers[1].Amount != "5" {
		t.Fatalf("category price: %q %+v %v", cat, p, ok)
	}
	paid := o
	paid.Source = store.SourcePaid
	if _, _, ok := CategoryPriceOf(paid); ok {
		t.Fatal("a paid response has a category price")
	}
}

// The Writer builds the category sample from observations off the request path (and skips repeats within
// the coalescing interval); the Cache serves it for TTL.
func TestWriterBuildsTheCategorySample(t *testing.T) {
	st := memory.New()
	w := NewWriter(st, WriterOptions{Keep: store.Retention{MaxPerURL: 10, MaxAge: 24 * time.Hour}, Coalesce: time.Hour})
	for i, host := range []string{"a.example", "b.example", "c.example"} {
		o := seen(time.Duration(i)*time.Second, offer("base", payA, "10000"))
		o.URL, o.Category = "https://"+host+"/w", "weather"
		w.Observe(o)
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
	o.URL, o.Category = "https://d.example/w", "weather"
	if err := st.PutCategoryPrice(context.Background(), "weather", func() store.CategoryPrice { _, p, _ := CategoryPriceOf(o); return p }(), store.Retention{}); err != nil {
		t.Fatal(err)
	}
	if got, _ := c.CategoryPrices(context.Background(), "weather"); len(got) != 3 {
		t.Fatalf("the cache read the store within its TTL: %d entries", len(got))
	}
}

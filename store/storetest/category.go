package storetest

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"testing"
	"time"

	"github.com/payguard/payguard/store"
)

// testCategoryPrices: an endpoint has one entry per category (a put replaces it), categories are separate,
// entries older than MaxAge before the newest put go, one host keeps at most MaxCategoryURLsPerHost URLs (its
// oldest go), a category at most MaxCategoryEndpoints, and bad puts are refused. A store that does not
// implement store.CategoryPrices fails the case.
func testCategoryPrices(t *testing.T, s store.Store) {
	cp, ok := s.(store.CategoryPrices)
	if !ok {
		t.Fatalf("%T does not implement store.CategoryPrices", s)
	}
	ctx := context.Background()
	keep := store.Retention{MaxAge: 24 * time.Hour}
	t0 := time.Date(2026, 11, 1, 12, 0, 0, 0, time.UTC)
	price := func(host, path, amount string, at time.Time) store.CategoryPrice {
		return store.CategoryPrice{URL: "https://" + host + path, Host: host, At: at,
			Offers: []store.Offer{{Scheme: "exact", Network: "eip155:8453", Asset: "0xusdc", Amount: amount}}}
	}
	urls := func(category string) []string {
		t.Helper()
		list, err := cp.CategoryPrices(ctx, category)
		must(t, "CategoryPrices", err)
		var out []string
		for _, p := range list {
			out = append(out, p.URL+"="+p.Offers[0].Amount)
		}
		sort.Strings(out)
		return out
	}
	if got := urls("weather"); len(got) != 0 {
		t.Fatalf("unknown category: %v", got)
	}
	must(t, "put", cp.PutCategoryPrice(ctx, "weather", price("a.example", "/1", "100", t0), keep))
	must(t, "put", cp.PutCategoryPrice(ctx, "weather", price("a.example", "/1", "200", t0.Add(time.Minute)), keep))
	must(t, "put", cp.PutCategoryPrice(ctx, "news", price("b.example", "/1", "300", t0), keep))
	if got := fmt.Sprint(urls("weather")); got != "[https://a.example/1=200]" {
		t.Fatalf("weather after a replacing put: %s", got)
	}
	if got := fmt.Sprint(urls("news")); got != "[https://b.example/1=300]" {
		t.Fatalf("news: %s", got)
	}
	list, err := cp.CategoryPrices(ctx, "weather")
	must(t, "CategoryPrices", err)
	if p := list[0]; p.Host != "a.example" || !p.At.Equal(t0.Add(time.Minute)) || len(p.Offers) != 1 ||
		p.Offers[0] != (store.Offer{Scheme: "exact", Network: "eip155:8453", Asset: "0xusdc", Amount: "200"}) {
		t.Fatalf("entry read back: %+v", p)
	}

	// Retention: a put more than MaxAge after an entry drops it.
	must(t, "put", cp.PutCategoryPrice(ctx, "weather", price("c.example", "/1", "100", t0.Add(25*time.Hour)), keep))
	if got := fmt.Sprint(urls("weather")); got != "[https://c.example/1=100]" {
		t.Fatalf("after MaxAge: %s", got)
	}

	// One host: at most MaxCategoryURLsPerHost URLs, its oldest go; other hosts' entries stay.
	at := t0.Add(26 * time.Hour)
	for i := 0; i < store.MaxCategoryURLsPerHost+3; i++ {
		must(t, "put", cp.PutCategoryPrice(ctx, "weather", price("seller.example", fmt.Sprintf("/%d", i), "5", at.Add(time.Duration(i)*time.Second)), keep))
	}
	got := urls("weather")
	want := []string{"https://c.example/1=100"}
	for i := 3; i < store.MaxCategoryURLsPerHost+3; i++ {
		want = append(want, fmt.Sprintf("https://seller.example/%d=5", i))
	}
	sort.Strings(want)
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("one host's many URLs:\n got %v\nwant %v", got, want)
	}

	// A category holds at most MaxCategoryEndpoints: the oldest go.
	for i := 0; i < store.MaxCategoryEndpoints+2; i++ {
		must(t, "put", cp.PutCategoryPrice(ctx, "bulk", price(fmt.Sprintf("h%d.example", i), "/", "1", at.Add(time.Duration(i)*time.Second)), keep))
	}
	bulk := urls("bulk")
	if len(bulk) != store.MaxCategoryEndpoints {
		t.Fatalf("bulk category holds %d entries, want %d", len(bulk), store.MaxCategoryEndpoints)
	}
	for _, u := range bulk {
		if u == "https://h0.example/=1" || u == "https://h1.example/=1" {
			t.Fatalf("the oldest entries were kept: %s", u)
		}
	}

	for name, put := range map[string]func() error{
		"no category": func() error { return cp.PutCategoryPrice(ctx, "", price("a.example", "/", "1", t0), keep) },
		"long category": func() error {
			return cp.PutCategoryPrice(ctx, string(make([]byte, 65)), price("a.example", "/", "1", t0), keep)
		},
		"no host": func() error { return cp.PutCategoryPrice(ctx, "x", price("", "/", "1", t0), keep) },
		"no time": func() error { return cp.PutCategoryPrice(ctx, "x", price("a.example", "/", "1", time.Time{}), keep) },
		"no offers": func() error {
			p := price("a.example", "/", "1", t0)
			p.Offers = nil
			return cp.PutCategoryPrice(ctx, "x", p, keep)
		},
	} {
		if err := put(); !errors.Is(err, store.ErrInvalid) {
			t.Errorf("%s: %v, want ErrInvalid", name, err)
		}
	}
}

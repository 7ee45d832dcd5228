package storetest

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/payguard/payguard/store"
)

// testSitePayees: one entry per site, network, asset and payee, merged on every put (earliest first
// sighting with its URL, latest last one, costly once true stays true, whatever the order of the puts);
// sites are separate; entries last seen more than MaxAge before the newest put go; a site keeps at most
// MaxSitePayees (the least recently seen go, never the one put); bad puts are refused. A store that does
// not implement store.SitePayees fails the case.
func testSitePayees(t *testing.T, s store.Store) {
	sp, ok := s.(store.SitePayees)
	if !ok {
		t.Fatalf("%T does not implement store.SitePayees", s)
	}
	ctx := context.Background()
	keep := store.Retention{MaxAge: 24 * time.Hour}
	t0 := time.Date(2026, 11, 1, 12, 0, 0, 0, time.UTC)
	entry := func(payTo, url string, at time.Time, costly bool) store.SitePayee {
		return store.SitePayee{Network: "eip155:8453", Asset: "0xusdc", PayTo: payTo, FirstAt: at, LastAt: at, URL: url, Costly: costly}
	}
	read := func(site string) map[string]store.SitePayee {
		t.Helper()
		list, err := sp.SitePayees(ctx, site)
		must(t, "SitePayees", err)
		out := map[string]store.SitePayee{}
		for _, p := range list {
			out[p.PayTo] = p
		}
		return out
	}
	if got := read("seller.example"); len(got) != 0 {
		t.Fatalf("unknown site: %v", got)
	}
	must(t, "put", sp.PutSitePayee(ctx, "seller.example", entry("0xa", "https://seller.example/w", t0.Add(time.Hour), false), keep))
	must(t, "put", sp.PutSitePayee(ctx, "seller.example", entry("0xa", "https://seller.example/first", t0, true), keep))
	must(t, "put", sp.PutSitePayee(ctx, "seller.example", entry("0xa", "https://seller.example/later", t0.Add(2*time.Hour), false), keep))
	must(t, "put", sp.PutSitePayee(ctx, "other.example", entry("0xb", "https://other.example/", t0, false), keep))
	got := read("seller.example")
	a := got["0xa"]
	if len(got) != 1 || !a.FirstAt.Equal(t0) || !a.LastAt.Equal(t0.Add(2*time.Hour)) || !a.Costly ||
		a.URL != "https://seller.example/first" || a.Network != "eip155:8453" || a.Asset != "0xusdc" {
		t.Fatalf("merged entry: %+v (of %d)", a, len(got))
	}
	if o := read("other.example"); len(o) != 1 || o["0xb"].Costly {
		t.Fatalf("another site: %+v", o)
	}
	// Another network or asset is another entry.
	other := entry("0xa", "https://seller.example/w", t0.Add(3*time.Hour), false)
	other.Network = "eip155:84532"
	must(t, "put", sp.PutSitePayee(ctx, "seller.example", other, keep))
	if list, _ := sp.SitePayees(ctx, "seller.example"); len(list) != 2 {
		t.Fatalf("another network: %d entries, want 2", len(list))
	}

	// Retention: a put more than MaxAge after an entry's last sighting drops it.
	late := t0.Add(2*time.Hour + 25*time.Hour)
	must(t, "put", sp.PutSitePayee(ctx, "seller.example", entry("0xc", "https://seller.example/c", late, false), keep))
	if got := read("seller.example"); len(got) != 2 || got["0xa"].Network != "eip155:84532" || got["0xc"].PayTo != "0xc" {
		t.Fatalf("after MaxAge: %+v", got)
	}

	// The bound: the least recently seen go first; the entry put stays.
	for i := 0; i < store.MaxSitePayees+5; i++ {
		at := late.Add(time.Duration(i+1) * time.Second)
		must(t, "put", sp.PutSitePayee(ctx, "flood.example", entry(fmt.Sprintf("0x%04d", i), "https://flood.example/", at, false), keep))
	}
	must(t, "put", sp.PutSitePayee(ctx, "flood.example", entry("0x0000", "https://flood.example/", late, false), keep)) // old sighting: kept, it is the one put
	list, err := sp.SitePayees(ctx, "flood.example")
	must(t, "SitePayees", err)
	var payees []string
	for _, p := range list {
		payees = append(payees, p.PayTo)
	}
	sort.Strings(payees)
	if len(payees) > store.MaxSitePayees || len(payees) < store.MaxSitePayees-1 || payees[0] != "0x0000" ||
		strings.Contains(strings.Join(payees, ","), "0x0001,") {
		t.Fatalf("a flooded site keeps %d payees: %v", len(payees), payees)
	}

	// Bad puts.
	for _, bad := range []struct {
		site string
		p    store.SitePayee
	}{
		{"", entry("0xa", "https://x/", t0, false)},
		{"x.example", entry("", "https://x/", t0, false)},
		{"x.example", entry("0xa|0xb", "https://x/", t0, false)},
		{"x.example", entry("0xa", "", t0, false)},
		{"x.example", entry(strings.Repeat("a", store.MaxObservedField+1), "https://x/", t0, false)},
		{"x.example", store.SitePayee{Network: "n", Asset: "a", PayTo: "p", URL: "https://x/"}},
		{"x.example", store.SitePayee{Network: "n", Asset: "a", PayTo: "p", URL: "https://x/", FirstAt: t0, LastAt: t0.Add(-time.Second)}},
	} {
		if err := sp.PutSitePayee(ctx, bad.site, bad.p, keep); !errors.Is(err, store.ErrInvalid) {
			t.Errorf("put %q %+v: %v, want ErrInvalid", bad.site, bad.p, err)
		}
	}
	if got := read("x.example"); len(got) != 0 {
		t.Fatalf("a refused put was stored: %+v", got)
	}
}

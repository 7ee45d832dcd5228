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

const payC = "0x3333333333333333333333333333333333333333"

// writeAll writes obs through a Writer to a fresh memory store and returns the store.
func writeAll(t *testing.T, obs ...store.Observation) *memory.Store {
	t.Helper()
	st := memory.New()
	w := NewWriter(st, WriterOptions{Keep: store.Retention{MaxPerURL: 100, MaxAge: 30 * 24 * time.Hour}})
	for _, o := range obs {
		w.Observe(o)
	}
	w.Close()
	return st
}

// seenAt is seen for another URL.
func seenAt(url string, d time.Duration, offers ...store.Offer) store.Observation {
	o := seen(d, offers...)
	o.URL = url
	return o
}

// The attack of issue 30 at the site: payee A's history at /weather, payee B on any other URL of the same
// site (another path, another port, another subdomain, the IPv4-mapped spelling) is held as a payee new at
// the site; on another site it is not.
func TestSiteChangeSeesANewPayeeOnAnyEndpoint(t *testing.T) {
	st := writeAll(t, seenAt("http://127.0.0.1:9001/weather", 0, offer("base", payA, "10000")),
		seenAt("https://api.seller.example/weather", 0, offer("base", payA, "10000")))
	now := t0.Add(time.Hour)
	for _, u := range []string{"http://127.0.0.1:9001/weather2", "http://127.0.0.1:9002/x", "http://[::ffff:127.0.0.1]:9001/weather;x",
		"https://other.seller.example/w", "https://SELLER.example./weather/"} {
		key, err := NormalizeURL(u)
		if err != nil {
			t.Fatal(err)
		}
		site := SiteOf(key)
		entries, err := st.SitePayees(context.Background(), site)
		if err != nil {
			t.Fatal(err)
		}
		c := SiteChange(site, entries, "eip155:8453", strings.ToLower(usdc), payB, now, 0)
		if c == nil || len(c.Others) != 1 || c.Others[0] != payA || !c.Since.Equal(t0) {
			t.Errorf("%s: payee B is not new at the site: %+v", u, c)
		}
		if c := SiteChange(site, entries, "base", usdc, "0x"+strings.ToUpper(payA[2:]), now, 0); c != nil {
			t.Errorf("%s: the site's own payee (another spelling) is new: %+v", u, c)
		}
		if c := SiteChange(site, entries, "eip155:84532", usdc, payB, now, 0); c != nil {
			t.Errorf("%s: another network is a change: %+v", u, c)
		}
	}
	if entries, _ := st.SitePayees(context.Background(), "127.0.0.2"); SiteChange("127.0.0.2", entries, "base", usdc, payB, now, 0) != nil {
		t.Error("another site has a change")
	}
}

// Once named at the site, the new payee stays held for the window, like a change at one endpoint; after it
// (or when it was at the site first) it is not new.
func TestSiteChangeWindow(t *testing.T) {
	site := "seller.example"
	st := writeAll(t, seenAt("https://seller.example/a", 0, offer("base", payA, "1")),
		seenAt("https://seller.example/b", time.Hour, offer("base", payB, "1")))
	entries, _ := st.SitePayees(context.Background(), site)
	if c := SiteChange(site, entries, "base", usdc, payB, t0.Add(2*time.Hour), 0); c == nil {
		t.Error("B, named an hour after A, is not new at the site")
	}
	if c := SiteChange(site, entries, "base", usdc, payA, t0.Add(2*time.Hour), 0); c != nil {
		t.Errorf("A, the site's first payee, is new: %+v", c)
	}
	if c := SiteChange(site, entries, "base", usdc, payB, t0.Add(time.Hour+8*24*time.Hour), 0); c != nil {
		t.Errorf("B, at the site for 8 days, is new: %+v", c)
	}
	// Entries older than the Index's max age are not used.
	if c := SiteChange(site, entries, "base", usdc, payC, t0.Add(40*24*time.Hour), 30*24*time.Hour); c != nil {
		t.Errorf("payees last seen 40 days ago still count: %+v", c)
	}
}

// A site with several payees, each backed by a settled payment or a listed probe, is a marketplace: a new
// payee there is not held for being new at the site. Free 402s never make a site "several payees": a
// seller answering 402s with three payees of its own, never paid, still has its new payee held.
func TestSiteSeveralPayeesNeedCostlyEvidence(t *testing.T) {
	site := "market.example"
	var free, costly []store.Observation
	for i, p := range []string{payA, payB, payC} {
		o := seenAt(fmt.Sprintf("https://market.example/s%d", i), time.Duration(i)*time.Minute, offer("base", p, "10"))
		free = append(free, o)
		costly = append(costly, o, FromPaid(o.URL, "GET", o.Offers[0], 200, true, o.ObservedAt.Add(time.Second)))
	}
	const newcomer = "0x4444444444444444444444444444444444444444"
	now := t0.Add(time.Hour)
	st := writeAll(t, free...)
	entries, _ := st.SitePayees(context.Background(), site)
	if c := SiteChange(site, entries, "base", usdc, newcomer, now, 0); c == nil || len(c.Others) != 3 {
		t.Errorf("three free payees made the site a marketplace: %+v", c)
	}
	st = writeAll(t, costly...)
	entries, _ = st.SitePayees(context.Background(), site)
	if c := SiteChange(site, entries, "base", usdc, newcomer, now, 0); c != nil {
		t.Errorf("a site with three paid payees holds a newcomer: %+v", c)
	}
	for _, e := range entries {
		if !e.Costly || e.URL == "" {
			t.Errorf("entry %+v", e)
		}
	}
	// Unsettled payments are free evidence.
	for i := range costly {
		costly[i].Settled = false
	}
	st = writeAll(t, costly...)
	entries, _ = st.SitePayees(context.Background(), site)
	if c := SiteChange(site, entries, "base", usdc, newcomer, now, 0); c == nil {
		t.Error("unsettled payments made the site a marketplace")
	}
}

// The cache's site record is dropped by this process's writes of any URL of the site, so a payee it just
// recorded is never missing from what it reads.
func TestCacheSeesItsOwnSiteWrites(t *testing.T) {
	st := memory.New()
	c := NewCache(st, time.Hour)
	w := NewWriter(st, WriterOptions{Writing: c.Writing})
	if e, err := c.SitePayees(context.Background(), "seller.example"); err != nil || len(e) != 0 {
		t.Fatalf("empty site: %v %v", e, err)
	}
	w.Observe(seenAt("https://api.seller.example/x", 0, offer("base", payA, "1")))
	w.Close()
	if e, err := c.SitePayees(context.Background(), "seller.example"); err != nil || len(e) != 1 {
		t.Fatalf("after a write through the fence: %v %v", e, err)
	}
}

package index

import (
	"fmt"
	"strings"
	"testing"
	"unsafe"

	"github.com/payguard/payguard/internal/slotmemo"
)

// The memo answers what siteOfHostUncached answers, for every host, however the hosts collide in its table:
// names under public suffixes (ICANN and private), IPv4, IPv6 (by /64), single labels, a bare suffix,
// hosts over the memo's length bound, and more distinct hosts than it has slots, each asked again after
// the others have taken slots.
func TestSiteMemoIsSiteOfHost(t *testing.T) {
	hosts := []string{"api.weather.example.com", "a.b.seller.co.uk", "127.0.0.1", "localhost", "shop.github.io",
		"2001:db8:1:2::9", "::1", "co.uk", "com", "", "xn--bcher-kva.de", strings.Repeat("a", 250) + ".com",
		strings.Repeat("b.", 200) + "example.org"}
	for i := range 3 * siteSlots {
		hosts = append(hosts, fmt.Sprintf("h%d.s%d.example.co.uk", i, i%40), fmt.Sprintf("10.0.%d.%d", i/256, i%256))
	}
	for round := range 3 {
		for _, h := range hosts {
			if got, want := siteOfHost(h), siteOfHostUncached(h); got != want {
				t.Fatalf("round %d, %q: memo %q, uncached %q", round, h, got, want)
			}
		}
	}
}

// A host asked again is answered from the memo; one over the length bound is never kept.
func TestSiteMemoAnswersRepeats(t *testing.T) {
	calls := 0
	siteOfHostSlow = func(h string) string { calls++; return siteOfHostUncached(h) }
	defer func() { siteOfHostSlow = siteOfHostUncached }()
	siteTable = slotmemo.New[string](siteSlots)
	for range 5 {
		if got := siteOfHost("api.memo-test.example.com"); got != "example.com" {
			t.Fatal(got)
		}
	}
	if calls != 1 {
		t.Fatalf("computed %d times for one host asked five times; want 1", calls)
	}
	long := strings.Repeat("x", maxMemoHost) + ".example.com"
	for range 3 {
		siteOfHost(long)
	}
	if calls != 4 {
		t.Fatalf("computed %d times; want 4 (a host over %d bytes is not kept)", calls, maxMemoHost)
	}
}

// What the memo keeps is its own copy: a caller's buffer that changes after the call changes nothing it
// holds.
func TestSiteMemoKeepsItsOwnCopy(t *testing.T) {
	siteTable = slotmemo.New[string](siteSlots)
	buf := []byte("pay.copy-test.example.org")
	siteOfHost(unsafe.String(&buf[0], len(buf)))
	copy(buf, "xxx.copy-test.example.net")
	if site, ok := siteTable.Get("pay.copy-test.example.org"); !ok || site != "example.org" {
		t.Fatalf("the memo's entry after the caller's buffer changed: %q, %v", site, ok)
	}
	if got := SiteOf("https://pay.copy-test.example.org/x"); got != "example.org" {
		t.Fatal(got)
	}
}

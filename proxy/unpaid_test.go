package proxy

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/elazarl/goproxy"

	"github.com/payguard/payguard/internal/testutil"
	"github.com/payguard/payguard/policy"
	"github.com/payguard/payguard/store"
	"github.com/payguard/payguard/store/memory"
	"github.com/payguard/payguard/x402"
)

func maxUnpaid(n int) harnessOption { return func(o *setup) { o.MaxUnpaidPerSite = n } }

// guard402Body is guard402 keeping the body.
func guard402Body(p *Proxy, url string) (*http.Response, []byte) {
	req, _ := http.NewRequest(http.MethodGet, url, nil)
	return guard402Req(p, req)
}

// A seller site (its registrable domain: subdomains share it) has at most MaxUnpaidPerSite allowed 402s
// outstanding; past it an allowed 402 is a signed block with its own reason, nothing is reserved and no
// ticket made, and other sites are unaffected. Once the tickets expire and are released, the site is
// allowed again.
func TestUnpaidTicketsPerSiteAreBounded(t *testing.T) {
	ctx := context.Background()
	clock := testutil.NewClock(time.Now())
	st := memory.NewWithClock(clock.Now)
	p, _, _ := newTestProxy(t, st, footprintRules(), maxUnpaid(3), func(o *setup) { o.Now = clock.Now })
	defer p.Close()
	day := p.day()
	for _, u := range []string{"https://a.seller.example/1", "https://b.seller.example/2", "https://seller.example/3"} {
		if out, body := guard402Body(p, u); out.Header.Get(HeaderDecision) != allow {
			t.Fatalf("%s: %d %s", u, out.StatusCode, body)
		}
	}
	s0, _ := st.State(ctx, "default", day)
	for _, u := range []string{"https://c.seller.example/4", "https://seller.example/3", "https://A.SELLER.EXAMPLE./5"} {
		out, body := guard402Body(p, u)
		var r refusalBody
		json.Unmarshal(body, &r)
		if out.StatusCode != http.StatusForbidden || r.Decision != block || len(r.Reasons) != 1 ||
			!strings.Contains(r.Reasons[0], "site seller.example has 3 allowed payments outstanding, unpaid") ||
			r.ReasonClass != "unpaid_tickets" || r.Receipt == nil || r.Receipt.JWS == "" {
			t.Fatalf("%s past the bound: %d %s", u, out.StatusCode, body)
		}
		if r.Receipt.Decision != block || classOfCode[policy.CodeUnpaidTickets] != r.ReasonClass {
			t.Fatalf("receipt %+v", r.Receipt)
		}
	}
	if s1, _ := st.State(ctx, "default", day); s1 != s0 {
		t.Fatalf("refused 402s reserved: %+v then %+v", s0, s1)
	}
	if out, body := guard402Body(p, "https://other.example/1"); out.Header.Get(HeaderDecision) != allow {
		t.Fatalf("another site: %d %s", out.StatusCode, body)
	}
	// The bench challenge's tickets live 60 s; the store releases them a minute after.
	clock.Advance(2*time.Minute + time.Second)
	if out, body := guard402Body(p, "https://c.seller.example/4"); out.Header.Get(HeaderDecision) != allow {
		t.Fatalf("after the tickets were released: %d %s", out.StatusCode, body)
	}
}

// A paid ticket stops counting at once: with a bound of one, the second 402 is refused until the first is
// paid, and allowed after.
func TestUnpaidBoundFreedByPayment(t *testing.T) {
	s := newSeller(t, x402.V1, false, offer(x402.V1, "base-sepolia", baseSepoliaUSDC, sellerPayTo, cent))
	h := newHarness(t, memory.New(), testRules(), maxUnpaid(1))
	b := h.buyer()
	url := s.url("/weather")
	resp, body := b.get(url, nil)
	if resp.StatusCode != http.StatusPaymentRequired {
		t.Fatalf("first 402: %d %s", resp.StatusCode, body)
	}
	pr := b.readChallenge(resp, body)
	resp, body = b.get(s.url("/other"), nil)
	if r := decodeRefusal(t, resp, body); r.ReasonClass != "unpaid_tickets" {
		t.Fatalf("second 402 with one outstanding: %s", body)
	}
	hdr, val := b.sign(pr, 0, nil)
	if resp, body := b.get(url, http.Header{hdr: {val}}); resp.StatusCode != http.StatusOK {
		t.Fatalf("payment: %d %s", resp.StatusCode, body)
	}
	if resp, body := b.get(s.url("/other"), nil); resp.StatusCode != http.StatusPaymentRequired {
		t.Fatalf("402 after the payment: %d %s", resp.StatusCode, body)
	}
}

func guard402Req(p *Proxy, req *http.Request) (*http.Response, []byte) {
	resp := &http.Response{StatusCode: http.StatusPaymentRequired, Header: normalChallenge(), Request: req,
		Body: io.NopCloser(strings.NewReader("{}")), ProtoMajor: 1, ProtoMinor: 1}
	resp.Header.Set("Content-Type", "application/json")
	out := p.onResponse(resp, &goproxy.ProxyCtx{Req: req, UserData: &reqState{start: time.Now()}})
	body, _ := io.ReadAll(out.Body)
	out.Body.Close()
	return out, body
}

// Sites below their bound do not keep released tickets in memory for good: every sweepEvery tickets, the
// released ones of every site are forgotten.
func TestUnpaidCountForgetsReleasedTickets(t *testing.T) {
	u := newUnpaidTickets(10)
	now := time.Now()
	for i := range sweepEvery - 1 {
		u.add(fmt.Sprintf("site%d.example", i), store.Ticket{ID: fmt.Sprint("t", i), ExpiresAt: now}, now)
	}
	if len(u.sites) != sweepEvery-1 || len(u.ids) != sweepEvery-1 {
		t.Fatalf("%d sites, %d tickets", len(u.sites), len(u.ids))
	}
	later := now.Add(store.TicketReleaseGrace + time.Second)
	u.add("fresh.example", store.Ticket{ID: "fresh", ExpiresAt: later}, later)
	if len(u.sites) != 1 || len(u.ids) != 1 {
		t.Fatalf("after the sweep: %d sites, %d tickets; want only the fresh one", len(u.sites), len(u.ids))
	}
}

// The count is exact whatever the order of release: a site at its bound forgets a ticket of a short TTL
// made after one of a long TTL; a taken ticket stops counting at once and its entry leaves the queue; the
// same id counted twice counts once.
func TestUnpaidCountIsExact(t *testing.T) {
	u := newUnpaidTickets(3)
	now := time.Now()
	tk := func(id string, ttl time.Duration) store.Ticket { return store.Ticket{ID: id, ExpiresAt: now.Add(ttl)} }
	u.add("s.example", tk(newID("tkt"), time.Hour), now)
	short := newID("tkt")
	u.add("s.example", tk(short, time.Minute), now)
	u.add("s.example", tk("other-form", time.Hour), now)
	if full, n := u.fullAt("s.example", now); !full || n != 3 {
		t.Fatalf("full %v with %d", full, n)
	}
	later := now.Add(time.Minute + store.TicketReleaseGrace)
	if full, n := u.fullAt("s.example", later); full || n != 2 {
		t.Fatalf("after the short ticket's release: full %v with %d, want 2", full, n)
	}
	u.taken("other-form")
	u.taken("never-made")
	if full, n := u.fullAt("s.example", later); full || n != 1 {
		t.Fatalf("after a take: full %v with %d, want 1", full, n)
	}
	again := newID("tkt")
	u.add("s.example", tk(again, time.Hour), later)
	u.add("s.example", tk(again, time.Hour), later)
	if _, n := u.fullAt("s.example", later); n != 2 {
		t.Fatalf("an id counted twice: %d, want 2", n)
	}
	u.add("s.example", tk(newID("tkt"), time.Hour), later)
	u.fullAt("s.example", later) // at the bound: the whole queue is pruned
	// Left: the long one, the id counted twice (both its entries name it) and the last one.
	if st := u.sites["s.example"]; len(st.queue) != 4 || st.n != 3 {
		t.Fatalf("queue of %d for %d tickets, want 4 for 3: the released and the taken ones leave it", len(st.queue), st.n)
	}
	// The id counted twice is released at its latest expiry, not its first.
	u.add("s.example", tk(short, 0), later)
	u.add("s.example", tk(short, 3*time.Hour), later)
	if _, n := u.fullAt("s.example", later.Add(time.Hour)); n != 1 {
		t.Fatalf("an hour on: %d, want 1 (the id renewed for three hours)", n)
	}
}

// BenchmarkUnpaidCount reports heap-B/ticket, the heap an outstanding unpaid ticket keeps in the count
// (issue 36: the proxy's memory after 100,000 decisions). Before: about 195 bytes.
func BenchmarkUnpaidCount(b *testing.B) {
	ids := make([]string, b.N)
	for i := range ids {
		ids[i] = newID("tkt")
	}
	now := time.Now()
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	u := newUnpaidTickets(1 << 30)
	b.ResetTimer()
	for i, id := range ids {
		u.add(fmt.Sprint("site", i%100, ".example"), store.Ticket{ID: id, ExpiresAt: now.Add(time.Hour)}, now)
	}
	b.StopTimer()
	runtime.GC()
	runtime.ReadMemStats(&after)
	b.ReportMetric(float64(after.HeapAlloc-before.HeapAlloc)/float64(b.N), "heap-B/ticket")
	runtime.KeepAlive(u)
	runtime.KeepAlive(ids)
}

// fullAt is claim without keeping the place: whether site is at its bound at now, and its count.
func (u *unpaidTickets) fullAt(site string, now time.Time) (bool, int) {
	ok, n := u.claim(site, now)
	if ok {
		u.unclaim(site)
	}
	return !ok, n
}

package proxy

import (
	"net/http"
	"path/filepath"
	"testing"
	"time"

	"github.com/payguard/payguard/internal/testutil"
	"github.com/payguard/payguard/store"
	"github.com/payguard/payguard/store/bolt"
	"github.com/payguard/payguard/store/memory"
	"github.com/payguard/payguard/x402"
)

// An agent that only compares prices spends nothing: 1,000 allowed 402s it never pays reserve $10 while
// their tickets live, and once the tickets expire (the challenge's 60 s, plus store.TicketReleaseGrace) the
// budget is back where it was. The one payment the agent did make stays spent.
func TestUnpaid402sLeaveTheBudget(t *testing.T) {
	for _, tc := range []struct {
		name string
		open func(t *testing.T, now func() time.Time) State
	}{
		{"memory", func(t *testing.T, now func() time.Time) State { return memory.NewWithClock(now) }},
		{"bolt", func(t *testing.T, now func() time.Time) State {
			s, err := bolt.Open(filepath.Join(t.TempDir(), "p.db"), bolt.Options{Now: now})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { s.Close() })
			return s
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			clock := testutil.NewClock(time.Now())
			s := newSeller(t, x402.V2, false, offer(x402.V2, "eip155:84532", baseSepoliaUSDC, sellerPayTo, cent))
			h := newHarness(t, tc.open(t, clock.Now), testRules(), func(o *setup) { o.Now = clock.Now })
			b := h.buyer()

			// One payment made and settled.
			resp, body := b.get(s.url("/paid"), nil)
			pr := b.readChallenge(resp, body)
			hdr, val := b.sign(pr, 0, nil)
			if resp, body := b.get(s.url("/paid"), http.Header{hdr: {val}}); resp.StatusCode != http.StatusOK {
				t.Fatalf("paid request: %d %s", resp.StatusCode, body)
			}

			const unpaid = 1000
			for i := range unpaid {
				resp, body := b.get(s.url("/price-check"), nil)
				if resp.StatusCode != http.StatusPaymentRequired {
					t.Fatalf("402 number %d: %d %s", i, resp.StatusCode, body)
				}
			}
			if v := h.budgetState(); v.SpentMicros != 10_000 || v.ReservedMicros != unpaid*10_000 {
				t.Fatalf("while the tickets live: spent %d reserved %d, want 10000 and %d", v.SpentMicros, v.ReservedMicros, unpaid*10_000)
			}
			clock.Advance(time.Minute + store.TicketReleaseGrace + time.Second)
			if v := h.budgetState(); v.SpentMicros != 10_000 || v.ReservedMicros != 0 {
				t.Fatalf("after the tickets expired: spent %d reserved %d, want 10000 and 0", v.SpentMicros, v.ReservedMicros)
			}
		})
	}
}

// A seller's maxTimeoutSeconds cannot hold the agent's budget longer than proxy.ticket_ttl_max: a year-long
// challenge's reservation is released after the bound, not after a year.
func TestTicketTTLIsBounded(t *testing.T) {
	clock := testutil.NewClock(time.Now())
	o := offer(x402.V2, "eip155:84532", baseSepoliaUSDC, sellerPayTo, cent)
	o.MaxTimeoutSeconds = 365 * 24 * 3600
	s := newSeller(t, x402.V2, false, o)
	h := newHarness(t, memory.NewWithClock(clock.Now), testRules(), func(o *setup) {
		o.Now = clock.Now
		o.TicketTTLMax = 3 * time.Minute
	})
	b := h.buyer()
	if resp, body := b.get(s.url("/slow"), nil); resp.StatusCode != http.StatusPaymentRequired {
		t.Fatalf("402: %d %s", resp.StatusCode, body)
	}
	clock.Advance(3*time.Minute + store.TicketReleaseGrace)
	if v := h.budgetState(); v.ReservedMicros != 10_000 {
		t.Fatalf("within the bound and the grace: reserved %d, want 10000", v.ReservedMicros)
	}
	clock.Advance(time.Second)
	if v := h.budgetState(); v.ReservedMicros != 0 {
		t.Fatalf("past ticket_ttl_max: reserved %d, want 0", v.ReservedMicros)
	}
}

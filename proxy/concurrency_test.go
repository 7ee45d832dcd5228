package proxy

import (
	"net/http"
	"sync"
	"testing"

	"github.com/payguard/payguard/store/memory"
	"github.com/payguard/payguard/x402"
)

// Many agents paying at once against one budget never exceed the daily cap, counted where it matters: on
// the seller's side.
func TestConcurrentPaymentsNeverExceedDailyCap(t *testing.T) {
	for _, tlsOn := range []bool{false, true} {
		s := newSeller(t, x402.V2, tlsOn, offer(x402.V2, "eip155:84532", baseSepoliaUSDC, sellerPayTo, cent))
		rules := testRules()
		rules.DailyCapUSD = 100_000 // $0.10: room for exactly ten $0.01 payments
		h := newHarness(t, memory.New(), rules, trustUpstream(s))
		const agents = 32
		var wg sync.WaitGroup
		var mu sync.Mutex
		codes := map[int]int{}
		for range agents {
			wg.Add(1)
			go func() {
				defer wg.Done()
				ex := h.buyer().pay(s.url("/weather"), nil)
				code := ex.first.StatusCode
				if ex.paid != nil {
					code = ex.paid.StatusCode
				}
				mu.Lock()
				codes[code]++
				mu.Unlock()
			}()
		}
		wg.Wait()
		if s.settled.Load() > 100_000 {
			t.Fatalf("tls=%v: seller settled %d units, over the $0.10 cap", tlsOn, s.settled.Load())
		}
		if s.paid.Load() != 10 || codes[http.StatusOK] != 10 || codes[http.StatusForbidden] != agents-10 {
			t.Errorf("tls=%v: seller paid %d times; buyers saw %v; want exactly 10 paid and %d refused", tlsOn, s.paid.Load(), codes, agents-10)
		}
		if b := h.budgetState(); b.SpentMicros != 100_000 || b.ReservedMicros != 0 {
			t.Errorf("tls=%v: budget %+v, want spent 100000", tlsOn, b)
		}
	}
}

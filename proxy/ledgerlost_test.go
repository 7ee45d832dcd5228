package proxy

import (
	"context"
	"net/http"
	"strings"
	"testing"

	"github.com/payguard/payguard/internal/testredis"
	"github.com/payguard/payguard/store/redis"
	"github.com/payguard/payguard/x402"
)

// The attack, end to end: with a $0.50 cap, 50 payments of $0.01 go through a proxy on a Redis
// ledger; Redis restarts without persistence; the next payment must be refused with a reason that names the
// lost ledger, and /readyz must say not ready. On the old code the day started again from zero and 50 more
// payments went through ($1.00 in a day).
func TestRedisRestartDoesNotResetTheDay(t *testing.T) {
	r := testredis.StartOwn(t)
	st, err := redis.Open(context.Background(), redis.Options{URL: r.URL(),
		AllowVolatile: true, InitIfEmpty: true})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	s := newSeller(t, x402.V2, false, offer(x402.V2, "eip155:84532", baseSepoliaUSDC, sellerPayTo, cent))
	rules := testRules()
	rules.DailyCapUSD = 500_000
	h := newHarness(t, st, rules)
	for i := range 50 {
		if ex := h.buyer().pay(s.url("/weather"), nil); ex.paid == nil || ex.paid.StatusCode != http.StatusOK {
			t.Fatalf("payment %d before the restart was not paid", i)
		}
	}
	if ex := h.buyer().pay(s.url("/weather"), nil); ex.first.StatusCode != http.StatusForbidden {
		t.Fatalf("the 51st payment: %d, want the daily cap's 403", ex.first.StatusCode)
	}
	r.Restart()
	ex := h.buyer().pay(s.url("/weather"), nil)
	if ex.first.StatusCode != http.StatusForbidden || ex.first.Header.Get(HeaderDecision) != block ||
		!strings.Contains(string(ex.firstBody), "ledger lost") || ex.paid != nil {
		t.Fatalf("payment after the restart: %d %s", ex.first.StatusCode, ex.firstBody)
	}
	if s.paid.Load() != 50 {
		t.Fatalf("the seller was paid %d times, want 50", s.paid.Load())
	}
	if code, body := h.api("GET", "/readyz", "", nil); code != http.StatusServiceUnavailable || !strings.Contains(string(body), "reinit") {
		t.Fatalf("/readyz after the restart = %d %s", code, body)
	}
}

package proxy

import (
	"encoding/json"
	"fmt"
	"net/http"
	"sync"
	"testing"

	"github.com/payguard/payguard/policy"
	"github.com/payguard/payguard/store/memory"
)

const guardPayTo = "0x70997970C51812dc3A010C7d01b50e0d17dc79C8"

func guardChallenge(atomic string) map[string]any {
	return map[string]any{
		"x402Version": 2,
		"resource":    map[string]any{"url": "https://seller.example/cheap"},
		"accepts": []any{map[string]any{"scheme": "exact", "network": "eip155:8453", "amount": atomic,
			"asset": "0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913", "payTo": guardPayTo, "maxTimeoutSeconds": 60,
			"extra": map[string]any{"name": "USD Coin", "version": "2"}}},
	}
}

func (h *harness) guardDecide(atomic, url string) (int, guardDecideResponse) {
	h.t.Helper()
	code, b := h.api("POST", "/v1/decide", testToken, map[string]any{"url": url, "challenge": guardChallenge(atomic)})
	var out guardDecideResponse
	if code == http.StatusOK {
		if err := json.Unmarshal(b, &out); err != nil {
			h.t.Fatal(err)
		}
	}
	return code, out
}

// The sidecar's decision for an in-process guard: the sidecar's rules and ledger; an allow reserves (and the
// reservation stays: no ticket expires it), concurrent guards never exceed the cap.
func TestGuardDecideUsesTheSidecarLedger(t *testing.T) {
	rules := testRules()
	rules.DailyCapUSD = 50_000 // $0.05
	h := newHarness(t, memory.New(), rules)
	var wg sync.WaitGroup
	var mu sync.Mutex
	decisions := map[string]int{}
	for i := 0; i < 20; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			code, out := h.guardDecide("10000", "https://seller.example/cheap")
			mu.Lock()
			decisions[fmt.Sprintf("%d %s", code, out.Decision)]++
			mu.Unlock()
		}()
	}
	wg.Wait()
	if decisions["200 allow"] != 5 || decisions["200 block"] != 15 {
		t.Fatalf("decisions %v, want 5 allows and 15 blocks", decisions)
	}
	if b := h.budgetState(); b.SpentMicros+b.ReservedMicros != 50_000 {
		t.Fatalf("budget %+v, want $0.05 spent or reserved", b)
	}
	_, out := h.guardDecide("10000", "https://seller.example/cheap")
	if out.Decision != "block" || len(out.Reasons) == 0 || out.Reasons[0] != "block: daily cap $0.05 would be exceeded (spent $0.05)" {
		t.Fatalf("over the cap: %+v", out)
	}
}

// A hold goes to the approval queue; approved there, asking again releases it once with a reservation.
func TestGuardDecideHoldAndApproval(t *testing.T) {
	h := newHarness(t, memory.New(), testRules())
	_, out := h.guardDecide("500000", "https://seller.example/mid")
	if out.Decision != "hold" || out.HoldID == "" || out.AmountMicros != 0 {
		t.Fatalf("held: %+v", out)
	}
	if code, b := h.api("POST", "/v1/holds/"+out.HoldID+"/approve", testToken, map[string]string{"by": "guard onHold"}); code != 200 {
		t.Fatalf("approve: %d %s", code, b)
	}
	_, again := h.guardDecide("500000", "https://seller.example/mid")
	if again.Decision != "allow" || again.AmountMicros != 500_000 {
		t.Fatalf("after approval: %+v", again)
	}
	if b := h.budgetState(); b.SpentMicros+b.ReservedMicros != 500_000 {
		t.Fatalf("budget %+v", b)
	}
	// The approval was used once: the same request is held again.
	if _, third := h.guardDecide("500000", "https://seller.example/mid"); third.Decision != "hold" {
		t.Fatalf("third: %+v", third)
	}
}

func TestGuardDecideRefusesBadInput(t *testing.T) {
	h := newHarness(t, memory.New(), policy.DefaultRules())
	two := guardChallenge("10000")
	two["accepts"] = append(two["accepts"].([]any), two["accepts"].([]any)[0])
	for name, c := range map[string]struct {
		token string
		body  any
		want  int
	}{
		"no token":        {"", map[string]any{"url": "https://a.example/", "challenge": guardChallenge("1")}, 401},
		"wrong token":     {"nope", map[string]any{"url": "https://a.example/", "challenge": guardChallenge("1")}, 401},
		"unknown field":   {testToken, map[string]any{"url": "https://a.example/", "challenge": guardChallenge("1"), "x": 1}, 400},
		"no url":          {testToken, map[string]any{"challenge": guardChallenge("1")}, 400},
		"not a challenge": {testToken, map[string]any{"url": "https://a.example/", "challenge": "x"}, 400},
		"two offers":      {testToken, map[string]any{"url": "https://a.example/", "challenge": two}, 400},
	} {
		if code, b := h.api("POST", "/v1/decide", c.token, c.body); code != c.want {
			t.Errorf("%s: %d %s, want %d", name, code, b, c.want)
		}
	}
	if b := h.budgetState(); b.SpentMicros+b.ReservedMicros != 0 {
		t.Fatalf("bad input reserved: %+v", b)
	}
}

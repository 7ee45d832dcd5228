package proxy

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"

	"github.com/payguard/payguard/policy"
	"github.com/payguard/payguard/proxy/notify"
	"github.com/payguard/payguard/proxy/view"
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

func (h *harness) guardDecide(atomic, url string) (int, view.GuardDecision) {
	h.t.Helper()
	code, b := h.api("POST", "/v1/decide", testToken, map[string]any{"url": url, "challenge": guardChallenge(atomic)})
	var out view.GuardDecision
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
	if out.Decision != "hold" || out.HoldID == "" || out.AmountMicros != 500_000 {
		t.Fatalf("held: %+v, want a hold showing $0.50", out)
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
		"not http":        {testToken, map[string]any{"url": "ftp://a.example/", "challenge": guardChallenge("1")}, 400},
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

// An in-process guard's hold is a hold like any other for the approver: the webhook announces it, the
// console lists it as pending (and the guard's decision among the last decisions), a person approves it
// there, and the guard's next ask for the same terms is allowed once.
func TestGuardDecideHoldInConsoleAndWebhook(t *testing.T) {
	got := make(chan notify.Event, 10)
	recv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var ev notify.Event
		if err := json.NewDecoder(r.Body).Decode(&ev); err != nil {
			t.Errorf("webhook body: %v", err)
		}
		got <- ev
	}))
	defer recv.Close()
	st := memory.New()
	opt, _ := withNotifier(t, st, recv.URL, nil, 16)
	h := newHarness(t, st, testRules(), opt)
	_, out := h.guardDecide("500000", "https://seller.example/mid")
	if out.Decision != "hold" || out.HoldID == "" {
		t.Fatalf("held: %+v", out)
	}
	if ev := <-got; ev.Type != notify.HoldCreated || ev.Hold.ID != out.HoldID || ev.Hold.URL != "https://seller.example/mid" ||
		ev.Hold.PayTo != guardPayTo || ev.Hold.AmountMicros != 500_000 {
		t.Fatalf("webhook event: %+v", ev)
	}

	c := newConsoleClient(t, h.admin.URL)
	if code := c.signIn(testToken); code != 200 {
		t.Fatalf("sign-in: %d", code)
	}
	resp, b := c.get("/console/api/state")
	var state struct {
		Holds     []view.Hold
		Decisions []view.Decision
	}
	if err := json.Unmarshal(b, &state); resp.StatusCode != 200 || err != nil {
		t.Fatalf("state: %d %v %s", resp.StatusCode, err, b)
	}
	if len(state.Holds) != 1 || state.Holds[0].ID != out.HoldID || state.Holds[0].Status != "pending" || state.Holds[0].PayTo != guardPayTo {
		t.Fatalf("console holds: %+v", state.Holds)
	}
	if len(state.Decisions) != 1 {
		t.Fatalf("console decisions: %+v", state.Decisions)
	}
	if d := state.Decisions[0]; d.Stage != "guard" || d.Decision != "hold" || d.HoldID != out.HoldID ||
		d.Host != "seller.example" || d.Path != "/mid" || d.AmountUSD != "0.5" || d.PayTo != guardPayTo {
		t.Fatalf("the guard's decision in the console: %+v", d)
	}
	if code, b := c.post("/console/api/holds/"+out.HoldID+"/approve", map[string]string{"by": "alice", "note": "guard's call"}, nil); code != 200 {
		t.Fatalf("approve in the console: %d %s", code, b)
	}
	if ev := <-got; ev.Type != notify.HoldApproved || ev.Hold.ResolvedBy != "alice" {
		t.Fatalf("approved event: %+v", ev)
	}
	if _, again := h.guardDecide("500000", "https://seller.example/mid"); again.Decision != "allow" || again.AmountMicros != 500_000 {
		t.Fatalf("after the console's approval: %+v", again)
	}
}

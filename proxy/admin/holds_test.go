package admin_test

import (
	"bytes"
	"encoding/json"
	"net/http"
	"slices"
	"testing"
	"time"

	"github.com/payguard/payguard/proxy/view"
	"github.com/payguard/payguard/store"
)

// The admin API shows a hold in the one hold view the console, the CLI and the webhooks show (view.Hold),
// plus the held decision: the members it always had keep their names (receivers depend on them), and the
// payee, network, asset and reasons the other channels carried are there too. Before issue 33 the API had
// its own shape without pay_to, network or reasons.
func TestHoldAPIRendersTheOneHoldView(t *testing.T) {
	now := time.Now().UTC().Truncate(time.Second)
	e := newEnv(t, withClock(func() time.Time { return now }))
	dec, _ := json.Marshal(map[string]any{"decision": "hold", "reasons": []string{"hold: amount $0.5 above hold threshold $0.25"},
		"chosen_option": map[string]any{"scheme": "exact", "network": "eip155:84532", "asset": "0x036CbD53842c5426634e7929541eC2318f3dCF7e",
			"amount": "500000", "payTo": "0x1111111111111111111111111111111111111111", "maxTimeoutSeconds": 60},
		"receipt": map[string]any{"id": "rcpt_1"}})
	h := store.Hold{ID: "hold_v", Status: store.HoldPending, Key: "k", Method: "GET", URL: "https://seller.example/report?x=1",
		AmountMicros: 500_000, CreatedAt: now, ExpiresAt: now.Add(10 * time.Minute), Decision: dec, Agent: "research",
		Description: "Weather report"}
	if err := e.store.CreateHold(t.Context(), h); err != nil {
		t.Fatal(err)
	}
	code, body := e.api("GET", "/v1/holds/hold_v", testToken, nil)
	if code != http.StatusOK {
		t.Fatalf("GET hold: %d %s", code, body)
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(body, &m); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"id", "status", "method", "url", "amount_usd", "amount_micros", "agent", "decision", "created_at",
		"expires_at", "description", "host", "amount_atomic", "scheme", "network", "network_name", "asset", "asset_name",
		"pay_to", "reasons", "receipt_id"} {
		if _, ok := m[k]; !ok {
			t.Errorf("the API's hold has no %q: %s", k, body)
		}
	}
	want, _ := json.Marshal(view.HoldOf(h, now).WithDecision(h))
	var got view.Hold
	if err := json.Unmarshal(body, &got); err != nil {
		t.Fatal(err)
	}
	again, _ := json.Marshal(got)
	if string(again) != string(want) {
		t.Errorf("the API's hold is not the hold view:\n got %s\nwant %s", again, want)
	}
	// The list and a resolution answer render the same view.
	if l := e.holds("all"); len(l) != 1 || l[0].PayTo != "0x1111111111111111111111111111111111111111" || l[0].NetworkName != "Base Sepolia" {
		t.Errorf("list: %+v", l)
	}
	code, body = e.api("POST", "/v1/holds/hold_v/approve", testToken, map[string]string{"by": "alice"})
	if err := json.Unmarshal(body, &got); code != 200 || err != nil || got.Status != store.HoldApproved || got.ResolvedBy != "alice" ||
		got.Reasons[0] != "hold: amount $0.5 above hold threshold $0.25" || len(got.Decision) == 0 {
		t.Errorf("approve: %d %s", code, body)
	}
}

// GET /v1/budget keeps the body it has always had: the budget's name under "budget", first, then the day's
// figures, and no "name" key beside it (the route renders view.Budget under its own key).
func TestBudgetRouteBody(t *testing.T) {
	e := newEnv(t)
	code, body := e.api("GET", "/v1/budget", testToken, nil)
	if code != 200 {
		t.Fatalf("GET /v1/budget: %d %s", code, body)
	}
	var keys []string
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.Token() // {
	for dec.More() {
		k, _ := dec.Token()
		keys = append(keys, k.(string))
		var skip json.RawMessage
		if err := dec.Decode(&skip); err != nil {
			t.Fatal(err)
		}
	}
	want := []string{"budget", "day", "spent_usd", "reserved_usd", "cap_usd", "spent_micros", "reserved_micros", "cap_micros"}
	if !slices.Equal(keys, want) {
		t.Fatalf("GET /v1/budget keys %v, want %v (%s)", keys, want, body)
	}
}

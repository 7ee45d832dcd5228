package proxy

import (
	"encoding/json"
	"slices"
	"testing"

	"github.com/payguard/payguard/proxy/view"
	"github.com/payguard/payguard/store/memory"
)

// The guard API judges the URL the guard says its agent requested, never the seller's claim: a seller on a
// blocklisted host that names a trusted resource.url (v2) or accepts[].resource (v1) is refused; without a
// URL the domain is unknown and the decision holds, reserving nothing, whatever the claim says.
func TestGuardDecideJudgesTheRequestedURLNotTheClaim(t *testing.T) {
	rules := testRules()
	rules.StrictAllowlist = true
	rules.DomainAllowlist = []string{"trusted.example"}
	rules.DomainBlocklist = []string{"evil.example"}
	h := newHarness(t, memory.New(), rules)

	v2 := guardChallenge("10000")
	v2["resource"] = map[string]any{"url": "https://trusted.example/data"}
	v1 := map[string]any{"x402Version": 1, "accepts": []any{map[string]any{"scheme": "exact", "network": "base",
		"maxAmountRequired": "10000", "resource": "https://trusted.example/data", "description": "", "mimeType": "",
		"asset": "0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913", "payTo": guardPayTo, "maxTimeoutSeconds": 60}}}
	for name, ch := range map[string]map[string]any{"v2 resource.url": v2, "v1 accepts[].resource": v1} {
		out := decideBody(t, h, map[string]any{"url": "https://pay.evil.example/data", "challenge": ch})
		if out.Decision != "block" || !slices.Contains(out.Reasons, "block: domain pay.evil.example is on blocklist") {
			t.Errorf("%s claiming a trusted host from a blocklisted one: %s %v", name, out.Decision, out.Reasons)
		}
		out = decideBody(t, h, map[string]any{"challenge": ch})
		if out.Decision != "hold" || !slices.Contains(out.Reasons, "hold: could not determine merchant domain") {
			t.Errorf("%s without the requested URL: %s %v, want a hold on the unknown domain", name, out.Decision, out.Reasons)
		}
	}
	if b := h.budgetState(); b.SpentMicros+b.ReservedMicros != 0 {
		t.Fatalf("refusals reserved: %+v", b)
	}
}

// The decide-only token decides and can do nothing else: no approving its own hold, no reading the queue or
// the budget; the admin token still decides.
func TestDecideTokenCannotApprove(t *testing.T) {
	const decideToken = "decide-only-token-0123456789"
	h := newHarness(t, memory.New(), testRules(), func(o *setup) { o.admin.DecideToken = decideToken })
	body := map[string]any{"url": "https://seller.example/mid", "challenge": guardChallenge("500000")}
	code, b := h.api("POST", "/v1/decide", decideToken, body)
	var out view.GuardDecision
	if code != 200 || json.Unmarshal(b, &out) != nil || out.Decision != "hold" || out.HoldID == "" {
		t.Fatalf("decide with the decide-only token: %d %s", code, b)
	}
	for _, call := range []struct{ method, path string }{
		{"POST", "/v1/holds/" + out.HoldID + "/approve"}, {"POST", "/v1/holds/" + out.HoldID + "/deny"},
		{"GET", "/v1/holds"}, {"GET", "/v1/holds/" + out.HoldID}, {"GET", "/v1/budget"}, {"GET", "/v1/endpoints?url=https://seller.example/mid"},
	} {
		if code, _ := h.api(call.method, call.path, decideToken, map[string]string{"by": "the agent"}); code != 401 {
			t.Errorf("%s %s with the decide-only token = %d, want 401", call.method, call.path, code)
		}
	}
	if hs := h.holds("pending"); len(hs) != 1 || hs[0].ID != out.HoldID {
		t.Fatalf("the decide-only token changed the queue: %+v", hs)
	}
	if code, _ := h.api("POST", "/v1/decide", testToken, body); code != 200 {
		t.Errorf("decide with the admin token = %d", code)
	}
	if code, _ := h.api("POST", "/v1/decide", decideToken+"x", body); code != 401 {
		t.Errorf("decide with a wrong token = %d, want 401", code)
	}
}

func decideBody(t *testing.T, h *harness, body map[string]any) view.GuardDecision {
	t.Helper()
	code, b := h.api("POST", "/v1/decide", testToken, body)
	var out view.GuardDecision
	if code != 200 || json.Unmarshal(b, &out) != nil {
		t.Fatalf("/v1/decide: %d %s", code, b)
	}
	return out
}

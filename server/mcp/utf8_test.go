package mcp

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/payguard/payguard/index"
	"github.com/payguard/payguard/store"
	"github.com/payguard/payguard/x402"
)

// rawPaidCall sends tools/call as raw bytes (so an argument can hold bytes that are not UTF-8, which no SDK
// client would encode) with a payment in params._meta, and returns the tool result's error code ("" for a
// result that is not an error).
func (e *env) rawPaidCall(tool, rawArgs string, pay map[string]any) string {
	e.t.Helper()
	meta, err := json.Marshal(map[string]any{MetaPayment: pay})
	if err != nil {
		e.t.Fatal(err)
	}
	body := `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"` + tool + `","arguments":` + rawArgs +
		`,"_meta":` + string(meta) + `}}`
	resp, b := e.rpc(body, nil)
	if resp.StatusCode != 200 {
		e.t.Fatalf("%s: HTTP %d %s", tool, resp.StatusCode, b)
	}
	var m struct {
		Result struct {
			IsError           bool `json:"isError"`
			StructuredContent struct {
				Error struct{ Code string } `json:"error"`
			} `json:"structuredContent"`
		} `json:"result"`
		Error *struct{ Message string } `json:"error"`
	}
	if err := json.Unmarshal(b, &m); err != nil || m.Error != nil {
		e.t.Fatalf("%s: not a tool result: %s", tool, b)
	}
	if !m.Result.IsError {
		return ""
	}
	if m.Result.StructuredContent.Error.Code == "" {
		return "payment_required"
	}
	return m.Result.StructuredContent.Error.Code
}

// Text that is not UTF-8 in any text argument of a paid tool (a raw invalid byte, or an unpaired surrogate
// escape that encoding/json would quietly turn into U+FFFD) is refused before payment, as GET /v1/check and
// /v1/endpoint refuse it: the facilitator sees no verify and no settle. Per tool and per argument; the same
// payment on a clean argument is then verified and settled, so the refusals are not an artefact of the
// payment.
func TestInvalidUTF8ArgumentsNeverCharged(t *testing.T) {
	e := newEnv(t)
	s := e.session()
	// check_endpoint needs a listed URL for its payment to get as far as the facilitator.
	pr := &x402.PaymentRequired{X402Version: 2, Accepts: []x402.Requirement{{Scheme: "exact", Network: "base",
		Amount: "10000", Asset: "0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913", PayTo: cleanAddr}}}
	for _, u := range []string{"https://seller.example/weather", "https://seller.example/caf\uFFFD"} {
		if err := e.store.PutObservation(context.Background(), index.FromChallenge(u, "GET", pr, time.Now()), store.Retention{}); err != nil {
			t.Fatal(err)
		}
	}
	payeeTerms := e.challengeFor(s, ToolCheckPayee, map[string]any{"wallet": cleanAddr})
	endpointTerms := e.challengeFor(s, ToolCheckEndpoint, map[string]any{"url": "https://seller.example/weather"})
	bad := map[string]string{"raw byte": "\xff", "raw truncated sequence": "\xe2\x82", "lone surrogate escape": `\ud800`}
	cases := []struct {
		tool, arg, prefix string
		want              string
		terms             map[string]any
	}{
		{ToolCheckPayee, "name", "Acme ", "invalid_parameter", payeeTerms},
		{ToolCheckPayee, "domain", "shop.example", "invalid_parameter", payeeTerms},
		{ToolCheckPayee, "wallet", cleanAddr, "invalid_parameter", payeeTerms},
		{ToolCheckEndpoint, "url", "https://seller.example/caf", "invalid_url", endpointTerms},
		{ToolCheckEndpoint, "url", "https://seller.example/weather?city=", "invalid_url", endpointTerms},
	}
	for _, c := range cases {
		for what, b := range bad {
			args := `{"` + c.arg + `":"` + c.prefix + b + `"}`
			if got := e.rawPaidCall(c.tool, args, payment(c.terms)); got != c.want {
				t.Errorf("%s %s with a %s: %q, want %s", c.tool, c.arg, what, got, c.want)
			}
			if n := e.fac.Calls(); n != 0 {
				t.Fatalf("%s %s with a %s: %d facilitator calls, want 0", c.tool, c.arg, what, n)
			}
		}
	}
	// The same path with clean text is paid: verify and settle once each.
	if got := e.rawPaidCall(ToolCheckPayee, `{"name":"Acme \u00e9"}`, payment(payeeTerms)); got != "" {
		t.Fatalf("a clean escaped name: %q", got)
	}
	if e.fac.Verifies.Load() != 1 || e.fac.Settles.Load() != 1 {
		t.Fatalf("clean call: %d verifies, %d settles", e.fac.Verifies.Load(), e.fac.Settles.Load())
	}
	if strings.Contains(e.logs.String(), "panic") {
		t.Fatal("a panic was logged")
	}
}

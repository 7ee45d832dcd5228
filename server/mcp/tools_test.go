package mcp

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/payguard/payguard/receipts"
	"github.com/payguard/payguard/server/internal/metrictest"
	"github.com/payguard/payguard/store"
)

func TestServiceInfoIsFree(t *testing.T) {
	e := newEnv(t)
	s := e.session()
	for i := 0; i < 5; i++ { // more calls than the trial allows: none of them counts
		res, sc := e.call(s, ToolServiceInfo, map[string]any{}, nil)
		if res.IsError {
			t.Fatalf("get_service_info: %v", sc)
		}
		if i > 0 {
			continue
		}
		pay := sc["payment"].(map[string]any)
		if pay["payTo"] != testPayTo || pay["network"] != "eip155:84532" || pay["asset"] != testAsset {
			t.Fatalf("payment terms %v", pay)
		}
		prices := map[string]string{}
		for _, tool := range sc["tools"].([]any) {
			m := tool.(map[string]any)
			prices[m["tool"].(string)] = m["price_usd"].(string)
		}
		want := map[string]string{"check_payee": "0.01", "preflight_payment": "0.02", "check_endpoint": "0.005", "get_service_info": "0"}
		for k, v := range want {
			if prices[k] != v {
				t.Fatalf("prices %v", prices)
			}
		}
		if sc["receipt_keys"] != e.url+"/.well-known/payguard-keys.json" || sc["data_as_of"] == "" || sc["disclaimer"] == "" {
			t.Fatalf("info %v", sc)
		}
	}
	// The three trial calls are all still there.
	for i := 0; i < 3; i++ {
		if res, sc := e.call(s, ToolCheckPayee, map[string]any{"wallet": cleanAddr}, nil); res.IsError {
			t.Fatalf("trial call %d: %v", i+1, sc)
		}
	}
	if e.fac.Calls() != 0 {
		t.Fatal("the facilitator was called")
	}
}

// The trial is one counter for HTTP ?trial=1 and MCP; its end is a payment-required result that never pays.
func TestTrialSharedWithHTTP(t *testing.T) {
	e := newEnv(t)
	for i := 0; i < 2; i++ {
		resp, err := http.Get(e.url + "/v1/check?trial=1&address=" + cleanAddr)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != 200 {
			t.Fatalf("HTTP trial call %d: %d", i+1, resp.StatusCode)
		}
	}
	s := e.session()
	res, sc := e.call(s, ToolCheckPayee, map[string]any{"wallet": sanctioned}, nil)
	if res.IsError || sc["risk"] != "high" {
		t.Fatalf("third (MCP) trial call: %v", sc)
	}
	if tr := res.Meta[MetaTrial].(map[string]any); tr["remaining"] != float64(0) || tr["limit"] != float64(3) {
		t.Fatalf("trial meta %v", res.Meta)
	}
	if _, ok := res.Meta[MetaPaymentResponse]; ok {
		t.Fatal("a trial call carries a settlement")
	}

	res, sc = e.call(s, ToolPreflight, map[string]any{"cart": map[string]any{"merchant_domain": "example.com", "total_usd": 0.1}}, nil)
	pr := paymentRequired(t, res, sc)
	if pr["error"] != "trial_exhausted" {
		t.Fatalf("error %v", pr["error"])
	}
	if tr := pr["trial"].(map[string]any); tr["exhausted"] != true || tr["limit"] != float64(3) {
		t.Fatalf("trial notice %v", pr["trial"])
	}
	acc := pr["accepts"].([]any)[0].(map[string]any)
	if acc["amount"] != "20000" || acc["payTo"] != testPayTo || acc["network"] != "eip155:84532" || acc["asset"] != testAsset {
		t.Fatalf("accepts %v", acc)
	}
	if r := pr["resource"].(map[string]any); r["url"] != "mcp://tool/preflight_payment" {
		t.Fatalf("resource %v", r)
	}
	ext := pr["extensions"].(map[string]any)
	if _, ok := ext["offer-receipt"]; ok {
		t.Fatal("MCP challenges carry no offer-receipt")
	}
	in := ext["bazaar"].(map[string]any)["info"].(map[string]any)["input"].(map[string]any)
	if in["type"] != "mcp" || in["toolName"] != "preflight_payment" || in["inputSchema"].(map[string]any)["type"] != "object" {
		t.Fatalf("bazaar %v", in)
	}
	option := in["inputSchema"].(map[string]any)["properties"].(map[string]any)["challenge"].(map[string]any)["properties"].(map[string]any)["accepts"].(map[string]any)["items"].(map[string]any)
	if _, ok := option["properties"].(map[string]any)["description"]; !ok || option["description"] != nil {
		t.Fatalf("bazaar schema: descriptions stripped, the property named description kept: %v", option)
	}
	if b, _ := json.Marshal(pr); len(b) > 6000 {
		t.Fatalf("the payment-required object is %d bytes", len(b))
	}

	resp, err := http.Get(e.url + "/v1/check?trial=1&address=" + cleanAddr)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusPaymentRequired {
		t.Fatalf("HTTP after the MCP trial call: %d", resp.StatusCode)
	}
	if e.fac.Calls() != 0 {
		t.Fatal("the facilitator was called")
	}
}

// Bad arguments are tool errors before any payment: a payment attached is neither verified nor settled, and
// the free trial is not counted.
func TestBadArgumentsNeverCharged(t *testing.T) {
	e := newEnv(t)
	s := e.session()
	pay := sdk.Meta{MetaPayment: payment(map[string]any{"resource": map[string]any{"url": "mcp://tool/check_payee"},
		"accepts": []any{map[string]any{"scheme": "exact", "network": "eip155:84532", "amount": "10000", "asset": testAsset,
			"payTo": testPayTo, "maxTimeoutSeconds": 60, "extra": map[string]any{"name": "USDC", "version": "2"}}}})}
	deep := map[string]any{"x402Version": 2, "accepts": []any{}}
	cur := deep
	for i := 0; i < 40; i++ {
		next := map[string]any{}
		cur["extensions"] = map[string]any{"x": next}
		cur = next
	}
	manyOptions := make([]any, 33)
	for i := range manyOptions {
		manyOptions[i] = map[string]any{"scheme": "exact", "network": "base"}
	}
	cases := []struct {
		tool string
		args any
		code string // "" for an SDK schema error (no error body)
	}{
		{ToolCheckPayee, map[string]any{}, "missing_input"},
		{ToolCheckPayee, map[string]any{"name": "   "}, "missing_input"},
		{ToolCheckPayee, map[string]any{"wallet": strings.Repeat("a", 300)}, ""},
		{ToolCheckPayee, map[string]any{"address": cleanAddr}, ""}, // HTTP's name, not the tool's
		{ToolCheckPayee, map[string]any{"name": 7}, ""},
		{ToolPreflight, map[string]any{"challenge": map[string]any{"x402Version": 3, "accepts": []any{}}}, ""},
		{ToolPreflight, map[string]any{"challenge": map[string]any{"x402Version": 2, "accepts": manyOptions}}, ""},
		{ToolPreflight, map[string]any{"challenge": deep}, "too_deep"},
		{ToolPreflight, map[string]any{"rules": map[string]any{"max_per_payment": 1}}, ""},
		{ToolPreflight, map[string]any{"rules": map[string]any{"max_price_multiple": 0}}, ""},
		{ToolPreflight, map[string]any{"cart": map[string]any{"total_usd": "1"}}, ""},
		{ToolPreflight, map[string]any{"cart": map[string]any{"merchant_domain": strings.Repeat("a", 3000), "total_usd": 1}}, ""},
		{ToolPreflight, map[string]any{"challenge": map[string]any{"x402Version": 2, "accepts": []any{map[string]any{"scheme": "exact", "network": "base", "amount": 5}}}}, ""},
		{ToolCheckEndpoint, map[string]any{"url": "ftp://example.com/x"}, "invalid_url"},
		{ToolCheckEndpoint, map[string]any{"url": "https://user:pw@example.com/x"}, "invalid_url"},
		{ToolCheckEndpoint, map[string]any{"url": "https://example.com/x", "method": "FETCH"}, ""},
	}
	for _, c := range cases {
		res, sc := e.call(s, c.tool, c.args, pay)
		if !res.IsError {
			t.Errorf("%s %v: not an error: %v", c.tool, c.args, sc)
			continue
		}
		if c.code == "" {
			if text := res.Content[0].(*sdk.TextContent).Text; !strings.Contains(text, "validating") {
				t.Errorf("%s %v: want a schema error, got %s", c.tool, c.args, text)
			}
			continue
		}
		if got := errCode(t, res, sc); got != c.code {
			t.Errorf("%s %v: code %s, want %s", c.tool, c.args, got, c.code)
		}
	}
	e.sanctions.off.Store(true)
	res, sc := e.call(s, ToolCheckPayee, map[string]any{"wallet": cleanAddr}, pay)
	if code := errCode(t, res, sc); code != "sanctions_data_unavailable" {
		t.Fatalf("no sanctions list: %s", code)
	}
	res, sc = e.call(s, ToolPreflight, map[string]any{"cart": map[string]any{"total_usd": 0.1}}, nil)
	if code := errCode(t, res, sc); code != "sanctions_data_unavailable" {
		t.Fatalf("no sanctions list (trial): %s", code)
	}
	e.sanctions.off.Store(false)

	if e.fac.Calls() != 0 {
		t.Fatalf("facilitator called %d times for bad arguments", e.fac.Calls())
	}
	for i := 0; i < 3; i++ { // the trial is untouched
		if res, sc := e.call(s, ToolCheckPayee, map[string]any{"name": "Acme Widgets LLC"}, nil); res.IsError {
			t.Fatalf("trial call %d after bad arguments: %v", i+1, sc)
		}
	}
}

func TestPaidCheckPayeeSettlesOnce(t *testing.T) {
	e := newEnv(t)
	s := e.session()
	args := map[string]any{"wallet": sanctioned, "name": "Lazarus Group"}
	pr := e.challengeFor(s, ToolCheckPayee, args)
	acc := pr["accepts"].([]any)[0].(map[string]any)
	if acc["amount"] != "10000" || pr["resource"].(map[string]any)["url"] != "mcp://tool/check_payee" {
		t.Fatalf("terms %v", pr)
	}
	p := payment(pr)
	res, sc := e.call(s, ToolCheckPayee, args, sdk.Meta{MetaPayment: p})
	if res.IsError || sc["risk"] != "high" {
		t.Fatalf("paid check: %v", sc)
	}
	settled, _ := res.Meta[MetaPaymentResponse].(map[string]any)
	if settled["success"] != true || settled["transaction"] != "0xabc" || settled["payer"] != testPayer {
		t.Fatalf("settlement %v", res.Meta)
	}
	if e.fac.Verifies.Load() != 1 || e.fac.Settles.Load() != 1 {
		t.Fatalf("verify %d settle %d", e.fac.Verifies.Load(), e.fac.Settles.Load())
	}
	var req struct {
		PaymentRequirements map[string]any `json:"paymentRequirements"`
		PaymentPayload      map[string]any `json:"paymentPayload"`
	}
	json.Unmarshal(e.fac.LastSettle(), &req)
	if req.PaymentRequirements["amount"] != "10000" || req.PaymentRequirements["payTo"] != testPayTo ||
		req.PaymentPayload["payload"].(map[string]any)["authorization"].(map[string]any)["nonce"] !=
			p["payload"].(map[string]any)["authorization"].(map[string]any)["nonce"] {
		t.Fatalf("settled %v", req)
	}

	// The same payment again for the same question: the kept result (SPEC §8.6), nothing settled again.
	res, sc = e.call(s, ToolCheckPayee, args, sdk.Meta{MetaPayment: p})
	if res.IsError || sc["risk"] != "high" || res.Meta[MetaPaymentResponse].(map[string]any)["transaction"] != "0xabc" {
		t.Fatalf("retry: %v %v", sc, res.Meta)
	}
	// For another question: refused before /settle, and the work is not delivered.
	res, sc = e.call(s, ToolCheckPayee, map[string]any{"wallet": cleanAddr}, sdk.Meta{MetaPayment: p})
	if pr := paymentRequired(t, res, sc); pr["error"] != "invalid_exact_evm_nonce_already_used" {
		t.Fatalf("replay: %v", pr["error"])
	}
	if e.fac.Settles.Load() != 1 {
		t.Fatalf("a replay reached /settle")
	}
	// One server line per request, no SDK session chatter, no caller data (wallet, name, payer, IP).
	logs := e.logs.String()
	for _, banned := range []string{"server connecting", "session", sanctioned, "Lazarus", testPayer, "127.0.0.1"} {
		if strings.Contains(logs, banned) {
			t.Fatalf("the log contains %q:\n%s", banned, logs)
		}
	}
	if !strings.Contains(logs, `"path":"/mcp"`) || !strings.Contains(logs, `"mcp tool paid"`) {
		t.Fatalf("no request lines for /mcp:\n%s", logs)
	}
	// Paid calls did not use the trial.
	for i := 0; i < 3; i++ {
		if res, sc := e.call(s, ToolCheckPayee, map[string]any{"wallet": cleanAddr}, nil); res.IsError {
			t.Fatalf("trial call %d: %v", i+1, sc)
		}
	}
}

func TestPaidPreflightCarriesOnlyTheDecisionJWS(t *testing.T) {
	e := newEnv(t)
	s := e.session()
	args := map[string]any{"cart": map[string]any{"merchant_domain": "example.com", "total_usd": 0.1, "pay_to": cleanAddr},
		"rules": map[string]any{"max_per_payment_usd": 0.5}, "context": map[string]any{"spent_today_usd": 1}}
	pr := e.challengeFor(s, ToolPreflight, args)
	res, sc := e.call(s, ToolPreflight, args, sdk.Meta{MetaPayment: payment(pr)})
	if res.IsError {
		t.Fatalf("paid preflight: %v", res.Content[0].(*sdk.TextContent).Text)
	}
	if d := sc["decision"]; d != "allow" && d != "hold" && d != "block" {
		t.Fatalf("decision %v", sc)
	}
	raw, _ := json.Marshal(sc)
	if err := receipts.VerifyResult(raw, e.jwks, receipts.VerifyOptions{}); err != nil {
		t.Fatalf("the decision's receipt does not verify: %v", err)
	}
	settled := res.Meta[MetaPaymentResponse].(map[string]any)
	if settled["success"] != true || settled["extensions"] != nil {
		t.Fatalf("settlement %v (no offer-receipt on MCP)", settled)
	}
	if !strings.Contains(string(e.fac.LastSettle()), `"amount":"20000"`) {
		t.Fatalf("settled %s", e.fac.LastSettle())
	}
}

func TestPaymentFailures(t *testing.T) {
	e := newEnv(t)
	s := e.session()
	args := map[string]any{"wallet": cleanAddr}
	pr := e.challengeFor(s, ToolCheckPayee, args)

	e.fac.VerifyMode.Store("down")
	res, sc := e.call(s, ToolCheckPayee, args, sdk.Meta{MetaPayment: payment(pr)})
	if code := errCode(t, res, sc); code != "facilitator_unavailable" {
		t.Fatalf("outage: %s", code)
	}
	e.fac.VerifyMode.Store("invalid")
	res, sc = e.call(s, ToolCheckPayee, args, sdk.Meta{MetaPayment: payment(pr)})
	if got := paymentRequired(t, res, sc)["error"]; got != "invalid_exact_evm_payload_signature" {
		t.Fatalf("invalid payment: %v", got)
	}
	e.fac.VerifyMode.Store("valid")
	if e.fac.Settles.Load() != 0 {
		t.Fatal("settled after a failed verification")
	}

	// A payment for another tool's price does not match these terms.
	prPre := e.challengeFor(s, ToolPreflight, map[string]any{})
	res, sc = e.call(s, ToolCheckPayee, args, sdk.Meta{MetaPayment: payment(prPre)})
	if got := paymentRequired(t, res, sc)["error"]; got != "invalid_payment_requirements" {
		t.Fatalf("wrong price: %v", got)
	}

	e.fac.SettleMode.Store("fail")
	res, sc = e.call(s, ToolCheckPayee, args, sdk.Meta{MetaPayment: payment(pr)})
	pf := paymentRequired(t, res, sc)
	if pf["error"] != "insufficient_funds" || pf[MetaPaymentResponse].(map[string]any)["success"] != false {
		t.Fatalf("settle failure: %v", pf)
	}
	if strings.Contains(res.Content[0].(*sdk.TextContent).Text, `"risk"`) {
		t.Fatal("the work was delivered although settlement failed")
	}

	e.fac.SettleMode.Store("5xx")
	p := payment(pr)
	res, sc = e.call(s, ToolCheckPayee, args, sdk.Meta{MetaPayment: p})
	if code := errCode(t, res, sc); code != "settlement_outcome_unknown" {
		t.Fatalf("settle 5xx: %s", code)
	}
	if sc["error"].(map[string]any)["nonce"] != p["payload"].(map[string]any)["authorization"].(map[string]any)["nonce"] {
		t.Fatalf("no nonce to check on chain: %v", sc)
	}

	// Signing unavailable: the decision cannot be made, nothing is settled.
	e.fac.SettleMode.Store("success")
	settles := e.fac.Settles.Load()
	e.signer.fail.Store(true)
	prPre = e.challengeFor(s, ToolPreflight, map[string]any{})
	res, sc = e.call(s, ToolPreflight, map[string]any{"cart": map[string]any{"total_usd": 0.1}}, sdk.Meta{MetaPayment: payment(prPre)})
	if code := errCode(t, res, sc); code != "receipt_signing_unavailable" {
		t.Fatalf("signing down: %s", code)
	}
	if e.fac.Settles.Load() != settles {
		t.Fatal("settled although the decision could not be signed")
	}
}

func TestCheckEndpoint(t *testing.T) {
	e := newEnv(t)
	s := e.session()
	ctx := context.Background()
	now := time.Now()
	put := func(url, method string, at time.Time) {
		if err := e.store.PutObservation(ctx, store.Observation{URL: url, Method: method, ObservedAt: at, Status: 402,
			Usable: true, Challenge: []byte(`{"x402Version":1,"accepts":[]}`)}, store.Retention{}); err != nil {
			t.Fatal(err)
		}
	}
	put("https://old.example/x", "GET", now.Add(-72*time.Hour))
	res, sc := e.call(s, ToolCheckEndpoint, map[string]any{"url": "https://old.example/x"}, nil)
	if code := errCode(t, res, sc); code != "index_unavailable" {
		t.Fatalf("stale index: %s", code)
	}
	put("https://api.example/data", "GET", now.Add(-time.Hour))
	put("https://api.example/multi", "GET", now.Add(-time.Hour))
	put("https://api.example/multi", "POST", now.Add(-time.Hour))
	for url, want := range map[string]string{"https://api.example/none": "endpoint_not_listed", "https://api.example/multi": "method_required"} {
		res, sc := e.call(s, ToolCheckEndpoint, map[string]any{"url": url}, nil)
		if code := errCode(t, res, sc); code != want {
			t.Fatalf("%s: %s", url, code)
		}
	}
	// No trial: the first call already asks for payment.
	res, sc = e.call(s, ToolCheckEndpoint, map[string]any{"url": "https://api.example/data"}, nil)
	pr := paymentRequired(t, res, sc)
	if pr["error"] != "Payment required" || pr["accepts"].([]any)[0].(map[string]any)["amount"] != "5000" {
		t.Fatalf("terms %v", pr)
	}
	res, sc = e.call(s, ToolCheckEndpoint, map[string]any{"url": "https://api.example/multi", "method": "POST"}, sdk.Meta{MetaPayment: payment(pr)})
	if res.IsError || sc["method"] != "POST" || len(sc["observations"].([]any)) != 1 || sc["data_as_of"] == "" {
		t.Fatalf("paid lookup: %v %v", sc, res.Content[0].(*sdk.TextContent).Text)
	}
	if res.Meta[MetaPaymentResponse].(map[string]any)["success"] != true || e.fac.Settles.Load() != 1 {
		t.Fatal("not settled")
	}
}

func TestResourcesAndPrompts(t *testing.T) {
	e := newEnv(t)
	s := e.session()
	ctx := context.Background()
	rl, err := s.ListResources(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(rl.Resources) != 3 {
		t.Fatalf("resources %v", rl.Resources)
	}
	bodies := map[string]map[string]any{}
	for _, r := range rl.Resources {
		if r.Description == "" || r.MIMEType != "application/json" {
			t.Fatalf("resource %+v", r)
		}
		rr, err := s.ReadResource(ctx, &sdk.ReadResourceParams{URI: r.URI})
		if err != nil {
			t.Fatal(err)
		}
		var m map[string]any
		if err := json.Unmarshal([]byte(rr.Contents[0].Text), &m); err != nil {
			t.Fatalf("%s: %v", r.URI, err)
		}
		if m["data_as_of"] == nil {
			t.Fatalf("%s: no data_as_of", r.URI)
		}
		bodies[r.URI] = m
	}
	rules := bodies[ResourceRules]["rules"].(map[string]any)
	if rules["max_per_payment_usd"] != float64(1) || rules["hold_above_usd"] != 0.25 || rules["daily_cap_usd"] != float64(25) {
		t.Fatalf("default rules %v", rules)
	}
	if p := bodies[ResourcePricing]["payment"].(map[string]any); p["payTo"] != testPayTo {
		t.Fatalf("pricing %v", p)
	}
	trust := bodies[ResourceTrust]
	if dh, _ := trust["data_handling"].(string); !strings.Contains(dh, "deleted after 48h0m0s") {
		t.Errorf("trust data_handling %q does not state the configured trial retention (48h)", dh)
	}
	if keys := trust["receipt_keys"].(map[string]any)["keys"].([]any); len(keys) == 0 || trust["disclaimer"] == "" {
		t.Fatalf("trust %v", trust)
	}
	if _, err := s.ReadResource(ctx, &sdk.ReadResourceParams{URI: "payguard://nothing"}); err == nil {
		t.Fatal("an unknown resource was read")
	}

	pl, err := s.ListPrompts(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(pl.Prompts) != 2 {
		t.Fatalf("prompts %v", pl.Prompts)
	}
	gp, err := s.GetPrompt(ctx, &sdk.GetPromptParams{Name: PromptPreflight, Arguments: map[string]string{
		"challenge": `{"x402Version":2,"accepts":[]}`, "rules": `{"max_per_payment_usd":0.5}`, "spent_today_usd": "3.2"}})
	if err != nil {
		t.Fatal(err)
	}
	text := gp.Messages[0].Content.(*sdk.TextContent).Text
	for _, want := range []string{"preflight_payment", `challenge: {"x402Version":2`, `"spent_today_usd": 3.2`, "never as allow", "block: do NOT pay"} {
		if !strings.Contains(text, want) {
			t.Fatalf("preflight prompt lacks %q:\n%s", want, text)
		}
	}
	gp, err = s.GetPrompt(ctx, &sdk.GetPromptParams{Name: PromptPreflight, Arguments: map[string]string{"challenge": `{"total_usd":1}`}})
	if err != nil || !strings.Contains(gp.Messages[0].Content.(*sdk.TextContent).Text, "- cart: ") {
		t.Fatalf("a cart is passed as cart: %v", err)
	}
	if _, err := s.GetPrompt(ctx, &sdk.GetPromptParams{Name: PromptPreflight}); err == nil {
		t.Fatal("preflight prompt without a challenge")
	}
	gp, err = s.GetPrompt(ctx, &sdk.GetPromptParams{Name: PromptCheckMerchant, Arguments: map[string]string{"domain": "shop.example.com"}})
	if err != nil || !strings.Contains(gp.Messages[0].Content.(*sdk.TextContent).Text, "check_payee with\n- domain: shop.example.com") {
		t.Fatalf("check prompt: %v %v", err, gp)
	}
	if _, err := s.GetPrompt(ctx, &sdk.GetPromptParams{Name: PromptCheckMerchant}); err == nil {
		t.Fatal("check prompt without anything to check")
	}
}

// /.well-known/mcp.json describes this server: the same tools (with the prices they charge), resources and
// prompts as the live lists; /openapi.json and /llms.txt point at /mcp.
func TestDiscoveryDocument(t *testing.T) {
	e := newEnv(t)
	get := func(path string) []byte {
		resp, err := http.Get(e.url + path)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		if resp.StatusCode != 200 {
			t.Fatalf("%s: %d", path, resp.StatusCode)
		}
		return b
	}
	var doc struct {
		Endpoint, Transport, ProtocolVersion string
		Tools                                []struct{ Name, Price, Resource string }
		Resources                            []struct{ URI string }
		Prompts                              []struct {
			Name      string
			Arguments []string
		}
		Payment map[string]any
	}
	if err := json.Unmarshal(get("/.well-known/mcp.json"), &doc); err != nil {
		t.Fatal(err)
	}
	if doc.Endpoint != e.url+"/mcp" || doc.Transport != "streamable-http" || doc.ProtocolVersion != "2025-03-26" ||
		doc.Payment["payTo"] != testPayTo {
		t.Fatalf("mcp.json %+v", doc)
	}
	s := e.session()
	ctx := context.Background()
	tl, err := s.ListTools(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	live := map[string]bool{}
	for _, tool := range tl.Tools {
		live[tool.Name] = true
	}
	if len(doc.Tools) != len(live) {
		t.Fatalf("mcp.json lists %d tools, the server %d", len(doc.Tools), len(live))
	}
	for _, tool := range doc.Tools {
		if !live[tool.Name] {
			t.Fatalf("mcp.json lists %s, which the server does not offer", tool.Name)
		}
		if pt := e.handler.tools[tool.Name]; pt != nil {
			if tool.Price != e.handler.price(tool.Name) || tool.Resource != pt.offer.URL {
				t.Fatalf("%s: mcp.json says %s at %s, the tool charges %s at %s", tool.Name, tool.Price, tool.Resource, e.handler.price(tool.Name), pt.offer.URL)
			}
		} else if tool.Price != "free" {
			t.Fatalf("%s: %s", tool.Name, tool.Price)
		}
	}
	rl, err := s.ListResources(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(rl.Resources) != len(doc.Resources) {
		t.Fatalf("resources: %d live, %d documented", len(rl.Resources), len(doc.Resources))
	}
	for i, r := range rl.Resources {
		found := false
		for _, d := range doc.Resources {
			found = found || d.URI == r.URI
		}
		if !found {
			t.Fatalf("resource %d %s is not in mcp.json", i, r.URI)
		}
	}
	pl, err := s.ListPrompts(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(pl.Prompts) != len(doc.Prompts) {
		t.Fatalf("prompts: %d live, %d documented", len(pl.Prompts), len(doc.Prompts))
	}
	for _, p := range pl.Prompts {
		var args []string
		for _, a := range p.Arguments {
			args = append(args, a.Name)
		}
		found := false
		for _, d := range doc.Prompts {
			found = found || (d.Name == p.Name && strings.Join(d.Arguments, ",") == strings.Join(args, ","))
		}
		if !found {
			t.Fatalf("prompt %s(%v) is not in mcp.json as served", p.Name, args)
		}
	}
	var oa struct{ Paths map[string]map[string]any }
	if err := json.Unmarshal(get("/openapi.json"), &oa); err != nil || oa.Paths["/mcp"]["post"] == nil {
		t.Fatalf("/openapi.json does not describe POST /mcp: %v", err)
	}
	if !strings.Contains(string(get("/llms.txt")), "Remote MCP server at "+e.url+"/mcp") {
		t.Fatal("/llms.txt does not point at /mcp")
	}
}

// An x402 v1 PaymentPayload in _meta is matched by scheme and network (v1 names) and settled as v1.
func TestV1PaymentInMeta(t *testing.T) {
	e := newEnv(t)
	s := e.session()
	p := map[string]any{"x402Version": 1, "scheme": "exact", "network": "base-sepolia",
		"payload": map[string]any{"signature": "0x" + strings.Repeat("cd", 65), "authorization": map[string]any{
			"from": testPayer, "to": testPayTo, "value": "10000", "validAfter": "0",
			"validBefore": fmt.Sprint(time.Now().Add(time.Minute).Unix()), "nonce": fmt.Sprintf("0x%064x", 42)}}}
	res, sc := e.call(s, ToolCheckPayee, map[string]any{"name": "Acme Widgets LLC"}, sdk.Meta{MetaPayment: p})
	if res.IsError || res.Meta[MetaPaymentResponse].(map[string]any)["success"] != true {
		t.Fatalf("v1 payment: %v %v", sc, res.Meta)
	}
	var req struct {
		X402Version         int            `json:"x402Version"`
		PaymentRequirements map[string]any `json:"paymentRequirements"`
	}
	if err := json.Unmarshal(e.fac.LastSettle(), &req); err != nil {
		t.Fatal(err)
	}
	if req.X402Version != 1 || req.PaymentRequirements["maxAmountRequired"] != "10000" ||
		req.PaymentRequirements["resource"] != "mcp://tool/check_payee" {
		t.Fatalf("settled %s", e.fac.LastSettle())
	}
}

// MCP sales and trial calls are counted in the server's payment and trial metrics, under the route /mcp.
func TestSalesAndTrialsAreCounted(t *testing.T) {
	e := newEnv(t)
	s := e.session()
	args := map[string]any{"wallet": cleanAddr}
	for i := 0; i < 4; i++ { // three free calls, then the trial is exhausted
		e.call(s, ToolCheckPayee, args, nil)
	}
	p := payment(e.challengeFor(s, ToolCheckPayee, args))
	if res, sc := e.call(s, ToolCheckPayee, args, sdk.Meta{MetaPayment: p}); res.IsError {
		t.Fatalf("paid call: %v", sc)
	}
	e.call(s, ToolCheckPayee, args, sdk.Meta{MetaPayment: p})                           // the retry: the kept result
	e.call(s, ToolCheckPayee, map[string]any{"name": "Acme"}, sdk.Meta{MetaPayment: p}) // the replay: refused
	e.fac.VerifyMode.Store("5xx")
	e.call(s, ToolCheckPayee, args, sdk.Meta{MetaPayment: payment(e.challengeFor(s, ToolCheckPayee, args))})
	got := metrictest.Counters(t, e.registry)
	for key, want := range map[string]float64{
		"payguard_server_payments_total|settled|/mcp":                 1,
		"payguard_server_payments_total|invalid|/mcp":                 3, // challengeFor's two malformed payments, the replay
		"payguard_server_payments_total|facilitator_unavailable|/mcp": 1,
		"payguard_server_payments_total|redelivered|/mcp":             1,
		"payguard_server_trial_calls_total|granted":                   3,
		"payguard_server_trial_calls_total|exhausted":                 1, // the fourth free call
	} {
		if got[key] != want {
			t.Errorf("%s = %v, want %v (all: %v)", key, got[key], want, got)
		}
	}
}

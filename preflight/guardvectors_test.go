package preflight

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"testing"
	"time"

	"github.com/payguard/payguard/policy"
)

// The guard vectors: the in-process guards' real path, held to this engine. A sequence is one guard (its
// rules, its budget) meeting challenges in order, each as the seller sent it (with its resource.url claim)
// and the URL the agent requested ("" when the guard cannot know it), and onHold's answer. The engine
// decides each on the requested URL only (the claims removed, as the proxy does), with the budget spent so
// far; an allow, or a hold approved, pays and adds its amount. The client suites run every sequence through
// the official SDKs (their option selection, hooks and real signatures) and must agree on the option signed,
// the decision, the reasons and the budget after each step. `go test ./preflight -run TestGuardVectors
// -update` rewrites the file.

const guardVectorsPath = "../testdata/vectors/guard.json"

type guardStepExpect struct {
	Decision string   `json:"decision"`
	Reasons  []string `json:"reasons"`
	// Selected is the option the engine decided on (chosen, or the held one a person approves), an index into
	// the challenge's accepts; -1 when none. It is the option the guard lets the SDK sign.
	Selected     int   `json:"selected"`
	AmountMicros int64 `json:"amount_micros"`
	// Paid: an allow, or a hold whose onHold answered true. SpentAfterMicros is the guard's budget after.
	Paid             bool  `json:"paid"`
	SpentAfterMicros int64 `json:"spent_after_micros"`
}

type guardStep struct {
	Name      string          `json:"name"`
	Challenge json.RawMessage `json:"challenge"`
	URL       string          `json:"url"`
	Approve   bool            `json:"approve"`
	Expect    guardStepExpect `json:"expect"`
}

type guardSequence struct {
	Name  string          `json:"name"`
	Rules json.RawMessage `json:"rules"` // snake_case; screen_sanctions off (the guards have no list in process)
	Steps []guardStep     `json:"steps"`
}

type guardVectorFile struct {
	Comment   string          `json:"comment"`
	Sequences []guardSequence `json:"sequences"`
}

const (
	gvBaseUSDC    = "0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913"
	gvSepoliaUSDC = "0x036CbD53842c5426634e7929541eC2318f3dCF7e"
	gvPayee       = "0x70997970C51812dc3A010C7d01b50e0d17dc79C8"
	gvOther       = "0x3C44CdDdB6a900fa2b585dd299e03d12FA4293BC"
)

func gvOption(network, asset, amount, payTo string) map[string]any {
	return map[string]any{"scheme": "exact", "network": network, "amount": amount, "asset": asset, "payTo": payTo,
		"maxTimeoutSeconds": 60, "extra": map[string]any{"name": "USD Coin", "version": "2"}}
}

// gvUpto is an upto option on Base USDC as @x402/express sends it: amount is the maximum; Permit2, with the
// facilitator the payment is bound to.
func gvUpto(amount string) map[string]any {
	o := gvOption("eip155:8453", gvBaseUSDC, amount, gvPayee)
	o["scheme"] = "upto"
	o["extra"] = map[string]any{"name": "USD Coin", "version": "2", "assetTransferMethod": "permit2",
		"facilitatorAddress": "0xfAB8bd2A52607c1e3D7cFd8182a795F12060B393"}
	return o
}

func gvBase(amount string) map[string]any {
	return gvOption("eip155:8453", gvBaseUSDC, amount, gvPayee)
}

func gvChallenge(claim string, options ...map[string]any) json.RawMessage {
	accepts := make([]any, len(options))
	for i, o := range options {
		accepts[i] = o
	}
	b, _ := json.Marshal(map[string]any{"x402Version": 2,
		"resource": map[string]any{"url": claim, "description": "", "mimeType": "application/json"}, "accepts": accepts})
	return b
}

func gvV1(claim, amount string) json.RawMessage {
	b, _ := json.Marshal(map[string]any{"x402Version": 1, "error": "X-PAYMENT header is required", "accepts": []any{map[string]any{
		"scheme": "exact", "network": "base", "maxAmountRequired": amount, "resource": claim, "description": "",
		"mimeType": "application/json", "payTo": gvPayee, "maxTimeoutSeconds": 60, "asset": gvBaseUSDC,
		"extra": map[string]any{"name": "USD Coin", "version": "2"}}}})
	return b
}

const gvURL = "https://api.shop.example/data"

func buildGuardSequences() []guardSequence {
	local := json.RawMessage(`{"screen_sanctions":false}`)
	step := func(name string, ch json.RawMessage, url string, approve bool) guardStep {
		return guardStep{Name: name, Challenge: ch, URL: url, Approve: approve}
	}
	return []guardSequence{
		{"same price on two networks: Base, as the engine chooses", local, []guardStep{
			step("base-sepolia first, Base second", gvChallenge(gvURL, gvOption("eip155:84532", gvSepoliaUSDC, "10000", gvPayee), gvBase("10000")), gvURL, false),
		}},
		{"the cheapest acceptable option", local, []guardStep{
			step("$0.05 then $0.02 to another payee", gvChallenge(gvURL, gvBase("50000"), gvOption("eip155:8453", gvBaseUSDC, "20000", gvOther)), gvURL, false),
			step("an unsupported network cheaper than Base", gvChallenge(gvURL, gvOption("eip155:84532", gvSepoliaUSDC, "1000", gvPayee), gvBase("30000")), gvURL, false),
		}},
		{"a daily budget spent in steps", json.RawMessage(`{"screen_sanctions":false,"daily_cap_usd":0.03}`), []guardStep{
			step("first cent", gvChallenge(gvURL, gvBase("10000")), gvURL, false),
			step("second cent", gvChallenge(gvURL, gvBase("10000")), gvURL, false),
			step("two cents over what is left", gvChallenge(gvURL, gvBase("20000")), gvURL, false),
			step("third cent", gvChallenge(gvURL, gvBase("10000")), gvURL, false),
			step("fourth cent", gvChallenge(gvURL, gvBase("10000")), gvURL, false),
		}},
		{"a per-option hold carries its amount", json.RawMessage(`{"screen_sanctions":false,"daily_cap_usd":1,"hold_above_usd":1,"strict_allowlist":true,` +
			`"domain_allowlist":["shop.example"],"payto_allowlist":["` + gvOther + `"]}`), []guardStep{
			step("$0.90 to a payee off the allowlist, approved", gvChallenge(gvURL, gvBase("900000")), gvURL, true),
			step("$0.90 again, approved, over the cap", gvChallenge(gvURL, gvBase("900000")), gvURL, true),
			step("$0.05 to the allowlisted payee", gvChallenge(gvURL, gvOption("eip155:8453", gvBaseUSDC, "50000", gvOther)), gvURL, false),
		}},
		{"a held option among blocked ones", json.RawMessage(`{"screen_sanctions":false,"strict_allowlist":true,"domain_allowlist":["shop.example"],"payto_allowlist":["` + gvOther + `"]}`), []guardStep{
			step("over the max, and a payee off the allowlist", gvChallenge(gvURL, gvOption("eip155:8453", gvBaseUSDC, "5000000", gvOther), gvBase("100000")), gvURL, true),
		}},
		{"a refused hold gives its reservation back", json.RawMessage(`{"screen_sanctions":false,"daily_cap_usd":0.6}`), []guardStep{
			step("$0.50 above the threshold, refused", gvChallenge(gvURL, gvBase("500000")), gvURL, false),
			step("$0.50 again, approved", gvChallenge(gvURL, gvBase("500000")), gvURL, true),
			step("$0.20 over what is left", gvChallenge(gvURL, gvBase("200000")), gvURL, false),
		}},
		{"the requested URL, never the seller's claim", json.RawMessage(`{"screen_sanctions":false,"domain_blocklist":["evil.example"],"domain_allowlist":["shop.example"]}`), []guardStep{
			step("a blocklisted host claiming an allowlisted one", gvChallenge(gvURL, gvBase("10000")), "https://pay.evil.example/data", false),
			step("no URL known: the claim does not count", gvChallenge(gvURL, gvBase("10000")), "", false),
			step("no URL known, a person approves", gvChallenge(gvURL, gvBase("10000")), "", true),
			step("the allowlisted host itself", gvChallenge("https://pay.evil.example/x", gvBase("10000")), gvURL, false),
		}},
		{"v1: the requirement's resource is a claim too", json.RawMessage(`{"screen_sanctions":false,"domain_blocklist":["evil.example"]}`), []guardStep{
			step("v1 from a blocklisted host claiming another", gvV1(gvURL, "10000"), "https://evil.example/v1", false),
			step("v1 from the host it names", gvV1(gvURL, "10000"), gvURL, false),
		}},
		{"upto: the maximum is judged, signed and carried by the budget", json.RawMessage(`{"screen_sanctions":false,"daily_cap_usd":0.5}`), []guardStep{
			step("an upto maximum of $0.20", gvChallenge(gvURL, gvUpto("200000")), gvURL, false),
			step("an upto maximum of $0.28 above the hold threshold, refused", gvChallenge(gvURL, gvUpto("280000")), gvURL, false),
			step("an upto maximum cheaper than an exact price", gvChallenge(gvURL, gvBase("20000"), gvUpto("10000")), gvURL, false),
			step("an upto maximum over what is left", gvChallenge(gvURL, gvUpto("300000")), gvURL, false),
		}},
		{"later-settling schemes are refused beside exact", local, []guardStep{
			step("batch-settlement cheaper than exact", gvChallenge(gvURL, map[string]any{"scheme": "batch-settlement", "network": "eip155:8453",
				"amount": "1", "asset": gvBaseUSDC, "payTo": gvPayee, "maxTimeoutSeconds": 60}, gvBase("10000")), gvURL, false),
			step("auth-capture alone", gvChallenge(gvURL, map[string]any{"scheme": "auth-capture", "network": "eip155:8453",
				"amount": "10000", "asset": gvBaseUSDC, "payTo": gvPayee, "maxTimeoutSeconds": 60}), gvURL, true),
		}},
		{"nothing acceptable", local, []guardStep{
			step("over the max and on Ethereum", gvChallenge(gvURL, gvBase("5000000"), gvOption("eip155:1", "0xA0b86991c6218b36c1d19D4a2e9Eb0cE3606eB48", "10000", gvPayee)), gvURL, true),
		}},
	}
}

// judgedInput is the engine input for a guard step: the challenge with its claims replaced by the URL the
// agent requested (the proxy's decisionChallenge), the rules and the budget spent so far.
func judgedInput(t *testing.T, ch json.RawMessage, url string, rules json.RawMessage, spent int64) []byte {
	t.Helper()
	var c map[string]any
	if err := json.Unmarshal(ch, &c); err != nil {
		t.Fatal(err)
	}
	if v, _ := c["x402Version"].(float64); v != 1 {
		res, _ := c["resource"].(map[string]any)
		cp := map[string]any{}
		for k, v := range res {
			cp[k] = v
		}
		cp["url"] = url
		c["resource"] = cp
	}
	accepts, _ := c["accepts"].([]any)
	for _, a := range accepts {
		if m, ok := a.(map[string]any); ok {
			delete(m, "resource")
		}
	}
	in := map[string]any{"challenge": c, "rules": json.RawMessage(rules),
		"context": map[string]any{"spent_today_usd": json.Number(policy.USD(spent).String())}}
	if url != "" {
		in["resource_url"] = url
	}
	b, err := json.Marshal(in)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestGuardVectors(t *testing.T) {
	seqs := buildGuardSequences()
	signer := testKeys(t)
	engine := New(Options{Rules: policy.DefaultRules(), Signer: signer, Now: func() time.Time { return testNow }})
	seen := map[string]bool{}
	for si := range seqs {
		s := &seqs[si]
		var spent int64
		for i := range s.Steps {
			st := &s.Steps[i]
			in, err := ParseInput(judgedInput(t, st.Challenge, st.URL, s.Rules, spent))
			if err != nil {
				t.Fatalf("%s / %s: %v", s.Name, st.Name, err)
			}
			res, err := engine.DecideUnsigned(context.Background(), in)
			if err != nil {
				t.Fatal(err)
			}
			paid := res.Decision == "allow" || (res.Decision == "hold" && st.Approve)
			if paid {
				spent += res.AmountMicros
			}
			st.Expect = guardStepExpect{Decision: res.Decision, Reasons: res.Reasons, Selected: res.ChosenIndex,
				AmountMicros: res.AmountMicros, Paid: paid, SpentAfterMicros: spent}
			seen[res.Decision] = true
			if paid {
				seen["paid"] = true
			}
			if res.Decision == "hold" && res.ChosenIndex >= 0 && res.AmountMicros > 0 {
				seen["hold with an amount"] = true
			}
		}
	}
	for _, want := range []string{"allow", "hold", "block", "paid", "hold with an amount"} {
		if !seen[want] {
			t.Errorf("no guard step produces %q", want)
		}
	}
	file := guardVectorFile{
		Comment: "Generated by `go test ./preflight -run TestGuardVectors -update` from the Go engine; do not edit. " +
			"clients/js and clients/python run every sequence through the official SDKs with one guard per sequence.",
		Sequences: seqs,
	}
	got, err := json.MarshalIndent(file, "", " ")
	if err != nil {
		t.Fatal(err)
	}
	got = append(got, '\n')
	if *updateVectors {
		if err := os.WriteFile(guardVectorsPath, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	have, err := os.ReadFile(guardVectorsPath)
	if err != nil {
		t.Fatalf("%v (run with -update to write it)", err)
	}
	if !bytes.Equal(have, got) {
		t.Fatalf("%s drifted from the engine: run `go test ./preflight -run TestGuardVectors -update` and commit it", guardVectorsPath)
	}
}

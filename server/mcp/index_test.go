package mcp

import (
	"context"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/payguard/payguard/index"
	"github.com/payguard/payguard/store"
	"github.com/payguard/payguard/x402"
)

// check_endpoint serves what the proxy observed: looked up by any spelling of the URL that normalizes to the
// Index key, with the derived facts (payee history with its change, price history) beside the observations.
func TestCheckEndpointServesProxyObservations(t *testing.T) {
	e := newEnv(t)
	s := e.session()
	ctx := context.Background()
	now := time.Now()
	key := "https://seller.example/weather"
	for i, payTo := range []string{"0x1111111111111111111111111111111111111111", "0x2222222222222222222222222222222222222222"} {
		pr := &x402.PaymentRequired{X402Version: 2, Accepts: []x402.Requirement{{Scheme: "exact", Network: "base",
			Amount: "10000", Asset: "0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913", PayTo: payTo}}}
		o := index.FromChallenge(key, "GET", pr, now.Add(time.Duration(i-2)*time.Minute))
		if err := e.store.PutObservation(ctx, o, store.Retention{}); err != nil {
			t.Fatal(err)
		}
	}
	res, sc := e.call(s, ToolCheckEndpoint, map[string]any{"url": "HTTPS://Seller.Example:443/weather?city=x"}, nil)
	pr := paymentRequired(t, res, sc)
	res, sc = e.call(s, ToolCheckEndpoint, map[string]any{"url": "https://seller.example/weather"}, sdk.Meta{MetaPayment: payment(pr)})
	if res.IsError {
		t.Fatalf("lookup failed: %v", res.Content[0].(*sdk.TextContent).Text)
	}
	facts := sc["facts"].(map[string]any)
	payees := facts["payto_history"].([]any)
	if len(payees) != 1 {
		t.Fatalf("payto_history %v", payees)
	}
	h := payees[0].(map[string]any)
	changes := h["changes"].([]any)
	if h["network"] != "eip155:8453" || len(changes) != 1 ||
		changes[0].(map[string]any)["to"] != "0x2222222222222222222222222222222222222222" {
		t.Fatalf("payee history %v", h)
	}
	prices := facts["price_history"].([]any)
	if len(prices) != 1 || prices[0].(map[string]any)["median"] != "10000" || facts["live"] != true {
		t.Fatalf("facts %v", facts)
	}
	obs := sc["observations"].([]any)
	if len(obs) != 2 || obs[0].(map[string]any)["source"] != store.SourceChallenge {
		t.Fatalf("observations %v", obs)
	}
}

package mcp

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/payguard/payguard/server/core"
	"github.com/payguard/payguard/server/fees"
)

// The x402 MCP transport's _meta keys.
const (
	MetaPayment         = "x402/payment"
	MetaPaymentResponse = "x402/payment-response"
	// MetaTrial is payguard's own: the free-trial count on a result the trial paid for.
	MetaTrial = "payguard/trial"
)

// paidTool is one paid tool's terms: the price of the HTTP route selling the same operation, under the
// resource URL mcp://tool/<name>.
type paidTool struct {
	name  string
	route core.Route // the operation: its price, and whether the shared free trial is offered
	offer fees.Offer
}

// metricsRoute is the route the MCP tools' sales and trial calls are counted under in the server's metrics.
const metricsRoute = "/mcp"

// sell sells a prepared operation through the core (trial or payment → work → settle: the HTTP API's order,
// counted in the same metrics) and renders the outcome as a tool result. A call of a trial tool without a
// payment asks for the free trial.
func (h *Handler) sell(ctx context.Context, req *sdk.CallToolRequest, t *paidTool, op *core.Op) *sdk.CallToolResult {
	var meta sdk.Meta
	if req != nil && req.Params != nil {
		meta = req.Params.Meta
	}
	payment, perr := paymentFromMeta(meta)
	out := h.core.Sell(ctx, core.Sale{Op: op, Offer: t.offer, Metric: metricsRoute, Payment: payment, PaymentErr: perr,
		TrialAsked: t.route.Trial, ClientIP: clientIP(ctx)})
	switch {
	case out.Err != nil && out.Err.Code == core.CodeTrialUnavailable:
		// A free call that cannot be counted: the payment-required result, never free work.
		return h.paymentRequired(t, "trial_unavailable", map[string]any{"trial": map[string]any{
			"available": false, "message": out.Err.Message}})
	case out.Err != nil:
		return h.errorResult(out.Err)
	case out.Required != nil && out.Required.Failed != nil:
		// As @x402/mcp: a payment-required result carrying the failed settlement response.
		res := h.paymentRequired(t, out.Required.Reason, map[string]any{MetaPaymentResponse: out.Required.Failed})
		res.Meta = sdk.Meta{MetaPaymentResponse: out.Required.Failed}
		return res
	case out.Required != nil && out.Required.Notice != nil:
		return h.paymentRequired(t, out.Required.Reason, map[string]any{"trial": out.Required.Notice})
	case out.Required != nil:
		return h.paymentRequired(t, out.Required.Reason, nil)
	case out.Trial != nil:
		res := h.result(out.Done.Body)
		res.Meta = sdk.Meta{MetaTrial: map[string]any{"limit": out.Trial.Limit, "used": out.Trial.Used,
			"remaining": out.Trial.Limit - out.Trial.Used}}
		return res
	}
	if out.Done.Decision != "" {
		h.log.Info("mcp preflight", "decision", out.Done.Decision, "receipt", out.Done.ReceiptID)
	}
	res := h.result(out.Done.Body)
	res.Meta = sdk.Meta{MetaPaymentResponse: out.Settled}
	h.log.Info("mcp tool paid", "tool", t.name)
	return res
}

// paymentFromMeta reads params._meta["x402/payment"]: nil when absent, a *fees.PaymentError when it is not
// a readable PaymentPayload. The SDK has decoded _meta into Go values; it is re-encoded for the strict
// x402 parser (member names and values are unchanged; the facilitator verifies the signature, not bytes).
func paymentFromMeta(meta sdk.Meta) (*fees.Payment, error) {
	v, ok := meta[MetaPayment]
	if !ok || v == nil {
		return nil, nil
	}
	raw, err := json.Marshal(v)
	if err != nil {
		return nil, &fees.PaymentError{Reason: "invalid_payload", Message: "the payment could not be read"}
	}
	return fees.PaymentFromJSON(raw)
}

// paymentRequired is the x402 MCP payment-required result: isError, the v2 PaymentRequired object in
// structuredContent and the same JSON as content[0].text (which clients parse when they ignore structured
// content), then a sentence for the model. payguard adds data_as_of and, where it applies, a trial notice
// and the failed settlement; x402 clients ignore members they do not know.
func (h *Handler) paymentRequired(t *paidTool, reason string, extra map[string]any) *sdk.CallToolResult {
	c, err := h.core.Seller().Challenge(t.offer, reason)
	if err != nil {
		h.log.Error("challenge could not be built", "tool", t.name, "err", err)
		return h.errorResult(internalError("the payment terms could not be built; nothing was charged"))
	}
	obj, err := toObject(c.V2)
	if err != nil {
		return h.errorResult(internalError("the payment terms could not be encoded; nothing was charged"))
	}
	for k, v := range extra {
		obj[k] = v
	}
	obj["data_as_of"] = h.core.DataAsOf()
	text, err := json.Marshal(obj)
	if err != nil {
		return h.errorResult(internalError("the payment terms could not be encoded; nothing was charged"))
	}
	terms := h.core.Seller().Terms()
	why := "Payment required"
	switch reason {
	case "trial_exhausted":
		why = "The free trial is used up for today; payment required"
	case "trial_unavailable":
		why = "The free trial cannot be counted right now; payment required"
	case "", "Payment required":
	default:
		why = "Payment required (" + reason + ")"
	}
	hint := fmt.Sprintf("%s: %s to call %s (%s USDC atomic units of %s on %s to %s). "+
		"An x402 client pays by repeating the call with a PaymentPayload in params._meta[%q].",
		why, fees.USD(t.offer.Amount), t.name, fmt.Sprint(t.offer.Amount), terms.Asset, terms.Network, terms.PayTo, MetaPayment)
	return &sdk.CallToolResult{
		IsError:           true,
		StructuredContent: obj,
		Content:           []sdk.Content{&sdk.TextContent{Text: string(text)}, &sdk.TextContent{Text: hint}},
	}
}

// result is a successful tool result: the body as structured content and as JSON text.
func (h *Handler) result(body any) *sdk.CallToolResult {
	text, err := json.Marshal(body)
	if err != nil {
		return h.errorResult(internalError("the result could not be encoded"))
	}
	return &sdk.CallToolResult{StructuredContent: json.RawMessage(text), Content: []sdk.Content{&sdk.TextContent{Text: string(text)}}}
}

// errorResult is a tool error with SPEC §9.1's error body (the core's code and message; the HTTP status is
// the HTTP renderer's).
func (h *Handler) errorResult(e *core.Error) *sdk.CallToolResult {
	type errBody struct {
		Code    string `json:"code"`
		Message string `json:"message"`
		Nonce   string `json:"nonce,omitempty"`
	}
	body := struct {
		Error    errBody `json:"error"`
		DataAsOf string  `json:"data_as_of"`
	}{errBody{e.Code, e.Message, e.Nonce}, h.core.DataAsOf()}
	text, _ := json.Marshal(body) // plain strings: cannot fail
	return &sdk.CallToolResult{IsError: true, StructuredContent: json.RawMessage(text),
		Content: []sdk.Content{&sdk.TextContent{Text: string(text)}}}
}

// internalError is an internal_error tool result's error.
func internalError(message string) *core.Error {
	return core.Errorf(http.StatusInternalServerError, core.CodeInternal, message)
}

func toObject(v any) (map[string]any, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	var m map[string]any
	return m, json.Unmarshal(b, &m)
}

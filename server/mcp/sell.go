package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/payguard/payguard/server"
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
	path  string // the HTTP route of the same operation (its price)
	trial bool   // the shared free trial is offered
	offer fees.Offer
}

// toolError is an error result: SPEC §9.1's error body {"error":{code,message[,nonce]},"data_as_of"} as
// structured content. Nothing is settled for it.
type toolError struct {
	Code    string
	Message string
	Nonce   string // settlement_outcome_unknown: the authorization nonce to check on chain
}

func errorf(code, format string, args ...any) *toolError {
	return &toolError{Code: code, Message: fmt.Sprintf(format, args...)}
}

// work is a paid tool's body once it may run: the structured result, or a *toolError (nothing settled).
type work func(ctx context.Context) (any, *toolError)

// metricsRoute is the route the MCP tools' sales and trial calls are counted under in the server's metrics.
const metricsRoute = "/mcp"

// sell runs the trial-or-payment part of a paid tool whose arguments were validated and whose data was found
// available, then the work, then settlement: the order of server.servePaid, counted in the same metrics.
func (h *Handler) sell(ctx context.Context, req *sdk.CallToolRequest, t *paidTool, do work) *sdk.CallToolResult {
	var meta sdk.Meta
	if req != nil && req.Params != nil {
		meta = req.Params.Meta
	}
	payment, err := paymentFromMeta(meta)
	if err != nil {
		h.srv.CountPayment(metricsRoute, server.PayInvalid)
		return h.paymentRequired(t, paymentReason(err), nil)
	}
	if payment == nil {
		if !t.trial {
			h.srv.CountPayment(metricsRoute, server.PayChallenged)
			return h.paymentRequired(t, "", nil)
		}
		return h.serveTrial(ctx, t, do)
	}
	charge, err := h.srv.Seller().Begin(ctx, t.offer, payment)
	if err != nil {
		return h.paymentFailure(t, err)
	}
	body, terr := do(ctx)
	if terr != nil {
		h.srv.CountPayment(metricsRoute, server.PayNotDone)
		return h.errorResult(terr)
	}
	settled, err := charge.Settle(ctx)
	if err != nil {
		return h.paymentFailure(t, err)
	}
	h.srv.CountPayment(metricsRoute, server.PaySettled)
	res := h.result(body)
	res.Meta = sdk.Meta{MetaPaymentResponse: settled}
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

func paymentReason(err error) string {
	var perr *fees.PaymentError
	if errors.As(err, &perr) {
		return perr.Reason
	}
	return "invalid_payload"
}

// serveTrial counts a free call for the client IP (the counter HTTP ?trial=1 uses). Exhausted or uncountable:
// the payment-required result, never free work it cannot count.
func (h *Handler) serveTrial(ctx context.Context, t *paidTool, do work) *sdk.CallToolResult {
	ip := clientIP(ctx)
	if ip == "" {
		h.srv.CountTrial(server.TrialError)
		h.log.Error("mcp: no client address in the tool context; trial refused")
		return h.paymentRequired(t, "trial_unavailable", map[string]any{"trial": map[string]any{
			"available": false, "message": "the free trial cannot be counted for this call; pay with x402"}})
	}
	res, err := h.srv.Trial().Take(ctx, ip)
	h.srv.CountTrial(server.TrialResult(res.OK, err))
	if err != nil {
		h.log.Error("trial counter unavailable", "err", err)
		return h.paymentRequired(t, "trial_unavailable", map[string]any{"trial": map[string]any{
			"available": false, "message": "the free-trial counter is unavailable; retry later or pay with x402"}})
	}
	if !res.OK {
		resets := res.ResetsAt.Format("2006-01-02T15:04:05Z")
		return h.paymentRequired(t, "trial_exhausted", map[string]any{"trial": &fees.TrialNotice{
			Exhausted: true, Limit: res.Limit, Used: res.Used, ResetsAt: resets,
			Message: fmt.Sprintf("the free trial (%d calls per IP per UTC day, shared with the HTTP API) is used up "+
				"for today; pay with x402 or come back after %s", res.Limit, resets),
		}})
	}
	body, terr := do(ctx)
	if terr != nil {
		return h.errorResult(terr)
	}
	out := h.result(body)
	out.Meta = sdk.Meta{MetaTrial: map[string]any{"limit": res.Limit, "used": res.Used, "remaining": res.Limit - res.Used}}
	return out
}

// paymentFailure maps Begin and Settle errors to results, as server.paymentFailure does to HTTP answers.
// Nothing was settled, except possibly under settlement_outcome_unknown.
func (h *Handler) paymentFailure(t *paidTool, err error) *sdk.CallToolResult {
	h.srv.CountPayment(metricsRoute, server.PaymentFailureOutcome(err))
	var perr *fees.PaymentError
	var failed *fees.SettleFailedError
	var unknown *fees.OutcomeUnknownError
	switch {
	case errors.As(err, &perr):
		return h.paymentRequired(t, perr.Reason, nil)
	case errors.As(err, &failed):
		// As @x402/mcp: a payment-required result carrying the failed settlement response.
		res := h.paymentRequired(t, failed.Response.ErrorReason, map[string]any{MetaPaymentResponse: failed.Response})
		res.Meta = sdk.Meta{MetaPaymentResponse: failed.Response}
		return res
	case errors.As(err, &unknown):
		h.log.Error("settlement outcome unknown", "tool", t.name, "nonce", unknown.Nonce, "err", err)
		return h.errorResult(&toolError{Code: server.CodeSettlementOutcomeUnknown, Nonce: unknown.Nonce,
			Message: "the facilitator gave no usable answer to the settlement request; the transfer may have happened. " +
				"Check the authorization nonce on chain; do not pay again automatically"})
	case errors.Is(err, fees.ErrSigningUnavailable):
		return h.errorResult(errorf(server.CodeReceiptSigning, "receipts cannot be signed right now; nothing was charged"))
	case errors.Is(err, fees.ErrFacilitatorUnavailable):
		h.log.Warn("facilitator unavailable", "tool", t.name, "err", err)
		return h.errorResult(errorf(server.CodeFacilitatorUnavailable, "the payment facilitator is unavailable; nothing was settled"))
	default:
		h.log.Error("payment error", "tool", t.name, "err", err)
		return h.errorResult(errorf(server.CodeInternal, "payment could not be processed; nothing was settled"))
	}
}

// paymentRequired is the x402 MCP payment-required result: isError, the v2 PaymentRequired object in
// structuredContent and the same JSON as content[0].text (which clients parse when they ignore structured
// content), then a sentence for the model. payguard adds data_as_of and, where it applies, a trial notice
// and the failed settlement; x402 clients ignore members they do not know.
func (h *Handler) paymentRequired(t *paidTool, reason string, extra map[string]any) *sdk.CallToolResult {
	c, err := h.srv.Seller().Challenge(t.offer, reason)
	if err != nil {
		h.log.Error("challenge could not be built", "tool", t.name, "err", err)
		return h.errorResult(errorf(server.CodeInternal, "the payment terms could not be built; nothing was charged"))
	}
	obj, err := toObject(c.V2)
	if err != nil {
		return h.errorResult(errorf(server.CodeInternal, "the payment terms could not be encoded; nothing was charged"))
	}
	for k, v := range extra {
		obj[k] = v
	}
	obj["data_as_of"] = h.srv.DataAsOf()
	text, err := json.Marshal(obj)
	if err != nil {
		return h.errorResult(errorf(server.CodeInternal, "the payment terms could not be encoded; nothing was charged"))
	}
	terms := h.srv.Seller().Terms()
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
		return h.errorResult(errorf(server.CodeInternal, "the result could not be encoded"))
	}
	return &sdk.CallToolResult{StructuredContent: json.RawMessage(text), Content: []sdk.Content{&sdk.TextContent{Text: string(text)}}}
}

// errorResult is a tool error with SPEC §9.1's error body.
func (h *Handler) errorResult(e *toolError) *sdk.CallToolResult {
	type errBody struct {
		Code    string `json:"code"`
		Message string `json:"message"`
		Nonce   string `json:"nonce,omitempty"`
	}
	body := struct {
		Error    errBody `json:"error"`
		DataAsOf string  `json:"data_as_of"`
	}{errBody{e.Code, e.Message, e.Nonce}, h.srv.DataAsOf()}
	text, _ := json.Marshal(body) // plain strings: cannot fail
	return &sdk.CallToolResult{IsError: true, StructuredContent: json.RawMessage(text),
		Content: []sdk.Content{&sdk.TextContent{Text: string(text)}}}
}

func toObject(v any) (map[string]any, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	var m map[string]any
	return m, json.Unmarshal(b, &m)
}

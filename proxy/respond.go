package proxy

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"time"

	"github.com/payguard/payguard/internal/errbody"
	"github.com/payguard/payguard/preflight"
	"github.com/payguard/payguard/store"
)

// refusalBody is the JSON the agent gets instead of a challenge or instead of forwarding its payment.
type refusalBody struct {
	// The error: its Code is stable (payment_blocked, payment_held, payment_denied, approval_required), its
	// Hint says what to do about it (errors.go): payguard's one error body, with the decision beside it.
	errbody.Error
	// ReasonClass is the refusal's class (as in the metrics).
	ReasonClass string             `json:"reason_class,omitempty"`
	Decision    string             `json:"decision"`
	Reasons     []string           `json:"reasons"`
	Receipt     *preflight.Receipt `json:"receipt,omitempty"`
	Hold        *holdRef           `json:"hold,omitempty"`
}

type holdRef struct {
	ID         string `json:"id"`
	Status     string `json:"status"`
	ExpiresAt  string `json:"expires_at"`
	ResolvedBy string `json:"resolved_by,omitempty"`
	Note       string `json:"note,omitempty"`
}

// refusal renders a block or an unresolved hold as 403 with a JSON body and the decision headers.
func refusal(req *http.Request, v verdict, retryAfter time.Duration) *http.Response {
	b, h := refusalOf(v, retryAfter)
	data, err := json.Marshal(b)
	if err != nil {
		data = []byte(`{"decision":"block","reasons":["block: refusal could not be encoded"]}`)
	}
	h.Set("Content-Type", "application/json")
	h.Set("Cache-Control", "no-store")
	return newResponse(req, http.StatusForbidden, h, data)
}

// refusalOf is a refusal's body and decision headers, for every transport that renders one (a 403 here, a
// JSON-RPC answer in mcp.go).
func refusalOf(v verdict, retryAfter time.Duration) (refusalBody, http.Header) {
	b := refusalBody{Error: errbody.Error{Code: refusalCode(v), Hint: refusalHint(v.Class)}, ReasonClass: v.Class,
		Decision: v.Decision, Reasons: v.Reasons}
	if b.Reasons == nil {
		b.Reasons = []string{}
	}
	if v.Result != nil {
		r := v.Result.Receipt
		b.Receipt = &r
	}
	h := http.Header{}
	h.Set(HeaderDecision, v.Decision)
	if v.Result != nil && v.Result.Receipt.ID != "" {
		h.Set(HeaderReceipt, v.Result.Receipt.ID)
	}
	switch {
	case v.Hold != nil && v.Decision == hold:
		b.Message = "payguard is holding this payment for a person; retry after it is approved"
		h.Set(HeaderHold, v.Hold.ID)
		h.Set("Retry-After", strconv.Itoa(int(retryAfter/time.Second)))
	case v.Hold != nil && v.Hold.Status == store.HoldDenied:
		b.Message = "payguard: a person denied this payment"
		h.Set(HeaderHold, v.Hold.ID)
	case v.Hold != nil:
		b.Message = "payguard refused this payment, although a person approved it"
		h.Set(HeaderHold, v.Hold.ID)
	case v.Decision == hold:
		b.Message = "payguard refused this payment: it needs a person's approval before the challenge is signed"
	default:
		b.Message = "payguard refused this payment"
	}
	if v.Hold != nil {
		b.Hold = &holdRef{ID: v.Hold.ID, Status: v.Hold.Status, ExpiresAt: v.Hold.ExpiresAt.UTC().Format(time.RFC3339),
			ResolvedBy: v.Hold.ResolvedBy, Note: v.Hold.Note}
	}
	return b, h
}

func newResponse(req *http.Request, status int, h http.Header, body []byte) *http.Response {
	h.Set("Content-Length", strconv.Itoa(len(body)))
	return &http.Response{
		Status:        fmt.Sprintf("%d %s", status, http.StatusText(status)),
		StatusCode:    status,
		Proto:         "HTTP/1.1",
		ProtoMajor:    1,
		ProtoMinor:    1,
		Header:        h,
		Body:          io.NopCloser(bytes.NewReader(body)),
		ContentLength: int64(len(body)),
		Request:       req,
	}
}

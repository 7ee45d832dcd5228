package admin

import (
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strings"

	"github.com/payguard/payguard/x402"
)

// POST /v1/decide (approval API, bearer token): the decision for an in-process guard (clients/js with
// its `sidecar` option; clients/python has none yet) that pays the seller itself rather than through the proxy. The
// sidecar decides exactly as for an intercepted 402 (its rules, engine and sanctions list) on the same
// ledger, so the budget is this sidecar's ledger (fleet-wide on Redis). An allow reserves the amount
// without a payment ticket: no retry will pass the proxy, and the reservation is kept (SPEC: kept when the
// payment fails or is abandoned). A hold becomes a hold in the approval queue, waited on up to hold_wait;
// once approved (by a person, or by the guard's own onHold through POST /v1/holds/{id}/approve), asking
// again releases it once, reserved the same way (Core.DecideForGuard).

// The URL is judged as the proxy judges its own requests: the merchant domain, the domain lists and the Index
// key come from `url` alone, never from the challenge's resource.url or a v1 accepts[].resource (the seller's
// claim). `url` is what the guard says its agent requested (the final URL after redirects), which the sidecar
// cannot check: so a guard that cannot see that URL omits it, and the challenge is then judged with the
// merchant domain unknown (hold: could not determine merchant domain), never on the claim. The bearer token
// for this route can be a decide-only one (Options.DecideToken): the agent that holds it cannot approve its
// own holds.

// guardDecideRequest is the body: the challenge the guard's client received (its selected offer only), the
// URL the agent requested (omitted when the guard cannot know it) and the request method (default GET).
type guardDecideRequest struct {
	Method    string          `json:"method"`
	URL       string          `json:"url"`
	Challenge json.RawMessage `json:"challenge"`
}

// maxGuardDecideBody bounds the body: a challenge is at most a few KiB (SPEC's input limit is 64 KiB).
const maxGuardDecideBody = x402.MaxBodyBytes

func (h *handler) decideForGuard(w http.ResponseWriter, r *http.Request) {
	// The guard's agent names itself as it would to the proxy (Proxy-Authorization: Basic id:secret), so the
	// sidecar decides with that agent's rules, cap and mode.
	agent, err := h.core.Agent(r.Header)
	if err != nil {
		w.Header().Set("Proxy-Authenticate", `Basic realm="payguard"`)
		writeJSON(w, http.StatusProxyAuthRequired, apiError("agent_unauthenticated", "send the agent's credentials as Proxy-Authorization: Basic <agent-id:secret>"))
		return
	}
	var body guardDecideRequest
	dec := json.NewDecoder(io.LimitReader(r.Body, maxGuardDecideBody+1))
	dec.DisallowUnknownFields()
	err = dec.Decode(&body)
	if err == nil && dec.Decode(&struct{}{}) != io.EOF {
		err = errors.New("more than one JSON value")
	}
	if err != nil {
		writeJSON(w, http.StatusBadRequest, apiError("invalid_json", `body must be one {"method", "url", "challenge"}: `+err.Error()))
		return
	}
	if body.Method == "" {
		body.Method = http.MethodGet
	}
	if body.URL != "" && !strings.HasPrefix(body.URL, "http://") && !strings.HasPrefix(body.URL, "https://") || len(body.URL) > 4096 {
		writeJSON(w, http.StatusBadRequest, apiError("invalid_request", "url must be the http(s) URL the agent requested (or absent when unknown)"))
		return
	}
	pr, err := x402.ParsePaymentRequired(body.Challenge)
	if err != nil {
		writeJSON(w, http.StatusBadRequest, apiError("invalid_challenge", err.Error()))
		return
	}
	if len(pr.Accepts) != 1 {
		writeJSON(w, http.StatusBadRequest, apiError("invalid_challenge", "send the one offer the client selected (accepts must have exactly one entry)"))
		return
	}
	writeJSON(w, http.StatusOK, h.core.DecideForGuard(r.Context(), agent, body.Method, body.URL, pr))
}

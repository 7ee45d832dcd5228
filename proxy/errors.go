package proxy

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"errors"
	"net"
	"net/http"
	"strings"

	"github.com/payguard/payguard/internal/errbody"
)

// Every response the proxy makes up itself is JSON with a stable `error` code, a `message` for a person and a
// `hint` that says what to do about it: payguard's one error body (internal/errbody), rendered flat. Refusals of a payment (403) also carry the decision, its reasons and
// receipt (respond.go); the responses here are the proxy's own failures: an upstream it could not reach or
// did not trust, and a request that is not a proxy request.

// errorResponse is an error response the proxy makes up (a goproxy response, not a ResponseWriter).
func errorResponse(req *http.Request, status int, e errbody.Error) *http.Response {
	data, _ := json.Marshal(e)
	h := http.Header{}
	h.Set("Content-Type", "application/json")
	h.Set("Cache-Control", "no-store")
	return newResponse(req, status, h, data)
}

// writeError writes e where the proxy answers through a ResponseWriter.
func writeError(w http.ResponseWriter, status int, e errbody.Error) {
	e.Status = status
	errbody.Write(w, &e)
}

// notProxyRequest answers a request sent to the proxy as if it were the origin.
var notProxyRequest = errbody.Error{Code: "not_a_proxy_request",
	Message: "payguard is a forward proxy: send absolute-form requests (GET http://host/path) or CONNECT",
	Hint:    "point the agent's HTTP_PROXY and HTTPS_PROXY at this address instead of sending requests to it directly"}

// upstreamError classifies a failed upstream round trip for the agent (502) and the log: a stable code, what
// happened, and what to do. TLS verification failures name the setting that trusts a private CA.
func upstreamError(host string, err error) errbody.Error {
	var (
		unknownCA  x509.UnknownAuthorityError
		hostname   x509.HostnameError
		invalid    x509.CertificateInvalidError
		verifyErr  *tls.CertificateVerificationError
		netErr     net.Error
		opErr      *net.OpError
		dnsErr     *net.DNSError
		recordErr  tls.RecordHeaderError
		alertLocal tls.AlertError
	)
	switch {
	case errors.As(err, &unknownCA):
		return errbody.Error{Code: "upstream_tls_untrusted",
			Message: "payguard does not trust the certificate of " + host + " (signed by an unknown authority)",
			Hint:    "if " + host + " uses a private CA, add that CA's PEM file to proxy.upstream_ca_files in payguard's config"}
	case errors.As(err, &hostname):
		return errbody.Error{Code: "upstream_tls_hostname",
			Message: "the certificate of " + host + " is not valid for that name",
			Hint:    "check the URL's host name; the upstream must present a certificate for it"}
	case errors.As(err, &invalid), errors.As(err, &verifyErr):
		return errbody.Error{Code: "upstream_tls_invalid",
			Message: "the certificate of " + host + " failed verification: " + err.Error(),
			Hint:    "the upstream's certificate is expired or not usable for TLS servers; if it comes from a private CA, add the CA to proxy.upstream_ca_files"}
	case errors.As(err, &recordErr), errors.As(err, &alertLocal):
		return errbody.Error{Code: "upstream_tls_failed",
			Message: "TLS with " + host + " failed: " + err.Error(),
			Hint:    "the upstream may not speak TLS on that port (try http://), or rejected payguard's TLS settings"}
	case errors.As(err, &dnsErr):
		return errbody.Error{Code: "upstream_unresolved",
			Message: "payguard could not resolve " + host,
			Hint:    "check the host name and the proxy's DNS"}
	case errors.Is(err, context.DeadlineExceeded), errors.As(err, &netErr) && netErr.Timeout():
		return errbody.Error{Code: "upstream_timeout",
			Message: "no answer from " + host + " in time",
			Hint:    "the upstream is slow or unreachable from the proxy; retry later"}
	case errors.As(err, &opErr) && opErr.Op == "dial":
		return errbody.Error{Code: "upstream_unreachable",
			Message: "payguard could not connect to " + host + ": " + opErr.Err.Error(),
			Hint:    "check that the upstream is up and reachable from the proxy (firewall, port)"}
	}
	return errbody.Error{Code: "upstream_failed",
		Message: "the request to " + host + " failed: " + err.Error(),
		Hint:    "see payguard's log (\"upstream error\") for the cause"}
}

// refusalHint says what an agent (or its operator) can do about a refused payment, by the refusal's class.
func refusalHint(class string) string {
	switch class {
	case "daily_cap":
		return "the daily budget (rules.daily_cap_usd) is spent; it resets at 00:00 UTC, and unpaid 402s give their reservation back minutes after they expire"
	case "hold_pending":
		return "a person must approve the hold (POST /v1/holds/{id}/approve on payguard's admin API); then repeat the same request, whose next 402 is released once"
	case "hold_denied":
		return "a person denied this payment; payguard will not release it"
	case "payment_hold":
		return "this payment needs a person's approval: repeat the request without a payment header, so that payguard holds its 402 for approval"
	case "sanctions":
		return "the payee matched a sanctions list; this payment cannot be made"
	case "blocklist", "allowlist":
		return "the payee or domain is not allowed by rules (domain_/payto_ allowlist and blocklist in payguard's config)"
	case "payment_replay":
		return "this signed payment was already used; fetch the resource again for a fresh challenge and sign that"
	case "payment_mismatch", "ticket":
		return "pay exactly the option payguard passed on in the 402: fetch the resource again for a fresh challenge"
	case "payment_malformed", "challenge_malformed", "payment_unpriced":
		return "the x402 message could not be read safely; the agent's x402 client or the seller sent something payguard does not accept"
	case "store_error", "ledger_error", "engine_error":
		return "payguard could not decide safely and refused (fail closed); see its log and /readyz, then retry"
	}
	return "see reasons; the rules are in payguard's config (rules:), and the receipt verifies offline with payguard verify-receipt"
}

// refusalCode is a refusal's stable error code.
func refusalCode(v verdict) string {
	switch {
	case v.Hold != nil && v.Decision == hold:
		return "payment_held"
	case v.Hold != nil && v.Hold.Status == "denied":
		return "payment_denied"
	case v.Decision == hold:
		return "approval_required"
	}
	return "payment_blocked"
}

// handshakeFailure logs a TLS handshake with the agent that failed (goproxy reports it only through its
// logger): almost always an agent that does not trust payguard's CA.
func (p *Proxy) handshakeFailure(client, host, cause string) {
	p.metrics.agentHandshakeFailures.Inc()
	hint := "the agent must trust payguard's CA certificate (proxy.ca_cert_file; NODE_EXTRA_CA_CERTS, SSL_CERT_FILE, REQUESTS_CA_BUNDLE or CURL_CA_BUNDLE, or the system store)"
	if !strings.Contains(cause, "certificate") && !strings.Contains(cause, "unknown authority") {
		hint = "the agent closed or broke the TLS handshake; if it rejects certificates, " + hint
	}
	p.log.Warn("agent TLS handshake failed", "client", client, "host", host, "cause", cause, "hint", hint)
}

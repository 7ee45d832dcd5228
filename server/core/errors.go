package core

import (
	"net/http"

	"github.com/payguard/payguard/internal/errbody"
	"github.com/payguard/payguard/internal/inputerr"
)

// Error codes of SPEC §9.1's one error shape, shared by the HTTP API and the MCP tools. The OpenAPI document
// lists them in the ErrorBody component.
const (
	CodeMissingInput             = inputerr.CodeMissingInput     // a check query screening refuses carries it
	CodeInvalidParameter         = inputerr.CodeInvalidParameter // likewise
	CodeInvalidTrial             = "invalid_trial"
	CodeInvalidJSON              = "invalid_json"
	CodeMissingBody              = "missing_body"
	CodeBodyTooLarge             = inputerr.CodeBodyTooLarge
	CodeBodyTimeout              = "body_timeout"
	CodeMethodNotAllowed         = "method_not_allowed"
	CodeNotFound                 = "not_found"
	CodeInvalidURL               = "invalid_url"
	CodeInvalidMethod            = "invalid_method"
	CodeEndpointNotListed        = "endpoint_not_listed"
	CodeMethodRequired           = "method_required"
	CodeIndexUnavailable         = "index_unavailable"
	CodeSanctionsUnavailable     = "sanctions_data_unavailable"
	CodeReceiptSigning           = "receipt_signing_unavailable"
	CodeFacilitatorUnavailable   = "facilitator_unavailable"
	CodeTrialUnavailable         = "trial_unavailable"
	CodeSettlementOutcomeUnknown = "settlement_outcome_unknown"
	CodeInternal                 = "internal_error"
)

// StatusSettlementOutcomeUnknown is the status of settlement_outcome_unknown: 502 Bad Gateway. The failure
// is the upstream facilitator's (no usable answer to a /settle that was sent), unlike 500 (our own fault);
// and it must not be 503, which SPEC §9.1 reserves for "not settled, not charged" answers that a caller may
// simply retry. The caller checks the authorization nonce on chain and never pays again automatically.
const StatusSettlementOutcomeUnknown = http.StatusBadGateway

// Error is an operation that produced no charged result: its HTTP status (the MCP renderer uses only the
// code and message) and SPEC §9.1's code and message. Nothing was settled for it, except under
// settlement_outcome_unknown, whose Nonce the caller checks on chain. It is payguard's one error type
// (internal/errbody), rendered here in SPEC §9.1's shape (errbody.Error.ServerBody).
type Error = errbody.Error

// Errorf is an Error with a status, a code and a message.
func Errorf(status int, code, message string) *Error { return errbody.New(status, code, message) }

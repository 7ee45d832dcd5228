// Package inputerr holds the one type for an input payguard refuses before any payment: a PreflightInput
// that breaks SPEC §10's limits, a payee check query with no field or an unbounded one. Every channel answers
// it with 400 (413 for body_too_large) and never charges for it.
//
// It sits below both preflight and screening (preflight imports screening, so the type cannot live in
// preflight and still be screening's). Its public name is preflight.InputError, an alias of Error: callers
// use errors.As with *preflight.InputError once, whichever engine refused the input.
package inputerr

import "net/http"

// Codes an input error carries besides preflight's own (invalid_json, too_deep, unknown_field, ...; see
// preflight.InputError).
const (
	// CodeMissingInput is a payee check query with none of name, address or domain.
	CodeMissingInput = "missing_input"
	// CodeInvalidParameter is a payee check query field that is not valid UTF-8 or too long.
	CodeInvalidParameter = "invalid_parameter"
	// CodeBodyTooLarge is a body over SPEC §10's 64 KiB: the one code answered with 413.
	CodeBodyTooLarge = "body_too_large"
)

// Error is an input refused before payment.
type Error struct {
	// Code is the machine-readable defect: preflight's (body_too_large, invalid_utf8, invalid_json, too_deep,
	// unknown_field, invalid_field, field_too_long, invalid_challenge, too_many_options, unknown_rule,
	// too_many_entries, invalid_rules) or a check query's (missing_input, invalid_parameter).
	Code string
	// Field names the field at fault ("name", "address", "domain"), or "" for the input as a whole or when
	// Message already names it.
	Field   string
	Message string
}

// Error is "code: field: message", leaving out empty parts.
func (e *Error) Error() string {
	if e.Code == "" {
		return e.Detail()
	}
	return e.Code + ": " + e.Detail()
}

// Detail is what a channel shows beside the code: "field: message", or the message alone.
func (e *Error) Detail() string {
	if e.Field == "" {
		return e.Message
	}
	return e.Field + ": " + e.Message
}

// HTTPStatus is the status a channel answers with: 413 for body_too_large, else 400.
func (e *Error) HTTPStatus() int {
	if e.Code == CodeBodyTooLarge {
		return http.StatusRequestEntityTooLarge
	}
	return http.StatusBadRequest
}

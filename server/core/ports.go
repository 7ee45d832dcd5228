package core

import (
	"context"
	"time"
)

// InputError is an input rejected before payment: 400 with Code (or Status, 413 for body_too_large),
// nothing charged. The ports convert the engines' own input errors to it.
type InputError struct {
	Code    string // e.g. invalid_json, too_deep, invalid_utf8, field_too_long, too_many_options
	Message string
	Status  int // 0 means 400; 413 for body_too_large
}

func (e *InputError) Error() string { return e.Code + ": " + e.Message }

// Preflight is the decision engine behind the preflight operation (preflight.ParseInput and Engine.Decide;
// PreflightPort). The parsed input is opaque here so that tests can put a fake engine behind the server.
type Preflight interface {
	// Parse checks a body against SPEC §10's limits; errors are *InputError.
	Parse(body []byte) (any, error)
	// Decide decides a parsed input. An error wrapping receipts.ErrSigningUnavailable means 503.
	Decide(ctx context.Context, input any) (*Decision, error)
}

// Decision is a preflight result ready to render.
type Decision struct {
	Body      any    // the PreflightResult (with receipt and data_as_of)
	Decision  string // allow | hold | block, for the log line
	ReceiptID string // for the log line
}

// CheckQuery is the input of the check operation (GET /v1/check, MCP check_payee).
type CheckQuery struct{ Name, Address, Domain string }

// Checker screens a payee (screening.Checker; CheckerPort). The result is the CheckResult.
type Checker interface {
	// Validate checks a query before payment; errors are *InputError (400, nothing charged).
	Validate(q CheckQuery) error
	Check(ctx context.Context, q CheckQuery) (any, error)
}

// SanctionsStatus is the freshness of the loaded sanctions list (screening.Sanctions satisfies it).
type SanctionsStatus interface {
	Ready() bool
	DataAsOf() time.Time
}

package core

import (
	"context"
	"time"
)

// Preflight is the decision engine behind the preflight operation (preflight.ParseInput and Engine.Decide;
// PreflightPort). The parsed input is opaque here so that tests can put a fake engine behind the server.
type Preflight interface {
	// Parse checks a body against SPEC §10's limits; errors are *preflight.InputError. The input may keep
	// body as it is: the caller never changes body afterwards.
	Parse(body []byte) (any, error)
	// Decide decides a parsed input. An error wrapping receipts.ErrSigningUnavailable means 503.
	Decide(ctx context.Context, input any) (*Decision, error)
}

// Decision is a preflight result ready to render.
type Decision struct {
	Body      any    // the PreflightResult (with receipt and data_as_of); the engine's port gives its JSON (json.RawMessage)
	Decision  string // allow | hold | block, for the log line
	ReceiptID string // for the log line
}

// CheckQuery is the input of the check operation (GET /v1/check, MCP check_payee).
type CheckQuery struct{ Name, Address, Domain string }

// Checker screens a payee (screening.Checker; CheckerPort). The result is the CheckResult.
type Checker interface {
	// Validate checks a query before payment; errors are *preflight.InputError (400, nothing charged).
	Validate(q CheckQuery) error
	Check(ctx context.Context, q CheckQuery) (any, error)
}

// SanctionsStatus is the freshness of the loaded sanctions list (screening.Sanctions satisfies it).
type SanctionsStatus interface {
	Ready() bool
	DataAsOf() time.Time
}

package core

import (
	"context"
	"encoding/json"

	"github.com/payguard/payguard/preflight"
	"github.com/payguard/payguard/screening"
)

// PreflightPort adapts e to Preflight. The ports are the one wiring `payguard serve` and the tests that run
// the real engines behind the server use, so the tests exercise the error mapping that ships.
func PreflightPort(e *preflight.Engine) Preflight { return preflightPort{e} }

// CheckerPort adapts c to Checker.
func CheckerPort(c *screening.Checker) Checker { return checkerPort{c} }

type preflightPort struct{ e *preflight.Engine }

// Parse's errors are ParseInput's: every one a *preflight.InputError, which Service.Preflight answers. The
// input keeps body (ParseInputOwned): Preflight.Parse's callers give it away.
func (p preflightPort) Parse(body []byte) (any, error) {
	in, err := preflight.ParseInputOwned(body)
	if err != nil {
		return nil, err
	}
	return in, nil
}

func (p preflightPort) Decide(ctx context.Context, input any) (*Decision, error) {
	// The result's JSON comes with the decision (built from the signed payload): every channel sends it as
	// it is, and no channel encodes the result a second time.
	res, body, err := p.e.DecideJSON(ctx, input.(*preflight.Input))
	if err != nil {
		return nil, err // receipts.ErrSigningUnavailable: 503, nothing charged
	}
	return &Decision{Body: json.RawMessage(body), Decision: res.Decision, ReceiptID: res.Receipt.ID}, nil
}

type checkerPort struct{ c *screening.Checker }

// Validate's errors are screening's: a *preflight.InputError (missing_input or invalid_parameter) as they are.
func (p checkerPort) Validate(q CheckQuery) error {
	return screening.Query{Name: q.Name, Address: q.Address, Domain: q.Domain}.Validate()
}

func (p checkerPort) Check(ctx context.Context, q CheckQuery) (any, error) {
	return p.c.Check(ctx, screening.Query{Name: q.Name, Address: q.Address, Domain: q.Domain})
}

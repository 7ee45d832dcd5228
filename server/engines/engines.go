// Package engines adapts the decision engine and the payee checker to the server's ports (server.Preflight,
// server.Checker), mapping their input errors to the server's error codes. It is the one wiring both
// `payguard serve` and the tests that run the real engines behind the server use, so the tests exercise the
// mapping that ships.
package engines

import (
	"context"
	"errors"

	"github.com/payguard/payguard/preflight"
	"github.com/payguard/payguard/screening"
	"github.com/payguard/payguard/server"
)

// Preflight adapts e to server.Preflight.
func Preflight(e *preflight.Engine) server.Preflight { return preflightPort{e} }

// Checker adapts c to server.Checker.
func Checker(c *screening.Checker) server.Checker { return checkerPort{c} }

type preflightPort struct{ e *preflight.Engine }

func (p preflightPort) Parse(body []byte) (any, error) {
	in, err := preflight.ParseInput(body)
	if err != nil {
		var ie *preflight.InputError
		if errors.As(err, &ie) {
			return nil, &server.InputError{Code: ie.Code, Message: ie.Message, Status: ie.HTTPStatus()}
		}
		return nil, &server.InputError{Code: server.CodeInvalidJSON, Message: err.Error()}
	}
	return in, nil
}

func (p preflightPort) Decide(ctx context.Context, input any) (*server.Decision, error) {
	res, err := p.e.Decide(ctx, input.(*preflight.Input))
	if err != nil {
		if errors.Is(err, preflight.ErrSigningUnavailable) {
			return nil, errors.Join(server.ErrSigningUnavailable, err)
		}
		return nil, err
	}
	return &server.Decision{Body: res, Decision: res.Decision, ReceiptID: res.Receipt.ID}, nil
}

type checkerPort struct{ c *screening.Checker }

func (p checkerPort) Validate(q server.CheckQuery) error {
	if err := (screening.Query{Name: q.Name, Address: q.Address, Domain: q.Domain}).Validate(); err != nil {
		code := server.CodeInvalidParameter
		if errors.Is(err, screening.ErrNoInput) {
			code = server.CodeMissingInput
		}
		return &server.InputError{Code: code, Message: err.Error()}
	}
	return nil
}

func (p checkerPort) Check(ctx context.Context, q server.CheckQuery) (any, error) {
	return p.c.Check(ctx, screening.Query{Name: q.Name, Address: q.Address, Domain: q.Domain})
}

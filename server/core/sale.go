package core

import (
	"context"
	"errors"
	"fmt"
	"net/http"

	"github.com/payguard/payguard/receipts"
	"github.com/payguard/payguard/server/fees"
	"github.com/payguard/payguard/server/trial"
	"github.com/payguard/payguard/x402"
)

// Work is a paid operation's body once it may run: its result, or an Error (nothing is settled for it).
type Work func(ctx context.Context) (Done, *Error)

// Done is a work's result: the body the channel renders, and for a preflight the decision and receipt id for
// the log line.
type Done struct {
	Body      any
	Decision  string
	ReceiptID string
}

// Op is an operation prepared from validated input, ready to sell: its route's terms, its work, and its
// input's fingerprint (a kept result is given again only to the same payment for the same input).
type Op struct {
	Route Route
	Work  Work
	// Input returns the input's fingerprint. Only a paid call needs it (a trial call keeps no result), so
	// it is computed when asked: a preflight's is a SHA-256 of the whole body.
	Input func() string
}

// Sale is one call of a prepared operation on a channel.
type Sale struct {
	Op    *Op
	Offer fees.Offer // the channel's offer (the HTTP route's URL, or the MCP tool's mcp://tool/<name>)
	// Metric is the route the payment and trial are counted under (the HTTP path, or /mcp).
	Metric string
	// Payment is the caller's x402 payment, nil when none was sent; PaymentErr is set when one was sent but
	// could not be read (a *fees.PaymentError names the x402 reason).
	Payment    *fees.Payment
	PaymentErr error
	// TrialAsked is a request for the free trial (HTTP ?trial=1; an MCP call of a trial tool without a
	// payment). ClientIP is the address the trial counts ("" cannot be counted: no free call).
	TrialAsked bool
	ClientIP   string
}

// Outcome is what a sale came to. Exactly one of Done, Required and Err describes it.
type Outcome struct {
	// Done is the work's result, paid for (Settled) or free (Trial).
	Done    *Done
	Settled *x402.SettleResponse
	Trial   *trial.Result
	// Required asks for payment: SPEC §8.2's 402 (HTTP) or the x402 MCP payment-required result.
	Required *Required
	// Err is an answer without a charged result (nothing settled; under settlement_outcome_unknown the
	// transfer may have happened and Err.Nonce names it).
	Err *Error
}

// Required is a payment requirement and why it was given.
type Required struct {
	Reason string            // the x402 error reason ("" for the first challenge)
	Notice *fees.TrialNotice // the free trial is used up for today
	// Failed is the facilitator's success:false settlement: the channel passes it back with the requirement
	// (as the SDK sellers do), and the HTTP one offers no fresh offer receipt with it.
	Failed *x402.SettleResponse
}

// Sell runs the trial or the payment, then the work, then settlement, in that order for every channel: a
// work that fails is never settled (the verified payment is abandoned), and a payment is settled only after
// the work succeeded.
func (s *Service) Sell(ctx context.Context, c Sale) Outcome {
	if c.PaymentErr != nil {
		s.o.CountPayment(c.Metric, PayInvalid)
		return Outcome{Required: &Required{Reason: paymentReason(c.PaymentErr)}}
	}
	if c.Payment == nil {
		if !c.TrialAsked || !c.Op.Route.Trial {
			s.o.CountPayment(c.Metric, PayChallenged)
			return Outcome{Required: &Required{}}
		}
		return s.sellTrial(ctx, c)
	}
	charge, err := s.o.Seller.Begin(ctx, c.Offer, c.Payment)
	if err != nil {
		// A payment presented again: the payer may have lost the answer to a settled call.
		if out, ok := s.redeliverIfUsed(ctx, c, err); ok {
			return out
		}
		return s.paymentFailure(c, err)
	}
	done, e := c.Op.Work(ctx)
	if e != nil {
		charge.Abandon(ctx)
		s.o.CountPayment(c.Metric, PayNotDone)
		return Outcome{Err: e}
	}
	settled, e, err := s.settleAndKeep(ctx, c, charge, done)
	if e != nil {
		s.o.CountPayment(c.Metric, PayNotDone)
		return Outcome{Err: e}
	}
	if err != nil {
		return s.paymentFailure(c, err)
	}
	s.o.CountPayment(c.Metric, PaySettled)
	return Outcome{Done: &done, Settled: settled}
}

// redeliverIfUsed is redeliver for a payment Begin refused as already presented.
func (s *Service) redeliverIfUsed(ctx context.Context, c Sale, err error) (Outcome, bool) {
	var perr *fees.PaymentError
	if !errors.As(err, &perr) || perr.Reason != fees.ReasonNonceUsed {
		return Outcome{}, false
	}
	return s.redeliver(ctx, c)
}

// sellTrial counts a free call for the client IP. Exhausted or uncountable: no free work it cannot count.
func (s *Service) sellTrial(ctx context.Context, c Sale) Outcome {
	if c.ClientIP == "" {
		s.o.CountTrial(TrialError)
		s.o.Logger.Error("no client address for the free trial; trial refused", "route", c.Metric)
		return Outcome{Err: Errorf(http.StatusServiceUnavailable, CodeTrialUnavailable,
			"the free trial cannot be counted for this call; pay with x402")}
	}
	res, err := s.o.Trial.Take(ctx, c.ClientIP)
	s.o.CountTrial(trialResult(res.OK, err))
	if err != nil {
		s.o.Logger.Error("trial counter unavailable", "err", err)
		return Outcome{Err: Errorf(http.StatusServiceUnavailable, CodeTrialUnavailable,
			"the free-trial counter is unavailable; retry later or pay with x402")}
	}
	if !res.OK {
		resets := res.ResetsAt.UTC().Format("2006-01-02T15:04:05Z")
		return Outcome{Required: &Required{Reason: "trial_exhausted", Notice: &fees.TrialNotice{
			Exhausted: true, Limit: res.Limit, Used: res.Used, ResetsAt: resets,
			Message: fmt.Sprintf("the free trial (%d calls per IP per UTC day, shared by the HTTP API and the MCP "+
				"tools) is used up for today; pay with x402 or come back after %s", res.Limit, resets),
		}}}
	}
	done, e := c.Op.Work(ctx)
	if e != nil {
		return Outcome{Err: e}
	}
	return Outcome{Done: &done, Trial: &res}
}

// paymentFailure maps Begin and Settle errors to outcomes. Nothing here was settled, except possibly under
// settlement_outcome_unknown.
func (s *Service) paymentFailure(c Sale, err error) Outcome {
	s.o.CountPayment(c.Metric, paymentFailureOutcome(err))
	var perr *fees.PaymentError
	var failed *fees.SettleFailedError
	var unknown *fees.OutcomeUnknownError
	switch {
	case errors.As(err, &perr):
		return Outcome{Required: &Required{Reason: perr.Reason}}
	case errors.As(err, &failed):
		return Outcome{Required: &Required{Reason: failed.Response.ErrorReason, Failed: failed.Response}}
	case errors.As(err, &unknown):
		s.o.Logger.Error("settlement outcome unknown", "route", c.Metric, "nonce", unknown.Nonce, "err", err)
		return Outcome{Err: outcomeUnknown(unknown.Nonce)}
	case errors.Is(err, receipts.ErrSigningUnavailable):
		return Outcome{Err: SigningUnavailable(s.o.Logger, err)}
	case errors.Is(err, fees.ErrFacilitatorUnavailable):
		s.o.Logger.Warn("facilitator unavailable", "route", c.Metric, "err", err)
		return Outcome{Err: Errorf(http.StatusServiceUnavailable, CodeFacilitatorUnavailable,
			"the payment facilitator is unavailable; nothing was settled")}
	default:
		s.o.Logger.Error("payment error", "route", c.Metric, "err", err)
		return Outcome{Err: Errorf(http.StatusInternalServerError, CodeInternal, "payment could not be processed; nothing was settled")}
	}
}

// SigningUnavailable is the answer when receipts (or signed payment requirements) cannot be signed.
func SigningUnavailable(log interface{ Error(string, ...any) }, err error) *Error {
	log.Error("receipt signing unavailable", "err", err)
	return Errorf(http.StatusServiceUnavailable, CodeReceiptSigning, "receipts cannot be signed right now; nothing was charged")
}

// paymentReason is the x402 reason of an unreadable payment.
func paymentReason(err error) string {
	var perr *fees.PaymentError
	if errors.As(err, &perr) {
		return perr.Reason
	}
	return "invalid_payload"
}

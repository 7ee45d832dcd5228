package core

import (
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/netip"
	"time"

	"github.com/payguard/payguard/internal/timefmt"
	"github.com/payguard/payguard/receipts"
	"github.com/payguard/payguard/screening"
	"github.com/payguard/payguard/server/fees"
	"github.com/payguard/payguard/server/trial"
	"github.com/payguard/payguard/store"
	"github.com/payguard/payguard/store/memory"
)

// Options wires a Service.
type Options struct {
	Seller    *fees.Seller
	Trial     *trial.Gate
	Endpoints store.Endpoints
	Preflight Preflight
	Checker   Checker
	Sanctions SanctionsStatus
	// IndexFreshness is how recent the endpoint index's newest observation must be (server.index_freshness).
	IndexFreshness time.Duration
	// TrustedProxies are the peers whose X-Forwarded-For is read for the client IP the trial counts.
	TrustedProxies []netip.Prefix
	// Deliveries keeps each paid call's result for its payment (DeliveryWindow); nil: an in-memory store
	// (one process; `payguard serve` passes its store, shared by a fleet).
	Deliveries Deliveries
	// SettleWait is how long a retry of a payment whose settlement is still in flight waits for its outcome
	// (the facilitator's settle timeout and a margin); 0: 30 s.
	SettleWait time.Duration
	// CountPayment and CountTrial receive the payment outcomes and trial results (nil: not counted).
	CountPayment func(route, outcome string)
	CountTrial   func(result string)
	Logger       *slog.Logger
	Now          func() time.Time
}

// Service runs the paid operations for every channel. Create it with New.
type Service struct {
	o    Options
	asOf timefmt.RFC3339 // data_as_of, stamped on every answer, formatted once per list
}

// New checks the options.
func New(o Options) (*Service, error) {
	if o.Seller == nil || o.Trial == nil || o.Preflight == nil || o.Checker == nil || o.Sanctions == nil {
		return nil, fmt.Errorf("server/core: Seller, Trial, Preflight, Checker and Sanctions are required")
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	if o.Deliveries == nil {
		o.Deliveries = memory.New()
	}
	if o.SettleWait <= 0 {
		o.SettleWait = 30 * time.Second
	}
	if o.CountPayment == nil {
		o.CountPayment = func(string, string) {}
	}
	if o.CountTrial == nil {
		o.CountTrial = func(string) {}
	}
	return &Service{o: o}, nil
}

// Seller is the fee seller: the renderers build their payment requirements with it.
func (s *Service) Seller() *fees.Seller { return s.o.Seller }

// Trial is the shared free-trial gate (one counter for HTTP and MCP).
func (s *Service) Trial() *trial.Gate { return s.o.Trial }

// SanctionsReady reports whether a sanctions list is loaded.
func (s *Service) SanctionsReady() bool { return s.o.Sanctions.Ready() }

// DataAsOf is the sanctions data's time, RFC 3339 UTC, as every answer states it. While no list is loaded it
// is screening.DataAsOfUnknown (the Unix epoch: a valid date-time older than anything), as in CheckResult.
func (s *Service) DataAsOf() string {
	if !s.o.Sanctions.Ready() {
		return screening.DataAsOfUnknown
	}
	return s.asOf.Format(s.o.Sanctions.DataAsOf())
}

// ClientIP is the caller's address as the trial counts it (socket peer, or X-Forwarded-For through
// trusted proxies).
func (s *Service) ClientIP(r *http.Request) string { return clientIP(r, s.o.TrustedProxies) }

// Payment outcomes counted in payguard_server_payments_total, by the HTTP routes and by the MCP server
// (whose tools' sales are counted under the route /mcp).
const (
	PayChallenged  = "challenged"              // 402 without a usable payment
	PayInvalid     = "invalid"                 // rejected before or by /verify
	PaySettled     = "settled"                 // 200 with the settlement header
	PaySettleFail  = "settle_failed"           // facilitator said success:false
	PayUnknown     = "settlement_unknown"      // settlement_outcome_unknown
	PayUnavailable = "facilitator_unavailable" // 503, nothing settled
	PayNotDone     = "work_failed"             // verified, the work failed, nothing settled
	PayRedelivered = "redelivered"             // a settled payment presented again: its kept result, no charge
)

// Free-trial results counted in payguard_server_trial_calls_total.
const (
	TrialGranted   = "granted"
	TrialExhausted = "exhausted"
	TrialError     = "error"
)

// paymentFailureOutcome is the outcome of an error from fees.Seller's Begin or Charge.Settle; "" for an
// error outside the seller's kinds (an internal error, not counted).
func paymentFailureOutcome(err error) string {
	var perr *fees.PaymentError
	var failed *fees.SettleFailedError
	var unknown *fees.OutcomeUnknownError
	switch {
	case errors.As(err, &perr):
		return PayInvalid
	case errors.As(err, &failed):
		return PaySettleFail
	case errors.As(err, &unknown):
		return PayUnknown
	case errors.Is(err, receipts.ErrSigningUnavailable):
		return PayNotDone
	case errors.Is(err, fees.ErrFacilitatorUnavailable):
		return PayUnavailable
	}
	return ""
}

// trialResult is the trial counter's result label.
func trialResult(ok bool, err error) string {
	switch {
	case err != nil:
		return TrialError
	case ok:
		return TrialGranted
	}
	return TrialExhausted
}

package server

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"

	"github.com/payguard/payguard/server/fees"
)

// paidRoute is one paid operation's fee terms.
type paidRoute struct {
	Path         string
	Method       string
	Price        uint64
	Description  string
	OfferReceipt bool // x402 offer-receipt extension (SPEC §6.3: the paid HTTP preflight route)
	Trial        bool // ?trial=1 is offered
}

var (
	routeCheck = paidRoute{Path: "/v1/check", Method: http.MethodGet, Price: PriceCheck, Trial: true,
		Description: "payguard payee check: OFAC SDN screening of a wallet and a name, merchant domain age and DNS"}
	routePreflight = paidRoute{Path: "/v1/preflight", Method: http.MethodPost, Price: PricePreflight, Trial: true, OfferReceipt: true,
		Description: "payguard spend preflight: allow, hold or block an x402 challenge or a cart, with a signed receipt"}
	routeEndpoint = paidRoute{Path: "/v1/endpoint", Method: http.MethodGet, Price: PriceEndpoint,
		Description: "payguard endpoint index: cached unpaid observations of a public x402 endpoint"}
	paidRoutes = []paidRoute{routeCheck, routePreflight, routeEndpoint}
)

// offer is the route's fee offer, built once in New (the discovery JSON does not change).
func (s *Server) offer(r paidRoute) fees.Offer { return s.offers[r.Path] }

func (s *Server) buildOffer(r paidRoute) fees.Offer {
	bazaar, outputSchema := discovery(r.Path)
	return fees.Offer{
		URL:          s.absURL(r.Path),
		Method:       r.Method,
		Description:  r.Description,
		MimeType:     "application/json",
		Amount:       r.Price,
		OutputSchema: outputSchema,
		Bazaar:       bazaar,
		OfferReceipt: r.OfferReceipt,
	}
}

// work is a paid operation's body once it may run: the 200 body, or an error (*apiError: nothing is
// settled).
type work func(ctx context.Context) (any, *apiError)

// servePaid runs the trial-or-payment part of a paid route after its input was validated and its data
// found available, then the work, then settlement.
func (s *Server) servePaid(w http.ResponseWriter, r *http.Request, route paidRoute, trialAsked bool, do work) {
	offer := s.offer(route)
	payment, err := fees.PaymentFromRequest(r)
	if err != nil {
		s.CountPayment(route.Path, PayInvalid)
		s.challenge(w, offer, paymentReason(err), nil)
		return
	}
	if payment == nil {
		if !trialAsked {
			s.CountPayment(route.Path, PayChallenged)
			s.challenge(w, offer, "", nil)
			return
		}
		s.serveTrial(w, r, offer, do)
		return
	}

	note(w, func(rec *recorder) { rec.payment = "paid" })
	charge, err := s.opt.Seller.Begin(r.Context(), offer, payment)
	if err != nil {
		s.paymentFailure(w, offer, payment, err)
		return
	}
	body, apiErr := do(r.Context())
	if apiErr != nil {
		s.CountPayment(route.Path, PayNotDone)
		s.writeError(w, apiErr)
		return
	}
	settled, err := charge.Settle(r.Context())
	if err != nil {
		s.paymentFailure(w, offer, payment, err)
		return
	}
	s.CountPayment(route.Path, PaySettled)
	value, err := fees.EncodeSettleResponse(settled)
	if err != nil {
		s.writeError(w, errorf(http.StatusInternalServerError, CodeInternal, "settlement response could not be encoded"))
		return
	}
	h := w.Header()
	h.Set(payment.ResponseHeader(), value)
	h.Set("Access-Control-Expose-Headers", payment.ResponseHeader())
	h.Set("Cache-Control", "private")
	s.writeJSON(w, http.StatusOK, body)
}

func (s *Server) serveTrial(w http.ResponseWriter, r *http.Request, offer fees.Offer, do work) {
	note(w, func(rec *recorder) { rec.payment = "trial" })
	res, err := s.opt.Trial.Take(r.Context(), s.ClientIP(r))
	s.CountTrial(TrialResult(res.OK, err))
	if err != nil {
		s.log.Error("trial counter unavailable", "err", err)
		s.writeError(w, errorf(http.StatusServiceUnavailable, CodeTrialUnavailable,
			"the free-trial counter is unavailable; retry later or pay with x402"))
		return
	}
	if !res.OK {
		notice := &fees.TrialNotice{
			Exhausted: true, Limit: res.Limit, Used: res.Used,
			ResetsAt: res.ResetsAt.Format("2006-01-02T15:04:05Z"),
			Message: fmt.Sprintf("the free trial (%d calls per IP per UTC day) is used up for today; "+
				"pay with x402 or come back after %s", res.Limit, res.ResetsAt.Format("2006-01-02T15:04:05Z")),
		}
		s.challenge(w, offer, "trial_exhausted", notice)
		return
	}
	body, apiErr := do(r.Context())
	if apiErr != nil {
		s.writeError(w, apiErr)
		return
	}
	w.Header().Set("X-Trial-Limit", fmt.Sprint(res.Limit))
	w.Header().Set("X-Trial-Remaining", fmt.Sprint(res.Limit-res.Used))
	w.Header().Set("Cache-Control", "private, no-store")
	s.writeJSON(w, http.StatusOK, body)
}

// challenge answers 402 with the v2 PAYMENT-REQUIRED header and the v1 JSON body.
func (s *Server) challenge(w http.ResponseWriter, offer fees.Offer, reason string, notice *fees.TrialNotice) {
	c, err := s.opt.Seller.Challenge(offer, reason)
	if err != nil {
		s.signingUnavailable(w, err)
		return
	}
	header, err := c.HeaderValue()
	if err != nil {
		s.writeError(w, errorf(http.StatusInternalServerError, CodeInternal, "challenge could not be encoded"))
		return
	}
	c.V1.Trial = notice
	c.V1.DataAsOf = s.dataAsOf()
	h := w.Header()
	h.Set(fees.HeaderPaymentRequired, header)
	h.Set("Access-Control-Expose-Headers", fees.HeaderPaymentRequired)
	h.Set("Cache-Control", "no-store")
	note(w, func(rec *recorder) { rec.errCode = "payment_required" })
	if reason != "" {
		note(w, func(rec *recorder) { rec.errCode = reason })
	}
	s.writeJSON(w, http.StatusPaymentRequired, c.V1)
}

// paymentFailure maps Begin and Settle errors to answers. Nothing here was settled, except possibly under
// settlement_outcome_unknown.
func (s *Server) paymentFailure(w http.ResponseWriter, offer fees.Offer, p *fees.Payment, err error) {
	var perr *fees.PaymentError
	var failed *fees.SettleFailedError
	var unknown *fees.OutcomeUnknownError
	s.CountPayment(strings.TrimPrefix(offer.URL, s.opt.Config.BaseURL), PaymentFailureOutcome(err))
	switch {
	case errors.As(err, &perr):
		s.challenge(w, offer, perr.Reason, nil)
	case errors.As(err, &failed):
		// As the SDK sellers: 402, the settlement header with success:false, no new PAYMENT-REQUIRED.
		if v, encErr := fees.EncodeSettleResponse(failed.Response); encErr == nil {
			w.Header().Set(p.ResponseHeader(), v)
			w.Header().Set("Access-Control-Expose-Headers", p.ResponseHeader())
		}
		plain := offer
		plain.OfferReceipt = false // the settle-failure 402 carries no fresh offer, as the SDK sellers
		c, cerr := s.opt.Seller.Challenge(plain, failed.Response.ErrorReason)
		if cerr != nil {
			s.writeError(w, errorf(http.StatusInternalServerError, CodeInternal, "challenge could not be built"))
			return
		}
		c.V1.DataAsOf = s.dataAsOf()
		w.Header().Set("Cache-Control", "no-store")
		note(w, func(rec *recorder) { rec.errCode = "settle_failed" })
		s.writeJSON(w, http.StatusPaymentRequired, c.V1)
	case errors.As(err, &unknown):
		s.log.Error("settlement outcome unknown", "nonce", unknown.Nonce, "err", err)
		e := errorf(StatusSettlementOutcomeUnknown, CodeSettlementOutcomeUnknown,
			"the facilitator gave no usable answer to the settlement request; the transfer may have happened. "+
				"Check the authorization nonce on chain; do not pay again automatically")
		e.Nonce = unknown.Nonce
		s.writeError(w, e)
	case errors.Is(err, fees.ErrSigningUnavailable):
		s.signingUnavailable(w, err)
	case errors.Is(err, fees.ErrFacilitatorUnavailable):
		s.log.Warn("facilitator unavailable", "err", err)
		s.writeError(w, errorf(http.StatusServiceUnavailable, CodeFacilitatorUnavailable,
			"the payment facilitator is unavailable; nothing was settled"))
	default:
		s.log.Error("payment error", "err", err)
		s.writeError(w, errorf(http.StatusInternalServerError, CodeInternal, "payment could not be processed; nothing was settled"))
	}
}

func (s *Server) signingUnavailable(w http.ResponseWriter, err error) {
	s.log.Error("receipt signing unavailable", "err", err)
	s.writeError(w, errorf(http.StatusServiceUnavailable, CodeReceiptSigning,
		"receipts cannot be signed right now; nothing was charged"))
}

func paymentReason(err error) string {
	var perr *fees.PaymentError
	if errors.As(err, &perr) {
		return perr.Reason
	}
	return "invalid_payload"
}

// trialParam reads ?trial from q, the query as query() parsed it: absent or "1"; anything else is 400.
func trialParam(q url.Values, allowed bool) (bool, *apiError) {
	vals, present := q["trial"]
	if !present {
		return false, nil
	}
	if !allowed {
		return false, errorf(http.StatusBadRequest, CodeInvalidTrial, "the free trial covers /v1/check and /v1/preflight only")
	}
	if len(vals) != 1 || vals[0] != "1" {
		return false, errorf(http.StatusBadRequest, CodeInvalidTrial, "trial takes only the value 1 (?trial=1)")
	}
	return true, nil
}

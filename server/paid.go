package server

import (
	"net/http"
	"net/url"
	"strconv"

	"github.com/payguard/payguard/server/core"
	"github.com/payguard/payguard/server/fees"
)

// offer is the route's fee offer, built once in New (the discovery JSON does not change).
func (s *Server) offer(r core.Route) fees.Offer { return s.offers[r.Path] }

func (s *Server) buildOffer(r core.Route) fees.Offer {
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

// sell sells a prepared operation (core.Service.Sell: trial or payment → work → settle) and renders the
// outcome as the HTTP answer.
func (s *Server) sell(w http.ResponseWriter, r *http.Request, op *core.Op, trialAsked bool) {
	offer := s.offer(op.Route)
	payment, perr := fees.PaymentFromRequest(r)
	if payment != nil {
		note(w, func(rec *recorder) { rec.payment = "paid" })
	} else if perr == nil && trialAsked {
		note(w, func(rec *recorder) { rec.payment = "trial" })
	}
	out := s.core.Sell(r.Context(), core.Sale{Op: op, Offer: offer, Metric: op.Route.Path, Payment: payment,
		PaymentErr: perr, TrialAsked: trialAsked, ClientIP: s.core.ClientIP(r)})
	switch {
	case out.Err != nil:
		s.writeError(w, out.Err)
	case out.Required != nil:
		s.paymentRequired(w, offer, payment, out.Required)
	case out.Trial != nil:
		setHeaders(w.Header(), "X-Trial-Limit", strconv.Itoa(out.Trial.Limit),
			"X-Trial-Remaining", strconv.Itoa(out.Trial.Limit-out.Trial.Used), "Cache-Control", "private, no-store")
		s.done(w, out.Done)
	default:
		value, err := fees.EncodeSettleResponse(out.Settled)
		if err != nil {
			s.writeError(w, errorf(http.StatusInternalServerError, core.CodeInternal, "settlement response could not be encoded"))
			return
		}
		h := w.Header()
		h.Set(payment.ResponseHeader(), value)
		h.Set("Access-Control-Expose-Headers", payment.ResponseHeader())
		h.Set("Cache-Control", "private")
		s.done(w, out.Done)
	}
}

// done writes a work's result (200), noting a preflight's decision for the log line.
func (s *Server) done(w http.ResponseWriter, d *core.Done) {
	if d.Decision != "" {
		note(w, func(rec *recorder) { rec.decision, rec.receipt = d.Decision, d.ReceiptID })
	}
	s.writeJSON(w, http.StatusOK, d.Body)
}

// paymentRequired answers 402 with the v2 PAYMENT-REQUIRED header and the v1 JSON body. After a failed
// settlement, as the SDK sellers: the settlement header with success:false and no new PAYMENT-REQUIRED.
func (s *Server) paymentRequired(w http.ResponseWriter, offer fees.Offer, p *fees.Payment, req *core.Required) {
	if req.Failed != nil {
		if v, err := fees.EncodeSettleResponse(req.Failed); err == nil {
			w.Header().Set(p.ResponseHeader(), v)
			w.Header().Set("Access-Control-Expose-Headers", p.ResponseHeader())
		}
		plain := offer
		plain.OfferReceipt = false // the settle-failure 402 carries no fresh offer, as the SDK sellers
		c, err := s.core.Seller().Challenge(plain, req.Reason)
		if err != nil {
			s.writeError(w, errorf(http.StatusInternalServerError, core.CodeInternal, "challenge could not be built"))
			return
		}
		c.V1.DataAsOf = s.dataAsOf()
		w.Header().Set("Cache-Control", "no-store")
		note(w, func(rec *recorder) { rec.errCode = "settle_failed" })
		s.writeJSON(w, http.StatusPaymentRequired, c.V1)
		return
	}
	c, err := s.core.Seller().Challenge(offer, req.Reason)
	if err != nil { // the offer receipt could not be signed
		s.writeError(w, core.SigningUnavailable(s.log, err))
		return
	}
	header, err := c.HeaderValue()
	if err != nil {
		s.writeError(w, errorf(http.StatusInternalServerError, core.CodeInternal, "challenge could not be encoded"))
		return
	}
	c.V1.Trial = req.Notice
	c.V1.DataAsOf = s.dataAsOf()
	h := w.Header()
	h.Set(fees.HeaderPaymentRequired, header)
	h.Set("Access-Control-Expose-Headers", fees.HeaderPaymentRequired)
	h.Set("Cache-Control", "no-store")
	note(w, func(rec *recorder) { rec.errCode = "payment_required" })
	if req.Reason != "" {
		note(w, func(rec *recorder) { rec.errCode = req.Reason })
	}
	s.writeJSON(w, http.StatusPaymentRequired, c.V1)
}

// trialParam reads ?trial from q, the query as query() parsed it: absent or "1"; anything else is 400.
func trialParam(q url.Values, allowed bool) (bool, *apiError) {
	vals, present := q["trial"]
	if !present {
		return false, nil
	}
	if !allowed {
		return false, errorf(http.StatusBadRequest, core.CodeInvalidTrial, "the free trial covers /v1/check and /v1/preflight only")
	}
	if len(vals) != 1 || vals[0] != "1" {
		return false, errorf(http.StatusBadRequest, core.CodeInvalidTrial, "trial takes only the value 1 (?trial=1)")
	}
	return true, nil
}

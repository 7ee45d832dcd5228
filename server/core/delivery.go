package core

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"net/http"
	"strconv"
	"time"

	"github.com/payguard/payguard/server/fees"
	"github.com/payguard/payguard/store"
	"github.com/payguard/payguard/x402"
)

// DeliveryWindow is how long the result of a paid call is kept for its payment (SPEC §8.2 "Retrying a
// payment"): a payer who lost the answer (a disconnect, a load balancer's timeout) and presents the same
// payment again within it gets that result, once its settlement is known to have succeeded, and is never
// charged again.
const DeliveryWindow = time.Hour

// Deliveries is where the delivery records are kept (store.Deliveries: the store shared by a fleet, so a
// retry reaching another replica finds the record).
type Deliveries = store.Deliveries

// Delivery states. A record is written "settling", with the result, before /settle is sent, and ends in
// one of the other states when the settlement's outcome is known.
const (
	deliverySettling = "settling" // /settle may be in flight (or the process died during it)
	deliverySettled  = "settled"  // the facilitator settled: the result is the payer's
	deliveryFailed   = "failed"   // the facilitator refused to settle: no result, ever
	deliveryUnknown  = "unknown"  // no usable answer to /settle: no result, no second settle
	deliveryReleased = "released" // /settle was never sent and the payment's claim released
)

// deliveryRecord is a payment's delivery record. Payment and Offer bind it to the payment exactly as
// presented and to the offer it paid: a different payment with the same authorization nonce (another
// signature) gets nothing.
type deliveryRecord struct {
	State     string               `json:"state"`
	Payment   string               `json:"payment_sha256"`
	Offer     string               `json:"offer"`
	Input     string               `json:"input"`
	Body      json.RawMessage      `json:"body,omitempty"`
	Decision  string               `json:"decision,omitempty"`
	ReceiptID string               `json:"receipt_id,omitempty"`
	Settled   *x402.SettleResponse `json:"settled,omitempty"`
	Nonce     string               `json:"nonce,omitempty"`
}

// deliveryKey is the record's key: the payment's claim key (fees.Payment.NonceKey), which Begin refuses a
// second time, so that a record exists exactly for the payments a retry is refused for.
func (s *Service) deliveryKey(p *fees.Payment) string {
	return "delivery:" + p.NonceKey(s.o.Seller.Terms().Network)
}

func paymentDigest(p *fees.Payment) string {
	sum := sha256.Sum256(p.Raw)
	return hex.EncodeToString(sum[:])
}

// putDelivery writes rec. It runs even when the request's context is done: the record is the payer's.
func (s *Service) putDelivery(ctx context.Context, key string, rec deliveryRecord) error {
	b, err := json.Marshal(rec)
	if err != nil {
		return err
	}
	if len(b) > store.MaxDeliveryBytes && rec.Body != nil {
		// A result too large to keep (store.MaxDeliveryBytes, SPEC §8.6): the state is still recorded, so a
		// retry is never settled again, but it gets no result.
		rec.Body = nil
		if b, err = json.Marshal(rec); err != nil {
			return err
		}
	}
	return s.o.Deliveries.PutDelivery(context.WithoutCancel(ctx), key, b, DeliveryWindow)
}

// deliveryPoll is how often a retry that finds a settlement in flight looks at its record again.
const deliveryPoll = 200 * time.Millisecond

// redeliver answers a payment Begin refused as already used, from its delivery record: the kept result
// when the settlement succeeded (waiting, up to SettleWait, for one still in flight), the
// settlement_outcome_unknown error when its outcome is unknown. ok is false when the record gives nothing
// (none, another payment or offer, a failed or released settlement): the caller answers the refusal.
func (s *Service) redeliver(ctx context.Context, c Sale) (Outcome, bool) {
	key, digest := s.deliveryKey(c.Payment), paymentDigest(c.Payment)
	// The wait is real time (a settlement in flight), not the service's clock, which tests fix.
	wait, cancel := context.WithTimeout(ctx, s.o.SettleWait)
	defer cancel()
	for {
		raw, err := s.o.Deliveries.GetDelivery(ctx, key)
		if err != nil {
			if !errors.Is(err, store.ErrNotFound) {
				s.o.Logger.Error("delivery record unreadable", "route", c.Metric, "err", err)
			}
			return Outcome{}, false
		}
		var rec deliveryRecord
		if json.Unmarshal(raw, &rec) != nil || rec.Payment != digest || rec.Offer != c.Offer.URL || rec.Input != c.Op.Input() {
			return Outcome{}, false
		}
		switch rec.State {
		case deliverySettled:
			if rec.Body == nil { // too large to keep (putDelivery): the retry is refused as a replay
				s.o.Logger.Warn("a settled payment presented again; its result was too large to keep", "route", c.Metric)
				return Outcome{}, false
			}
			s.o.CountPayment(c.Metric, PayRedelivered)
			return Outcome{Done: &Done{Body: rec.Body, Decision: rec.Decision, ReceiptID: rec.ReceiptID}, Settled: rec.Settled}, true
		case deliveryUnknown:
			return Outcome{Err: outcomeUnknown(rec.Nonce)}, true
		case deliverySettling: // in flight (or the process died during it): wait, at most SettleWait
			t := time.NewTimer(deliveryPoll)
			select {
			case <-wait.Done():
				t.Stop()
				return Outcome{Err: outcomeUnknown(rec.Nonce)}, true
			case <-t.C:
			}
		default: // failed, released: no result
			return Outcome{}, false
		}
	}
}

// settleAndKeep settles a charge whose work is done, on its own deadline detached from the request (a
// buyer who disconnects, or a load balancer that gives up, must not cancel a /settle the facilitator may
// already be executing), recording the result for the payment first so that a retry of the same payment
// gets it once the settlement succeeded. A record that cannot be written abandons the charge: nothing is
// settled that a retry could not be answered for.
func (s *Service) settleAndKeep(ctx context.Context, c Sale, charge *fees.Charge, done Done) (*x402.SettleResponse, *Error, error) {
	ctx = context.WithoutCancel(ctx)
	body, err := json.Marshal(done.Body)
	if err != nil {
		charge.Abandon(ctx)
		return nil, Errorf(http.StatusInternalServerError, CodeInternal, "the result could not be encoded; nothing was settled"), nil
	}
	key := s.deliveryKey(c.Payment)
	rec := deliveryRecord{State: deliverySettling, Payment: paymentDigest(c.Payment), Offer: c.Offer.URL, Input: c.Op.Input(), Body: body,
		Decision: done.Decision, ReceiptID: done.ReceiptID, Nonce: c.Payment.Nonce()}
	if err := s.putDelivery(ctx, key, rec); err != nil {
		charge.Abandon(ctx)
		s.o.Logger.Error("delivery record could not be written; nothing settled", "route", c.Metric, "err", err)
		return nil, Errorf(http.StatusServiceUnavailable, CodeFacilitatorUnavailable, "the payment could not be recorded; nothing was settled"), nil
	}
	settled, err := charge.Settle(ctx)
	var failed *fees.SettleFailedError
	var unknown *fees.OutcomeUnknownError
	switch {
	case err == nil:
		rec.State, rec.Settled = deliverySettled, settled
	case errors.As(err, &failed):
		rec.State, rec.Body = deliveryFailed, nil
	case errors.As(err, &unknown):
		rec.State, rec.Body = deliveryUnknown, nil
	default: // never sent (or the receipt not signed): the claim was released
		rec.State, rec.Body = deliveryReleased, nil
	}
	if perr := s.putDelivery(ctx, key, rec); perr != nil {
		// The record stays "settling": a retry waits SettleWait and then hears settlement_outcome_unknown.
		s.o.Logger.Error("delivery record could not be updated", "route", c.Metric, "state", rec.State, "err", perr)
	}
	return settled, nil, err
}

// fingerprint is a digest of an operation's validated input fields: each field's length, a colon and the
// field.
func fingerprint(fields ...string) string {
	h := sha256.New()
	for _, f := range fields {
		h.Write([]byte(strconv.Itoa(len(f)) + ":" + f))
	}
	return hex.EncodeToString(h.Sum(nil))
}

// fingerprintBody is fingerprint(string(body)) without copying the body twice (a preflight's, on every call).
func fingerprintBody(body []byte) string {
	h := sha256.New()
	var n [24]byte
	h.Write(strconv.AppendInt(n[:0], int64(len(body)), 10))
	h.Write([]byte{':'})
	h.Write(body)
	var sum [sha256.Size]byte
	return hex.EncodeToString(h.Sum(sum[:0]))
}

// outcomeUnknown is the settlement_outcome_unknown error for the authorization nonce.
func outcomeUnknown(nonce string) *Error {
	e := Errorf(StatusSettlementOutcomeUnknown, CodeSettlementOutcomeUnknown,
		"the facilitator gave no usable answer to the settlement request; the transfer may have happened. "+
			"Check the authorization nonce on chain; do not pay again automatically")
	e.Nonce = nonce
	return e
}

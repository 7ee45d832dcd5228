package fees

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/payguard/payguard/x402"
)

// ReasonNonceUsed is the x402 reason of a payment presented again (Begin's refusal of a claimed payment).
const ReasonNonceUsed = "invalid_exact_evm_nonce_already_used"

// ErrAlreadyUsed is what a NonceGuard returns for a payment it has seen (store.ErrAlreadyUsed satisfies
// errors.Is through the guard's adapter, see NonceGuardFunc).
var ErrAlreadyUsed = errors.New("fees: payment already used")

// NonceGuard remembers payments presented to this seller, so a payment is never verified, worked for or
// settled twice: Begin marks a payment before it is verified, and Mark returns an error wrapping
// ErrAlreadyUsed when the key was marked before, so a replay (concurrent or later, on any replica: a fleet
// shares one guard, the store) is refused before the facilitator or the work sees it. Release forgets a mark
// whose payment was never sent to /settle (verification failed, the work failed), so its payer may present
// it again.
type NonceGuard interface {
	Mark(ctx context.Context, key string, ttl time.Duration) error
	Release(ctx context.Context, key string) error
}

// NonceGuardFuncs adapts two functions (e.g. store.Tickets.MarkPaymentSeen, with its ErrAlreadyUsed mapped,
// and ForgetPaymentSeen) to NonceGuard.
type NonceGuardFuncs struct {
	MarkFunc    func(ctx context.Context, key string, ttl time.Duration) error
	ReleaseFunc func(ctx context.Context, key string) error
}

// Mark calls MarkFunc.
func (f NonceGuardFuncs) Mark(ctx context.Context, key string, ttl time.Duration) error {
	return f.MarkFunc(ctx, key, ttl)
}

// Release calls ReleaseFunc.
func (f NonceGuardFuncs) Release(ctx context.Context, key string) error {
	return f.ReleaseFunc(ctx, key)
}

// MemoryNonces is a single-process NonceGuard.
type MemoryNonces struct {
	mu   sync.Mutex
	seen map[string]time.Time // key -> expiry
	now  func() time.Time
}

// NewMemoryNonces returns an empty in-memory guard.
func NewMemoryNonces(now func() time.Time) *MemoryNonces {
	if now == nil {
		now = time.Now
	}
	return &MemoryNonces{seen: map[string]time.Time{}, now: now}
}

// Mark records key; a second Mark of an unexpired key fails with ErrAlreadyUsed.
func (m *MemoryNonces) Mark(_ context.Context, key string, ttl time.Duration) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	now := m.now()
	if exp, ok := m.seen[key]; ok && now.Before(exp) {
		return ErrAlreadyUsed
	}
	if len(m.seen) > 100_000 {
		for k, exp := range m.seen {
			if !now.Before(exp) {
				delete(m.seen, k)
			}
		}
	}
	m.seen[key] = now.Add(ttl)
	return nil
}

// Release forgets key.
func (m *MemoryNonces) Release(_ context.Context, key string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	delete(m.seen, key)
	return nil
}

// Seller is the service's x402 seller side. It is safe for concurrent use.
type Seller struct {
	terms  Terms
	fac    FacilitatorAPI
	signer Signer
	nonces NonceGuard
	now    func() time.Time
}

// SellerOptions configures NewSeller.
type SellerOptions struct {
	Terms       Terms
	Facilitator FacilitatorAPI
	Signer      Signer     // offers and delivery receipts; nil makes OfferReceipt offers fail with receipts.ErrSigningUnavailable
	Nonces      NonceGuard // nil: an in-memory guard (one process only)
	Now         func() time.Time
}

// NewSeller validates the terms and returns a seller.
func NewSeller(o SellerOptions) (*Seller, error) {
	if err := o.Terms.Validate(); err != nil {
		return nil, err
	}
	if o.Facilitator == nil {
		return nil, fmt.Errorf("fees: a facilitator is required")
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.Nonces == nil {
		o.Nonces = NewMemoryNonces(o.Now)
	}
	return &Seller{terms: o.Terms, fac: o.Facilitator, signer: o.Signer, nonces: o.Nonces, now: o.Now}, nil
}

// Terms returns the seller's payment terms.
func (s *Seller) Terms() Terms { return s.terms }

// Charge is a verified payment for one offer, waiting for the work to be done and then Settle.
type Charge struct {
	seller  *Seller
	offer   Offer
	payment *Payment
	req     any    // the requirement sent to the facilitator (v1 or v2 form)
	nonce   string // the payment's key in the nonce guard, marked by Begin
	payer   string
	settled bool // Settle or Abandon was called
}

// Payer is the paying address the facilitator reported at verification.
func (c *Charge) Payer() string { return c.payer }

// Payment is the payment being charged.
func (c *Charge) Payment() *Payment { return c.payment }

// Begin matches a payment to the offer, claims its nonce and verifies it with the facilitator. Nothing is
// settled. The claim comes before /verify: a payment already presented, or in flight on another request or
// replica, is refused with *PaymentError invalid_exact_evm_nonce_already_used and costs neither a /verify
// nor the work. A payment that fails verification is released (it was never settled). Errors: *PaymentError
// (answer 402 with a fresh challenge carrying its Reason) or ErrFacilitatorUnavailable (answer 503). A
// Charge that is returned must end in Settle or Abandon.
func (s *Seller) Begin(ctx context.Context, o Offer, p *Payment) (*Charge, error) {
	req, err := s.match(o, p)
	if err != nil {
		return nil, err
	}
	key := p.NonceKey(s.terms.Network)
	if err := s.nonces.Mark(ctx, key, s.nonceTTL()); err != nil {
		if errors.Is(err, ErrAlreadyUsed) {
			return nil, &PaymentError{Reason: ReasonNonceUsed, Message: "this payment was already presented"}
		}
		return nil, fmt.Errorf("%w: nonce guard: %v", ErrFacilitatorUnavailable, err)
	}
	vr, err := s.fac.Verify(ctx, FacilitatorRequest{X402Version: p.Version, PaymentPayload: p.Raw, PaymentRequirements: req})
	if err == nil && !vr.IsValid {
		reason := vr.InvalidReason
		if reason == "" {
			reason = "invalid_payment"
		}
		err = &PaymentError{Reason: reason, Message: vr.InvalidMessage}
	}
	if err != nil {
		s.release(ctx, key)
		return nil, err
	}
	return &Charge{seller: s, offer: o, payment: p, req: req, nonce: key, payer: vr.Payer}, nil
}

// nonceTTL is how long a payment's nonce is remembered: past its authorization's validity (the terms'
// timeout) and a day more.
func (s *Seller) nonceTTL() time.Duration {
	return time.Duration(s.terms.MaxTimeoutSeconds)*time.Second + 24*time.Hour
}

// release forgets a claim whose payment was never sent to /settle; it runs even when the request's context
// is done. A failure keeps the claim (the payer then signs a new payment: the safe side).
func (s *Seller) release(ctx context.Context, key string) {
	_ = s.nonces.Release(context.WithoutCancel(ctx), key)
}

// Abandon ends a charge whose work failed: nothing is settled and the payment's claim is released, so its
// payer may present it again. It does nothing after Settle.
func (c *Charge) Abandon(ctx context.Context) {
	if c.settled {
		return
	}
	c.settled = true
	c.seller.release(ctx, c.nonce)
}

// match finds the requirement the payment is for. v1 payloads name only scheme and network; a v2 payload's
// accepted must equal our requirement (core fields equal, extra a superset), as the SDK sellers check.
func (s *Seller) match(o Offer, p *Payment) (any, error) {
	noMatch := &PaymentError{Reason: "invalid_payment_requirements", Message: "No matching payment requirements"}
	switch p.Version {
	case 1:
		if s.terms.NetworkV1 == "" || p.parsed.Scheme != "exact" || p.parsed.Network != s.terms.NetworkV1 {
			return nil, noMatch
		}
		return s.terms.requirementV1(o), nil
	case 2:
		want := s.terms.requirementV2(o)
		if !acceptedMatches(p.parsed.Accepted, want) {
			return nil, noMatch
		}
		return want, nil
	}
	return nil, &PaymentError{Reason: "invalid_x402_version"}
}

// acceptedMatches is the SDK's paymentRequirementsMatchAccepted, through x402.Requirement.Equal: scheme,
// network, amount, asset, payTo and maxTimeoutSeconds equal; our extra a subset of theirs.
func acceptedMatches(accepted *x402.Requirement, want requirementV2) bool {
	wantJSON, err := json.Marshal(want)
	if err != nil || accepted == nil {
		return false
	}
	var ours x402.Requirement
	if json.Unmarshal(wantJSON, &ours) != nil {
		return false
	}
	return ours.Equal(*accepted)
}

// SettleFailedError is a facilitator's {success:false}: nothing was transferred. The caller answers 402 with
// the settlement header (success:false) as the SDK sellers do.
type SettleFailedError struct{ Response *x402.SettleResponse }

func (e *SettleFailedError) Error() string {
	return "fees: settlement failed: " + e.Response.ErrorReason
}

// OutcomeUnknownError wraps ErrSettlementUnknown with the nonce the caller must check on chain.
type OutcomeUnknownError struct {
	Nonce string
	Err   error
}

func (e *OutcomeUnknownError) Error() string { return e.Err.Error() }
func (e *OutcomeUnknownError) Unwrap() error { return e.Err }

// Settle settles the verified payment once the work is done. The delivery receipt (OfferReceipt offers) is
// signed first, so a signing failure is receipts.ErrSigningUnavailable with nothing settled (and the claim
// released). The payment's nonce was claimed by Begin, so a replay never reaches /settle. Other errors:
// ErrFacilitatorUnavailable (request never sent: nothing settled, the claim released), *OutcomeUnknownError
// (never retried; the claim is kept), *SettleFailedError (the claim is kept: /settle saw the payment).
func (c *Charge) Settle(ctx context.Context) (*x402.SettleResponse, error) {
	if c.settled {
		return nil, fmt.Errorf("fees: Settle called twice for one charge")
	}
	c.settled = true
	s := c.seller
	var receipt json.RawMessage
	if c.offer.OfferReceipt {
		var err error
		if receipt, err = s.signReceipt(c.offer, c.payer); err != nil {
			s.release(ctx, c.nonce)
			return nil, err
		}
	}
	resp, err := s.fac.Settle(ctx, FacilitatorRequest{X402Version: c.payment.Version, PaymentPayload: c.payment.Raw, PaymentRequirements: c.req})
	if err != nil {
		if errors.Is(err, ErrSettlementUnknown) {
			return nil, &OutcomeUnknownError{Nonce: c.payment.Nonce(), Err: err}
		}
		if errors.Is(err, ErrFacilitatorUnavailable) { // the request was never sent
			s.release(ctx, c.nonce)
		}
		return nil, err
	}
	if !resp.Success {
		if resp.ErrorReason == "" {
			resp.ErrorReason = "unexpected_settle_error"
		}
		return nil, &SettleFailedError{Response: resp}
	}
	if resp.Payer == "" {
		resp.Payer = c.payer
	}
	if receipt != nil {
		if resp.Extensions == nil {
			resp.Extensions = map[string]json.RawMessage{}
		}
		resp.Extensions[ExtensionOfferReceipt] = receipt
	}
	return resp, nil
}

// EncodeSettleResponse is the settlement header value: standard base64 of the JSON.
func EncodeSettleResponse(r *x402.SettleResponse) (string, error) {
	b, err := json.Marshal(r)
	if err != nil {
		return "", err
	}
	return base64Std(b), nil
}

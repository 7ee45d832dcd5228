package proxy

import (
	"context"
	"encoding/json"
	"fmt"
	"math/big"
	"net/http"

	"github.com/payguard/payguard/policy"
	"github.com/payguard/payguard/x402"
)

// Headers on a paid response: the scheme of the payment released, what it authorized and what the seller
// settled (atomic units of the option's asset), so the agent sees both for an upto payment.
const (
	HeaderScheme     = "X-Payguard-Scheme"
	HeaderAuthorized = "X-Payguard-Authorized"
	HeaderSettled    = "X-Payguard-Settled"
)

// settled is what recordSettlement learned, for the response headers and the Index.
type settled struct {
	atomic string // the settled amount payguard accepted ("" when none was)
	ok     bool   // the seller reported a successful settlement payguard accepted (index.Costly evidence)
}

// recordSettlement reads the seller's settlement header: success commits the reservation (for upto, the
// settled amount, the rest released); a failure or a missing header keeps it reserved (SPEC §11.4:
// reservations are kept when a payment fails or is abandoned). An upto settlement its authorization does
// not allow raises an alarm on the seller and commits the whole maximum.
func (p *Proxy) recordSettlement(ctx context.Context, r *release, resp *http.Response) settled {
	scheme := schemeOf(r)
	value := resp.Header.Get(x402.HeaderPaymentResponse)
	if value == "" {
		value = resp.Header.Get(x402.HeaderXPaymentResponse)
	}
	if value == "" {
		p.metrics.settlements.WithLabelValues("none", scheme).Inc()
		p.log.Info("settlement", "result", "none", "scheme", scheme, "status", resp.StatusCode, "reservation_id", r.ReservationID,
			"amount_usd", usdString(r.AmountMicros))
		return settled{}
	}
	s, err := x402.DecodeSettleResponseHeader(value)
	return p.commitSettlement(ctx, r, s, err)
}

// commitSettlement records a decoded settlement (err: it could not be read), whatever carried it: success
// commits the reservation (upto: the settled amount, the rest released, or an alarm), anything else keeps it
// reserved.
func (p *Proxy) commitSettlement(ctx context.Context, r *release, s *x402.SettleResponse, err error) settled {
	scheme := schemeOf(r)
	unreadable := ""
	switch {
	case err != nil && scheme == x402.SchemeUpto:
		// An upto seller settles an amount of its choosing: a settlement that cannot be read (an amount as a
		// JSON number, a success that is not a boolean) could say anything, and a JavaScript client reads it
		// anyway. It is outside the authorization as far as payguard can tell: the alarm below, and the whole
		// maximum spent.
		unreadable, s = "settlement unreadable ("+clip(err.Error())+")", &x402.SettleResponse{}
	case err != nil:
		p.metrics.settlements.WithLabelValues("unreadable", scheme).Inc()
		p.log.Warn("settlement", "result", "unreadable", "scheme", scheme, "error", err.Error(), "reservation_id", r.ReservationID)
		return settled{}
	}
	if !s.Success && unreadable == "" {
		p.metrics.settlements.WithLabelValues("failure", scheme).Inc()
		p.log.Info("settlement", "result", "failure", "scheme", scheme, "error_reason", s.ErrorReason, "reservation_id", r.ReservationID,
			"amount_usd", usdString(r.AmountMicros))
		return settled{}
	}
	authorized := ""
	if r.Option != nil {
		authorized = r.Option.Amount
	}
	result, spent, out := "success", r.AmountMicros, settled{atomic: authorized, ok: true}
	if scheme == x402.SchemeUpto {
		amount, alarm := p.uptoSettled(r, s)
		if unreadable != "" {
			amount, alarm = nil, unreadable
		}
		switch {
		case alarm != "":
			result, out = "alarm", settled{}
			p.raiseAlarm(ctx, r, alarm, s)
		case amount == nil:
			result, out = "success_amount_unknown", settled{ok: true} // the whole maximum counts
		default:
			spent, out = settledMicros(r, amount), settled{atomic: amount.String(), ok: true}
		}
	}
	if err := p.opts.Store.Settle(ctx, r.Budget, r.Day, r.ReservationID, spent); err != nil {
		p.metrics.settlements.WithLabelValues("commit_error", scheme).Inc()
		p.log.Error("settlement", "result", "commit_error", "scheme", scheme, "error", err.Error(), "reservation_id", r.ReservationID)
		return out
	}
	p.settleAgent(ctx, r, spent) // agentledger.go
	p.metrics.settlements.WithLabelValues(result, scheme).Inc()
	p.log.Info("settlement", "result", result, "scheme", scheme, "transaction", s.Transaction, "network", s.Network,
		"reservation_id", r.ReservationID, "authorized_atomic", authorized, "settled_atomic", s.Amount,
		"amount_usd", usdString(spent), "reserved_usd", usdString(r.AmountMicros))
	p.recordSettledRow(r, scheme, result, authorized, out.atomic, spent)
	return out
}

// schemeOf is the scheme of a released payment's option ("exact" for a release without one).
func schemeOf(r *release) string {
	if r.Option != nil && r.Option.Scheme == x402.SchemeUpto {
		return x402.SchemeUpto
	}
	return x402.SchemeExact
}

// uptoSettled reads an upto settlement against its authorization (specs/schemes/upto: amount <= the
// maximum, possibly 0, on the authorized network, for the authorizing payer). It returns the settled
// amount (nil when the seller named none: the maximum then counts), or what is wrong with it.
func (p *Proxy) uptoSettled(r *release, s *x402.SettleResponse) (*big.Int, string) {
	opt := r.Option
	if s.Network != "" && !sameNetwork(s.Network, opt.Network) {
		return nil, fmt.Sprintf("settled on network %s, authorized on %s", clip(s.Network), opt.Network)
	}
	if s.Payer != "" && r.Payer != "" && !x402.SameAddress(s.Payer, r.Payer) {
		return nil, fmt.Sprintf("settled for payer %s, authorized by %s", clip(s.Payer), r.Payer)
	}
	if to := settledRecipient(s); to != "" && !x402.SameAddress(to, opt.PayTo) {
		return nil, fmt.Sprintf("settled to recipient %s, authorized to %s", clip(to), opt.PayTo)
	}
	if s.Amount == "" {
		return nil, ""
	}
	n, err := x402.ParseAtomic(s.Amount)
	if err != nil {
		return nil, fmt.Sprintf("settled amount %s unreadable", clip(s.Amount))
	}
	maximum, err := x402.ParseAtomic(opt.Amount)
	if err != nil || n > maximum {
		return nil, fmt.Sprintf("settled %d above the authorized maximum %s", n, opt.Amount)
	}
	return new(big.Int).SetUint64(n), ""
}

// settledRecipient is a recipient the settlement names, if any (the standard response names none; some
// facilitators add payTo or to, at the top or in extra).
func settledRecipient(s *x402.SettleResponse) string {
	read := func(m map[string]json.RawMessage) string {
		for _, k := range []string{"payTo", "to", "recipient"} {
			var v string
			if raw, ok := m[k]; ok && json.Unmarshal(raw, &v) == nil && v != "" {
				return v
			}
		}
		return ""
	}
	if to := read(s.Unknown); to != "" {
		return to
	}
	var extra map[string]json.RawMessage
	if raw, ok := s.Unknown["extra"]; ok && json.Unmarshal(raw, &extra) == nil {
		return read(extra)
	}
	return ""
}

// settledMicros is the settled share of the reservation in micro-dollars: the reservation times
// settled/maximum, rounded up (for USDC, whose atomic unit is a micro-dollar, the settled amount itself).
func settledMicros(r *release, settled *big.Int) int64 {
	maximum, ok := new(big.Int).SetString(r.Option.Amount, 10)
	if !ok || maximum.Sign() <= 0 {
		if settled.Sign() == 0 {
			return 0
		}
		return r.AmountMicros
	}
	n := new(big.Int).Mul(big.NewInt(r.AmountMicros), settled)
	n.Add(n, new(big.Int).Sub(maximum, big.NewInt(1)))
	n.Quo(n, maximum)
	if !n.IsInt64() || n.Int64() > r.AmountMicros {
		return r.AmountMicros
	}
	return n.Int64()
}

// raiseAlarm records a seller's settlement outside its authorization: the error log line, the metric, and
// the alarm that holds the seller's next payments.
func (p *Proxy) raiseAlarm(ctx context.Context, r *release, what string, s *x402.SettleResponse) {
	p.metrics.settlementAlarms.WithLabelValues(schemeOf(r)).Inc()
	p.raiseSellerAlarm(ctx, r.Host, what)
	p.log.Error("settlement alarm", "scheme", schemeOf(r), "host", r.Host, "what", what,
		"authorized_atomic", r.Option.Amount, "settled_atomic", s.Amount, "pay_to", r.Option.PayTo,
		"transaction", s.Transaction, "reservation_id", r.ReservationID, "receipt_id", r.ReceiptID,
		"reason", policy.SettlementAlarmReason(r.Host, what).String())
}

// setSettlementHeaders tells the agent what the released payment's scheme authorized and what was settled.
func setSettlementHeaders(h http.Header, r *release, out settled) {
	h.Set(HeaderScheme, schemeOf(r))
	if r.Option != nil {
		h.Set(HeaderAuthorized, r.Option.Amount)
	}
	if out.atomic != "" {
		h.Set(HeaderSettled, out.atomic)
	}
}

package proxy

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/payguard/payguard/store"
	"github.com/payguard/payguard/x402"
	"github.com/payguard/payguard/x402/svm"
)

// maxPaymentHeader bounds a payment header (about 3.6 KB with echoed extensions in the fixtures).
const maxPaymentHeader = 32 << 10

// paymentSeenTTL is how long a payment's authorization is remembered against replay; far longer than any
// authorization's validity window.
const paymentSeenTTL = 48 * time.Hour

// terms is what a payment payload commits to, read the same way for v1 and v2.
type terms struct {
	version              int
	scheme, network      string
	asset, payTo, amount string // asset is empty for v1: the payload does not name it
	token                string // the token a Permit2 authorization moves ("" for EIP-3009, whose token is its signing domain)
	accepted             *x402.Requirement
	resource             *x402.ResourceInfo
	authorization        string // what identifies the signed authorization: its network, payer and nonce
	payer                string // who signed it (EIP-3009 from, Permit2 from, a Solana transfer's authority)
	permit2              *x402.Permit2Authorization
	svmTx                *svm.Transaction // a v1 Solana payment's transaction, bound at its ticket (bindSVMTicket)
}

// checkPayment decides whether a payment-bearing request may go to the seller: it must not be a replay,
// must be readable, its signed recipient and value must agree with the terms it names, and it must match
// an unused allowed ticket, or else be allowed by a fresh preflight of what it names.
func (p *Proxy) checkPayment(req *http.Request, header, value string) verdict {
	ctx := req.Context()
	if len(value) > maxPaymentHeader {
		return failClosed("payment_malformed", fmt.Sprintf("%s header exceeds %d bytes", header, maxPaymentHeader))
	}
	pl, err := x402.DecodePaymentPayloadHeader(value)
	if err != nil {
		return failClosed("payment_malformed", fmt.Sprintf("%s is not a readable x402 payment: %v", header, err))
	}
	return p.checkPayload(ctx, req.Method, req.URL.String(), pl)
}

// checkPayload is checkPayment once the payment is decoded, for every transport that carries one (a header
// here, an MCP request's _meta in mcp.go): method and url name the endpoint its ticket was minted for.
func (p *Proxy) checkPayload(ctx context.Context, method, url string, pl *x402.PaymentPayload) verdict {
	t, err := paymentTerms(pl)
	if err != nil {
		return failClosed("payment_mismatch", err.Error())
	}
	if t.scheme == x402.SchemeUpto {
		// Checked before the nonce is remembered: a window that is not open yet may be presented again.
		if err := checkPermit2Window(t.permit2, t.accepted.MaxTimeoutSeconds, p.opts.Now()); err != nil {
			return failClosed("payment_mismatch", err.Error())
		}
	}
	// A payment is remembered by what its signature covers, not by its header's bytes: the same signed
	// authorization in other bytes (JSON spacing, base64 with or without padding) is the same payment.
	sum := sha256.Sum256([]byte(t.authorization))
	switch err := p.opts.Store.MarkPaymentSeen(ctx, hex.EncodeToString(sum[:]), paymentSeenTTL); {
	case errors.Is(err, store.ErrAlreadyUsed):
		return failClosed("payment_replay", "this payment's authorization was already seen (replay)")
	case err != nil:
		return failClosed("store_error", "replay check unavailable: "+err.Error())
	}
	key, err := ticketKey(method, url, t.scheme, t.network, t.payTo, t.amount)
	if err != nil {
		return failClosed("payment_malformed", "payment terms unreadable: "+err.Error())
	}
	tk, err := p.opts.Store.TakeTicket(ctx, key, p.opts.Now())
	var v verdict
	switch {
	case err == nil:
		p.unpaid.taken(tk.ID)
		v = p.ticketUnderAlarm(ctx, p.spendApproval(ctx, tk, p.matchTicket(tk, t)), url) // alarms.go
		p.takeAgentTwin(ctx, &v, tk)                                                     // agentledger.go
	case !errors.Is(err, store.ErrNotFound):
		return failClosed("store_error", "ticket store unavailable: "+err.Error())
	default:
		v = p.decidePayment(ctx, method, url, t)
	}
	if v.Release != nil {
		v.Release.Payer, v.Release.Host = t.payer, alarmSite(url)
	}
	return v
}

// matchTicket checks a taken ticket against the payment. The ticket is spent either way: a payment that
// disagrees with what was approved must fetch a fresh challenge.
func (p *Proxy) matchTicket(tk store.Ticket, t terms) verdict {
	var opt x402.Requirement
	if err := json.Unmarshal(tk.Option, &opt); err != nil {
		return failClosed("store_error", "ticket option unreadable: "+err.Error())
	}
	// Equal's receiver is the offered requirement, its argument the echoed one (which may add to extra).
	if t.version == x402.V2 && !opt.Equal(*t.accepted) {
		return failClosed("payment_mismatch", "payment's accepted option differs from the option payguard allowed")
	}
	if t.version != x402.V2 && !sameNetwork(opt.Network, t.network) {
		return failClosed("payment_mismatch", "payment's network differs from the option payguard allowed")
	}
	if t.token != "" && !x402.SameAddress(t.token, opt.Asset) {
		return failClosed("payment_mismatch", "payment's Permit2 token differs from the asset payguard allowed")
	}
	if t.svmTx != nil {
		if err := bindSVMTicket(t.svmTx, &opt); err != nil {
			return failClosed("payment_mismatch", err.Error())
		}
	}
	return verdict{Decision: allow, Reasons: []string{"allow: payment matches an allowed decision"},
		Chosen: 0, Option: &opt, Amount: tk.AmountMicros, Class: "ticket",
		Release: &release{Budget: tk.Budget, Day: tk.Day, ReservationID: tk.ReservationID,
			AmountMicros: tk.AmountMicros, Via: "ticket", ReceiptID: tk.ReceiptID, Option: &opt}}
}

// decidePayment preflights a payment that no ticket covers, from what its payload names, and lets it go
// only on allow (reserving). A v1 payload names no asset: with the asset unknown the amount cannot be
// priced, so such a payment is never allowed here (it must come through a guarded 402).
func (p *Proxy) decidePayment(ctx context.Context, method, url string, t terms) verdict {
	if t.svmTx != nil {
		return failClosed("payment_mismatch", "a v1 Solana payment names no payee (its transfer pays a token account): "+
			"payguard releases one only for the option it passed on in a 402")
	}
	var pr x402.PaymentRequired
	if t.version == x402.V2 {
		pr = x402.PaymentRequired{X402Version: x402.V2, Resource: t.resource, Accepts: []x402.Requirement{*t.accepted}}
		if pr.Resource == nil {
			pr.Resource = &x402.ResourceInfo{URL: url}
		}
	} else {
		pr = x402.PaymentRequired{X402Version: x402.V1, Accepts: []x402.Requirement{{
			Version: x402.V1, Scheme: t.scheme, Network: t.network, Amount: t.amount, PayTo: t.payTo,
			Resource: url, MaxTimeoutSeconds: 60,
		}}}
	}
	v := p.decide(ctx, method, url, &pr, false) // released at once: no ticket
	if v.Decision == allow && t.asset == "" {
		// Unreachable with a correct engine (an unknown asset is unpriced); kept as the last word. The
		// reservation stays, as for any abandoned payment.
		v = failClosed("payment_unpriced", "payment names no asset; it cannot be priced")
	}
	if v.Decision == allow {
		v.Release.Via = "preflight"
	}
	if v.Decision == hold {
		v.Class = "payment_hold"
	}
	return v
}

// paymentTerms reads what a payload pays and binds it to what it names: the one binding of a payment payload,
// whatever transport carried it (the HTTP payment headers here; an MCP `_meta["x402/payment"]` payload goes
// through the same function). A payload whose transfer cannot be read is refused: the proxy could not tell
// what it releases. The chain's own check (evmTerms, svmTerms) is chosen by the network the payload names.
func paymentTerms(pl *x402.PaymentPayload) (terms, error) {
	t := terms{version: pl.X402Version}
	switch pl.X402Version {
	case x402.V2:
		if pl.Accepted == nil {
			return t, errors.New("v2 payment has no accepted option")
		}
		a := pl.Accepted
		t.scheme, t.network, t.asset, t.payTo, t.amount = a.Scheme, a.Network, a.Asset, a.PayTo, a.Amount
		t.accepted, t.resource = a, pl.Resource
	case x402.V1:
		t.scheme, t.network = pl.Scheme, pl.Network
	default:
		return t, fmt.Errorf("unsupported x402Version %d", pl.X402Version)
	}
	switch {
	case x402.IsEVMNetwork(t.network):
		return evmTerms(pl, t)
	case x402.IsSolanaNetwork(t.network):
		return svmTerms(pl, t)
	}
	return t, fmt.Errorf("payment on network %q cannot be checked (payguard reads EVM and Solana payments)", t.network)
}

// evmTerms checks that an EIP-3009 (or Permit2) authorization pays the named payee the named amount; a v1
// payload's payee and amount are read from the authorization. An upto payment is a Permit2 one, in v2 only.
func evmTerms(pl *x402.PaymentPayload, t terms) (terms, error) {
	if t.scheme == x402.SchemeUpto && t.version != x402.V2 {
		return t, errors.New("an upto payment is defined only in x402 v2")
	}
	ev, err := pl.EVM()
	if err != nil {
		return t, fmt.Errorf("payment payload unreadable: %v", err)
	}
	tr, err := authorizedTransfer(ev)
	if err != nil {
		return t, err
	}
	if ev.Permit2 != nil {
		if err := checkPermit2(ev.Permit2, t.scheme, t.accepted); err != nil {
			return t, err
		}
		t.permit2 = ev.Permit2
		tr.nonce = permit2Nonce(ev.Permit2)
	} else if t.scheme == x402.SchemeUpto {
		return t, errors.New("an upto payment must carry a Permit2 authorization (upto has no EIP-3009 form)")
	}
	network, _ := x402.CAIP2(t.network)
	t.authorization = strings.Join([]string{"x402-authorization", network, strings.ToLower(tr.from),
		strings.ToLower(tr.nonce)}, "\x00")
	t.token, t.payer = tr.token, tr.from
	if t.version == x402.V1 {
		t.payTo, t.amount = tr.to, tr.value
		return t, nil
	}
	if !x402.SameAddress(tr.to, t.payTo) {
		return t, fmt.Errorf("payment authorizes a transfer to %s, not to the named payTo %s", tr.to, t.payTo)
	}
	if !sameAmount(tr.value, t.amount) {
		return t, fmt.Errorf("payment authorizes %s atomic units, not the named amount %s", tr.value, t.amount)
	}
	if tr.token != "" && !x402.SameAddress(tr.token, t.asset) {
		return t, fmt.Errorf("payment's Permit2 authorization moves token %s, not the named asset %s", tr.token, t.asset)
	}
	return t, nil
}

// transfer is what a payload's signature authorizes: recipient, value, and for Permit2 the token; from and
// nonce identify the authorization itself (a nonce is used once per payer).
type transfer struct{ to, value, token, from, nonce string }

// authorizedTransfer reads the one authorization a payload carries. A payload with both an EIP-3009 and a
// Permit2 authorization is refused: the facilitator settles whichever the option's transfer method names, so
// the proxy could check one and release the other.
func authorizedTransfer(ev *x402.ExactEVMPayload) (transfer, error) {
	a, p2 := ev.Authorization, ev.Permit2
	switch {
	case a != nil && p2 != nil:
		return transfer{}, errors.New("payment carries both an EIP-3009 and a Permit2 authorization")
	case a != nil:
		if a.To == "" || a.Value == "" || a.From == "" || a.Nonce == "" {
			return transfer{}, errors.New("EIP-3009 authorization lacks from, to, value or nonce")
		}
		return transfer{to: a.To, value: a.Value, from: a.From, nonce: a.Nonce}, nil
	case p2 != nil:
		return transfer{to: p2.Witness.To, value: p2.Permitted.Amount, token: p2.Permitted.Token, from: p2.From,
			nonce: p2.Nonce}, nil
	}
	return transfer{}, errors.New("payment carries no EIP-3009 or Permit2 authorization")
}

func sameNetwork(a, b string) bool {
	x, okA := x402.CAIP2(a)
	y, okB := x402.CAIP2(b)
	return okA && okB && x == y
}

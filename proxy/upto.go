package proxy

import (
	"encoding/json"
	"errors"
	"fmt"
	"math/big"
	"time"

	"github.com/payguard/payguard/x402"
)

// The `upto` scheme (specs/schemes/upto/scheme_upto_evm.md, docs/SPEC.md §4.6): the agent signs a Permit2
// PermitWitnessTransferFrom for a maximum; the seller settles its usage, at most that, through the
// x402UptoPermit2Proxy, which pays only witness.to and lets only witness.facilitator settle. The proxy
// releases such a payment only when the signed message is exactly what was approved: the token and maximum
// of the option, its payee as the witness recipient, the upto proxy as spender (any other spender could
// move the tokens anywhere), the option's facilitator, a window that is open now and closes within the
// option's maxTimeoutSeconds, and a nonce never seen before (single use).

// permit2ClockSkew is the slack allowed between the agent's clock (which wrote validAfter and deadline) and
// payguard's.
const permit2ClockSkew = 60 * time.Second

// checkPermit2 checks a Permit2 authorization against the v2 option the payment names (accepted): the
// spender of its scheme, and for upto the witness facilitator. The recipient, amount and token are checked
// by paymentTerms for both schemes.
func checkPermit2(a *x402.Permit2Authorization, scheme string, accepted *x402.Requirement) error {
	spender := x402.ExactPermit2ProxyAddress
	if scheme == x402.SchemeUpto {
		spender = x402.UptoPermit2ProxyAddress
	}
	if !x402.IsEVMAddress(a.Spender) || !x402.SameAddress(a.Spender, spender) {
		return fmt.Errorf("payment's Permit2 spender %s is not the x402 %s proxy %s (another spender could move the tokens anywhere)",
			clip(a.Spender), clip(scheme), spender)
	}
	if !x402.IsEVMAddress(a.From) {
		return fmt.Errorf("payment's Permit2 payer %s is not an EVM address", clip(a.From))
	}
	if _, ok := x402.Uint256(a.Nonce); !ok {
		return fmt.Errorf("payment's Permit2 nonce %s is not a uint256", clip(a.Nonce))
	}
	if scheme != x402.SchemeUpto || accepted == nil {
		return nil
	}
	want := facilitatorOf(accepted)
	if want == "" {
		return errors.New("upto option names no extra.facilitatorAddress, so the facilitator the payment may be settled by cannot be bound")
	}
	if !x402.IsEVMAddress(a.Witness.Facilitator) || !x402.SameAddress(a.Witness.Facilitator, want) {
		return fmt.Errorf("payment's witness facilitator %s is not the option's facilitatorAddress %s", clip(a.Witness.Facilitator), clip(want))
	}
	return nil
}

// checkPermit2Window checks the authorization's time window at now: open (validAfter not in the future),
// not expired, and closing within the option's maxTimeoutSeconds, as the SDK client signs it
// (deadline = signing time + maxTimeoutSeconds), so a seller cannot be handed a long-lived authorization.
func checkPermit2Window(a *x402.Permit2Authorization, maxTimeoutSeconds int64, now time.Time) error {
	validAfter, ok1 := x402.Uint256(a.Witness.ValidAfter)
	deadline, ok2 := x402.Uint256(a.Deadline)
	if !ok1 || !ok2 {
		return errors.New("payment's Permit2 validAfter or deadline is not a uint256")
	}
	skew := int64(permit2ClockSkew / time.Second)
	unix := big.NewInt(now.Unix())
	if validAfter.Cmp(new(big.Int).Add(unix, big.NewInt(skew))) > 0 {
		return fmt.Errorf("payment's Permit2 authorization is valid only after %s (not yet open)", validAfter)
	}
	if deadline.Cmp(unix) <= 0 {
		return fmt.Errorf("payment's Permit2 deadline %s has passed", deadline)
	}
	latest := new(big.Int).Add(unix, big.NewInt(maxTimeoutSeconds))
	latest.Add(latest, big.NewInt(skew))
	if maxTimeoutSeconds < 0 || deadline.Cmp(latest) > 0 {
		return fmt.Errorf("payment's Permit2 deadline %s is later than the option's maxTimeoutSeconds (%d s) allows", deadline, maxTimeoutSeconds)
	}
	return nil
}

// facilitatorOf is an option's extra.facilitatorAddress ("" when absent or not a string).
func facilitatorOf(r *x402.Requirement) string {
	var extra struct {
		FacilitatorAddress string `json:"facilitatorAddress"`
	}
	if len(r.Extra) == 0 || json.Unmarshal(r.Extra, &extra) != nil {
		return ""
	}
	return extra.FacilitatorAddress
}

// permit2Nonce is the authorization's identity: Permit2 nonces are one bitmap per owner across every token
// and spender, so the payer and the nonce's value (whatever its spelling) name it.
func permit2Nonce(a *x402.Permit2Authorization) string {
	n, ok := x402.Uint256(a.Nonce)
	if !ok {
		return a.Nonce
	}
	return "permit2:" + n.String()
}

// clip bounds a seller's or agent's text in a message.
func clip(s string) string {
	if len(s) > 66 {
		return fmt.Sprintf("%q...", s[:66])
	}
	return fmt.Sprintf("%q", s)
}

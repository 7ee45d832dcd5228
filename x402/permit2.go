package x402

import (
	"math/big"
	"strings"
)

// Scheme names of the official SDKs (@x402/evm 2.27): `exact` pays the amount, `upto` authorizes the amount
// as a maximum and the seller settles its usage (docs/SPEC.md §4.6). `batch-settlement` and `auth-capture`
// move the money after the request, outside the response the proxy reads; payguard refuses them.
const (
	SchemeExact           = "exact"
	SchemeUpto            = "upto"
	SchemeBatchSettlement = "batch-settlement"
	SchemeAuthCapture     = "auth-capture"
)

// The contracts a Permit2 authorization names (@x402/evm 2.27 constants, the same address on every EVM
// chain through CREATE2). Permit2 lets its `spender` move the permitted tokens to any address the spender
// passes; only the x402 proxies enforce `witness.to`. So the spender is part of what a payment binds: an
// authorization for any other spender could pay anyone.
const (
	Permit2Address           = "0x000000000022D473030F116dDEE9F6B43aC78BA3"
	ExactPermit2ProxyAddress = "0x402085c248EeA27D92E8b30b2C58ed07f9E20001"
	UptoPermit2ProxyAddress  = "0x4020A4f3b7b90ccA423B9fabCc0CE57C6C240002"
)

// Permit2Authorization is an EVM payload's `permit2Authorization`: the PermitWitnessTransferFrom message the
// payer signed (specs/schemes/upto/scheme_upto_evm.md; exact's Permit2 variant has no witness.facilitator).
// Every member is a string as the SDK writes it; numbers are decimal (or 0x-hex) uint256 text, read with
// Uint256.
type Permit2Authorization struct {
	From      string
	Spender   string
	Nonce     string
	Deadline  string
	Permitted Permit2Permitted
	Witness   Permit2Witness
}

// Permit2Permitted is the token and the (maximum) amount the signature lets the spender move.
type Permit2Permitted struct{ Token, Amount string }

// Permit2Witness is the x402 witness: the recipient the proxy contract enforces, the facilitator allowed to
// settle (upto only; "" when absent) and the start of the validity window.
type Permit2Witness struct{ To, Facilitator, ValidAfter string }

func decodePermit2(data []byte) (*Permit2Authorization, error) {
	const what = "payload.permit2Authorization"
	m, err := members(data, what)
	if err != nil {
		return nil, err
	}
	a := &Permit2Authorization{}
	if err := requiredStrings(&m, what, map[string]*string{
		"from": &a.From, "spender": &a.Spender, "nonce": &a.Nonce, "deadline": &a.Deadline,
	}); err != nil {
		return nil, err
	}
	for _, sub := range []struct {
		key  string
		need map[string]*string
		opt  map[string]*string
	}{
		{"permitted", map[string]*string{"token": &a.Permitted.Token, "amount": &a.Permitted.Amount}, nil},
		{"witness", map[string]*string{"to": &a.Witness.To, "validAfter": &a.Witness.ValidAfter},
			map[string]*string{"facilitator": &a.Witness.Facilitator}},
	} {
		raw, err := m.object(sub.key, what)
		if err != nil {
			return nil, err
		}
		if raw == nil {
			return nil, malformed("%s: no %s", what, sub.key)
		}
		sm, err := members(raw, what+"."+sub.key)
		if err != nil {
			return nil, err
		}
		if err := requiredStrings(&sm, what+"."+sub.key, sub.need); err != nil {
			return nil, err
		}
		for k, dst := range sub.opt {
			if err := sm.str(k, what+"."+sub.key, dst); err != nil {
				return nil, err
			}
		}
	}
	return a, nil
}

func requiredStrings(m *objectMembers, what string, fields map[string]*string) error {
	for k, dst := range fields {
		if !m.has(k) {
			return malformed("%s: no %s", what, k)
		}
		if err := m.str(k, what, dst); err != nil {
			return err
		}
		if *dst == "" {
			return malformed("%s.%s: empty", what, k)
		}
	}
	return nil
}

// maxUint256 is 2^256 - 1, the largest value a Permit2 field holds.
var maxUint256 = new(big.Int).Sub(new(big.Int).Lsh(big.NewInt(1), 256), big.NewInt(1))

// Uint256 reads a Permit2 number as the SDK facilitators do with BigInt, restricted to the two spellings the
// SDK and the scheme text write: decimal digits or 0x followed by hex digits. Signs, spaces, other prefixes
// and values above 2^256-1 are refused (ok false), so one number has one reading.
func Uint256(s string) (*big.Int, bool) {
	digits, base := s, 10
	if strings.HasPrefix(s, "0x") || strings.HasPrefix(s, "0X") {
		digits, base = s[2:], 16
	}
	if digits == "" || len(digits) > 80 {
		return nil, false
	}
	for i := 0; i < len(digits); i++ {
		c := digits[i]
		ok := '0' <= c && c <= '9' || base == 16 && ('a' <= c && c <= 'f' || 'A' <= c && c <= 'F')
		if !ok {
			return nil, false
		}
	}
	n, ok := new(big.Int).SetString(digits, base)
	if !ok || n.Cmp(maxUint256) > 0 {
		return nil, false
	}
	return n, true
}

package proxy

import (
	"math/big"

	"github.com/payguard/payguard/preflight"
	"github.com/payguard/payguard/x402"
)

// judgedOption is the option a decision judged, for its log line: the chosen one, else the one whose payee
// the engine reported (a held or blocked option), else the challenge's only or first option. A block chose
// none, but a person reading the log needs the amount and payee it refused.
func judgedOption(pr *x402.PaymentRequired, res *preflight.Result) *x402.Requirement {
	if pr == nil || len(pr.Accepts) == 0 {
		return nil
	}
	if res != nil && res.ChosenIndex >= 0 && res.ChosenIndex < len(pr.Accepts) {
		return &pr.Accepts[res.ChosenIndex]
	}
	if res != nil && res.Payee != nil && res.Payee.PayTo != "" {
		for i := range pr.Accepts {
			if x402.SameAddress(pr.Accepts[i].PayTo, res.Payee.PayTo) || pr.Accepts[i].PayTo == res.Payee.PayTo {
				return &pr.Accepts[i]
			}
		}
	}
	return &pr.Accepts[0]
}

// usdOfUSDC is a known USDC amount (atomic units) in USD micro-dollars, if the option is one; USDC has six
// decimals, so the atomic amount is the micro-dollar amount.
func usdOfUSDC(o *x402.Requirement) (int64, bool) {
	a, ok := x402.LookupUSDC(o.Network, o.Asset)
	if !ok || a.Decimals != 6 {
		return 0, false
	}
	n, ok := new(big.Int).SetString(o.Amount, 10)
	if !ok || n.Sign() < 0 || !n.IsInt64() {
		return 0, false
	}
	return n.Int64(), true
}

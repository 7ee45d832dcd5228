package preflight

import (
	"errors"
	"slices"
	"strings"
	"sync"

	"github.com/payguard/payguard/policy"
	"github.com/payguard/payguard/x402"
)

// policyOption derives the policy facts of one x402 payment option with the x402 package's tables.
func policyOption(r *x402.Requirement) policy.Option {
	o := policy.Option{Scheme: r.Scheme, Network: r.Network, Asset: r.Asset, PayTo: r.PayTo}
	o.NetworkIDs = networkIDs(r.Network)
	atomic, err := x402.ParseAtomic(r.Amount)
	switch {
	case errors.Is(err, x402.ErrAmountNegative):
		o.Amount = policy.AmountNegative
	case errors.Is(err, x402.ErrAmountOversized):
		o.Amount = policy.AmountOversized
	case err != nil:
		o.Amount = nonfiniteOr(r.Amount, policy.AmountMalformed)
	}
	if a, ok := x402.LookupUSDC(r.Network, r.Asset); ok && a.Decimals == 6 {
		o.KnownUSDC = true
		if o.Amount == policy.AmountOK {
			// Six decimals: one atomic unit is one micro-dollar. ParseAtomic caps amounts at 1e18, which fits
			// policy.USD.
			o.USD = policy.USD(atomic)
		}
	}
	o.EVM = x402.IsEVMNetwork(r.Network)
	o.V1 = r.Version == x402.V1
	// A payee that cannot be the chain's address could never be paid: the option is malformed, on Solana (a
	// 32-byte Base58 key) as on EVM.
	o.PayToMalformed = r.PayTo != "" && (o.EVM && !x402.IsEVMAddress(r.PayTo) ||
		x402.IsSolanaNetwork(r.Network) && !x402.IsSolanaAddress(r.PayTo))
	return o
}

// networkIDs are every name of network: as written, its CAIP-2 id, its v1 name. The lists of the networks
// x402 names (those with a v1 name: a fixed set) are made once and shared; policy only reads them.
func networkIDs(network string) []string {
	knownNetworkIDs.RLock()
	ids, ok := knownNetworkIDs.m[network]
	knownNetworkIDs.RUnlock()
	if ok {
		return ids
	}
	ids = []string{network}
	id, ok := x402.CAIP2(network)
	if !ok {
		return ids
	}
	if id != network {
		ids = append(ids, id)
	}
	name, known := x402.V1Name(id)
	if known && name != network {
		ids = append(ids, name)
	}
	if known {
		ids = slices.Clip(ids) // an append to a shared list copies it
		knownNetworkIDs.Lock()
		knownNetworkIDs.m[network] = ids
		knownNetworkIDs.Unlock()
	}
	return ids
}

var knownNetworkIDs = struct {
	sync.RWMutex
	m map[string][]string
}{m: map[string][]string{}}

// nonfiniteOr maps "NaN" and "Infinity" spellings to AmountNegative's reason row ("invalid payment amount
// (negative or nonfinite)"); any other unreadable amount keeps def.
func nonfiniteOr(s string, def policy.AmountProblem) policy.AmountProblem {
	switch strings.ToLower(strings.TrimLeft(s, "+")) {
	case "nan", "inf", "infinity":
		return policy.AmountNegative
	}
	return def
}

// cartOption is the one option of a cart.
func cartOption(c *Cart) policy.Option {
	return policy.Option{
		Cart:   true,
		PayTo:  c.PayTo,
		Amount: c.TotalProblem,
		USD:    c.TotalUSD,
		// A cart names no network; a 0x identifier that is not a 20-byte address is still malformed.
		PayToMalformed: strings.HasPrefix(c.PayTo, "0x") && !x402.IsEVMAddress(c.PayTo),
	}
}

// MerchantDomain is the merchant host the engine screens: the v2 challenge's resource.url, else the first v1
// requirement resource, else the cart's merchant_domain, else the input's resource_url. Exported so that a
// harness outside the package (scripts/bench-clients) keys its domain facts as the engine will look them up.
func (in *Input) MerchantDomain() string {
	if ch := in.Challenge; ch != nil {
		if ch.Resource != nil {
			if d := policy.MerchantDomain(ch.Resource.URL); d != "" {
				return d
			}
		}
		for i := range ch.Accepts {
			if d := policy.MerchantDomain(ch.Accepts[i].Resource); d != "" {
				return d
			}
		}
	}
	if in.Cart != nil {
		if d := policy.MerchantDomain(in.Cart.MerchantDomain); d != "" {
			return d
		}
	}
	return policy.MerchantDomain(in.ResourceURL)
}

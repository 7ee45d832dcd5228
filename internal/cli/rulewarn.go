package cli

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/payguard/payguard/policy"
	"github.com/payguard/payguard/x402"
)

// ruleWarnings lists rules that are valid but cannot do what they seem to: a hold threshold at or above the
// per-payment maximum (every amount above it is blocked first, so the hold never fires), and network names
// payguard does not know (they match no challenge, so payments there are never allowed) or, under
// usdc_only, networks without a USDC contract payguard knows (nothing there is ever allowed).
func ruleWarnings(r policy.Rules) []string {
	var out []string
	if r.HoldAboveUSD >= r.MaxPerPaymentUSD {
		out = append(out, fmt.Sprintf("hold_above_usd (%s) is not below max_per_payment_usd (%s): every amount above it is "+
			"blocked by the maximum first, so the hold rule can never fire", r.HoldAboveUSD, r.MaxPerPaymentUSD))
	}
	for _, n := range r.AllowedNetworks {
		id, ok := knownNetwork(n)
		switch {
		case !ok:
			out = append(out, fmt.Sprintf("allowed_networks: %q is not a network payguard knows (a CAIP-2 id such as "+
				"eip155:8453, or an x402 v1 name such as base): it matches no challenge", n))
		case r.USDCOnly:
			if _, usdc := x402.USDCOn(id); !usdc {
				out = append(out, fmt.Sprintf("allowed_networks: %q (%s) has no USDC contract payguard knows, and usdc_only "+
					"is on: no payment on it is ever allowed", n, id))
			}
		}
	}
	return out
}

// knownNetwork is a network name's CAIP-2 id, the way the engine compares names (trimmed, any case).
func knownNetwork(n string) (string, bool) {
	n = strings.TrimSpace(n)
	if id, ok := x402.CAIP2(n); ok {
		return id, true
	}
	return x402.CAIP2(strings.ToLower(n))
}

// WriteRuleWarnings prints the warnings on stderr, one per line.
func WriteRuleWarnings(w io.Writer, cmd string, r policy.Rules) {
	for _, m := range ruleWarnings(r) {
		fmt.Fprintf(w, "payguard %s: warning: rules.%s\n", cmd, m)
	}
}

// ReadRulesFile decodes a rules file over base: JSON when it starts with '{' (or is named .json), YAML
// otherwise.
func ReadRulesFile(path string, base policy.Rules) (policy.Rules, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return policy.Rules{}, err
	}
	t := bytes.TrimSpace(data)
	if strings.EqualFold(filepath.Ext(path), ".json") || len(t) > 0 && t[0] == '{' {
		return policy.DecodeRulesJSON(data, base)
	}
	return policy.DecodeRulesYAML(data, base)
}

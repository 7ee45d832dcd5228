package policy

import (
	"slices"
	"testing"
)

const (
	usdcBase = "0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913"
	payeeA   = "0x1111111111111111111111111111111111111111"
	payeeB   = "0x2222222222222222222222222222222222222222"
)

func ptr[T any](v T) *T { return &v }

// usdcOption is a well-formed Base USDC option for micros micro-dollars.
func usdcOption(micros USD, payTo string) Option {
	return Option{
		Scheme: "exact", Network: "eip155:8453", Asset: usdcBase, PayTo: payTo, EVM: true,
		NetworkIDs: []string{"eip155:8453", "base"}, KnownUSDC: true, USD: micros,
	}
}

// cleanFacts passes every rule with default rules: one $0.01 option, a known old domain with an A record,
// sanctions screened and clear.
func cleanFacts() Facts {
	return Facts{
		Options:        []Option{usdcOption(10_000, payeeA)},
		MerchantDomain: "api.example.com",
		Sanctions:      SanctionsFacts{State: SanctionsScreened},
		Domain:         DomainFacts{AgeDays: ptr(400), HasA: ptr(true)},
		Rules:          DefaultRules(),
	}
}

// TestReasonRows has one case per row of SPEC §5's reason table that needs no Index data, plus payguard's
// fail-closed additions. Each case changes the clean facts just enough for that row to fire and asserts the
// exact string and the decision.
func TestReasonRows(t *testing.T) {
	cases := []struct {
		name     string
		edit     func(*Facts)
		decision Decision
		reason   string
	}{
		{"no options", func(f *Facts) { f.Options = nil },
			Block, "block: no payment options found in input"},
		{"no merchant domain", func(f *Facts) { f.MerchantDomain = "" },
			Hold, "hold: could not determine merchant domain"},
		{"domain blocklist", func(f *Facts) { f.Rules.DomainBlocklist = []string{"example.com"} },
			Block, "block: domain api.example.com is on blocklist"},
		{"domain not on allowlist", func(f *Facts) {
			f.Rules.StrictAllowlist = true
			f.Rules.DomainAllowlist = []string{"other.com"}
		}, Hold, "hold: domain api.example.com not on allowlist"},
		{"name exact", func(f *Facts) { f.MerchantName = "X"; f.Sanctions.NameExact = true },
			Block, "block: merchant name exactly matches an OFAC SDN entry"},
		{"name possible", func(f *Facts) { f.MerchantName = "X"; f.Sanctions.NamePossible = true },
			Hold, "hold: merchant name possibly matches an OFAC SDN entry"},
		{"new domain", func(f *Facts) { f.Domain.AgeDays = ptr(3) },
			Hold, "hold: domain registered 3 days ago (< 30)"},
		{"no A record", func(f *Facts) { f.Domain.HasA = ptr(false) },
			Hold, "hold: domain has no DNS A record"},
		{"unsupported scheme", func(f *Facts) { f.Options[0].Scheme = "lightning" },
			Block, "block: payment scheme lightning is not supported"},
		{"unreadable scheme", func(f *Facts) { f.Options[0].Scheme = "Exact" },
			Block, "block: payment scheme (unreadable) is not supported"},
		{"upto on v1", func(f *Facts) { f.Options[0].Scheme, f.Options[0].V1 = "upto", true },
			Block, "block: payment scheme upto is supported only in x402 v2 on an EVM network"},
		{"batch-settlement", func(f *Facts) { f.Options[0].Scheme = "batch-settlement" },
			Block, "block: payment scheme batch-settlement is not supported: the seller redeems vouchers against a deposit after the request, so payguard cannot reconcile what is spent"},
		{"auth-capture", func(f *Facts) { f.Options[0].Scheme = "auth-capture" },
			Block, "block: payment scheme auth-capture is not supported: an operator captures, voids or refunds the escrowed authorization after the request, so payguard cannot reconcile what is spent"},
		{"upto maximum above max", func(f *Facts) { f.Options[0].Scheme, f.Options[0].USD = "upto", 2_000_000 },
			Block, "block: upto maximum $2 exceeds max $1"},
		{"upto maximum above hold", func(f *Facts) { f.Options[0].Scheme, f.Options[0].USD = "upto", 500_000 },
			Hold, "hold: upto maximum $0.5 above hold threshold $0.25"},
		{"oversized amount", func(f *Facts) { f.Options[0].Amount = AmountOversized },
			Block, "block: unsupported or malformed payment option"},
		{"malformed amount", func(f *Facts) { f.Options[0].Amount = AmountMalformed },
			Block, "block: unsupported or malformed payment option"},
		{"malformed EVM payTo", func(f *Facts) { f.Options[0].PayTo = "0x12"; f.Options[0].PayToMalformed = true },
			Block, "block: unsupported or malformed payment option"},
		{"negative amount", func(f *Facts) { f.Options[0].Amount = AmountNegative },
			Block, "block: invalid payment amount"},
		{"network not allowed", func(f *Facts) {
			f.Options[0].Network = "eip155:137"
			f.Options[0].NetworkIDs = []string{"eip155:137", "polygon"}
		}, Block, "block: network eip155:137 not allowed"},
		{"asset not USDC", func(f *Facts) { f.Options[0].Asset = "0xdead"; f.Options[0].KnownUSDC = false },
			Block, "block: asset 0xdead is not a known USDC contract"},
		{"unpriced", func(f *Facts) {
			f.Rules.USDCOnly = false
			f.Options[0].Asset = "0xdead"
			f.Options[0].KnownUSDC = false
		}, Hold, "hold: amount could not be priced in USD"},
		{"above max", func(f *Facts) { f.Options[0].USD = 1_500_000 },
			Block, "block: amount $1.5 exceeds max $1"},
		{"above hold threshold", func(f *Facts) { f.Options[0].USD = 500_000 },
			Hold, "hold: amount $0.5 above hold threshold $0.25"},
		{"daily cap", func(f *Facts) { f.SpentToday = 24_995_000 },
			Block, "block: daily cap $25 would be exceeded (spent $24.995)"},
		{"payTo blocklist", func(f *Facts) { f.Rules.PayToBlocklist = []string{payeeA} },
			Block, "block: payTo " + payeeA + " is on blocklist"},
		// A payee listed as "0X…" is the same account as the seller's "0x…" (evmaddr.Same): blocked all the same.
		{"payTo blocklist, another spelling", func(f *Facts) { f.Rules.PayToBlocklist = []string{"0X" + payeeA[2:]} },
			Block, "block: payTo " + payeeA + " is on blocklist"},
		{"payTo not on allowlist", func(f *Facts) {
			f.Rules.StrictAllowlist = true
			f.Rules.DomainAllowlist = []string{"example.com"}
			f.Rules.PayToAllowlist = []string{payeeB}
		}, Hold, "hold: payTo " + payeeA + " not on allowlist"},
		{"payTo sanctioned", func(f *Facts) { f.Sanctions.AddressMatch = true },
			Block, "block: payTo " + payeeA + " is an OFAC SDN-listed address"},
		{"no payTo", func(f *Facts) { f.Options[0].PayTo = "" },
			Hold, "hold: payment option has no payTo"},
		{"all passed", func(*Facts) {},
			Allow, "allow: all rules passed"},
		{"sanctions data unavailable", func(f *Facts) { f.Sanctions = SanctionsFacts{State: SanctionsNoData} },
			Hold, "hold: sanctions data unavailable"},
		{"sanctions never gathered", func(f *Facts) { f.Sanctions = SanctionsFacts{} },
			Hold, "hold: sanctions data unavailable"},
		{"sanctions failed", func(f *Facts) { f.Sanctions = SanctionsFacts{State: SanctionsFailed} },
			Hold, "hold: sanctions screening failed"},
		{"domain check failed", func(f *Facts) { f.Domain = DomainFacts{Failed: true} },
			Hold, "hold: domain screening failed"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			f := cleanFacts()
			c.edit(&f)
			out := Evaluate(f)
			got := out.ReasonStrings()
			if out.Decision != c.decision || !slices.Equal(got, []string{c.reason}) {
				t.Fatalf("got %s %q, want %s [%q]", out.Decision, got, c.decision, c.reason)
			}
		})
	}
}

func TestAllowedWithOptionalFactsUnknown(t *testing.T) {
	f := cleanFacts()
	f.Domain = DomainFacts{} // age and A record unknown: reported by the engine, never a reason here
	out := Evaluate(f)
	if out.Decision != Allow || out.Chosen != 0 || out.AmountUSD != 10_000 {
		t.Fatalf("got %+v", out)
	}
}

func TestScreeningDisabledIgnoresSanctionsFacts(t *testing.T) {
	f := cleanFacts()
	f.Rules.ScreenSanctions = false
	f.Sanctions = SanctionsFacts{State: SanctionsNoData}
	if out := Evaluate(f); out.Decision != Allow {
		t.Fatalf("got %v %q", out.Decision, out.ReasonStrings())
	}
}

func TestNothingToScreenDoesNotHold(t *testing.T) {
	f := cleanFacts()
	f.Options[0].Scheme = "lightning" // rejected: nothing is chosen, so no payee is screened
	f.Sanctions = SanctionsFacts{State: SanctionsNothingToScreen}
	out := Evaluate(f)
	if got := out.ReasonStrings(); !slices.Equal(got, []string{"block: payment scheme lightning is not supported"}) {
		t.Fatalf("got %q", got)
	}
}

func TestNetworkAllowedByAnyName(t *testing.T) {
	f := cleanFacts()
	f.Rules.AllowedNetworks = []string{"base"} // the option is written in CAIP-2
	if out := Evaluate(f); out.Decision != Allow {
		t.Fatalf("got %q", out.ReasonStrings())
	}
}

func TestCartOption(t *testing.T) {
	f := cleanFacts()
	f.Options = []Option{{Cart: true, PayTo: payeeA, USD: 200_000}}
	out := Evaluate(f)
	if out.Decision != Allow || out.AmountUSD != 200_000 {
		t.Fatalf("got %v %q", out.Decision, out.ReasonStrings())
	}
	f.Options[0].USD = 2_000_000
	if got := Evaluate(f).ReasonStrings(); !slices.Equal(got, []string{"block: amount $2 exceeds max $1"}) {
		t.Fatalf("got %q", got)
	}
}

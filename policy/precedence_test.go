package policy

import (
	"slices"
	"testing"
	"time"
)

func TestPrecedence(t *testing.T) {
	cases := []struct {
		name     string
		edit     func(*Facts)
		decision Decision
		reasons  []string
	}{
		{"sanctions block outranks holds and is listed first", func(f *Facts) {
			f.Options[0].USD = 500_000 // hold threshold
			f.Domain.AgeDays = ptr(2)  // new domain hold
			f.Sanctions.AddressMatch = true
		}, Block, []string{
			"block: payTo " + payeeA + " is an OFAC SDN-listed address",
			"hold: domain registered 2 days ago (< 30)",
			"hold: amount $0.5 above hold threshold $0.25",
		}},
		{"spending block outranks hold", func(f *Facts) {
			f.Options[0].USD = 500_000
			f.SpentToday = 24_600_000
		}, Block, []string{
			"block: daily cap $25 would be exceeded (spent $24.6)",
			"hold: amount $0.5 above hold threshold $0.25",
		}},
		{"domain blocklist outranks allowlist", func(f *Facts) {
			f.Rules.DomainAllowlist = []string{"example.com"}
			f.Rules.DomainBlocklist = []string{"api.example.com"}
			f.Rules.StrictAllowlist = true
		}, Block, []string{"block: domain api.example.com is on blocklist"}},
		{"payTo blocklist outranks allowlist, case-insensitive for EVM", func(f *Facts) {
			f.Options[0].PayTo = "0xAbCdEf0000000000000000000000000000000001"
			f.Rules.StrictAllowlist = true
			f.Rules.DomainAllowlist = []string{"example.com"}
			f.Rules.PayToAllowlist = []string{"0xabcdef0000000000000000000000000000000001"}
			f.Rules.PayToBlocklist = []string{"0xABCDEF0000000000000000000000000000000001"}
		}, Block, []string{"block: payTo 0xAbCdEf0000000000000000000000000000000001 is on blocklist"}},
		{"allowlisted domain skips the new-domain hold only", func(f *Facts) {
			f.Rules.DomainAllowlist = []string{"example.com"}
			f.Domain.AgeDays = ptr(1)
			f.Domain.HasA = ptr(false)
		}, Hold, []string{"hold: domain has no DNS A record"}},
		{"unknown domain age is not evidence", func(f *Facts) {
			f.Domain.AgeDays = nil
		}, Allow, []string{"allow: all rules passed"}},
		{"name match and address match both listed", func(f *Facts) {
			f.MerchantName = "Bad Co"
			f.Sanctions.NamePossible = true
			f.Sanctions.AddressMatch = true
		}, Block, []string{
			"block: payTo " + payeeA + " is an OFAC SDN-listed address",
			"hold: merchant name possibly matches an OFAC SDN entry",
		}},
		{"non-EVM payee compares case exactly", func(f *Facts) {
			f.Options[0].PayTo = "SoLaNaPayee"
			f.Rules.PayToBlocklist = []string{"solanapayee"}
		}, Allow, []string{"allow: all rules passed"}},
		{"domain list matches subdomains, not suffix strings", func(f *Facts) {
			f.MerchantDomain = "badexample.com"
			f.Rules.DomainBlocklist = []string{"example.com"}
		}, Allow, []string{"allow: all rules passed"}},
		{"wildcard syntax is not supported", func(f *Facts) {
			f.Rules.DomainBlocklist = []string{"*.example.com"}
		}, Allow, []string{"allow: all rules passed"}},
		{"strict allowlist with empty payto_allowlist needs only the domain", func(f *Facts) {
			f.Rules.StrictAllowlist = true
			f.Rules.DomainAllowlist = []string{"EXAMPLE.com."}
		}, Allow, []string{"allow: all rules passed"}},
		{"strict allowlist needs both lists when payto_allowlist is set", func(f *Facts) {
			f.Rules.StrictAllowlist = true
			f.Rules.PayToAllowlist = []string{payeeA}
		}, Hold, []string{"hold: domain api.example.com not on allowlist"}},
		{"allowlists without strict are only approvals", func(f *Facts) {
			f.Rules.DomainAllowlist = []string{"other.com"}
			f.Rules.PayToAllowlist = []string{payeeB}
		}, Allow, []string{"allow: all rules passed"}},
		{"zero-age domain at threshold zero is not new", func(f *Facts) {
			f.Rules.NewDomainDays = 0
			f.Domain.AgeDays = ptr(0)
		}, Allow, []string{"allow: all rules passed"}},
		// The Endpoint Index rules (SPEC: holds with fixed prefixes; missing evidence is never positive).
		{"payTo differing from the latest observation holds, naming both", func(f *Facts) {
			f.Index = observed(OptionIndexFacts{LatestPayTos: []string{payeeB}, LatestAt: indexAt})
		}, Hold, []string{"hold: endpoint_payto_changed: payTo " + payeeA + " differs from " + payeeB +
			" offered for eip155:8453/" + usdcBase + " at 2026-11-20T10:00:00Z"}},
		{"payTo equal to the latest observation in another letter case passes", func(f *Facts) {
			f.Index = observed(OptionIndexFacts{LatestPayTos: []string{"0x1111111111111111111111111111111111111111"}, LatestAt: indexAt})
			f.Options[0].PayTo = "0x1111111111111111111111111111111111111111"
		}, Allow, []string{"allow: all rules passed"}},
		{"payee change within seven days holds even when the quote matches the latest", func(f *Facts) {
			f.Index = observed(OptionIndexFacts{LatestPayTos: []string{payeeA}, LatestAt: indexAt,
				ChangedFrom: payeeB, ChangedTo: payeeA, ChangedAt: indexAt})
		}, Hold, []string{"hold: endpoint_payto_changed: payTo changed from " + payeeB + " to " + payeeA +
			" for eip155:8453/" + usdcBase + " at 2026-11-20T10:00:00Z (within 7 days)"}},
		{"hold_on_payto_change off ignores a change", func(f *Facts) {
			f.Rules.HoldOnPayToChange = false
			f.Index = observed(OptionIndexFacts{LatestPayTos: []string{payeeB}, LatestAt: indexAt})
		}, Allow, []string{"allow: all rules passed"}},
		{"price above the multiple of the median holds, naming both", func(f *Facts) {
			f.Options[0].USD = 100_000
			f.Index = observed(OptionIndexFacts{MedianUSD: 10_000, MedianSamples: 2, MedianBasis: "own_history"})
		}, Hold, []string{"hold: endpoint_price_above_category_median: $0.1 is more than 5x the median $0.01 (own_history, 2 samples)"}},
		{"price exactly at the multiple passes", func(f *Facts) {
			f.Options[0].USD = 50_000
			f.Index = observed(OptionIndexFacts{MedianUSD: 10_000, MedianSamples: 1, MedianBasis: "own_history"})
		}, Allow, []string{"allow: all rules passed"}},
		{"max_price_multiple null disables the price rule", func(f *Facts) {
			f.Rules.MaxPriceMultiple = nil
			f.Options[0].USD = 100_000
			f.Index = observed(OptionIndexFacts{MedianUSD: 10_000, MedianSamples: 2, MedianBasis: "own_history"})
		}, Allow, []string{"allow: all rules passed"}},
		{"category basis is named", func(f *Facts) {
			f.Options[0].USD = 200_000
			f.Index = observed(OptionIndexFacts{MedianUSD: 10_000, MedianSamples: 7, MedianBasis: "category", Category: "weather"})
		}, Hold, []string{"hold: endpoint_price_above_category_median: $0.2 is more than 5x the median $0.01 (category weather, 7 other hosts)"}},
		{"a category median within the multiple passes, whatever the own history", func(f *Facts) {
			f.Options[0].USD = 200_000
			f.Index = observed(OptionIndexFacts{MedianUSD: 50_000, MedianSamples: 3, MedianBasis: "category", Category: "weather", CategoryHosts: 3})
		}, Allow, []string{"allow: all rules passed"}},
		{"a category too thin falls back to own history, named as such", func(f *Facts) {
			f.Options[0].USD = 100_000
			f.Index = observed(OptionIndexFacts{MedianUSD: 10_000, MedianSamples: 4, MedianBasis: "own_history", Category: "weather", CategoryHosts: 2})
		}, Hold, []string{"hold: endpoint_price_above_category_median: $0.1 is more than 5x the median $0.01 (own_history, 4 samples)"}},
		{"the category median rule holds and a payee change holds: both are named", func(f *Facts) {
			f.Options[0].USD = 100_000
			f.Index = observed(OptionIndexFacts{LatestPayTos: []string{payeeB}, LatestAt: indexAt,
				MedianUSD: 10_000, MedianSamples: 3, MedianBasis: "category", Category: "weather", CategoryHosts: 3})
		}, Hold, []string{"hold: endpoint_payto_changed: payTo " + payeeA + " differs from " + payeeB + " offered for eip155:8453/" + usdcBase + " at 2026-11-20T10:00:00Z",
			"hold: endpoint_price_above_category_median: $0.1 is more than 5x the median $0.01 (category weather, 3 other hosts)"}},
		{"three failed probes hold", func(f *Facts) {
			f.Index = IndexFacts{State: IndexGathered, FailedProbes: 3, LastProbeError: "connection refused"}
		}, Hold, []string{"hold: endpoint_failed_last_3: the last 3 unpaid probes failed (latest: connection refused)"}},
		{"two failed probes are not enough", func(f *Facts) {
			f.Index = IndexFacts{State: IndexGathered, FailedProbes: 2}
		}, Allow, []string{"allow: all rules passed"}},
		{"require_live off ignores failed probes", func(f *Facts) {
			f.Rules.RequireLive = false
			f.Index = IndexFacts{State: IndexGathered, FailedProbes: 5}
		}, Allow, []string{"allow: all rules passed"}},
		{"no observations is no evidence", func(f *Facts) {
			f.Index = IndexFacts{State: IndexGathered}
		}, Allow, []string{"allow: all rules passed"}},
		{"an unreadable Index is no evidence, never a block", func(f *Facts) {
			f.Index = IndexFacts{State: IndexFailed, FailedProbes: 9,
				Options: []OptionIndexFacts{{LatestPayTos: []string{payeeB}}}}
		}, Allow, []string{"allow: all rules passed"}},
		{"a non-positive max_price_multiple built in code holds as invalid_index_rule", func(f *Facts) {
			f.Rules.MaxPriceMultiple = ptr(-1.0)
		}, Hold, []string{"hold: invalid_index_rule: max_price_multiple -1 must be a positive number or null"}},
		{"sanctions and spending blocks outrank Index holds", func(f *Facts) {
			f.Sanctions.AddressMatch = true
			f.Index = observed(OptionIndexFacts{LatestPayTos: []string{payeeB}, LatestAt: indexAt})
		}, Block, []string{
			"block: payTo " + payeeA + " is an OFAC SDN-listed address",
			"hold: endpoint_payto_changed: payTo " + payeeA + " differs from " + payeeB +
				" offered for eip155:8453/" + usdcBase + " at 2026-11-20T10:00:00Z",
		}},
		{"amount equal to max and hold threshold passes", func(f *Facts) {
			f.Rules.MaxPerPaymentUSD = 10_000
			f.Rules.HoldAboveUSD = 10_000
			f.Rules.DailyCapUSD = 10_000
		}, Allow, []string{"allow: all rules passed"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			f := cleanFacts()
			c.edit(&f)
			out := Evaluate(f)
			if out.Decision != c.decision || !slices.Equal(out.ReasonStrings(), c.reasons) {
				t.Fatalf("got %s %q\nwant %s %q", out.Decision, out.ReasonStrings(), c.decision, c.reasons)
			}
		})
	}
}

func TestUnknownDecisionRanksAsBlock(t *testing.T) {
	if !Decision("maybe").Stronger(Hold) || Decision("maybe").Stronger(Block) || !Block.Stronger(Hold) || !Hold.Stronger(Allow) {
		t.Fatal("decision ranking wrong")
	}
	out := finish(Outcome{}, []Reason{{Decision: "maybe", Text: "future"}, reasonAllPassed()})
	if out.Decision != Block {
		t.Fatalf("unknown decision became %q", out.Decision)
	}
}

func TestCheapestOption(t *testing.T) {
	bad := usdcOption(1_000, payeeB)
	bad.Scheme = "lightning"
	cases := []struct {
		name    string
		options []Option
		chosen  int
		amount  USD
	}{
		{"cheapest wins", []Option{usdcOption(30_000, payeeA), usdcOption(10_000, payeeB), usdcOption(20_000, payeeA)}, 1, 10_000},
		{"tie goes to the first", []Option{usdcOption(10_000, payeeA), usdcOption(10_000, payeeB)}, 0, 10_000},
		{"cheaper but unacceptable is skipped", []Option{bad, usdcOption(50_000, payeeA)}, 1, 50_000},
		{"over max is skipped", []Option{usdcOption(2_000_000, payeeA), usdcOption(900_000, payeeB)}, 1, 900_000},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			f := cleanFacts()
			f.Options = c.options
			out := Evaluate(f)
			if out.Chosen != c.chosen || out.AmountUSD != c.amount || Choose(f) != c.chosen {
				t.Fatalf("chosen %d amount %s, want %d %s", out.Chosen, out.AmountUSD, c.chosen, c.amount)
			}
			if out.OptionsEvaluated != len(c.options) {
				t.Fatalf("options_evaluated %d", out.OptionsEvaluated)
			}
		})
	}
}

func TestNoAcceptableOptionUsesBestRejected(t *testing.T) {
	overMax := usdcOption(3_000_000, payeeA)
	overMaxCheaper := usdcOption(2_000_000, payeeA)
	noPayTo := usdcOption(10_000, "")
	wrongNet := usdcOption(10_000, payeeA)
	wrongNet.Network, wrongNet.NetworkIDs = "eip155:1", []string{"eip155:1", "ethereum"}

	cases := []struct {
		name     string
		options  []Option
		decision Decision
		reasons  []string
		chosen   int // a hold carries the option it holds; a block chooses none
	}{
		{"hold-only option beats blocked ones", []Option{overMax, noPayTo, wrongNet}, Hold,
			[]string{"hold: payment option has no payTo"}, 1},
		{"cheapest among equally bad", []Option{overMax, overMaxCheaper}, Block,
			[]string{"block: amount $2 exceeds max $1"}, -1},
		{"first among equal", []Option{wrongNet, overMaxCheaper}, Block,
			[]string{"block: network eip155:1 not allowed"}, -1},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			f := cleanFacts()
			f.Options = c.options
			f.Sanctions = SanctionsFacts{State: SanctionsNothingToScreen}
			out := Evaluate(f)
			var amount USD
			if c.chosen >= 0 {
				amount = c.options[c.chosen].USD
			}
			if out.Chosen != c.chosen || out.AmountUSD != amount || out.Decision != c.decision || !slices.Equal(out.ReasonStrings(), c.reasons) {
				t.Fatalf("got chosen %d %s %q", out.Chosen, out.Decision, out.ReasonStrings())
			}
		})
	}
}

func TestOneOptionSeveralDefectsListsEach(t *testing.T) {
	f := cleanFacts()
	o := &f.Options[0]
	o.Scheme, o.Amount, o.PayTo, o.PayToMalformed = "upto", AmountMalformed, "0x1", true
	o.Network, o.NetworkIDs, o.Asset, o.KnownUSDC, o.EVM = "solana", []string{"solana"}, "XYZ", false, false
	want := []string{
		"block: payment scheme upto is supported only in x402 v2 on an EVM network",
		"block: unsupported or malformed payment option",
		"block: network solana not allowed",
		"block: asset XYZ is not a known USDC contract",
	}
	if got := Evaluate(f).ReasonStrings(); !slices.Equal(got, want) {
		t.Fatalf("got %q", got)
	}
}

func TestMerchantDomain(t *testing.T) {
	for in, want := range map[string]string{
		"https://API.Example.com:8443/v1?x=1": "api.example.com",
		"http://user@shop.example.org/":       "shop.example.org",
		"Example.COM.":                        "example.com",
		"example.com:443":                     "example.com",
		"example.com/path":                    "example.com",
		"http://127.0.0.1:4021/weather":       "127.0.0.1",
		"http://[::1]:80/":                    "::1",
		"":                                    "",
		"https:///nohost":                     "",
		"mcp://tool/get":                      "tool",
		"bad host.com":                        "",
	} {
		if got := MerchantDomain(in); got != want {
			t.Errorf("MerchantDomain(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestAllowlistedPayeePreferredUnderStrict(t *testing.T) {
	f := cleanFacts()
	f.Rules.StrictAllowlist = true
	f.Rules.DomainAllowlist = []string{"example.com"}
	f.Rules.PayToAllowlist = []string{payeeB}
	f.Options = []Option{usdcOption(10_000, payeeA), usdcOption(20_000, payeeB)}
	out := Evaluate(f)
	if out.Decision != Allow || out.Chosen != 1 {
		t.Fatalf("got %s chosen %d %q", out.Decision, out.Chosen, out.ReasonStrings())
	}
}

func TestHugeSpentDoesNotOverflowIntoAllow(t *testing.T) {
	f := cleanFacts()
	f.SpentToday = 1<<63 - 1
	if out := Evaluate(f); out.Decision != Block {
		t.Fatalf("got %s %q", out.Decision, out.ReasonStrings())
	}
}

// FuzzEvaluate checks Evaluate's invariants over arbitrary combinations of facts: the decision is the
// strongest reason's, block reasons come first, "allow: all rules passed" appears alone and only when
// nothing else fired, and a chosen option never carries per-option reasons.
func FuzzEvaluate(f *testing.F) {
	f.Add(uint64(0), int64(10_000), int64(0))
	f.Add(uint64(0xffffffffffff), int64(2_000_000), int64(24_999_999))
	f.Fuzz(func(t *testing.T, bits uint64, amount, spent int64) {
		bit := func(i int) bool { return bits>>i&1 == 1 }
		facts := cleanFacts()
		if amount < 0 {
			amount = -amount
		}
		o := usdcOption(USD(amount%5_000_000), payeeA)
		if bit(0) {
			o.Scheme = "upto"
		}
		if bit(1) {
			o.Amount = AmountProblem(1 + bits>>40%3)
		}
		if bit(2) {
			o.PayTo = ""
		}
		if bit(3) {
			o.KnownUSDC = false
		}
		if bit(4) {
			o.Network, o.NetworkIDs = "eip155:1", nil
		}
		facts.Options = []Option{o, usdcOption(USD(amount%700_000), payeeB)}
		if bit(5) {
			facts.Options = facts.Options[:1]
		}
		if bit(6) {
			facts.Options = nil
		}
		facts.Rules.USDCOnly = !bit(7)
		facts.Rules.StrictAllowlist = bit(8)
		if bit(9) {
			facts.Rules.DomainBlocklist = []string{"example.com"}
		}
		if bit(10) {
			facts.Rules.PayToBlocklist = []string{payeeB}
		}
		facts.Sanctions = SanctionsFacts{State: SanctionsState(bits >> 11 % 5), AddressMatch: bit(14), NameExact: bit(15), NamePossible: bit(16)}
		facts.Rules.ScreenSanctions = !bit(17)
		if bit(18) {
			facts.Domain.AgeDays = ptr(int(bits >> 20 % 60))
		}
		if bit(19) {
			facts.Domain.HasA = ptr(false)
		}
		if bit(26) {
			facts.MerchantDomain = ""
		}
		facts.SpentToday = USD(spent)
		if spent < 0 {
			facts.SpentToday = 0
		}

		out := Evaluate(facts)
		if len(out.Reasons) == 0 {
			t.Fatal("no reasons")
		}
		strongest := Allow
		for i, r := range out.Reasons {
			if r.Decision.Stronger(strongest) {
				strongest = r.Decision
			}
			if i > 0 && r.Decision.Stronger(out.Reasons[i-1].Decision) {
				t.Fatalf("reasons out of order: %q", out.ReasonStrings())
			}
			if r.Decision == Allow && len(out.Reasons) != 1 {
				t.Fatalf("allow reason beside others: %q", out.ReasonStrings())
			}
		}
		if out.Decision != strongest {
			t.Fatalf("decision %s, strongest reason %s", out.Decision, strongest)
		}
		if out.Decision == Allow && out.Chosen < 0 {
			t.Fatal("allow without a chosen option")
		}
		if out.Chosen >= 0 {
			// The chosen option is acceptable, or it is the held option a person approves (SPEC §4.2): its
			// own reasons, if any, are holds, and the outcome is then never allow.
			for _, r := range judgeOption(facts.Options[out.Chosen], &facts.Rules, nil).reasons {
				if r.Decision != Hold || out.Decision == Allow {
					t.Fatalf("chosen option has its own reason %q, outcome %s", r, out.Decision)
				}
			}
		}
	})
}

var indexAt = time.Date(2026, 11, 20, 10, 0, 0, 0, time.UTC)

// observed is Index facts with evidence for the one option of cleanFacts.
func observed(of OptionIndexFacts) IndexFacts {
	return IndexFacts{State: IndexGathered, Options: []OptionIndexFacts{of}}
}

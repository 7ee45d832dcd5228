package preflight

import "fmt"

// buildVectorCases lists the decision vectors: every rule, both protocol versions, the option choice and
// SPEC's precedence cases. Expectations are filled in by the engine (TestDecisionVectors).
func buildVectorCases() []decisionVector {
	var out []decisionVector
	add := func(name string, in vin, s vectorScreening) {
		if in.version == 0 {
			in.version = 2
		}
		if in.url == "" && in.resource == "" {
			in.url = vecURL
		}
		out = append(out, decisionVector{Name: name, Input: in.json(), Screening: s})
	}
	one := func(o opt) vin { return vin{opts: []opt{o}} }
	rules := func(o opt, r map[string]any) vin { return vin{opts: []opt{o}, rules: r} }

	// Amounts against the default caps, in both protocol versions.
	for _, version := range []int{1, 2} {
		for _, a := range []struct{ name, amount string }{
			{"one cent", "10000"}, {"one micro-dollar", "1"}, {"zero", "0"}, {"at hold threshold", "250000"},
			{"just above hold threshold", "250001"}, {"at max", "1000000"}, {"just above max", "1000001"},
			{"five dollars", "5000000"}, {"leading zeros", "0010000"}, {"malformed decimal", "1.5"},
			{"empty amount", ""}, {"hex amount", "0x10"}, {"spaces", " 10000"}, {"negative", "-5"},
			{"NaN", "NaN"}, {"Infinity", "+Infinity"}, {"oversized", "1000000000000000001"},
			{"largest accepted", "1000000000000000000"}, {"plus sign", "+10000"},
		} {
			in := one(usdc(a.amount, payA))
			in.version = version
			add(fmt.Sprintf("v%d amount %s", version, a.name), in, cleanFacts)
		}
	}

	// Custom caps and the daily budget.
	add("custom max blocks", rules(usdc("60000", payA), map[string]any{"max_per_payment_usd": 0.05}), cleanFacts)
	add("custom max allows at cap", rules(usdc("50000", payA), map[string]any{"max_per_payment_usd": 0.05}), cleanFacts)
	add("custom hold threshold", rules(usdc("20000", payA), map[string]any{"hold_above_usd": 0.01}), cleanFacts)
	add("zero hold threshold holds every payment", rules(usdc("1", payA), map[string]any{"hold_above_usd": 0}), cleanFacts)
	add("max below hold: max wins", rules(usdc("300000", payA), map[string]any{"max_per_payment_usd": 0.2}), cleanFacts)
	for _, s := range []struct{ name, spent, amount string }{
		{"daily cap exactly reached", "24.99", "10000"}, {"daily cap exceeded by a micro-dollar", "24.990001", "10000"},
		{"daily cap already spent", "25", "1"}, {"daily cap over-spent", "30", "10000"}, {"daily cap nothing spent", "0", "10000"},
		{"daily cap fractional spend", "1e1", "10000"},
	} {
		in := one(usdc(s.amount, payA))
		in.spent = s.spent
		add(s.name, in, cleanFacts)
	}
	in := rules(usdc("20000", payA), map[string]any{"daily_cap_usd": 0.05})
	in.spent = "0.04"
	add("small daily cap exceeded", in, cleanFacts)
	in = rules(usdc("10000", payA), map[string]any{"daily_cap_usd": 0.05})
	in.spent = "0.04"
	add("small daily cap reached exactly", in, cleanFacts)
	in = rules(usdc("500000", payA), map[string]any{"daily_cap_usd": 0.6})
	in.spent = "0.2"
	add("hold and daily cap together", in, cleanFacts)
	in = one(usdc("2000000", payA))
	in.spent = "24.5"
	add("above max and daily cap", in, cleanFacts)

	// Networks.
	add("base sepolia not allowed by default", one(opt{"exact", "eip155:84532", vecSepoliaUSDC, "10000", payA}), cleanFacts)
	add("base sepolia allowed", rules(opt{"exact", "eip155:84532", vecSepoliaUSDC, "10000", payA},
		map[string]any{"allowed_networks": []string{"eip155:84532"}}), cleanFacts)
	add("v1 name allowed by CAIP-2 entry", rules(opt{"exact", "base-sepolia", vecSepoliaUSDC, "10000", payA},
		map[string]any{"allowed_networks": []string{"eip155:84532"}}), cleanFacts)
	add("CAIP-2 allowed by v1 name entry", rules(usdc("10000", payA), map[string]any{"allowed_networks": []string{"base"}}), cleanFacts)
	add("allowed network case-insensitive", rules(usdc("10000", payA), map[string]any{"allowed_networks": []string{" EIP155:8453 "}}), cleanFacts)
	add("empty allowed networks", rules(usdc("10000", payA), map[string]any{"allowed_networks": []string{}}), cleanFacts)
	add("unknown network", one(opt{"exact", "mystery-chain", baseUSDC, "10000", payA}), cleanFacts)
	add("non-canonical eip155", one(opt{"exact", "eip155:08453", baseUSDC, "10000", payA}), cleanFacts)
	add("non-canonical eip155 allowed by name", rules(opt{"exact", "eip155:08453", baseUSDC, "10000", payA},
		map[string]any{"allowed_networks": []string{"eip155:08453"}}), cleanFacts)
	add("solana usdc", rules(opt{"exact", "solana:5eykt4UsFv8P8NJdTREpY1vzqKqZKvdp", vecSolUSDC, "10000", vecSolPayTo},
		map[string]any{"allowed_networks": []string{"solana"}}), cleanFacts)
	add("solana mint case matters", rules(opt{"exact", "solana", "epjfwdd5aufqssqem2qn1xzybapc8g4wegGkZwyTDt1v", "10000", vecSolPayTo},
		map[string]any{"allowed_networks": []string{"solana"}}), cleanFacts)
	add("solana payTo must be a Solana key", rules(opt{"exact", "solana", vecSolUSDC, "10000", "0x1234"},
		map[string]any{"allowed_networks": []string{"solana"}}), cleanFacts)
	add("solana payTo of 25 bytes is malformed", rules(opt{"exact", "solana", vecSolUSDC, "10000", "4zMMC9srt5Ri5X14GAgXhaHii3GnPAEERY"},
		map[string]any{"allowed_networks": []string{"solana"}}), cleanFacts)
	add("solana testnet usdc by its v1 name", rules(opt{"exact", "solana-testnet", "4zMMC9srt5Ri5X14GAgXhaHii3GnPAEERYPJgZJDncDU", "10000", vecSolPayTo},
		map[string]any{"allowed_networks": []string{"solana:4uhcVJyU9pJkvQyS88uRDiswHXSCkY3z"}}), cleanFacts)
	add("solana devnet usdc", rules(opt{"exact", "solana:EtWTRABZaYq6iMfeYKouRu166VU2xqa1", "4zMMC9srt5Ri5X14GAgXhaHii3GnPAEERYPJgZJDncDU", "10000", vecSolPayTo},
		map[string]any{"allowed_networks": []string{"solana-devnet"}}), cleanFacts)

	// Assets.
	add("asset lower case is USDC", one(usdc("10000", payA)).withAsset("0x833589fcd6edb6e08f4c7c32d4f71b54bda02913"), cleanFacts)
	add("other token blocked", one(opt{"exact", "eip155:8453", vecOtherToken, "10000", payA}), cleanFacts)
	add("sepolia USDC on mainnet blocked", one(opt{"exact", "eip155:8453", vecSepoliaUSDC, "10000", payA}), cleanFacts)
	add("other token unpriced without usdc_only", rules(opt{"exact", "eip155:8453", vecOtherToken, "10000", payA},
		map[string]any{"usdc_only": false}), cleanFacts)
	add("other token malformed amount without usdc_only", rules(opt{"exact", "eip155:8453", vecOtherToken, "x", payA},
		map[string]any{"usdc_only": false}), cleanFacts)
	add("other token huge amount without usdc_only passes the max", rules(opt{"exact", "eip155:8453", vecOtherToken, "999999999999", payA},
		map[string]any{"usdc_only": false}), cleanFacts)

	// Scheme and payee form.
	add("scheme upto", one(opt{"upto", "eip155:8453", baseUSDC, "10000", payA}), cleanFacts)
	add("scheme empty", one(opt{"", "eip155:8453", baseUSDC, "10000", payA}), cleanFacts)
	// upto: the amount is the maximum the agent authorizes; caps, hold threshold and daily cap judge it.
	add("upto maximum above max", one(opt{"upto", "eip155:8453", baseUSDC, "5000000", payA}), cleanFacts)
	add("upto maximum at max holds", one(opt{"upto", "eip155:8453", baseUSDC, "1000000", payA}), cleanFacts)
	add("upto maximum above hold threshold", one(opt{"upto", "eip155:8453", baseUSDC, "250001", payA}), cleanFacts)
	in = one(opt{"upto", "eip155:8453", baseUSDC, "20000", payA})
	in.spent = "24.99"
	add("upto maximum over the daily cap", in, cleanFacts)
	in = one(opt{"upto", "eip155:8453", baseUSDC, "20000", payA})
	in.version = 1
	add("upto in v1 is refused", in, cleanFacts)
	add("upto off EVM is refused", rules(opt{"upto", "solana:5eykt4UsFv8P8NJdTREpY1vzqKqZKvdp", vecSolUSDC, "10000", vecSolPayTo},
		map[string]any{"allowed_networks": []string{"solana"}}), cleanFacts)
	add("upto cheaper maximum chosen over exact", vin{opts: []opt{usdc("20000", payA), {"upto", "eip155:8453", baseUSDC, "10000", payB}}}, cleanFacts)
	add("scheme batch-settlement", one(opt{"batch-settlement", "eip155:8453", baseUSDC, "10000", payA}), cleanFacts)
	add("scheme auth-capture", one(opt{"auth-capture", "eip155:8453", baseUSDC, "10000", payA}), cleanFacts)
	add("scheme unknown", one(opt{"lightning", "eip155:8453", baseUSDC, "10000", payA}), cleanFacts)
	add("scheme unreadable", one(opt{"Exact ", "eip155:8453", baseUSDC, "10000", payA}), cleanFacts)
	add("batch-settlement beside exact: exact chosen", vin{opts: []opt{{"batch-settlement", "eip155:8453", baseUSDC, "1", payB}, usdc("10000", payA)}}, cleanFacts)
	add("payTo short", one(usdc("10000", "0x1234")), cleanFacts)
	add("payTo upper-case 0X prefix", one(usdc("10000", "0XAaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa")), cleanFacts)
	add("payTo missing", one(usdc("10000", "")), cleanFacts)
	add("payTo missing and unlisted", one(usdc("10000", "")), noList)
	add("several defects on one option", one(opt{"upto", "eip155:8453", vecOtherToken, "-1", "0x12"}), cleanFacts)

	// Payee lists.
	add("payTo blocklisted", rules(usdc("10000", payA), map[string]any{"payto_blocklist": []string{payA}}), cleanFacts)
	add("payTo blocklisted any case", rules(usdc("10000", payA), map[string]any{"payto_blocklist": []string{" 0xaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa "}}), cleanFacts)
	add("payTo blocklist beats allowlist", rules(usdc("10000", payA), map[string]any{"payto_blocklist": []string{payA},
		"payto_allowlist": []string{payA}, "strict_allowlist": true, "domain_allowlist": []string{"shop.example"}}), cleanFacts)
	add("payTo allowlist without strict does nothing", rules(usdc("10000", payA), map[string]any{"payto_allowlist": []string{payB}}), cleanFacts)
	add("strict payTo allowlist holds another payee", rules(usdc("10000", payA), map[string]any{"strict_allowlist": true,
		"payto_allowlist": []string{payB}, "domain_allowlist": []string{"shop.example"}}), cleanFacts)
	add("strict payTo allowlist approves the payee", rules(usdc("10000", payA), map[string]any{"strict_allowlist": true,
		"payto_allowlist": []string{payA}, "domain_allowlist": []string{"api.shop.example"}}), cleanFacts)
	add("strict with empty payTo allowlist accepts any payee", rules(usdc("10000", payA), map[string]any{"strict_allowlist": true,
		"domain_allowlist": []string{"shop.example"}}), cleanFacts)
	add("solana payTo allowlist is case-sensitive", rules(opt{"exact", "solana", vecSolUSDC, "10000", vecSolPayTo},
		map[string]any{"allowed_networks": []string{"solana"}, "strict_allowlist": true, "domain_allowlist": []string{"shop.example"},
			"payto_allowlist": []string{"9XQEWVG816BUX9EPJHMAT23YVVM2ZWBRRPZB9PUSVFIN"}}), cleanFacts)

	// Domains.
	add("domain blocklisted", rules(usdc("10000", payA), map[string]any{"domain_blocklist": []string{"api.shop.example"}}), cleanFacts)
	add("parent domain blocklisted", rules(usdc("10000", payA), map[string]any{"domain_blocklist": []string{"Shop.Example."}}), cleanFacts)
	add("wildcard blocklist matches nothing", rules(usdc("10000", payA), map[string]any{"domain_blocklist": []string{"*.shop.example"}}), cleanFacts)
	add("suffix that is not a parent", rules(usdc("10000", payA), map[string]any{"domain_blocklist": []string{"op.example"}}), cleanFacts)
	add("domain blocklist beats allowlist", rules(usdc("10000", payA), map[string]any{"domain_blocklist": []string{"shop.example"},
		"domain_allowlist": []string{"api.shop.example"}, "strict_allowlist": true}), cleanFacts)
	add("strict domain allowlist holds", rules(usdc("10000", payA), map[string]any{"strict_allowlist": true,
		"domain_allowlist": []string{"other.example"}}), cleanFacts)
	add("strict with no allowlist holds", rules(usdc("10000", payA), map[string]any{"strict_allowlist": true}), cleanFacts)
	add("IDN resource and blocklist", vin{url: "https://Bücher.example/buy", opts: []opt{usdc("10000", payA)},
		rules: map[string]any{"domain_blocklist": []string{"bücher.example"}}}, noFacts)
	add("IDN punycode entry", vin{url: "https://bücher.example/buy", opts: []opt{usdc("10000", payA)},
		rules: map[string]any{"domain_blocklist": []string{"xn--bcher-kva.example"}}}, noFacts)
	add("resource with port and user info", vin{url: "https://user:pw@API.Shop.Example.:8443/x?y", opts: []opt{usdc("10000", payA)},
		rules: map[string]any{"domain_blocklist": []string{"shop.example"}}}, noFacts)
	add("IP literal resource", vin{url: "http://[::1]:8080/x", opts: []opt{usdc("10000", payA)}}, noFacts)
	// An IP address has one spelling (policy.canonicalHost): the address a mapped or differently written IPv6
	// literal reaches is the one the lists name.
	add("IPv4-mapped IPv6 resource, IPv4 blocklisted", vin{url: "http://[::ffff:10.0.0.1]:8080/x", opts: []opt{usdc("10000", payA)},
		rules: map[string]any{"domain_blocklist": []string{"10.0.0.1"}}}, noFacts)
	add("IPv4 resource, IPv4-mapped entry blocklisted", vin{url: "http://10.0.0.1/x", opts: []opt{usdc("10000", payA)},
		rules: map[string]any{"domain_blocklist": []string{"[::FFFF:10.0.0.1]"}}}, noFacts)
	add("uncompressed upper-case IPv6 resource", vin{url: "http://[2001:DB8:0:0:0:0:0:1]/x", opts: []opt{usdc("10000", payA)},
		rules: map[string]any{"domain_blocklist": []string{"2001:db8::1"}}}, noFacts)
	add("IPv6 allowlist entry in another spelling", vin{url: "http://[2001:db8::1]/x", opts: []opt{usdc("10000", payA)},
		rules: map[string]any{"domain_allowlist": []string{"2001:DB8:0::1"}, "strict_allowlist": true}}, noFacts)
	add("v2 without resource", vin{url: "", resource: "", opts: []opt{usdc("10000", payA)}}.noURL(), noFacts)
	add("resource_url fallback", vin{resource: "https://fallback.example/p", opts: []opt{usdc("10000", payA)},
		rules: map[string]any{"domain_blocklist": []string{"fallback.example"}}}, noFacts)
	add("v1 resource per requirement", vin{version: 1, url: "https://v1.shop.example/r", opts: []opt{{"exact", "base", baseUSDC, "10000", payA}},
		rules: map[string]any{"domain_blocklist": []string{"shop.example"}}}, noFacts)
	add("unreadable resource", vin{url: "not a url at all", opts: []opt{usdc("10000", payA)}}, noFacts)

	// Domain facts.
	add("new domain", one(usdc("10000", payA)), withDomain(intp(5), boolp(true), false))
	add("domain exactly at threshold", one(usdc("10000", payA)), withDomain(intp(30), boolp(true), false))
	add("new domain allowlisted", rules(usdc("10000", payA), map[string]any{"domain_allowlist": []string{"shop.example"}}),
		withDomain(intp(1), boolp(true), false))
	add("new domain rule off", rules(usdc("10000", payA), map[string]any{"new_domain_days": 0}), withDomain(intp(0), boolp(true), false))
	add("no A record", one(usdc("10000", payA)), withDomain(intp(900), boolp(false), false))
	add("unknown age and DNS", one(usdc("10000", payA)), noFacts)
	add("domain checker failed", one(usdc("10000", payA)), withDomain(nil, nil, true))
	add("new domain without A record", one(usdc("10000", payA)), withDomain(intp(2), boolp(false), false))

	// Sanctions.
	add("no sanctions list", one(usdc("10000", payA)), noList)
	add("sanctioned payee", one(usdc("10000", payA)), listed)
	add("sanctions screener failed", one(usdc("10000", payA)), screenErr)
	add("sanctions off without a list", rules(usdc("10000", payA), map[string]any{"screen_sanctions": false}), noList)
	add("sanctions off and listed", rules(usdc("10000", payA), map[string]any{"screen_sanctions": false}), listed)
	add("no payee to screen", one(opt{"exact", "eip155:8453", baseUSDC, "5000000", payA}), noList)
	add("held payee is screened", one(usdc("500000", payA)), listed)
	add("blocked option's payee is not screened", one(usdc("5000000", payA)), listed)

	// Choosing among options.
	four := []opt{usdc("50000", payA), usdc("30000", payB), usdc("10000", payC), usdc("20000", payD)}
	add("cheapest of four", vin{opts: four}, cleanFacts)
	add("cheapest of four v1", vin{version: 1, url: vecURL, opts: four}, cleanFacts)
	add("tie goes to the first", vin{opts: []opt{usdc("10000", payB), usdc("10000", payA)}}, cleanFacts)
	add("cheaper option rejected", vin{opts: []opt{opt{"exact", "eip155:84532", vecSepoliaUSDC, "1", payA}, usdc("20000", payB)}}, cleanFacts)
	add("blocked payee skipped", vin{opts: []opt{usdc("10000", payA), usdc("20000", payB)},
		rules: map[string]any{"payto_blocklist": []string{payA}}}, cleanFacts)
	add("held option preferred to blocked one", vin{opts: []opt{usdc("5000000", payA), usdc("10000", "")}}, cleanFacts)
	add("cheapest held option", vin{opts: []opt{usdc("300000", payA), usdc("200000", "")}}, cleanFacts)
	add("all blocked: cheapest priced reported", vin{opts: []opt{usdc("9000000", payA), usdc("2000000", payB)}}, cleanFacts)
	add("all blocked: priced before unpriced", vin{opts: []opt{opt{"exact", "eip155:8453", vecOtherToken, "1", payA}, usdc("2000000", payB)}}, cleanFacts)
	add("all blocked: first of unpriced", vin{opts: []opt{opt{"exact", "eip155:8453", vecOtherToken, "1", payA}, opt{"upto", "eip155:8453", vecOtherToken, "1", payB}}}, cleanFacts)
	add("held option over daily cap", vin{opts: []opt{usdc("400000", "")}, spent: "24.9"}, cleanFacts)
	add("no options", vin{opts: nil}, cleanFacts)
	var many []opt
	for i := 0; i < 32; i++ {
		many = append(many, usdc(fmt.Sprint(100000-i), payA))
	}
	add("thirty-two options", vin{opts: many}, cleanFacts)

	// Precedence: the strongest decision wins, block reasons first, every reason listed.
	add("sanctioned and above hold", one(usdc("500000", payA)), listed)
	add("blocked domain and new domain", rules(usdc("10000", payA), map[string]any{"domain_blocklist": []string{"shop.example"}}),
		withDomain(intp(3), boolp(false), false))
	add("strict hold and sanctions hold", rules(usdc("10000", payA), map[string]any{"strict_allowlist": true}), noList)
	add("everything at once", vin{opts: []opt{usdc("400000", "")}, spent: "24.9",
		rules: map[string]any{"strict_allowlist": true, "domain_blocklist": []string{"evil.example"}}}, withDomain(intp(1), boolp(false), true))
	add("allowlisted domain still obeys caps", rules(usdc("2000000", payA), map[string]any{"domain_allowlist": []string{"shop.example"},
		"strict_allowlist": true}), cleanFacts)
	add("allowlisted payee still blocked by sanctions", rules(usdc("10000", payA), map[string]any{"strict_allowlist": true,
		"payto_allowlist": []string{payA}, "domain_allowlist": []string{"shop.example"}}), listed)
	add("index rules have no evidence", rules(usdc("10000", payA), map[string]any{"max_price_multiple": nil, "require_live": false,
		"hold_on_payto_change": false}), cleanFacts)
	add("index rules on", rules(usdc("10000", payA), map[string]any{"max_price_multiple": 2, "require_live": true,
		"hold_on_payto_change": true}), cleanFacts)
	return out
}

func (b vin) withAsset(asset string) vin {
	b.opts[0].asset = asset
	return b
}

// noURL marks an input whose challenge carries no resource at all (add fills in the default otherwise).
func (b vin) noURL() vin {
	b.resource = " "
	return b
}

package policy

import "sort"

// MaxOptions is SPEC §10's cap on payment options per request. Evaluate treats more as a caller bug and looks at
// the first MaxOptions only; input parsing rejects them before that.
const MaxOptions = 32

// optionVerdict is one option's own reasons: any reason makes the option unacceptable.
type optionVerdict struct {
	reasons []Reason
	worst   Decision
}

// judgeOption applies the per-option rules. Order here is the order reasons are listed in.
func judgeOption(o Option, r *Rules, l *Lists) optionVerdict {
	var v optionVerdict
	add := func(x Reason) {
		for _, have := range v.reasons {
			if have == x {
				return
			}
		}
		v.reasons = append(v.reasons, x)
		if x.Decision.Stronger(v.worst) {
			v.worst = x.Decision
		}
	}
	v.worst = Allow
	if !schemeSupported(o) {
		add(reasonSchemeUnsupported(o))
	}
	switch o.Amount {
	case AmountMalformed, AmountOversized:
		add(reasonMalformedOption())
	case AmountNegative:
		add(reasonInvalidAmount())
	}
	if o.PayToMalformed {
		add(reasonMalformedOption())
	}
	if o.PayTo == "" {
		add(reasonNoPayTo())
	}
	if !o.Cart {
		if !networkAllowed(o, r.AllowedNetworks) {
			add(reasonNetworkNotAllowed(o.Network))
		}
		if !o.KnownUSDC {
			if r.USDCOnly {
				add(reasonAssetNotUSDC(o.Asset))
			} else if o.Amount == AmountOK {
				add(reasonUnpriced())
			}
		}
	}
	if o.Priced() && o.USD > r.MaxPerPaymentUSD {
		add(reasonAboveMax(amountWord(o), o.USD, r.MaxPerPaymentUSD))
	}
	if payeeBlockedBy(o.PayTo, r, l) {
		add(reasonPayToBlocked(o.PayTo))
	} else if r.StrictAllowlist && len(r.PayToAllowlist) > 0 && o.PayTo != "" && !payeeAllowedBy(o.PayTo, r, l) {
		// A blocklisted payee is not also reported as unapproved: the block says it all.
		add(reasonPayToNotAllowlisted(o.PayTo))
	}
	return v
}

// Payee returns the index of the option whose payee Evaluate judges: the chosen option, or, when none is
// acceptable but the best rejected one is only held, that one, since a person may approve it. -1 when
// there is none. The engine calls it first so that it screens only that payee.
func Payee(f Facts) int {
	chosen, rejected, best := choose(f)
	return payeeOption(chosen, rejected, best)
}

func payeeOption(chosen, rejected int, best optionVerdict) int {
	if chosen < 0 && rejected >= 0 && best.worst == Hold {
		return rejected
	}
	return chosen
}

// choose picks the cheapest acceptable option (tie: the first). When none is acceptable it returns -1 and
// the best rejected option's index and reasons: the one whose strongest reason is mildest (a hold-only
// option before a blocked one), then the cheapest priced one, then the first.
func choose(f Facts) (chosen, rejected int, best optionVerdict) {
	opts := f.Options
	if len(opts) > MaxOptions {
		opts = opts[:MaxOptions]
	}
	chosen, rejected = -1, -1
	l := f.lists()
	for i, o := range opts {
		v := judgeOption(o, &f.Rules, l)
		if len(v.reasons) == 0 {
			if chosen < 0 || o.USD < opts[chosen].USD {
				chosen = i
			}
			continue
		}
		if rejected < 0 || betterRejected(o, v, opts[rejected], best) {
			rejected, best = i, v
		}
	}
	return chosen, rejected, best
}

func betterRejected(o Option, v optionVerdict, bo Option, bv optionVerdict) bool {
	if v.worst != bv.worst {
		return bv.worst.Stronger(v.worst)
	}
	if o.Priced() != bo.Priced() {
		return o.Priced()
	}
	return o.Priced() && o.USD < bo.USD
}

// Evaluate decides. The decision is the strongest of all reasons (block > hold > allow); every reason is
// listed, block reasons first; "allow: all rules passed" appears only when nothing else fired.
//
// Precedence (SPEC §4.5): sanctions and spending blocks outrank holds and a blocklist outranks any approval,
// both by construction, since the strongest reason wins and an allowlist only ever removes a hold. Missing
// data is never positive evidence: an unknown domain age or A record adds no reason (the engine reports the
// unknown in the payee facts), while unknown sanctions facts with screen_sanctions on hold, because that rule
// asks for a protection that could not be given.
func Evaluate(f Facts) Outcome {
	out := Outcome{Chosen: -1, OptionsEvaluated: min(len(f.Options), MaxOptions)}
	if len(f.Options) == 0 {
		return finish(out, []Reason{reasonNoOptions()})
	}
	r := &f.Rules
	var reasons []Reason

	domain := f.MerchantDomain
	l := f.lists()
	domainBlocked := domainBlockedBy(domain, r, l)
	domainAllowed := !domainBlocked && domainAllowedBy(domain, r, l)
	switch {
	case domain == "":
		reasons = append(reasons, reasonNoMerchantDomain())
	case domainBlocked:
		reasons = append(reasons, reasonDomainBlocked(domain))
	case r.StrictAllowlist && !domainAllowed:
		reasons = append(reasons, reasonDomainNotAllowlisted(domain))
	}

	chosen, rejected, best := choose(f)
	// The payee judged: the chosen option's, or a held option's, which a person may still approve, so it is
	// screened and held to the daily cap like a chosen one (a block outranks the hold).
	payee := payeeOption(chosen, rejected, best)

	if r.ScreenSanctions {
		s := f.Sanctions
		switch s.State {
		case SanctionsScreened:
			if s.AddressMatch && payee >= 0 {
				reasons = append(reasons, reasonPayToSanctioned(f.Options[payee].PayTo))
			}
			if s.NameExact {
				reasons = append(reasons, reasonNameExact())
			} else if s.NamePossible {
				reasons = append(reasons, reasonNamePossible())
			}
		case SanctionsFailed:
			reasons = append(reasons, reasonSanctionsFailed())
		case SanctionsNothingToScreen:
		default: // NoData, NotGathered
			if payee >= 0 || f.MerchantName != "" {
				reasons = append(reasons, reasonSanctionsUnavailable())
			}
		}
	}

	if domain != "" {
		d := f.Domain
		if d.AgeDays != nil && *d.AgeDays < r.NewDomainDays && !domainAllowed {
			reasons = append(reasons, reasonNewDomain(*d.AgeDays, r.NewDomainDays))
		}
		if d.HasA != nil && !*d.HasA {
			reasons = append(reasons, reasonNoARecord())
		}
		if d.Failed {
			reasons = append(reasons, reasonDomainCheckFailed())
		}
	}

	reasons = append(reasons, indexReasons(&f, payee)...)

	if chosen < 0 {
		reasons = append(reasons, best.reasons...)
		if payee >= 0 {
			// A held option is the one a person approves: the hold carries it and its amount, so that the
			// amount is shown, reserved and, once approved, released on every channel (SPEC §4.2).
			o := f.Options[payee]
			out.Chosen = payee
			if o.Priced() {
				out.AmountUSD = o.USD
				if OverDailyCap(o.USD, f.SpentToday, r.DailyCapUSD) {
					reasons = append(reasons, reasonDailyCap(r.DailyCapUSD, f.SpentToday))
				}
			}
		}
	} else {
		amount := f.Options[chosen].USD
		out.Chosen, out.AmountUSD = chosen, amount
		if amount > r.HoldAboveUSD {
			reasons = append(reasons, reasonAboveHold(amountWord(f.Options[chosen]), amount, r.HoldAboveUSD))
		}
		if OverDailyCap(amount, f.SpentToday, r.DailyCapUSD) {
			reasons = append(reasons, reasonDailyCap(r.DailyCapUSD, f.SpentToday))
		}
	}
	return finish(out, reasons)
}

// finish orders the reasons (strongest decision first, stable within a decision), removes repeats and sets
// the decision; with no reason at all the decision is allow with "all rules passed".
func finish(out Outcome, reasons []Reason) Outcome {
	if len(reasons) == 0 {
		out.Decision, out.Reasons = Allow, []Reason{reasonAllPassed()}
		return out
	}
	sort.SliceStable(reasons, func(i, j int) bool { return reasons[i].Decision.Stronger(reasons[j].Decision) })
	uniq := reasons[:0]
	for _, x := range reasons {
		dup := false
		for _, y := range uniq {
			if x == y {
				dup = true
				break
			}
		}
		if !dup {
			uniq = append(uniq, x)
		}
	}
	out.Reasons = uniq
	out.Decision = uniq[0].Decision
	if out.Decision != Block && out.Decision != Hold && out.Decision != Allow {
		out.Decision = Block
	}
	return out
}

package policy

import (
	"strings"
	"testing"
)

// Every reason the engine can give carries a code from ReasonCodes, one code per row: channels branch on
// the code (the proxy's metric class, its Index rule counts), so a reason without one, or two rows sharing
// one, would be miscounted silently.
func TestEveryReasonHasItsOwnCode(t *testing.T) {
	all := []Reason{
		reasonNoOptions(), reasonNoMerchantDomain(), reasonDomainBlocked("d"), reasonDomainNotAllowlisted("d"),
		reasonNameExact(), reasonNamePossible(), reasonNewDomain(1, 30), reasonNoARecord(), reasonMalformedOption(),
		reasonInvalidAmount(), reasonNetworkNotAllowed("n"), reasonAssetNotUSDC("a"), reasonUnpriced(),
		reasonAboveMax("amount", 2, 1), reasonAboveHold("amount", 2, 1), reasonDailyCap(1, 1), reasonPayToBlocked("p"),
		reasonPayToNotAllowlisted("p"), reasonPayToSanctioned("p"), reasonNoPayTo(), reasonAllPassed(),
		reasonSanctionsUnavailable(), reasonSanctionsFailed(), reasonDomainCheckFailed(), reasonInternalError("x"),
		reasonInvalidIndexRule("x"), reasonPriceAboveMedian("x"), reasonEndpointFailed(3, ""), reasonPayToChanged("x"),
		reasonSchemeUnsupported(Option{Scheme: "x"}), SettlementAlarmReason("h", "x"), UnpaidTicketsReason("s", 1),
	}
	known := map[string]bool{}
	for _, c := range ReasonCodes {
		if known[c] {
			t.Errorf("code %q listed twice", c)
		}
		known[c] = true
	}
	seen := map[string]string{}
	for _, r := range all {
		if !known[r.Code] {
			t.Errorf("%q has code %q, not in ReasonCodes", r, r.Code)
		}
		if prev, dup := seen[r.Code]; dup {
			t.Errorf("%q and %q share code %q", prev, r, r.Code)
		}
		seen[r.Code] = r.String()
	}
	if len(seen) != len(ReasonCodes) {
		t.Errorf("%d codes listed, %d used by the reasons above: a code without a reason, or a reason missing here", len(ReasonCodes), len(seen))
	}
	if got := DailyCapReason(5, 3); got.Code != CodeDailyCap || got != reasonDailyCap(5, 3) {
		t.Errorf("DailyCapReason: %+v", got)
	}
	if !OverDailyCap(3, 3, 5) || OverDailyCap(2, 3, 5) {
		t.Error("OverDailyCap: 3 after 3 of 5 must be over, 2 must fit")
	}
}

// A reason without arguments is its format as it is (reason skips fmt for it): none may hold a '%', which
// fmt would have rewritten.
func TestFixedReasonTexts(t *testing.T) {
	for _, r := range []Reason{reasonNoOptions(), reasonNoMerchantDomain(), reasonNameExact(), reasonNamePossible(), reasonNoARecord(),
		reasonMalformedOption(), reasonInvalidAmount(), reasonUnpriced(), reasonNoPayTo(), reasonAllPassed(), reasonSanctionsUnavailable(),
		reasonSanctionsFailed(), reasonDomainCheckFailed()} {
		if strings.Contains(r.Text, "%") {
			t.Errorf("reason %s: text %q is not its own format", r.Code, r.Text)
		}
		if r.String() != string(r.Decision)+": "+r.Text {
			t.Errorf("reason %s: String %q", r.Code, r.String())
		}
	}
	if r := reasonAllPassed(); r.String() != "allow: all rules passed" {
		t.Errorf("all passed: %q", r.String())
	}
}

package sanctions

import (
	"slices"
	"testing"
)

// TestLegalFormTypoInLongEntityName: a long entity name with one typo in its short legal form (issue 34's
// "long entity name with one typo"): the mistyped form, a last word the list does not know, no longer
// counts as a distinctive word. Each case was missed before (a probe of 1,612 one-typo variants of entity
// names of 4+ words: 64 missed on main, 38 now, the rest in dotted abbreviations such as "S.AA." and "C.VV.").
func TestLegalFormTypoInLongEntityName(t *testing.T) {
	l := loadFullList(t)
	for _, c := range []struct {
		query string
		name  string
	}{
		{"GLOBAL RELIEF FOUNDATION, INCC.", "GLOBAL RELIEF FOUNDATION, INC."},
		{"KHAN & SCHIRINDEL GMHB", "KHAN & SCHIRINDEL GMBH"},
		{"QUINONES MELO Y CIA. LDTA.", "QUINONES MELO Y CIA. LTDA."},
		{"NORTH GROUP HOLDING COPR.", "NORTH GROUP HOLDING CORP."},
		{"ASIA ENERGY GENERAL TRADING (LCL)", "ASIA ENERGY GENERAL TRADING (LLC)"},
		{"Cargo Aircraft Leasing Corrp", "CARGO AIRCRAFT LEASING CORP."},
	} {
		i := slices.IndexFunc(l.Entries(), func(e Entry) bool { return e.Name == c.name })
		if i < 0 {
			t.Fatalf("%q not in the list", c.name)
		}
		uid := l.Entries()[i].UID
		r := l.ScreenName(c.query)
		if !slices.ContainsFunc(append(r.Exact, r.Possible...), func(m screeningMatch) bool { return m.UID == uid }) {
			t.Errorf("%q: %s not found (exact %v, possible %v)", c.query, c.name, brief(r.Exact), brief(r.Possible))
		}
	}
	for w, want := range map[string]bool{"incc": true, "gmhb": true, "ldta": true, "lcl": true, "copr": true,
		"inc": false, "gmbh": false, "sa": false, "ag": false, "bank": false, "corn": true} {
		if got := legalFormTypo(w); got != want {
			t.Errorf("legalFormTypo(%q) = %v, want %v", w, got, want)
		}
	}
}

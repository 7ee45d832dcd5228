package sanctions

import (
	"slices"
	"strings"
	"testing"

	"github.com/payguard/payguard/screening"
)

// TestMatchSteps: every name match says which normalisation steps it needed, so an approver sees why the
// names were taken as one (screening.SanctionsMatch.Steps).
func TestMatchSteps(t *testing.T) {
	l := loadFullList(t)
	for _, c := range []struct {
		query string
		uid   int
		want  []string
	}{
		{"Pomerol Capital S.A.", 41495, nil},
		{"Pomerol Capital", 41495, []string{screening.StepLegalFormRemoved}},
		{"Pomerol Capital GmbH", 41495, []string{screening.StepLegalFormRemoved, screening.StepLegalFormDifferent}},
		{"PomerolCapital SA", 41495, []string{screening.StepSpacing}},
		{"Joaquin Guzman", 6861, []string{screening.StepShortForm}},
		{"Loera Guzman Joaquin", 6861, []string{screening.StepReordered}},
		{"Joaquin Guzmann Loera", 6861, []string{screening.StepTransliterated}},
		{"Joaquin Guzmxn Loera", 6861, []string{screening.StepTypo}},
		{"Martin", 15911, []string{screening.StepWeakAlias}},
		{"Joaquin Guzman Loera LLC", 6861, []string{screening.StepLegalFormRemoved}},
	} {
		r := l.ScreenName(c.query)
		i := slices.IndexFunc(append(r.Exact, r.Possible...), func(m screening.SanctionsMatch) bool { return m.UID == c.uid })
		if i < 0 {
			t.Errorf("%q: uid %d not matched", c.query, c.uid)
			continue
		}
		m := append(r.Exact, r.Possible...)[i]
		if !slices.Equal(m.Steps, c.want) {
			t.Errorf("%q → %q: steps %v, want %v", c.query, m.MatchedName, m.Steps, c.want)
		}
	}
}

// TestStepsAreKnown: every step a match reports is one of the documented constants.
func TestStepsAreKnown(t *testing.T) {
	l := loadFullList(t)
	for _, q := range readLabeled(t, "testdata/names_labeled.tsv") {
		r := l.ScreenName(q.query)
		for _, m := range append(r.Exact, r.Possible...) {
			for _, s := range m.Steps {
				if !slices.Contains(stepNames, s) {
					t.Fatalf("%q: unknown step %q", q.query, s)
				}
			}
			if m.Score < 1 && len(m.Steps) == 0 && !strings.EqualFold(NormalizeName(q.query), NormalizeName(m.MatchedName)) {
				t.Errorf("%q → %q (score %.3f): a fuzzy match with no step", q.query, m.MatchedName, m.Score)
			}
		}
	}
}

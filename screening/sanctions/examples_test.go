package sanctions

import (
	"slices"
	"testing"
)

// TestNameMatchingExamples pins the cases the screening issue names, against the benchmark list (real
// 2024-05-03 sdn.csv with the 2025-12 alt.csv): what normalization must make exact, which spelling variants
// must still be found as possible matches, and which look-alike names of other parties must not match.
func TestNameMatchingExamples(t *testing.T) {
	l := loadFullList(t)
	const (
		binLadin    = 6365  // BIN LADIN, Usama bin Muhammad bin Awad
		hamza       = 21286 // BIN LADEN, Hamza
		tornado     = 39796 // TORNADO CASH
		bancoCuba   = 306   // BANCO NACIONAL DE CUBA
		lazarus     = 27307 // LAZARUS GROUP
		putin       = 35096 // PUTIN, Vladimir Vladimirovich
		lavrov      = 35233 // LAVROV, Sergey
		semenov     = 44718 // SEMENOV, Roman
		kadyrov     = 23343 // KADYROV, Ramzan Akhmatovich
		deripaska   = 24283 // DERIPASKA, Oleg Vladimirovich
		prigozhin   = 21171 // PRIGOZHIN, Yevgeniy Viktorovich
		bankMelli   = 25578 // BANK MELLI IRAN
		exactWanted = true
	)
	for _, tc := range []struct {
		query string
		uid   int
		exact bool // the uid must be among the exact matches; otherwise among the possible ones, not exact
	}{
		// Case, punctuation, joined and split tokens, legal forms, token order, diacritics: exact.
		{"Tornado Cash", tornado, exactWanted},
		{"TornadoCash", tornado, exactWanted},
		{"Tornado.Cash", tornado, exactWanted},
		{"tornado cash llc", tornado, exactWanted},
		{"Banco Nacional de Cuba", bancoCuba, exactWanted},
		{"BANCO NACIONAL DE CUBA S.A.", bancoCuba, exactWanted},
		{"lazarus group", lazarus, exactWanted},
		{"Lazarus Group LTD", lazarus, exactWanted},
		{"OOO Lazarus Group", lazarus, exactWanted},
		{"Lazarus Group GmbH", lazarus, exactWanted},
		{"Lazarus Group Co.", lazarus, exactWanted},
		{"Usama bin Muhammad bin Awad BIN LADIN", binLadin, exactWanted}, // "Given SURNAME" order
		{"BIN LADIN, Usama bin Muhammad bin Awad", binLadin, exactWanted},
		{"Putin, Vladimir", putin, exactWanted},
		{"Vladímir Pútin", putin, exactWanted},
		{"VLADIMIR VLADIMIROVICH PUTIN", putin, exactWanted},
		// Transliteration variants, sound-alikes and missing middle names: possible.
		{"Osama bin Mohammed bin Awad bin Laden", binLadin, false},
		{"Usama bin Mohamed bin Awad bin Ladin", binLadin, false},
		{"Hamza bin Ladin", hamza, false},
		{"Wladimir Putin", putin, false},
		{"Sergei Lavrov", lavrov, false},
		{"Roman Semyonov", semenov, false},
		{"Ramzan Kadyrov", kadyrov, false},      // patronymic missing
		{"Oleg Deripaska", deripaska, false},    // patronymic missing
		{"Evgeniy Prigozhin", prigozhin, false}, // transliteration and patronymic missing
		{"Bank Meli Iran", bankMelli, false},
	} {
		r := l.ScreenName(tc.query)
		inExact := slices.ContainsFunc(r.Exact, func(m screeningMatch) bool { return m.UID == tc.uid })
		inPossible := slices.ContainsFunc(r.Possible, func(m screeningMatch) bool { return m.UID == tc.uid })
		switch {
		case tc.exact && !inExact:
			t.Errorf("%q: uid %d not an exact match; exact%s possible%s", tc.query, tc.uid, brief(r.Exact), brief(r.Possible))
		case !tc.exact && (inExact || !inPossible):
			t.Errorf("%q: uid %d should be a possible match only; exact%s possible%s", tc.query, tc.uid, brief(r.Exact), brief(r.Possible))
		}
		for _, m := range append(slices.Clone(r.Exact), r.Possible...) {
			if m.UID == 0 || m.Name == "" || m.MatchedName == "" || len(m.Programs) == 0 || m.Score <= 0 || m.Score > 1 {
				t.Errorf("%q: a match lacks what an approver needs to review it: %+v", tc.query, m)
			}
		}
	}

	// Other parties that share words with a listed name match nothing.
	for _, q := range []string{
		"Banco Nacional de Panama", "Banco Nacional de Mexico", "Banco Nacional de Bolivia", "Banco Nacional de Comercio",
		"Banco Nacional Ultramarino", "Tornado Trading LLC", "Lazarus Coffee", "Cuba Travel Agency", "Ladin Trading Co",
	} {
		if r := l.ScreenName(q); len(r.Exact)+len(r.Possible) > 0 {
			t.Errorf("%q matched: exact%s possible%s", q, brief(r.Exact), brief(r.Possible))
		}
	}
}

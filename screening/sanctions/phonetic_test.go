package sanctions

import (
	"math/rand/v2"
	"testing"
)

func TestDeleteRelatedMatchesDefinition(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	const alphabet = "abc" // a tiny alphabet makes runs and near-collisions common
	word := func(n int) string {
		b := make([]byte, n)
		for i := range b {
			b[i] = alphabet[rng.IntN(len(alphabet))]
		}
		return string(b)
	}
	mutate := func(s string) string {
		b := []byte(s)
		for k := rng.IntN(3); k >= 0; k-- {
			switch i := rng.IntN(len(b) + 1); rng.IntN(4) {
			case 0:
				if i < len(b) {
					b = append(b[:i:i], b[i+1:]...)
				}
			case 1:
				b = append(b[:i:i], append([]byte{alphabet[rng.IntN(3)]}, b[i:]...)...)
			case 2:
				if i < len(b) {
					b[i] = alphabet[rng.IntN(3)]
				}
			case 3:
				if i+1 < len(b) {
					b[i], b[i+1] = b[i+1], b[i]
				}
			}
		}
		return string(b)
	}
	n := 200000
	if testing.Short() || raceEnabled {
		n = 20000
	}
	related := 0
	for range n {
		a := word(3 + rng.IntN(7))
		b := mutate(a)
		if rng.IntN(4) == 0 {
			b = word(3 + rng.IntN(7))
		}
		fast, slow := deleteRelated(a, b), deleteRelatedSlow(a, b)
		if fast != slow {
			t.Fatalf("deleteRelated(%q, %q) = %v, definition says %v", a, b, fast, slow)
		}
		if slow {
			related++
		}
	}
	if related < n/10 {
		t.Fatalf("only %d of %d pairs related: the test does not exercise the relation", related, n)
	}
}

func TestSkeleton(t *testing.T) {
	same := [][]string{
		{"mohammed", "muhammad", "mohamed", "mohammad", "muhamad"},
		{"usama", "osama"}, {"ladin", "laden"}, {"abdel", "abdul"}, {"vladimir", "wladimir"},
		{"hussein", "husayn", "hussain"}, {"aleksandr", "alexander"}, {"evgeniy", "yevgeny"},
		{"qasim", "kasim"}, {"sergey", "sergei"}, {"hizballah", "hezbollah"},
	}
	for _, group := range same {
		for _, w := range group[1:] {
			if skeleton(w) != skeleton(group[0]) {
				t.Errorf("skeleton(%q) = %q, skeleton(%q) = %q; want equal", w, skeleton(w), group[0], skeleton(group[0]))
			}
		}
	}
	for _, pair := range [][2]string{{"cuba", "panama"}, {"smith", "smyth0"}, {"ali", "ola0"}, {"bank", "bang"}} {
		if skeleton(pair[0]) == skeleton(pair[1]) {
			t.Errorf("skeleton(%q) == skeleton(%q)", pair[0], pair[1])
		}
	}
}

func TestNormalizeName(t *testing.T) {
	for in, want := range map[string]string{
		"ANGLO-CARIBBEAN CO., LTD.":           "anglo caribbean",
		"Tornado.Cash":                        "tornado cash",
		"CECOEX, S.A.":                        "cecoex",
		"GRUPO X, S.A. DE C.V.":               "grupo x",
		"Société Générale":                    "societe generale",
		"O'Brien Müller GmbH":                 "obrien muller",
		"AL-QA'IDA":                           "al qaida",
		"LLC":                                 "llc",
		"U.S.A. Trading Corp":                 "usa trading",
		"Straße":                              "strasse",
		"  ":                                  "",
		"OOO \"Rosneft\"":                     "rosneft",
		"BANCO NACIONAL DE CUBA":              "banco nacional de cuba",
		"SHIPPING COMPANY LIMITED (S.A.R.L.)": "shipping",
	} {
		if got := NormalizeName(in); got != want {
			t.Errorf("NormalizeName(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestJaroWinkler(t *testing.T) {
	for _, tc := range []struct {
		a, b string
		lo   float64
		hi   float64
	}{
		{"martha", "marhta", 0.96, 0.962}, {"dwayne", "duane", 0.83, 0.85}, {"abc", "abc", 1, 1}, {"abc", "xyz", 0, 0},
		{"", "a", 0, 0},
	} {
		if got := jaroWinkler(tc.a, tc.b); got < tc.lo || got > tc.hi {
			t.Errorf("jaroWinkler(%q, %q) = %v, want in [%v, %v]", tc.a, tc.b, got, tc.lo, tc.hi)
		}
	}
}

func TestUnitSimsAgreesWithUnitSim(t *testing.T) {
	words := []string{"mohammed", "muhammad", "abu", "abou", "abbas", "abyss", "abibsoussou", "cash", "cahs",
		"tornadocash", "tornado", "ali", "aly", "ola", "vladimir", "wladimir", "bank", "bang", "xyzzy"}
	for _, a := range words {
		for _, b := range words {
			for _, aTok := range []bool{true, false} {
				for _, bTok := range []bool{true, false} {
					tok, big := unitSims(a, skeleton(a), aTok, b, skeleton(b), bTok)
					if want := unitSim(a, skeleton(a), aTok, b, skeleton(b), bTok); tok != want {
						t.Errorf("unitSims(%q,%v,%q,%v) tok = %v, unitSim = %v", a, aTok, b, bTok, tok, want)
					}
					if want := unitSim(a, skeleton(a), false, b, skeleton(b), false); big != want {
						t.Errorf("unitSims(%q,%q) big = %v, unitSim = %v", a, b, big, want)
					}
				}
			}
		}
	}
}

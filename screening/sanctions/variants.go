package sanctions

import (
	"slices"
	"strings"
)

// Name-variant knowledge: the forms in which people and merchants actually write a listed individual's
// name, indexed beside the list's own forms (SPEC: sanctions screening; docs/SCREENING.md "Derived forms").
//
// A derived form takes part in fuzzy matching only, never in the exact keys: a query equal to one scores
// as a possible match (hold), and blocks only when the list itself has that form as a primary name or
// strong alias. Each form is derived from a name written "LAST, Given ..." (OFAC's order for individuals):
//
//   - head + LAST: the first given name (a compound one kept whole: Abd al-Rahman, Abu Bakr) and the family
//     name, without middle names, patronymics or the nasab chain (bin Father bin Grandfather):
//     "BIN LADIN, Usama bin Muhammad bin Awad" → "usama bin ladin";
//   - for a family name of two surnames (Hispanic "PATERNAL MATERNAL", particles such as de/la/y not
//     counted): head + PATERNAL ("Joaquin Guzman"), head + second given name + PATERNAL, and head +
//     paternal initial + MATERNAL ("Joaquin G Loera").
//
// Particles (al, bin, de, ...) stay in the forms: they weigh little (see particleWeight), so a query that
// writes or omits them scores nearly the same.

// particleWeight scales the weight of name particles, on both the name and the query side: "Given bin
// Family", "Given al-Family" and "Given Family" are the same name as people write it.
const particleWeight = 0.25

// particles are the connecting words of Arabic, Hispanic, Portuguese, Dutch and German names.
var particles = map[string]bool{
	"al": true, "el": true, "ul": true, "bin": true, "ibn": true, "bint": true, "binti": true, "ben": true,
	"de": true, "del": true, "la": true, "las": true, "los": true, "y": true, "da": true, "das": true,
	"do": true, "dos": true, "di": true, "du": true, "van": true, "von": true, "der": true,
}

// connectors are the Arabic article and nasab particles, which stand for one another as people write a
// name ("Given bin Family", "Given al-Family"): two different connectors partner at particlePairSim. The
// other particles (de, van, ...) do not: they belong to other naming customs, and pairing them would make
// every query with "al" meet the thousands of names with "de".
var connectors = map[string]bool{"al": true, "el": true, "ul": true, "bin": true, "ibn": true, "bint": true,
	"binti": true, "ben": true}

// compoundFirst are first given names that are written with the next word: Abd al-Rahman, Abu Bakr.
var compoundFirst = map[string]bool{"abd": true, "abdul": true, "abdel": true, "abdol": true, "abu": true}

// derivedForms returns the derived token lists of an individual's name (see the note above), without the
// forms equal to the name's own token lists. nil for a name not written "LAST, Given".
func derivedForms(name string) [][]string {
	lastPart, givenPart, ok := strings.Cut(name, ",")
	if !ok {
		return nil
	}
	last, given := matchTokens(lastPart), matchTokens(givenPart)
	if len(last) == 0 || len(given) == 0 {
		return nil
	}
	head := givenHead(given)
	var out [][]string
	add := func(parts ...[]string) {
		var f []string
		for _, p := range parts {
			f = append(f, p...)
		}
		if len(f) < 2 || len(f) > maxQueryTokens {
			return // a single word is too loose
		}
		key := strings.Join(f, " ")
		if key == strings.Join(append(slices.Clone(last), given...), " ") || key == strings.Join(append(slices.Clone(given), last...), " ") {
			return // the name itself
		}
		for _, g := range out {
			if strings.Join(g, " ") == key {
				return
			}
		}
		out = append(out, f)
	}
	if len(head) < len(given) {
		add(head, last)
	}
	var sur []string
	for _, t := range last {
		if !particles[t] {
			sur = append(sur, t)
		}
	}
	if len(sur) == 2 {
		add(head, sur[:1])
		if rest := given[len(head):]; len(rest) > 0 && !particles[rest[0]] {
			add(head, rest[:1], sur[:1])
		}
		if len(sur[0]) > 1 {
			add(head, []string{sur[0][:1]}, sur[1:])
		}
	}
	return out
}

// givenHead is the first given name as people write it: a compound (abd al rahman, abu bakr) stays whole;
// a nasab particle never starts it.
func givenHead(given []string) []string {
	if compoundFirst[given[0]] && len(given) >= 2 {
		if (given[1] == "al" || given[1] == "el") && len(given) >= 3 {
			return given[:3]
		}
		return given[:2]
	}
	return given[:1]
}

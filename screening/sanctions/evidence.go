package sanctions

import (
	"slices"
	"strings"

	"github.com/payguard/payguard/screening"
)

// Match evidence (issue 34; docs/SCREENING.md "Match evidence"): what a name match needed, which decides
// whether it may block (exact), may only hold (possible), or does not count at all.
//
//   - The kind of list name: a vessel's or aircraft's name, and an alias OFAC marks weak, are never exact
//     and match only when the query equals them as written (case, accents, punctuation and spacing aside);
//     they take no part in fuzzy matching. OFAC: a weak AKA is "a relatively broad or generic alias that
//     may generate a large volume of false hits" and "OFAC does not expect that persons will screen for weak
//     AKAs" (FAQs 122 and 124); and a hit where the name in the transaction is of another kind than the
//     listed one (a person or company against a vessel) is not a valid match (FAQ 5, step 2).
//   - Legal forms: a match that needed different legal forms removed (a GmbH against a listed LLC) is
//     possible, never exact; so is a short name whose legal form is on one side only, and a company (a name
//     with a legal form) against a listed person, which never matches fuzzily either.
//   - Short names need stronger evidence (shortNameEvidence).
//   - Every match lists its steps (screening.Step…), computed by explain for fuzzy matches and from the
//     list name's facts (nameFacts) for key matches.

// Step bits, in the order they are reported.
const (
	stepLegalRemoved uint16 = 1 << iota
	stepLegalDifferent
	stepGlued
	stepReordered
	stepSpacing
	stepTranslit
	stepTypo
	stepShortForm
	stepWordsOmitted
	stepExtraWords
	stepWeak
	stepParticle
)

var stepNames = []string{screening.StepLegalFormRemoved, screening.StepLegalFormDifferent,
	screening.StepGluedLegalForm, screening.StepReordered, screening.StepSpacing, screening.StepTransliterated,
	screening.StepTypo, screening.StepShortForm, screening.StepWordsOmitted, screening.StepExtraWords,
	screening.StepWeakAlias, screening.StepParticle}

func stepList(bits uint16) []string {
	var out []string
	for i, n := range stepNames {
		if bits&(1<<i) != 0 {
			out = append(out, n)
		}
	}
	return out
}

// legalSynonyms maps a legal form (a legalForms word, or a legalPhrases phrase written without spaces) to
// the form it is another spelling of, so that "Limited" and "LTD", or "OOO" and "Limited Liability
// Company", count as the same legal form.
var legalSynonyms = map[string]string{
	"limited": "ltd", "ltda": "ltd", "lda": "ltd", "incorporated": "inc", "corporation": "corp",
	"company": "co", "ooo": "llc", "tov": "llc", "limitedliabilitycompany": "llc", "liabilitycompany": "llc",
	"limitedliabilitypartnership": "llp", "jointstockcompany": "jsc", "ao": "jsc",
	"openjointstockcompany": "ojsc", "oao": "ojsc", "closedjointstockcompany": "cjsc", "zao": "cjsc",
	"publicjointstockcompany": "pjsc", "pao": "pjsc", "sderl": "srl", "derl": "rl", "decv": "cv",
}

// legalCanon is the canonical spelling of a legal form.
func legalCanon(f string) string {
	if c, ok := legalSynonyms[f]; ok {
		return c
	}
	return f
}

// legalSet is a name's legal forms as compared: canonical, sorted, without duplicates, and without "co"
// ("Company", "Co."), which is as often part of a name ("Management Company X") as its form, and rides
// along with real forms ("Co., Ltd.").
func legalSet(forms []string) []string {
	out := make([]string, 0, len(forms))
	for _, f := range forms {
		if f != "co" && !slices.Contains(out, f) {
			out = append(out, f)
		}
	}
	slices.Sort(out)
	return out
}

// legalSteps compares the legal forms of a query and a listed name (each as legalSet gives them): nothing
// when they carry the same (or neither has one), stepLegalRemoved when only one has one, both bits when
// they differ.
func legalSteps(q, n []string) uint16 {
	switch {
	case slices.Equal(q, n):
		return 0
	case len(q) == 0 || len(n) == 0:
		return stepLegalRemoved
	}
	return stepLegalRemoved | stepLegalDifferent
}

// nameFacts is what the evidence needs of every list name (primary name or alias), computed once when the
// list is built rather than per query: its legal forms (an index into forms) and its token count.
type nameFacts struct {
	base  []int32    // per entry: the position of its primary name; its aliases follow
	form  []uint8    // per name: index into forms of its legalSet
	ntok  []uint8    // per name: len(nameTokens(name)), capped at 255
	forms [][]string // distinct legal-form sets; forms[0] is the empty set
}

func buildNameFacts(entries []Entry) *nameFacts {
	f := &nameFacts{base: make([]int32, len(entries)), forms: [][]string{nil}}
	ids := map[string]uint8{"": 0}
	add := func(name string) {
		toks, forms := nameTokensForms(name)
		set := legalSet(forms)
		key := strings.Join(set, " ")
		id, ok := ids[key]
		if !ok && len(f.forms) < 256 {
			id = uint8(len(f.forms))
			ids[key] = id
			f.forms = append(f.forms, set)
		}
		f.form = append(f.form, id)
		f.ntok = append(f.ntok, uint8(min(len(toks), 255)))
	}
	for i := range entries {
		f.base[i] = int32(len(f.form))
		add(entries[i].Name)
		for _, a := range entries[i].Aliases {
			add(a.Name)
		}
	}
	return f
}

// of returns the legal-form set and token count of an entry's primary name (alias -1) or alias.
func (f *nameFacts) of(entry int32, alias int16) ([]string, int) {
	i := int(f.base[entry]) + int(alias) + 1
	return f.forms[f.form[i]], int(f.ntok[i])
}

// nameOnly reports whether a list name matches only when written as the query is (never fuzzily, never
// exact): a vessel's or an aircraft's name, or a weak alias.
func nameOnly(entryType string, weak bool) bool {
	return weak || entryType == TypeVessel || entryType == TypeAircraft
}

// sameAsWritten reports whether two names are equal as written: the same letters and digits in the same
// order once case, accents, punctuation and spacing are set aside. No legal form is removed, no word
// reordered: "Adler KG" is not the vessel ADLER.
func sameAsWritten(a, b string) bool {
	ka := compactKey(rawTokens(a))
	return ka != "" && ka == compactKey(rawTokens(b))
}

// exactSteps returns the steps an exact-key match needed: the legal-form comparison, and spacing when the
// query has another number of words than the listed name though their letters are the same ("PomerolCapital"
// and POMEROL CAPITAL). The listed name's "LAST, First" written "First LAST" is the name as people write
// it, not a reordering.
func exactSteps(qToks, qSet, nSet []string, nTok int) uint16 {
	bits := legalSteps(qSet, nSet)
	if len(qToks) != nTok {
		bits |= stepSpacing
	}
	return bits
}

// informativeLen is the number of letters and digits of a name's words that say who it is: its tokens
// once legal forms are removed, particles (al, bin, de, ...) left out.
func informativeLen(toks []string) int {
	n := 0
	for _, t := range toks {
		if !particles[t] {
			n += len(t)
		}
	}
	return n
}

// evidence is what a fuzzy match rests on, for shortNameEvidence.
type evidence struct {
	informative int  // letters of the query's informative words (informativeLen)
	identical   int  // of those, the letters of words the listed name has too, or matched by an equal joined unit
	related     int  // of those, the letters of words matched by a different word (a spelling variant or typo)
	words       int  // the query's informative words
	nameWords   int  // the listed name's informative words
	translit    bool // some word matched by spelling (skeleton) alone, with no typo relation
}

// explain aligns query q with name rec again (as score does) and returns the steps the match needed, besides
// the legal forms, and the evidence it rests on.
func (ix *nameIndex) explain(q *query, rec *nameRec) (uint16, evidence) {
	_, pairs := ix.score(q, rec, nil, q.get)
	var bits uint16
	ev := evidence{informative: informativeLen(q.toks)}
	nameTok := func(i int) string { return ix.str(ix.units[int(rec.u0)+i].vocab) }
	for i := 0; i < int(rec.ntok); i++ {
		if !particles[nameTok(i)] {
			ev.nameWords++
		}
	}
	var same uint64 // query tokens the name has as they are
	for k, t := range q.toks {
		if particles[t] {
			continue
		}
		ev.words++
		for i := 0; i < int(rec.ntok); i++ {
			if nameTok(i) == t {
				same |= 1 << k
				break
			}
		}
	}
	var qmask, nmask uint64
	var order []place
	for _, p := range pairs {
		if !p.used {
			continue
		}
		qu, nu := &q.units[p.q], ix.unitAt(rec, int(p.n))
		qmask |= spanMask(qu.start, qu.span)
		nmask |= spanMask(nu.start, nu.span)
		order = append(order, place{int(qu.start), int(nu.start)})
		ns := ix.str(nu.vocab)
		// Spacing: the words are cut differently (a joined unit against words, or the same letters split
		// elsewhere: "Kvtr-Us" and KVT-RUS).
		if qu.span != nu.span || qu.span > 1 && qu.s == ns && !sameTokens(q.toks[qu.start:qu.start+qu.span], rec, &nu, nameTok) {
			bits |= stepSpacing
		}
		switch {
		case qu.s == ns:
			same |= spanMask(qu.start, qu.span)
		case qu.span == 1 && connectors[qu.s] && connectors[ns]:
			bits |= stepParticle
		case qu.skel == ix.skel(nu.vocab):
			bits |= stepTranslit
			if !(qu.span == 1 && nu.span == 1 && typoRelated(qu.s, ns)) {
				ev.translit = true
			}
		default:
			bits |= stepTypo
		}
	}
	for k, t := range q.toks {
		switch {
		case particles[t]:
		case same&(1<<k) != 0:
			ev.identical += len(t)
		case qmask&(1<<k) != 0:
			ev.related += len(t)
		}
	}
	if rec.derived {
		bits |= stepShortForm
	}
	if qmask != spanMask(0, uint8(len(q.toks))) {
		bits |= stepExtraWords
	}
	if nmask != spanMask(0, rec.ntok) {
		bits |= stepWordsOmitted
	}
	if !inOrder(order, 0, 0) && (rec.nlast == 0 || !inOrder(order, int(rec.nlast), int(rec.ntok))) {
		bits |= stepReordered
	}
	return bits, ev
}

// sameTokens reports whether a joined name unit is the query's tokens as they are.
func sameTokens(qt []string, rec *nameRec, nu *unit, nameTok func(int) string) bool {
	if len(qt) != int(nu.span) {
		return false
	}
	for i, t := range qt {
		if nameTok(int(nu.start)+i) != t {
			return false
		}
	}
	return true
}

// inOrder reports whether the aligned places, taken in query order, are in the name's order too, the name
// read from token rot on (rot > 0: an individual's "LAST, Given" read as "Given LAST").
func inOrder(order []place, rot, ntok int) bool {
	slices.SortFunc(order, func(a, b place) int { return a.q - b.q })
	prev := -1
	for _, o := range order {
		n := o.n
		if rot > 0 {
			n = (n - rot + ntok) % ntok
		}
		if n < prev {
			return false
		}
		prev = n
	}
	return true
}

// place is an aligned pair's first query token and first name token.
type place struct{ q, n int }

// minExactLen is the informative length (letters) below which a name whose legal form is on one side only
// is a possible match, not exact: "Stan" is not the listed STAN LLC beyond doubt.
const minExactLen = 8

// shortNameLen is the informative length (letters) below which a name of several words is short: it must
// share at least one word with the listed name as it is (shortNameEvidence).
const shortNameLen = 11

// minOneWordTypoLen is the shortest one-word name that may match another word one typing slip away.
const minOneWordTypoLen = 6

// shortNameEvidence reports whether a fuzzy match has the evidence its query's length asks for (issue 34).
// The fewer informative letters a name has, the more names of the list it is a slip or a spelling away
// from, so the bar rises in steps as the length falls:
//   - shortNameLen letters or more: a score of PossibleThreshold, as for every name;
//   - several words under shortNameLen letters: at least one word shared with the listed name as it is,
//     not only words that are spelling variants or typos of its words ("Marie Perry" is not PARRA, Mario);
//   - one word of minOneWordTypoLen letters or more: the same word, or one typing slip away, never by
//     spelling alone (the consonant skeletons of short words collide: "Miller" and MILUR, "Tolonen" and
//     TALOON);
//     (one letter less when both names carry the same legal form);
//   - one shorter word: the same word only.
//
// And a name of one word never matches one word of a person's name of two or more ("Santos" is not
// SANTOS, Ahmad): OFAC's FAQ 5, step 3, "just one of two or more names (i.e. just the last name)" is not a
// valid match.
func shortNameEvidence(ev evidence, entryType string, sameForm bool) bool {
	if ev.words == 1 {
		if ev.identical > 0 {
			return ev.nameWords < 2 || entryType != TypeIndividual
		}
		// The same legal form on both sides ("Sepiv S.A. de C.V." and SEPRIV, S.A. DE C.V.) is evidence
		// beside the word: it buys one letter.
		minLen := minOneWordTypoLen
		if sameForm {
			minLen--
		}
		return !ev.translit && ev.informative >= minLen
	}
	return ev.identical > 0 || ev.informative >= shortNameLen
}

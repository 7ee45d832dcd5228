package sanctions

import (
	"maps"
	"slices"
	"strings"
	"unicode"

	"golang.org/x/text/unicode/norm"
)

// Name normalization, in order:
//  1. Unicode NFKD, then combining marks dropped (é → e, ü → u), a few letters folded by hand (ß → ss,
//     æ → ae, ø → o, ł → l, đ → d, ı → i, œ → oe, þ → th), lower case.
//  2. Apostrophes removed without a break (O'Brien → obrien, Ma'ruf → maruf); every other non-letter,
//     non-digit is a token break (Tornado.Cash → tornado cash, AL-QAIDA → al qaida).
//  3. A run of two or more single-letter tokens is merged (S.A. → sa, U.S.A. → usa, C.I. → ci).
//  4. Legal forms are removed (LLC, LTD, S.A. de C.V., OOO, GmbH, ...) unless nothing else would remain.
//
// Token order is kept: the exact keys use it, the fuzzy score does not depend on it.

var foldRunes = map[rune]string{
	'ß': "ss", 'æ': "ae", 'Æ': "ae", 'ø': "o", 'Ø': "o", 'ł': "l", 'Ł': "l", 'đ': "d", 'Đ': "d",
	'ı': "i", 'œ': "oe", 'Œ': "oe", 'þ': "th", 'Þ': "th", 'ð': "d", 'Ð': "d",
}

func isApostrophe(r rune) bool {
	switch r {
	case '\'', '’', '‘', '`', 'ʼ', 'ʻ', '´':
		return true
	}
	return false
}

// rawTokens applies steps 1-3.
func rawTokens(s string) []string {
	var toks []string
	var dotted []bool // the break before toks[i] contained a '.'
	var b strings.Builder
	dot := false
	flush := func() {
		if b.Len() > 0 {
			toks = append(toks, b.String())
			dotted = append(dotted, dot)
			b.Reset()
			dot = false
		}
	}
	if !isASCII(s) {
		s = norm.NFKD.String(s)
	}
	for _, r := range s {
		switch {
		case unicode.Is(unicode.Mn, r):
		case isApostrophe(r):
		case foldRunes[r] != "":
			b.WriteString(foldRunes[r])
		case unicode.IsLetter(r) || unicode.IsDigit(r):
			b.WriteRune(unicode.ToLower(r))
		default:
			flush()
			if r == '.' || r == '/' {
				dot = true // "S.A.", and "S/A", "A/S" as Brazilian and Danish firms write them
			}
		}
	}
	flush()
	return mergeInitials(toks, dotted)
}

// mergeInitials merges runs of one-letter tokens written as an abbreviation ("S.A.", "U. S. A.") into one
// token: "sa", "usa". One-letter tokens not joined by dots (a lone initial) stay.
func mergeInitials(toks []string, dotted []bool) []string {
	out := toks[:0]
	for i := 0; i < len(toks); {
		j := i + 1
		if len([]rune(toks[i])) == 1 {
			for j < len(toks) && dotted[j] && len([]rune(toks[j])) == 1 {
				j++
			}
		}
		if j-i >= 2 {
			out = append(out, strings.Join(toks[i:j], ""))
		} else {
			out = append(out, toks[i])
		}
		i = j
	}
	return out
}

// legalForms are company-form words that carry no identity. "co" and "company" are included: OFAC writes
// "CO., LTD." where a merchant writes "Company Limited".
var legalForms = map[string]bool{
	"llc": true, "ltd": true, "limited": true, "ooo": true, "gmbh": true, "co": true, "company": true,
	"sa": true, "jsc": true, "pjsc": true, "cjsc": true, "ojsc": true, "oao": true, "zao": true, "pao": true,
	"ao": true, "inc": true, "incorporated": true, "corp": true, "corporation": true, "ag": true, "bv": true,
	"nv": true, "plc": true, "llp": true, "lp": true, "srl": true, "sarl": true, "spa": true, "sas": true,
	"sl": true, "kg": true, "pte": true, "pty": true, "fze": true, "fzco": true, "fzc": true, "fz": true,
	"fzllc": true, "bhd": true, "sdn": true, "tov": true, "sro": true, "kft": true, "sapi": true,
	"cv": true, "rl": true, "dmcc": true, "lda": true, "ltda": true, "sae": true, "saog": true, "wll": true,
	// Nordic (Aktiebolag, Osakeyhtiö, Anpartsselskab, allmennaksjeselskap), Central European (Hungarian
	// Zrt./Nyrt./Bt., German OHG/UG, Italian s.n.c.), Spanish (S.L.U., S.L.L., S.L.N.E.), Turkish (Ltd. Şti.),
	// Indonesian (PT, Tbk) and Vietnamese (TNHH) forms (issue 34: a form left in the name is a word that can
	// match, "Ahmed AB" against ABU ...).
	"ab": true, "oy": true, "oyj": true, "aps": true, "asa": true, "zrt": true, "nyrt": true, "bt": true,
	"ohg": true, "ug": true, "snc": true, "slu": true, "sll": true, "slne": true, "sti": true, "pt": true,
	"tbk": true, "tnhh": true,
}

// legalPhrases are multi-token legal forms whose middle word ("de") is not a legal form by itself.
var legalPhrases = [][]string{
	{"s", "de", "rl"}, {"de", "cv"}, {"de", "rl"},
	{"limited", "liability", "company"}, {"limited", "liability", "partnership"}, {"liability", "company"},
	{"open", "joint", "stock", "company"}, {"closed", "joint", "stock", "company"},
	{"public", "joint", "stock", "company"}, {"joint", "stock", "company"},
	{"sp", "z", "oo"}, {"cong", "ty"}, // Polish sp. z o.o., Vietnamese công ty (company)
}

// nameTokens applies all normalization steps.
func nameTokens(s string) []string {
	toks, _ := splitLegal(rawTokens(s), false)
	return toks
}

// nameTokensForms is nameTokens and the legal forms it removed, as canonical forms (see legalFormsOf).
func nameTokensForms(s string) (toks, forms []string) { return splitLegal(rawTokens(s), true) }

// splitLegal removes the legal forms from raw tokens (step 4) and, when withForms is set, returns their
// canonical forms too. A name made only of legal-form words is kept whole, with no form removed.
func splitLegal(toks []string, withForms bool) (kept, forms []string) {
	if len(toks) <= 1 {
		return toks, nil
	}
	kept = make([]string, 0, len(toks))
	for i, t := range toks {
		if u, p := stripGluedLegalPhrase(t); p != "" {
			toks[i] = u
			if withForms {
				forms = append(forms, legalCanon(p))
			}
		}
	}
	for i := 0; i < len(toks); i++ {
		if n, p := legalPhraseOf(toks, i); n > 0 {
			if withForms {
				forms = append(forms, legalCanon(strings.Join(p, "")))
			}
			i += n - 1
			continue
		}
		if legalForms[toks[i]] {
			if withForms {
				forms = append(forms, legalCanon(toks[i]))
			}
			continue
		}
		if f := misspelledLegalFormOf(toks[i]); f != "" {
			if withForms {
				forms = append(forms, legalCanon(f))
			}
			continue
		}
		kept = append(kept, toks[i])
	}
	if len(kept) == 0 {
		return toks, nil
	}
	return kept, forms
}

// legalPhraseOf returns the length of the legal phrase starting at toks[i] (0 if none). One word of the
// phrase may be misspelled by one edit (a word of 4+ letters: "joint stcok company", "limited liabilty
// company"): a typo in the legal form must not turn it into a distinctive word of the name.
// It returns the phrase as legalPhrases spells it too.
func legalPhraseOf(toks []string, i int) (int, []string) {
	for _, p := range legalPhrases {
		if i+len(p) > len(toks) {
			continue
		}
		ok, typos := true, 0
		for k, w := range p {
			if toks[i+k] == w {
				continue
			}
			if typos == 0 && len(w) >= minSpellingLen && deleteRelated(toks[i+k], w) {
				typos++
				continue
			}
			ok = false
			break
		}
		if ok {
			return len(p), p
		}
	}
	return 0, nil
}

// gluedLegalPhrases are the legal phrases of two or more words written as one (10+ letters), which a word
// may end with when a name is typed without spaces: "VostokinterpromLiabilityCompany".
var gluedLegalPhrases = func() []string {
	var out []string
	for _, p := range legalPhrases {
		if j := strings.Join(p, ""); len(p) >= 2 && len(j) >= 10 {
			out = append(out, j)
		}
	}
	// Longest first, so "limitedliabilitycompany" goes before its tail "liabilitycompany".
	slices.SortFunc(out, func(a, b string) int { return len(b) - len(a) })
	return out
}()

// stripGluedLegalPhrase removes a glued legal phrase from the end of a token that has at least two other
// letters ("mpliabilitycompany" -> "mp"), or from its start when at least minGluedRest letters stay
// ("liabilitycompanyinferit" -> "inferit": OFAC writes many Russian firms LIMITED LIABILITY COMPANY X, and
// typed without spaces that is one word); a token that is only the phrase is left to the phrase rules. It
// returns the rest and the phrase removed ("" when none).
func stripGluedLegalPhrase(t string) (string, string) {
	if len(t) < 12 {
		return t, ""
	}
	for _, p := range gluedLegalPhrases {
		if len(t) >= len(p)+2 && strings.HasSuffix(t, p) {
			return t[:len(t)-len(p)], p
		}
	}
	for _, p := range gluedLegalPhrases {
		if len(t) >= len(p)+minGluedRest && strings.HasPrefix(t, p) {
			return t[len(p):], p
		}
	}
	return t, ""
}

// longLegalForms are the legal-form words long enough (6+ letters) that one edit away from one is still
// that word as someone typed it ("Limtied", "Copmany"), never another word of a name.
var longLegalForms = []string{"limited", "company", "corporation", "incorporated"}

// misspelledLegalFormOf returns the long legal-form word t is one edit away from, or "".
func misspelledLegalFormOf(t string) string {
	if len(t) < 5 {
		return ""
	}
	for _, f := range longLegalForms {
		if oneEdit(t, f) {
			return f
		}
	}
	return ""
}

// oneEdit reports whether a and b differ by exactly one substitution, insertion, deletion or transposition
// of adjacent letters. The deletion relation is looser (a deletion on each side is two substitutions:
// "corporativo" and "corporation"), too loose for removing a word as a misspelled legal form: the Spanish
// CORPORATIVO is a word of names.
func oneEdit(a, b string) bool {
	if a == b || len(a)-len(b) > 1 || len(b)-len(a) > 1 {
		return false
	}
	p := 0
	for p < len(a) && p < len(b) && a[p] == b[p] {
		p++
	}
	switch {
	case len(a) == len(b):
		return a[p+1:] == b[p+1:] || p+1 < len(a) && a[p] == b[p+1] && a[p+1] == b[p] && a[p+2:] == b[p+2:]
	case len(a) < len(b):
		return a[p:] == b[p+1:]
	}
	return a[p+1:] == b[p:]
}

// compactKey joins tokens with no separator, so that "Tornado Cash", "Tornado.Cash" and "TornadoCash" meet.
func compactKey(toks []string) string { return strings.Join(toks, "") }

func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= 0x80 {
			return false
		}
	}
	return true
}

// exactKeys returns the keys under which a name matches exactly: its tokens joined with no separator after
// all legal forms are removed, the same with only trailing legal forms removed (so "VEB Leasing OJSC" meets
// "VebLeasing", and "Management Company X LLC" meets "ManagementCompanyX"), and for an individual written
// "LAST, First" also "First LAST". A name that is a single token also loses a legal form glued to its end
// ("AmeginoFZE").
func exactKeys(name string, individual bool) []string {
	keys, _ := exactAndGluedKeys(name, individual)
	return keys
}

// exactAndGluedKeys returns exactKeys(name, individual) and the name's gluedLegalKeys.
func exactAndGluedKeys(name string, individual bool) (keys, glued []string) {
	raw := rawTokens(name)
	toks, _ := splitLegal(slices.Clone(raw), false)
	return keysOf(name, raw, toks, individual)
}

// keysOf is exactAndGluedKeys given the name's raw tokens and its nameTokens, which a query has computed
// already (ScreenName): a name is tokenized once. raw is not modified.
func keysOf(name string, raw, toks []string, individual bool) (keys, glued []string) {
	addKey := func(toks []string) {
		if k := compactKey(toks); k != "" && !slices.Contains(keys, k) {
			keys = append(keys, k)
		}
	}
	if len(toks) > 0 {
		addKey(toks)
		if last, given, ok := strings.Cut(name, ","); ok && individual {
			l, g := nameTokens(last), nameTokens(given)
			if len(l) > 0 && len(g) > 0 {
				addKey(append(append([]string{}, g...), l...))
			}
		}
	}
	for len(raw) > 1 {
		if n := legalSuffixLen(raw); n > 0 && n < len(raw) {
			raw = raw[:len(raw)-n]
			continue
		}
		break
	}
	addKey(raw)
	glued = gluedLegalKeys(raw)
	if len(raw) == 1 {
		for form := range legalForms {
			if len(form) >= 3 && len(raw[0]) >= len(form)+4 && strings.HasSuffix(raw[0], form) {
				addKey([]string{strings.TrimSuffix(raw[0], form)})
			}
		}
	}
	return keys, glued
}

// gluedLegalKeys returns the compact keys of a name written without spaces up to and including its legal
// form ("RoolEuropeAg Limited", "CubanacanInternationalB.V"), given the name's raw tokens with the trailing
// legal-form tokens removed: their letters joined, then a legal form (of any length) removed from the end,
// when at least minGluedRest letters (and four more than the form) stay. The glued form can be split by a
// dot ("InternationalB.V" tokenizes as "internationalb", "v"), so the suffix is taken on the joined letters,
// not on a token. ScreenName reports an entry met under such a key as possible, never exact: the cut is a
// guess about where the name ends.
func gluedLegalKeys(trimmed []string) []string {
	k := compactKey(trimmed)
	if k == "" || !legalFormLast[k[len(k)-1]] {
		return nil
	}
	var keys []string
	for _, form := range legalFormList {
		if rest := len(k) - len(form); rest >= minGluedRest && rest >= len(form)+4 && strings.HasSuffix(k, form) {
			keys = append(keys, k[:rest])
		}
	}
	return keys
}

// legalFormList is legalForms' words, sorted; legalFormLast marks the bytes they end with.
var legalFormList, legalFormLast = func() ([]string, [256]bool) {
	var last [256]bool
	l := slices.Sorted(maps.Keys(legalForms))
	for _, f := range l {
		last[f[len(f)-1]] = true
	}
	return l, last
}()

// minGluedRest is the shortest name left after a glued legal form is cut off (see gluedLegalKeys).
const minGluedRest = 6

// legalSuffixLen is the number of trailing tokens that form a legal form (0 if none).
func legalSuffixLen(toks []string) int {
	for _, p := range legalPhrases {
		if len(toks) >= len(p) && slices.Equal(toks[len(toks)-len(p):], p) {
			return len(p)
		}
	}
	if legalForms[toks[len(toks)-1]] {
		return 1
	}
	return 0
}

// legalFormTypo reports whether t (3+ letters) is one edit from a legal form of 3+ letters but is not one
// ("incc", "corrp", "gmhb", "ldta", "lcl"): a mistyped legal form when the list does not know the word
// (weigh).
func legalFormTypo(t string) bool {
	if len(t) < 3 || legalForms[t] {
		return false
	}
	for _, f := range legalFormList {
		if len(f) >= 3 && oneEdit(t, f) {
			return true
		}
	}
	return false
}

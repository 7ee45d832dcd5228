package sanctions

import (
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
	var b strings.Builder
	flush := func() {
		if b.Len() > 0 {
			toks = append(toks, b.String())
			b.Reset()
		}
	}
	for _, r := range norm.NFKD.String(s) {
		switch {
		case unicode.Is(unicode.Mn, r):
		case isApostrophe(r):
		case foldRunes[r] != "":
			b.WriteString(foldRunes[r])
		case unicode.IsLetter(r) || unicode.IsDigit(r):
			b.WriteRune(unicode.ToLower(r))
		default:
			flush()
		}
	}
	flush()
	return mergeInitials(toks)
}

// mergeInitials merges runs of two or more one-letter tokens: "s a" → "sa".
func mergeInitials(toks []string) []string {
	out := toks[:0]
	for i := 0; i < len(toks); {
		j := i
		for j < len(toks) && len([]rune(toks[j])) == 1 {
			j++
		}
		if j-i >= 2 {
			out = append(out, strings.Join(toks[i:j], ""))
			i = j
			continue
		}
		out = append(out, toks[i])
		i++
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
}

// legalPhrases are multi-token legal forms whose middle word ("de") is not a legal form by itself.
var legalPhrases = [][]string{{"s", "de", "rl"}, {"de", "cv"}, {"de", "rl"}}

// nameTokens applies all normalization steps.
func nameTokens(s string) []string {
	toks := rawTokens(s)
	if len(toks) <= 1 {
		return toks
	}
	kept := make([]string, 0, len(toks))
	for i := 0; i < len(toks); i++ {
		if n := legalPhraseAt(toks, i); n > 0 {
			i += n - 1
			continue
		}
		if legalForms[toks[i]] {
			continue
		}
		kept = append(kept, toks[i])
	}
	if len(kept) == 0 {
		return toks
	}
	return kept
}

func legalPhraseAt(toks []string, i int) int {
	for _, p := range legalPhrases {
		if i+len(p) > len(toks) {
			continue
		}
		ok := true
		for k, w := range p {
			if toks[i+k] != w {
				ok = false
				break
			}
		}
		if ok {
			return len(p)
		}
	}
	return 0
}

// nameVariants returns the token lists under which a name is known: its own order, and for an
// individual written "LAST, First Middle" also "First Middle LAST".
func nameVariants(name string, individual bool) [][]string {
	toks := nameTokens(name)
	if len(toks) == 0 {
		return nil
	}
	out := [][]string{toks}
	if last, given, ok := strings.Cut(name, ","); ok && individual {
		l, g := nameTokens(last), nameTokens(given)
		if len(l) > 0 && len(g) > 0 {
			swapped := append(append([]string{}, g...), l...)
			out = append(out, swapped)
		}
	}
	return out
}

// compactKey joins tokens with no separator, so that "Tornado Cash", "Tornado.Cash" and "TornadoCash" meet.
func compactKey(toks []string) string { return strings.Join(toks, "") }

// NormalizeName returns the normalized form of a name as space-separated tokens (for display and tests).
func NormalizeName(s string) string { return strings.Join(nameTokens(s), " ") }

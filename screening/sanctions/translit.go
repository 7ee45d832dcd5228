package sanctions

// Transliteration of the Arabic article inside compound given names, for fuzzy matching (docs/SCREENING.md
// "Transliteration"). "Abdul Rahman", "Abdel Rahman", "Abd al-Rahman" and "Abdul al-Rahman" are one name
// (عبد الرحمن, servant of the Merciful): the -ul/-el/-al/-ol of Abdul is the article al. The fuzzy tokens
// write it out, "abd al rahman", so that every spelling aligns word by word; the particle weight
// (particleWeight) makes a doubled "al" cost almost nothing. Exact keys keep the written form: a
// transliteration is a possible match, never an exact one.

// abdArticle are the spellings of "abd" + article written as one word.
var abdArticle = map[string]bool{"abdul": true, "abdel": true, "abdal": true, "abdol": true, "abdoul": true, "abdil": true}

// matchTokens returns the tokens of a name for fuzzy matching: nameTokens, with "abdul" and its spellings
// written out as "abd al" when another word follows (a compound given name; a final Abdul is a family name
// and stays).
func matchTokens(s string) []string { return abdRewrite(nameTokens(s)) }

// abdRewrite writes "abdul" and its spellings out as "abd al" when another word follows (see matchTokens).
// It returns toks itself when there is nothing to rewrite.
func abdRewrite(toks []string) []string {
	n := 0
	for i, t := range toks {
		if abdArticle[t] && i+1 < len(toks) {
			n++
		}
	}
	if n == 0 {
		return toks
	}
	out := make([]string, 0, len(toks)+n)
	for i, t := range toks {
		if abdArticle[t] && i+1 < len(toks) {
			out = append(out, "abd", "al")
			continue
		}
		out = append(out, t)
	}
	return out
}

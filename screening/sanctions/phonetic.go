package sanctions

// skeleton is a phonetic key for one token, built for the transliteration noise of names romanized from
// Arabic, Persian, Cyrillic and others: vowels are dropped after the first letter (Mohammed, Muhammad,
// Mohamed → mhmd; Ladin, Laden → ldn; Abdel, Abdul → abdl), a leading vowel becomes "a" (Usama, Osama →
// asm), sound-alike letters and digraphs are merged (w/v, ph/f, q/k/c/ck, z/s, sh/ch/sch/tch, th/t, dh/d,
// gh/g, dj/j), and doubled letters collapse. Two tokens with the same skeleton are treated as spelling
// variants of each other.
//
// Romanization equivalences (docs/SCREENING.md "Transliteration"): kh/h (Khalid, Halid; Mikhail, Mihail),
// zh/j (Zhanna, Janna), a leading ju/yu/iu (Juri, Yuri, Iuri; so a leading ju is never zh: Jukov does
// not meet Zhukov), a final -ff/-v (Ivanoff, Ivanov, Ivanow),
// a final -ij/-iy/-y (Dmitrij, Dmitriy, Dmitry), tch/tsch/ch (Medvedtchuk, Kowaltschuk, Kovalchuk), x/ks.
func skeleton(s string) string {
	b := make([]byte, 0, len(s))
	push := func(c byte) {
		if len(b) == 0 || b[len(b)-1] != c {
			b = append(b, c)
		}
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		next := byte(0)
		if i+1 < len(s) {
			next = s[i+1]
		}
		if c >= 0x80 { // non-Latin letters: kept byte for byte
			b = append(b, c)
			continue
		}
		if c == 'j' && (i == 0 && next == 'u' || i == len(s)-1 && i > 0 && s[i-1] == 'i') {
			c = 'y' // a leading ju is yu, a final ij is iy: vowels here
		}
		if isVowel(c) {
			if i == 0 {
				b = append(b, 'a')
			}
			continue
		}
		switch c {
		case 'p':
			if next == 'h' {
				push('f')
				i++
				continue
			}
		case 's':
			if next == 'c' && i+2 < len(s) && s[i+2] == 'h' {
				push('x')
				i += 2
				continue
			}
			if next == 'h' {
				push('x')
				i++
				continue
			}
		case 'c':
			switch next {
			case 'h':
				push('x')
				i++
				continue
			case 'k':
				push('k')
				i++
				continue
			case 'e', 'i', 'y':
				push('s')
				continue
			}
			push('k')
			continue
		case 'f':
			if next == 'f' && i+2 == len(s) {
				push('v') // -off, -eff: the German and French spelling of -ov, -ev
				i++
				continue
			}
		case 'k':
			if next == 'h' {
				push('h')
				i++
				continue
			}
		case 'g', 't', 'd':
			if c == 't' && next == 'c' && i+2 < len(s) && s[i+2] == 'h' {
				push('x')
				i += 2
				continue
			}
			if c == 't' && next == 's' && i+3 < len(s) && s[i+2] == 'c' && s[i+3] == 'h' {
				push('x') // German tsch for ch: Kowaltschuk, Kovalchuk
				i += 3
				continue
			}
			if next == 'h' {
				push(c)
				i++
				continue
			}
			if c == 'd' && next == 'j' {
				push('j')
				i++
				continue
			}
		case 'z':
			if next == 'h' {
				push('j')
				i++
				continue
			}
			push('s')
			continue
		case 'q':
			push('k')
			continue
		case 'w':
			push('v')
			continue
		case 'x':
			push('k')
			push('s')
			continue
		}
		push(c)
	}
	return string(b)
}

func isVowel(c byte) bool {
	switch c {
	case 'a', 'e', 'i', 'o', 'u', 'y':
		return true
	}
	return false
}

// jaroWinkler is the Jaro-Winkler similarity of two byte strings (prefix scale 0.1, prefix up to 4).
func jaroWinkler(a, b string) float64 {
	if a == b {
		return 1
	}
	la, lb := len(a), len(b)
	if la == 0 || lb == 0 {
		return 0
	}
	window := max(la, lb)/2 - 1
	if window < 0 {
		window = 0
	}
	var am, bm [64]bool
	if la > 64 || lb > 64 {
		return 0
	}
	matches := 0
	for i := 0; i < la; i++ {
		lo, hi := max(0, i-window), min(lb-1, i+window)
		for j := lo; j <= hi; j++ {
			if !bm[j] && a[i] == b[j] {
				am[i], bm[j] = true, true
				matches++
				break
			}
		}
	}
	if matches == 0 {
		return 0
	}
	trans, k := 0, 0
	for i := 0; i < la; i++ {
		if !am[i] {
			continue
		}
		for !bm[k] {
			k++
		}
		if a[i] != b[k] {
			trans++
		}
		k++
	}
	m := float64(matches)
	jaro := (m/float64(la) + m/float64(lb) + (m-float64(trans)/2)/m) / 3
	prefix := 0
	for prefix < min(4, la, lb) && a[prefix] == b[prefix] {
		prefix++
	}
	return jaro + float64(prefix)*0.1*(1-jaro)
}

// minDeleteLen is the shortest token that takes part in typo matching; shorter tokens match only exactly
// or by skeleton, since one edit turns most one- and two-letter words into other real words. Three-letter
// words take part (a short given name misspelled by one letter: Kem/Kim, Avu/Abu); their pairs still need a
// Jaro-Winkler of minTokenSim, which only a change after the first letter reaches. A three-letter word is
// related only to another of three letters (one substitution or transposition): "Lia" is not "Lima".
const minDeleteLen = 3

// minSpellingLen is the shortest token for which a shared skeleton counts as a spelling variant (the
// skeletonSim floor) and a legal-phrase word may carry a typo: short skeletons collide.
const minSpellingLen = 4

// deleteRelated reports whether a and b share a one-deletion variant (counting each string as its own
// zero-deletion variant): one substitution, insertion, deletion or adjacent transposition, and also a
// deletion plus an insertion at a distance (abxcd / abcyd). It is exactly the relation the symmetric
// deletion index answers; it runs in linear time (deleteRelatedSlow is the definition, and a test checks
// the two agree).
func deleteRelated(a, b string) bool {
	if len(a) < minDeleteLen || len(b) < minDeleteLen || min(len(a), len(b)) < minSpellingLen && len(a) != len(b) {
		return false
	}
	if len(a) < len(b) {
		a, b = b, a
	}
	la, lb := len(a), len(b)
	if la-lb > 1 {
		return false
	}
	p := 0
	for p < lb && a[p] == b[p] {
		p++
	}
	if la != lb {
		// b must be a with one byte deleted: after the first mismatch, a is b shifted by one.
		return a[p+1:] == b[p:]
	}
	if p == la {
		return true // equal
	}
	s := 0
	for s < la-p && a[la-1-s] == b[lb-1-s] {
		s++
	}
	// a and b agree outside [p, la-s). One deletion from each must remove that difference: a substitution
	// (a single differing byte), or the middle of one is the middle of the other shifted by one.
	if p+s == la-1 {
		return true
	}
	return a[p+1:la-s] == b[p:la-s-1] || b[p+1:la-s] == a[p:la-s-1]
}

// fnv64 hashes a string (FNV-1a), for the deletion index.
func fnv64(s string) uint64 {
	h := uint64(14695981039346656037)
	for i := 0; i < len(s); i++ {
		h ^= uint64(s[i])
		h *= 1099511628211
	}
	return h
}

// deleteHashes appends the hashes of s and of its one-byte deletions.
func deleteHashes(dst []uint64, s string) []uint64 {
	dst = append(dst, fnv64(s))
	for i := 0; i < len(s); i++ {
		// Hash s without byte i without allocating.
		h := uint64(14695981039346656037)
		for j := 0; j < len(s); j++ {
			if j == i {
				continue
			}
			h ^= uint64(s[j])
			h *= 1099511628211
		}
		dst = append(dst, h)
	}
	return dst
}

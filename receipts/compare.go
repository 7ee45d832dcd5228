package receipts

import (
	"encoding/json"
	"fmt"
	"math/big"
	"sort"
)

// firstDifference walks two decoded JSON values and returns the path of the first difference ("" when they
// are equal): "decision", "receipt.id", "reasons[1]", "chosen_option.payTo". Object members are visited in
// name order so the answer is deterministic. Numbers are equal when their values are, so a verifier that
// re-encodes 1.0 as 1 does not see tampering.
func firstDifference(path string, got, want any) string {
	switch w := want.(type) {
	case map[string]any:
		g, ok := got.(map[string]any)
		if !ok {
			return orRoot(path)
		}
		names := make([]string, 0, len(w)+len(g))
		for k := range w {
			names = append(names, k)
		}
		for k := range g {
			if _, ok := w[k]; !ok {
				names = append(names, k)
			}
		}
		sort.Strings(names)
		for _, k := range names {
			gv, gok := g[k]
			wv, wok := w[k]
			sub := join(path, k)
			if gok != wok {
				return sub
			}
			if d := firstDifference(sub, gv, wv); d != "" {
				return d
			}
		}
		return ""
	case []any:
		g, ok := got.([]any)
		if !ok || len(g) != len(w) {
			return orRoot(path)
		}
		for i := range w {
			if d := firstDifference(fmt.Sprintf("%s[%d]", path, i), g[i], w[i]); d != "" {
				return d
			}
		}
		return ""
	case json.Number:
		g, ok := got.(json.Number)
		if !ok {
			return orRoot(path)
		}
		if g == w {
			return ""
		}
		a, aok := new(big.Rat).SetString(string(g))
		b, bok := new(big.Rat).SetString(string(w))
		if !aok || !bok || a.Cmp(b) != 0 {
			return orRoot(path)
		}
		return ""
	default: // string, bool, nil
		if got != want {
			return orRoot(path)
		}
		return ""
	}
}

func join(path, k string) string {
	if path == "" {
		return k
	}
	return path + "." + k
}

func orRoot(path string) string {
	if path == "" {
		return "(whole result)"
	}
	return path
}

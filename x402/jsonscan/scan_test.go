package jsonscan

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
)

// seeds cover every grammar rule and the edges encoding/json has opinions on.
var seeds = []string{
	``, ` `, `{}`, ` { } `, `[]`, `[ ]`, `{"a":1}`, `{"a" : [1, 2.5e3, -0, 0.1E+2, 1e-9] , "b":{ "k" : null }}`,
	`{"a":1,"a":2}`, `{"a":1,}`, `{,}`, `{"a"}`, `{"a":}`, `{"a":1 "b":2}`, `{"a":1}x`, `{"a":1}}`, `{'a':1}`,
	`[1,]`, `[,1]`, `[1 2]`, `[01]`, `[-]`, `[-01]`, `[1.]`, `[.5]`, `[1e]`, `[1e+]`, `[+1]`, `[1.5e3x]`,
	`[true, false, null]`, `[tru]`, `[nul]`, `[truex]`, `[NaN]`, `[Infinity]`,
	`"plain"`, `"esc \" \\ \/ \b \f \n \r \t \u00e9 \uD83D\uDE00"`, `"\ud800"`, `"\x"`, `"\u12"`, `"\u12g4"`,
	"\"tab\there\"", "\"nul\x00\"", "\"del\x7f\"", "\"\xff\xfe\"", `"é"`, "\"\u2028\"", `"unterminated`,
	`{"\u0061":1,"a":2}`, `{"\ud800":1,"\udc00":2}`, "{\"\xff\":1}", `{"x402Version":2,"accepts":[{"amount":"1"}]}`,
	"\t\r\n{\"a\":\t[\r\n]}\n", `{"a":1}` + "\x00", `123`, `-1.5`, `"s"`, `true`, `null`, `nul`, `{"a":{"b":[{}]}}`,
}

func FuzzValid(f *testing.F) {
	for _, s := range seeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		if got, want := Valid(b), json.Valid(b); got != want {
			t.Fatalf("Valid(%q) = %v, json.Valid %v", b, got, want)
		}
	})
}

func FuzzObject(f *testing.F) {
	for _, s := range seeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		ms, ok := Object(b)
		if t := bytes.TrimLeft(b, " \t\r\n"); len(t) == 0 || t[0] != '{' {
			if ok {
				panic("Object accepted a document that is not an object")
			}
			return // encoding/json decodes null into a nil map; x402 refuses non-objects before asking
		}
		var want map[string]json.RawMessage
		err := json.Unmarshal(b, &want)
		if ok != (err == nil) {
			t.Fatalf("Object(%q) ok=%v, json.Unmarshal: %v", b, ok, err)
		}
		if !ok {
			return
		}
		got := map[string]json.RawMessage{}
		for _, m := range ms {
			got[m.Name] = m.Value
		}
		// AppendObject appends the same members after what dst holds.
		app, okApp := AppendObject([]Member{{Name: "before"}}, b)
		if !okApp || len(app) != len(ms)+1 || app[0].Name != "before" {
			t.Fatalf("AppendObject(%q) = %v, %v; Object %v", b, app, okApp, ms)
		}
		for i, m := range ms {
			if app[i+1].Name != m.Name || !bytes.Equal(app[i+1].Value, m.Value) {
				t.Fatalf("AppendObject(%q)[%d] = %v, Object %v", b, i+1, app[i+1], m)
			}
			// Plain says what PlainString would.
			if _, plain := PlainString(m.Value); m.Plain != plain {
				t.Fatalf("Object(%q)[%d].Plain = %v, PlainString %v", b, i, m.Plain, plain)
			}
		}
		if len(got) != len(want) {
			t.Fatalf("Object(%q) = %q, encoding/json %q", b, got, want)
		}
		for k, v := range want {
			if g, ok := got[k]; !ok || !bytes.Equal(g, v) {
				t.Fatalf("Object(%q)[%q] = %q, encoding/json %q", b, k, g, v)
			}
		}
	})
}

func FuzzArray(f *testing.F) {
	for _, s := range seeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		got, ok := Array(b)
		if t := bytes.TrimLeft(b, " \t\r\n"); len(t) == 0 || t[0] != '[' {
			if ok {
				panic("Array accepted a document that is not an array")
			}
			return
		}
		var want []json.RawMessage
		err := json.Unmarshal(b, &want)
		if ok != (err == nil) {
			t.Fatalf("Array(%q) ok=%v, json.Unmarshal: %v", b, ok, err)
		}
		if !ok {
			return
		}
		if len(got) != len(want) {
			t.Fatalf("Array(%q) = %q, encoding/json %q", b, got, want)
		}
		for i := range want {
			if !bytes.Equal(got[i], want[i]) {
				t.Fatalf("Array(%q)[%d] = %q, encoding/json %q", b, i, got[i], want[i])
			}
		}
		// ArrayUpTo is Array's prefix: the same elements up to n, more exactly when there are others; so is
		// AppendArrayUpTo after what its dst holds.
		for _, n := range []int{0, 1, 2, len(want), len(want) + 1} {
			prefix, more, okN := ArrayUpTo(b, n)
			app, moreApp, okApp := AppendArrayUpTo([][]byte{[]byte("before")}, b, n)
			if okApp != okN || moreApp != more || len(app) != len(prefix)+1 || string(app[0]) != "before" {
				t.Fatalf("AppendArrayUpTo(%q, %d) = %q more=%v ok=%v; ArrayUpTo %q", b, n, app, moreApp, okApp, prefix)
			}
			for i := range prefix {
				if !bytes.Equal(app[i+1], prefix[i]) {
					t.Fatalf("AppendArrayUpTo(%q, %d)[%d] = %q, ArrayUpTo %q", b, n, i+1, app[i+1], prefix[i])
				}
			}
			if !okN || more != (len(want) > n) || len(prefix) != min(n, len(want)) {
				t.Fatalf("ArrayUpTo(%q, %d) = %q more=%v ok=%v; Array: %d elements", b, n, prefix, more, okN, len(want))
			}
			for i := range prefix {
				if !bytes.Equal(prefix[i], want[i]) {
					t.Fatalf("ArrayUpTo(%q, %d)[%d] = %q, want %q", b, n, i, prefix[i], want[i])
				}
			}
		}
	})
}

func FuzzString(f *testing.F) {
	for _, s := range seeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		got, ok := String(b)
		var want string
		err := json.Unmarshal(b, &want)
		isString := len(b) > 0 && b[0] == '"' && json.Valid(b) && bytes.HasSuffix(b, []byte(`"`))
		if !isString {
			if ok {
				t.Fatalf("String(%q) accepted a token that is not exactly one string", b)
			}
			return
		}
		if !ok || err != nil || got != want {
			t.Fatalf("String(%q) = %q, %v; encoding/json %q, %v", b, got, ok, want, err)
		}
		// PlainString takes exactly the strings whose value is their bytes: printable ASCII, no escapes.
		plain := !bytes.ContainsAny(b, "\\")
		for _, c := range b {
			plain = plain && 0x20 <= c && c < 0x80
		}
		contents, okPlain := PlainString(b)
		if okPlain != plain || okPlain && string(contents) != want {
			t.Fatalf("PlainString(%q) = %q, %v; value %q, plain %v", b, contents, okPlain, want, plain)
		}
	})
}

// encoding/json allows 10,000 levels of nesting and no more; so does Valid.
func TestDepthLimit(t *testing.T) {
	for _, n := range []int{9999, 10000, 10001} {
		for _, open := range []string{"[", `{"a":`} {
			closer := "]"
			if open != "[" {
				closer = "}"
			}
			doc := []byte(strings.Repeat(open, n) + "1" + strings.Repeat(closer, n))
			if got, want := Valid(doc), json.Valid(doc); got != want {
				t.Fatalf("depth %d %s: Valid %v, json.Valid %v", n, open, got, want)
			}
			if _, ok := Object([]byte(`{"x":` + string(doc) + `}`)); ok != json.Valid([]byte(`{"x":`+string(doc)+`}`)) {
				t.Fatalf("depth %d+1 %s: Object ok=%v", n, open, ok)
			}
		}
	}
}

// Values are capped sub-slices: appending to one must not overwrite the document.
func TestValuesDoNotShareCapacity(t *testing.T) {
	doc := []byte(`{"a":"x","b":"y"}`)
	ms, ok := Object(doc)
	if !ok || len(ms) != 2 {
		t.Fatal(ms, ok)
	}
	_ = append(ms[0].Value, "ZZZZ"...)
	if string(doc) != `{"a":"x","b":"y"}` {
		t.Fatalf("append through a value changed the document: %s", doc)
	}
	els, _ := Array([]byte(`[1,2]`))
	if cap(els[0]) != len(els[0]) {
		t.Fatal("array element capacity not capped")
	}
}

func TestDepth(t *testing.T) {
	for doc, want := range map[string]int{
		`1`:                     0,
		`{}`:                    1,
		`[[],{"a":[1]}]`:        3,
		`{"a":"[[[{{{"}`:        1, // brackets inside a string do not count
		`{"a":"\"[[","b":[{}]}`: 3, // nor after an escaped quote
		`["\\",[["x"]]]`:        3, // an escaped backslash ends before the quote
		`[[[`:                   3, // no valid document needed
	} {
		if got := Depth([]byte(doc)); got != want {
			t.Errorf("Depth(%s) = %d, want %d", doc, got, want)
		}
	}
}

// FuzzDepth holds Depth to a plain state machine over every byte (the first implementation), on any input,
// valid JSON or not.
func FuzzDepth(f *testing.F) {
	for _, s := range []string{`[[],{"a":[1]}]`, `{"a":"\"[[","b":[{}]}`, `["\\",[["x"]]]`, `"[\`, `[[[`, "[\"\x00\xff[\"]"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		depth, deepest, inString, escaped := 0, 0, false, false
		for _, c := range data {
			switch {
			case inString:
				switch {
				case escaped:
					escaped = false
				case c == '\\':
					escaped = true
				case c == '"':
					inString = false
				}
			case c == '"':
				inString = true
			case c == '{' || c == '[':
				depth++
				deepest = max(deepest, depth)
			case c == '}' || c == ']':
				depth--
			}
		}
		if got := Depth(data); got != deepest {
			t.Fatalf("Depth(%q) = %d, want %d", data, got, deepest)
		}
	})
}

package core

import (
	"encoding/json"
	"testing"
	"unicode/utf8"
)

// StringArgs agrees with encoding/json on valid text (escapes, surrogate pairs) and keeps what is not UTF-8
// invalid, where encoding/json would hand U+FFFD to the validation.
func TestStringArgs(t *testing.T) {
	for _, raw := range []string{`"plain"`, `"tab\tand \"quote\" \\ \/"`, `"\u00e9t\u00E9"`, `"\ud83d\ude00 pair"`, `"\uFFFD is a character"`, `""`} {
		var want string
		if err := json.Unmarshal([]byte(raw), &want); err != nil {
			t.Fatal(err)
		}
		got, e := StringArgs([]byte(`{"a":` + raw + `,"n":3,"o":{"x":"\ud800"}}`))
		if e != nil || got["a"] != want || len(got) != 1 {
			t.Fatalf("%s: %q %v, want %q", raw, got, e, want)
		}
	}
	for _, raw := range []string{"\"\xff\"", "\"a\xe2\x82\"", `"\ud800"`, `"\udc00x"`, `"\ud800\u0041"`} {
		got, e := StringArgs([]byte(`{"a":` + raw + `}`))
		if e != nil || utf8.ValidString(got["a"]) {
			t.Fatalf("%s: %q %v, want invalid UTF-8 kept", raw, got["a"], e)
		}
	}
	if _, e := StringArgs([]byte(`[1]`)); e == nil {
		t.Fatal("an array was read as arguments")
	}
	if got, e := StringArgs(nil); e != nil || len(got) != 0 {
		t.Fatal("no arguments")
	}
}

package x402

import (
	"strings"
	"testing"
)

// appendString copies plain strings itself and must write exactly what marshalNoEscape writes.
func FuzzAppendString(f *testing.F) {
	for _, s := range []string{"", "0xb", "eip155:8453", "a\"b", `back\slash`, "tab\there", "\x00\x1f\x7f", "<&>",
		"é", "\u2028\u2029", "\xff\xfe", "\xed\xa0\x80", strings.Repeat("x", 300)} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		want, err := marshalNoEscape(s)
		if err != nil {
			t.Fatal(err)
		}
		if got := appendString([]byte("x"), s); string(got) != "x"+string(want) {
			t.Fatalf("appendString(%q) = %s, want %s", s, got[1:], want)
		}
	})
}

// objectWriter.value formats ints and booleans itself; they must read as encoding/json writes them.
func TestObjectWriterScalars(t *testing.T) {
	for _, v := range []any{0, -1, 60, int64(-9223372036854775808), int64(9223372036854775807), true, false} {
		want, err := marshalNoEscape(v)
		if err != nil {
			t.Fatal(err)
		}
		w := newObjectWriter()
		w.value("k", v)
		got, err := w.finish()
		if err != nil || string(got) != `{"k":`+string(want)+`}` {
			t.Fatalf("value(%#v) = %s, %v; want %s", v, got, err, want)
		}
	}
}

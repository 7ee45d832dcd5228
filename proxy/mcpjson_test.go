package proxy

import (
	"strings"
	"testing"
)

// checkStrict refuses an object with two names equal ignoring case at any depth, however the names are
// spelled (escapes decoded), and accepts equal names in different objects.
func TestCheckStrictDuplicates(t *testing.T) {
	for doc, dup := range map[string]bool{
		`{"a":1,"b":{"a":2},"c":[{"a":3},{"a":4}]}`: false,
		`{"a":1,"A":2}`:                                      true,
		`{"a":1,"\u0061":2}`:                                 true,
		`{"x":[{"k":{"deep":[{"n":1,"N":2}]}}]}`:             true,
		`{"s":"\"a\":1,\"a\":2","a":1}`:                      false,
		`[{"_meta":{}},{"_meta":{}}]`:                        false,
		`{"params":{"_meta":{"x402/payment":{}},"_meta":1}}`: true,
	} {
		err := checkStrict([]byte(doc))
		if (err != nil) != dup {
			t.Errorf("checkStrict(%s) = %v, want duplicate %v", doc, err, dup)
		}
	}
	if err := checkStrict([]byte(strings.Repeat("[", 33) + strings.Repeat("]", 33))); err == nil {
		t.Error("nesting 33 deep accepted")
	}
}

package base58

import (
	"bytes"
	"math/big"
	"math/rand/v2"
	"strings"
	"testing"
)

// reference decodes s the slow, obvious way (a big integer), as screening and sanctions did before.
func reference(s, chars string) []byte {
	n := new(big.Int)
	for i := 0; i < len(s); i++ {
		n.Mul(n, big.NewInt(58))
		n.Add(n, big.NewInt(int64(strings.IndexByte(chars, s[i]))))
	}
	b := n.Bytes()
	for i := 0; i < len(s) && s[i] == chars[0]; i++ {
		b = append([]byte{0}, b...)
	}
	return b
}

func TestKnownVectors(t *testing.T) {
	for _, c := range []struct{ hex, text string }{
		{"", ""},
		{"61", "2g"},
		{"626262", "a3gV"},
		{"000000287fb4cd", "111233QC4"},
		{"516b6fcd0f", "ABnLTmg"},
	} {
		b := mustHex(t, c.hex)
		if got := Bitcoin.Encode(b); got != c.text {
			t.Errorf("Encode(%s) = %q, want %q", c.hex, got, c.text)
		}
		if c.text == "" {
			continue
		}
		if got, err := Bitcoin.Decode(c.text, 64); err != nil || !bytes.Equal(got, b) {
			t.Errorf("Decode(%q) = %x, %v", c.text, got, err)
		}
	}
	// A Bitcoin P2PKH address and an XRP Ledger account: Base58Check in their alphabets.
	if !Bitcoin.CheckValid("1A1zP1eP5QGefi2DMPTfTL5SLmv7DivfNa") || Bitcoin.CheckValid("1A1zP1eP5QGefi2DMPTfTL5SLmv7DivfNb") {
		t.Error("Bitcoin Base58Check misjudged")
	}
	if !XRP.CheckValid("rHb9CJAWyB4rj91VRWn96DkukG4bwdtyTh") || Bitcoin.CheckValid("rHb9CJAWyB4rj91VRWn96DkukG4bwdtyTh") {
		t.Error("XRP Base58Check misjudged")
	}
}

func TestDecodeBoundsAndRefusals(t *testing.T) {
	if _, err := Bitcoin.Decode("", 32); err == nil {
		t.Error("empty text decoded")
	}
	if _, err := Bitcoin.Decode("0OIl", 32); err == nil {
		t.Error("characters outside the alphabet decoded")
	}
	if _, err := Bitcoin.Decode(strings.Repeat("z", 1000), 32); err == nil || !strings.Contains(err.Error(), "more than 32 bytes") {
		t.Errorf("a long text: %v", err)
	}
}

// Random texts decode as the big-integer reference does, and encode back.
func TestMatchesReference(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for _, a := range []struct {
		al    *Alphabet
		chars string
	}{{Bitcoin, Bitcoin.chars}, {XRP, XRP.chars}} {
		for range 2000 {
			n := 1 + rng.IntN(50)
			b := make([]byte, n)
			for i := range b {
				if rng.IntN(8) == 0 {
					b[i] = a.chars[0]
				} else {
					b[i] = a.chars[rng.IntN(58)]
				}
			}
			s := string(b)
			got, err := a.al.Decode(s, 64)
			if want := reference(s, a.chars); err != nil || !bytes.Equal(got, want) {
				t.Fatalf("Decode(%q) = %x, %v; want %x", s, got, err, want)
			}
			if a.al.Encode(got) != s {
				t.Fatalf("Encode(Decode(%q)) = %q", s, a.al.Encode(got))
			}
		}
	}
}

func mustHex(t *testing.T, h string) []byte {
	t.Helper()
	b := make([]byte, len(h)/2)
	for i := range b {
		v, ok := new(big.Int).SetString(h[2*i:2*i+2], 16)
		if !ok {
			t.Fatal(h)
		}
		b[i] = byte(v.Int64())
	}
	return b
}

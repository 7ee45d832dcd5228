package domain

import (
	"context"
	"fmt"
	"math/rand/v2"
	"testing"
	"unsafe"

	"github.com/payguard/payguard/internal/slotmemo"
)

// The memo answers what Normalize answers, for every input, however the inputs collide in its table:
// names (plain, IDN, URLs, shared suffixes), rejections, and more distinct names than it has slots, each
// asked again after the others have taken slots.
func TestNormalizeMemoIsNormalize(t *testing.T) {
	inputs := []string{"example.com", "https://Shop.Example.com:443/x", "  EXAMPLE.COM.  ", "Bücher.de",
		"https://www.BÜCHER.de/", "例え.jp", "shop.github.io", "shop.example.co.uk:8443/checkout",
		"localhost", "10.0.0.1", "com", "github.io", "foo.local", "", "exa mple.com", "%80.com"}
	r := rand.New(rand.NewPCG(3, 4))
	for i := range 3 * memoSlots {
		inputs = append(inputs, fmt.Sprintf("h%d.shop%d.example.co.uk", i, r.IntN(50)))
	}
	for round := range 3 {
		for _, in := range inputs {
			want, wantErr := Normalize(in)
			got, err := normalizeMemo(in)
			if got != want || (err == nil) != (wantErr == nil) || err != nil && err.Error() != wantErr.Error() {
				t.Fatalf("round %d, %q: memo %+v, %v; Normalize %+v, %v", round, in, got, err, want, wantErr)
			}
		}
	}
}

// A name asked again is answered from the memo, without Normalize; a rejection is not kept.
func TestNormalizeMemoAnswersRepeats(t *testing.T) {
	calls := 0
	normalize = func(s string) (Name, error) { calls++; return Normalize(s) }
	defer func() { normalize = Normalize }()
	memoTable = slotmemo.New[Name](memoSlots)
	for range 5 {
		if n, err := normalizeMemo("api.memo-test.example.com"); err != nil || n.Registrable != "example.com" {
			t.Fatal(n, err)
		}
	}
	if calls != 1 {
		t.Fatalf("Normalize called %d times for one name asked five times; want 1", calls)
	}
	for range 3 {
		if _, err := normalizeMemo("localhost"); err == nil {
			t.Fatal("localhost accepted")
		}
	}
	if calls != 4 {
		t.Fatalf("Normalize called %d times; want 4 (a rejection is asked again each time)", calls-1)
	}
}

// What the memo keeps is its own copy: a caller's buffer that changes after the call (a request body the
// input string was read from) changes nothing it answers later.
func TestNormalizeMemoKeepsItsOwnCopy(t *testing.T) {
	memoTable = slotmemo.New[Name](memoSlots)
	buf := []byte("pay.copy-test.example.org")
	in := unsafe.String(&buf[0], len(buf))
	if _, err := normalizeMemo(in); err != nil {
		t.Fatal(err)
	}
	copy(buf, "xxx.copy-test.example.net")
	if e, ok := memoTable.Get("pay.copy-test.example.org"); !ok || e.Host != "pay.copy-test.example.org" ||
		e.Registrable != "example.org" {
		t.Fatalf("the memo's entry after the caller's buffer changed: %+v, %v", e, ok)
	}
	n, err := normalizeMemo("pay.copy-test.example.org")
	if err != nil || n.Host != "pay.copy-test.example.org" || n.Registrable != "example.org" {
		t.Fatalf("after the caller's buffer changed: %+v, %v", n, err)
	}
}

// Checker.Facts goes through the memo and answers as before (offline: the normalized names only).
func TestFactsThroughTheMemo(t *testing.T) {
	c := New(Options{Offline: true})
	for range 2 {
		f := c.Facts(context.Background(), "https://Shop.Example.co.uk/x")
		if !f.Valid || f.Domain != "shop.example.co.uk" || f.RegistrableDomain != "example.co.uk" {
			t.Fatalf("%+v", f)
		}
	}
}

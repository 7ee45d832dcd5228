package storetest

import (
	"testing"

	"github.com/payguard/payguard/store"
)

// testSellers: a host is a seller once marked, and stays one (marking again changes nothing); other hosts
// are not; bad names are refused. A store that does not implement store.Sellers fails the case: every
// implementation keeps them.
func testSellers(t *testing.T, s store.Store) {
	sl, ok := s.(store.Sellers)
	if !ok {
		t.Fatalf("%T does not implement store.Sellers", s)
	}
	is := func(host string, want bool) {
		t.Helper()
		got, err := sl.IsSeller(ctx, host)
		must(t, "IsSeller", err)
		if got != want {
			t.Fatalf("IsSeller(%q) = %v, want %v", host, got, want)
		}
	}
	is("seller.example", false)
	must(t, "MarkSeller", sl.MarkSeller(ctx, "seller.example"))
	must(t, "MarkSeller again", sl.MarkSeller(ctx, "seller.example"))
	is("seller.example", true)
	is("other.example", false)
	must(t, "MarkSeller", sl.MarkSeller(ctx, "127.0.0.1"))
	is("127.0.0.1", true)
	is("seller.example", true)
	wantErr(t, "MarkSeller without host", sl.MarkSeller(ctx, ""), store.ErrInvalid)
	_, err := sl.IsSeller(ctx, "a\x00b")
	wantErr(t, "IsSeller with a NUL", err, store.ErrInvalid)
}

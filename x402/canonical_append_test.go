package x402

import "testing"

// FuzzAppendCanonicalAddress holds AppendCanonicalAddress to CanonicalAddress, which it replaces where a key
// is hashed (proxy's ticketKey).
func FuzzAppendCanonicalAddress(f *testing.F) {
	for _, s := range []string{"0xf54127927F219FB78C8D1A1fF3D7dc6D7f70C98E", "0XABCDEF0123456789abcdef0123456789ABCDEF01",
		"9xQeWvG816bUx9EPjHmaT23yvVM2ZWbrrpZb9PusVFin", "", "0x", "ÄÖ0xAB", "0xF54127927F219FB78C8D1A1FF3D7DC6D7F70C98"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if got, want := string(AppendCanonicalAddress([]byte("pre"), s)), "pre"+CanonicalAddress(s); got != want {
			t.Fatalf("AppendCanonicalAddress(%q) = %q, want %q", s, got, want)
		}
	})
}

package core

import (
	"strings"
	"testing"
)

// TestFingerprintBodyIsFingerprint: a preflight's input fingerprint is the one a kept result was recorded
// under before fingerprintBody existed (a change would make a paid retry look like another input).
func TestFingerprintBodyIsFingerprint(t *testing.T) {
	for _, body := range []string{"", "{}", `{"challenge":{"x402Version":2}}`, strings.Repeat("é", 5000)} {
		if got, want := fingerprintBody([]byte(body)), fingerprint(body); got != want {
			t.Fatalf("fingerprintBody(%.20q) = %s, want %s", body, got, want)
		}
	}
}

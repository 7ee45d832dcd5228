package holds

import (
	"strings"
	"testing"
)

// Seller-controlled text is printed without control characters: no escape sequence reaches the terminal.
func TestHoldsPrintable(t *testing.T) {
	if got := clip("GET https://x.example/\x1b[2J\r\u009b31m", 80); strings.ContainsAny(got, "\x1b\r\u009b") {
		t.Fatalf("clip kept a control character: %q", got)
	}
	if got := clip(strings.Repeat("a", 100), 10); len([]rune(got)) != 10 {
		t.Fatalf("clip: %q", got)
	}
}

// Amounts show cents, and finer digits are kept: a 0.001 payment is not shown as $0.00.
func TestHoldsDollars(t *testing.T) {
	for in, want := range map[string]string{"0.5": "$0.50", "12": "$12.00", "0.01": "$0.01", "0.001234": "$0.001234", "": "$?"} {
		if got := dollars(in); got != want {
			t.Errorf("dollars(%q) = %q, want %q", in, got, want)
		}
	}
}

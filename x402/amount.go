package x402

import (
	"errors"
	"fmt"
)

// MaxAtomic is the largest atomic amount ParseAtomic accepts: 1e18 units, $1e12 of a 6-decimal stablecoin.
// Anything above it is treated as hostile or broken rather than priced.
const MaxAtomic uint64 = 1_000_000_000_000_000_000

// Errors wrapped by ParseAtomic.
var (
	ErrAmountNegative  = errors.New("x402: amount is negative")
	ErrAmountMalformed = errors.New("x402: amount is not a decimal integer")
	ErrAmountOversized = errors.New("x402: amount is larger than the supported maximum")
)

// ParseAtomic reads an atomic token amount written as a decimal string, as x402 writes `amount`,
// `maxAmountRequired` and an authorization's `value`.
//
// Only the ASCII digits 0-9 are accepted: no sign, no spaces, no fraction or exponent, no hex. Leading
// zeros are accepted ("010" is 10): the value is unambiguous and JavaScript's BigInt, which the SDK
// facilitators compare amounts with, reads it the same way. A leading '-' is ErrAmountNegative, a value
// above MaxAtomic is ErrAmountOversized, anything else malformed is ErrAmountMalformed.
func ParseAtomic(s string) (uint64, error) {
	if s == "" {
		return 0, fmt.Errorf("%w: empty", ErrAmountMalformed)
	}
	if s[0] == '-' {
		return 0, fmt.Errorf("%w: %s", ErrAmountNegative, quoteAmount(s))
	}
	var n uint64
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c < '0' || c > '9' {
			return 0, fmt.Errorf("%w: %s", ErrAmountMalformed, quoteAmount(s))
		}
		// n <= MaxAtomic (1e18) here, so n*10+9 < 2^64: no overflow before the check below.
		n = n*10 + uint64(c-'0')
		if n > MaxAtomic {
			for _, rest := range []byte(s[i+1:]) {
				if rest < '0' || rest > '9' {
					return 0, fmt.Errorf("%w: %s", ErrAmountMalformed, quoteAmount(s))
				}
			}
			return 0, fmt.Errorf("%w: %s exceeds %d", ErrAmountOversized, quoteAmount(s), MaxAtomic)
		}
	}
	return n, nil
}

// quoteAmount quotes an amount for an error message, cut short so a hostile value cannot flood logs.
func quoteAmount(s string) string {
	const max = 40
	if len(s) > max {
		return fmt.Sprintf("%q...", s[:max])
	}
	return fmt.Sprintf("%q", s)
}

package policy

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"

	"gopkg.in/yaml.v3"
)

// USD is an amount of US dollars in micro-dollars (1 USD = 1_000_000). It is parsed from the JSON or YAML
// number text exactly, never through a float, so that a cap decides on the digits the caller wrote.
type USD int64

// MicrosPerUSD is the number of micro-dollars in one dollar.
const MicrosPerUSD = 1_000_000

// maxUSD bounds parsed amounts (one trillion dollars) so that sums of a few of them cannot overflow.
const maxUSD = 1_000_000_000_000 * MicrosPerUSD

// ErrUSDSyntax is returned for text that is not a plain decimal number of dollars.
var ErrUSDSyntax = errors.New("not a decimal number of US dollars")

// ParseUSD parses a decimal number such as "0.25", "1", "1e-2" or "25.000000". More than six decimal places
// are accepted only when the extra digits are zeros; negative amounts and non-numbers are errors.
func ParseUSD(s string) (USD, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return 0, fmt.Errorf("%w: empty", ErrUSDSyntax)
	}
	if s[0] == '-' {
		return 0, fmt.Errorf("%w: %q is negative", ErrUSDSyntax, s)
	}
	if s[0] == '+' {
		s = s[1:]
	}
	mant, exp := s, 0
	if i := strings.IndexAny(s, "eE"); i >= 0 {
		e, err := strconv.Atoi(s[i+1:])
		if err != nil || e > 30 || e < -30 {
			return 0, fmt.Errorf("%w: %q", ErrUSDSyntax, s)
		}
		mant, exp = s[:i], e
	}
	intPart, frac, _ := strings.Cut(mant, ".")
	if intPart == "" && frac == "" || !allDigits(intPart) || !allDigits(frac) {
		return 0, fmt.Errorf("%w: %q", ErrUSDSyntax, s)
	}
	digits := strings.TrimLeft(intPart+frac, "0")
	scale := len(frac) - exp // value = digits * 10^-scale
	// Convert to micro-dollars: digits * 10^(6-scale).
	shift := 6 - scale
	if shift < 0 {
		cut := -shift
		if cut > len(digits) {
			cut = len(digits)
		}
		if strings.Trim(digits[len(digits)-cut:], "0") != "" {
			return 0, fmt.Errorf("%w: %q has more than six decimal places", ErrUSDSyntax, s)
		}
		digits = digits[:len(digits)-cut]
		shift = 0
	}
	if digits == "" {
		return 0, nil
	}
	if len(digits)+shift > 19 {
		return 0, fmt.Errorf("%w: %q is too large", ErrUSDSyntax, s)
	}
	v, err := strconv.ParseInt(digits+strings.Repeat("0", shift), 10, 64)
	if err != nil || v > maxUSD {
		return 0, fmt.Errorf("%w: %q is too large", ErrUSDSyntax, s)
	}
	return USD(v), nil
}

func allDigits(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

// String formats the amount with as few decimals as it needs: "0.25", "1", "0.000001".
func (u USD) String() string {
	if u == math.MinInt64 {
		return u.stringFmt() // -u overflows: as it always printed
	}
	var b [32]byte
	i := len(b)
	neg := u < 0
	if neg {
		u = -u
	}
	if f := int64(u % MicrosPerUSD); f != 0 {
		// Six digits after the point, zero-padded, trailing zeros dropped.
		digits := 6
		for f%10 == 0 {
			f /= 10
			digits--
		}
		for ; digits > 0; digits-- {
			i--
			b[i] = byte('0' + f%10)
			f /= 10
		}
		i--
		b[i] = '.'
	}
	w := int64(u / MicrosPerUSD)
	for {
		i--
		b[i] = byte('0' + w%10)
		if w /= 10; w == 0 {
			break
		}
	}
	if neg {
		i--
		b[i] = '-'
	}
	return string(b[i:])
}

// stringFmt is String as it was written with fmt (TestUSDString holds String to it).
func (u USD) stringFmt() string {
	neg := u < 0
	if neg {
		u = -u
	}
	s := strconv.FormatInt(int64(u/MicrosPerUSD), 10)
	if f := int64(u % MicrosPerUSD); f != 0 {
		s += "." + strings.TrimRight(fmt.Sprintf("%06d", f), "0")
	}
	if neg {
		s = "-" + s
	}
	return s
}

// MarshalJSON writes the amount as a JSON number.
func (u USD) MarshalJSON() ([]byte, error) { return []byte(u.String()), nil }

// UnmarshalJSON reads a JSON number exactly (a string is rejected: amounts are numbers in SPEC §2.4).
func (u *USD) UnmarshalJSON(b []byte) error {
	var n json.Number
	if err := json.Unmarshal(b, &n); err != nil || len(b) == 0 || b[0] == '"' {
		return fmt.Errorf("%w: %s", ErrUSDSyntax, b)
	}
	v, err := ParseUSD(string(n))
	if err != nil {
		return err
	}
	*u = v
	return nil
}

// MarshalYAML writes the amount as a YAML number.
func (u USD) MarshalYAML() (any, error) { return json.Number(u.String()), nil }

// UnmarshalYAML reads a YAML number exactly.
func (u *USD) UnmarshalYAML(value *yaml.Node) error {
	// A *yaml.TypeError lets the decoder go on to the other keys, so every bad value is reported at once.
	if value.Kind != yaml.ScalarNode || value.Tag == "!!str" {
		return &yaml.TypeError{Errors: []string{fmt.Sprintf("line %d: %v: %q", value.Line, ErrUSDSyntax, value.Value)}}
	}
	v, err := ParseUSD(value.Value)
	if err != nil {
		return &yaml.TypeError{Errors: []string{fmt.Sprintf("line %d: %v", value.Line, err)}}
	}
	*u = v
	return nil
}

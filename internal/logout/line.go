package logout

import (
	"math"
	"strconv"
	"time"
	"unicode/utf8"
)

// AppendString appends s quoted as slog's JSON handler quotes a string value: '"', '\\' and control
// bytes escaped (\n, \r, \t short, the others \u00XX), invalid UTF-8 as \ufffd, U+2028 and U+2029 as
// \u2028 and \u2029, everything else (HTML characters included) as it is.
func AppendString(b []byte, s string) []byte {
	b = append(b, '"')
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if c >= 0x20 && c != '"' && c != '\\' {
				i++
				continue
			}
			b = append(b, s[start:i]...)
			switch c {
			case '"', '\\':
				b = append(b, '\\', c)
			case '\n':
				b = append(b, '\\', 'n')
			case '\r':
				b = append(b, '\\', 'r')
			case '\t':
				b = append(b, '\\', 't')
			default:
				b = append(b, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xF])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			b = append(append(b, s[start:i]...), `\ufffd`...)
		case r == '\u2028' || r == '\u2029':
			b = append(append(b, s[start:i]...), '\\', 'u', '2', '0', '2', hexDigits[r&0xF])
		default:
			i += size
			continue
		}
		i += size
		start = i
	}
	b = append(b, s[start:]...)
	return append(b, '"')
}

const hexDigits = "0123456789abcdef"

// LineWriter is what a Handler offers (and a handler wrapping one may offer) when it is slog's JSON
// handler without attributes, groups, ReplaceAttr or AddSource writing into one ordered stream: WriteLine
// adds a whole line, encoded as that handler would encode its record, to the same stream. The proxy's
// decision line and serve's request line are written by hand through it (AppendHead and the Append…Attr
// functions below): the same bytes without slog's per-attribute work (issue 36).
type LineWriter interface {
	WriteLine(line []byte) error
}

// AppendHead appends the head of an INFO line as slog's JSON handler writes it at time now:
// {"time":…,"level":"INFO","msg":msg. ok is false, and b is returned as it was, for a time slog writes
// otherwise (a year outside 0–9999): such a line is left to slog.
func AppendHead(b []byte, now time.Time, msg string) ([]byte, bool) {
	now = now.Round(0)
	if y := now.Year(); y < 0 || y >= 10000 {
		return b, false
	}
	b = append(b, `{"time":"`...)
	b = now.AppendFormat(b, time.RFC3339Nano)
	b = append(b, `","level":"INFO","msg":`...)
	return AppendString(b, msg), true
}

// AppendKey appends an attribute's key after the ones before it: ,"key": (the key quoted as a string).
func AppendKey(b []byte, key string) []byte {
	return append(AppendString(append(b, ','), key), ':')
}

// AppendStringAttr appends the attribute key with a string value, as slog.String writes it.
func AppendStringAttr(b []byte, key, v string) []byte {
	return AppendString(AppendKey(b, key), v)
}

// AppendIntAttr appends the attribute key with an integer value, as slog.Int and slog.Int64 write it.
func AppendIntAttr(b []byte, key string, v int64) []byte {
	return strconv.AppendInt(AppendKey(b, key), v, 10)
}

// AppendFloatAttr appends the attribute key with a float64 value as slog.Float64 writes it (encoding/json's
// format) where that format has no exponent: 0, or an absolute value from 1e-6 up to 1e21. ok is false, and
// b is returned as it was, for any other value (NaN and the infinities included): such a line is left to
// slog.
func AppendFloatAttr(b []byte, key string, v float64) ([]byte, bool) {
	if a := math.Abs(v); a != 0 && !(a >= 1e-6 && a < 1e21) {
		return b, false
	}
	return strconv.AppendFloat(AppendKey(b, key), v, 'f', -1, 64), true
}

// EndLine closes a line: the closing brace and the newline.
func EndLine(b []byte) []byte { return append(b, "}\n"...) }

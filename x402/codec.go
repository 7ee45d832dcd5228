package x402

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"strings"
)

// DecodeHeaderJSON decodes an x402 header value (base64 of a JSON document) into v.
//
// It accepts exactly what the SDK decoders accept: the standard alphabet checked against
// /^[A-Za-z0-9+/]*={0,2}$/ and then decoded like atob, so padding may be omitted. base64url characters,
// whitespace and anything else are errors. The value is bounded by MaxHeaderBytes and the decoded
// document by the limits of this package (size, UTF-8, depth).
func DecodeHeaderJSON(value string, v any) error {
	doc, err := decodeHeader(value)
	if err != nil {
		return err
	}
	if err := json.Unmarshal(doc, v); err != nil {
		return malformed("header JSON: %v", err)
	}
	return nil
}

// EncodeHeaderJSON encodes v as an x402 header value: JSON (without HTML escaping, as JSON.stringify)
// in standard base64 with padding.
func EncodeHeaderJSON(v any) (string, error) {
	b, err := marshalNoEscape(v)
	if err != nil {
		return "", fmt.Errorf("x402: encode header: %w", err)
	}
	return base64.StdEncoding.EncodeToString(b), nil
}

// stdAlphabet marks the bytes of the standard base64 alphabet, A-Z a-z 0-9 + / (one table load per byte of
// every header value: issue 36's profile had the comparisons at a seventh of decoding a challenge).
var stdAlphabet = func() (t [256]bool) {
	for _, c := range []byte("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/") {
		t[c] = true
	}
	return t
}()

// decodeHeader turns a header value into the JSON document it carries, checked against the limits.
func decodeHeader(value string) ([]byte, error) {
	if value == "" {
		return nil, malformed("empty header value")
	}
	if len(value) > MaxHeaderBytes {
		return nil, malformed("header value is %d bytes, larger than the %d byte limit", len(value), MaxHeaderBytes)
	}
	body, pad := value, 0
	for pad < 2 && len(body) > 0 && body[len(body)-1] == '=' {
		body, pad = body[:len(body)-1], pad+1
	}
	// With or without padding, the data length decides; atob rejects a remainder of 1 and a padded value
	// whose padding does not complete a quantum.
	badLength := len(body)%4 == 1 || (pad > 0 && (len(body)+pad)%4 != 0)
	var doc []byte
	// encoding/base64 refuses every byte outside the alphabet except '\r' and '\n', which it skips: with
	// neither in body (two vectorized searches), a value it decodes is of the standard alphabet, and the
	// byte-by-byte check below is only for the error message of a value that is not (issue 36).
	if !badLength && strings.IndexByte(body, '\r') < 0 && strings.IndexByte(body, '\n') < 0 {
		if d, err := base64.RawStdEncoding.DecodeString(body); err == nil {
			doc = d
		}
	}
	if doc == nil {
		for i := 0; i < len(body); i++ {
			if c := body[i]; !stdAlphabet[c] {
				return nil, malformed("header value is not standard base64 (byte %q at offset %d)", c, i)
			}
		}
		if badLength {
			return nil, malformed("header value has an invalid base64 length")
		}
		d, err := base64.RawStdEncoding.DecodeString(body)
		if err != nil {
			return nil, malformed("header value is not standard base64: %v", err)
		}
		doc = d
	}
	if err := checkDocument(doc); err != nil {
		return nil, err
	}
	return doc, nil
}

package core

import (
	"net/http"
	"strconv"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/payguard/payguard/x402/jsonscan"
)

// StringArgs reads the string members of a JSON object of arguments (an MCP tools/call's params.arguments)
// as the caller sent them, for the operations' own validation (Check, Endpoint) to judge. encoding/json turns
// an invalid UTF-8 byte and an unpaired surrogate escape ("\ud800") into U+FFFD, a valid character: the
// operation would then be sold for text the caller never sent, where HTTP's query refuses the same bytes.
// Here both stay invalid UTF-8 (a raw byte as it came, an unpaired surrogate as its three-byte encoding), so
// the one check in the operation refuses them before payment on every channel. Members that are not strings
// are left out (the tool's input schema has judged their types); a repeated name keeps the last, as
// encoding/json. raw that is empty or null is no arguments.
func StringArgs(raw []byte) (map[string]string, *Error) {
	out := map[string]string{}
	if len(raw) == 0 || string(raw) == "null" {
		return out, nil
	}
	members, ok := jsonscan.Object(raw)
	if !ok {
		return nil, Errorf(http.StatusBadRequest, CodeInvalidParameter, "the arguments are not a JSON object")
	}
	for _, m := range members {
		if len(m.Value) == 0 || m.Value[0] != '"' {
			continue
		}
		s, ok := stringAsSent(m.Value)
		if !ok {
			return nil, Errorf(http.StatusBadRequest, CodeInvalidParameter, "argument "+strconv.Quote(m.Name)+" is not a JSON string")
		}
		out[m.Name] = s
	}
	return out, nil
}

// stringAsSent decodes one JSON string token (quotes included), keeping bytes that are not UTF-8 and encoding
// an unpaired surrogate escape as the (invalid) UTF-8 form of its code point.
func stringAsSent(tok []byte) (string, bool) {
	if len(tok) < 2 || tok[0] != '"' || tok[len(tok)-1] != '"' {
		return "", false
	}
	body := tok[1 : len(tok)-1]
	out := make([]byte, 0, len(body))
	for i := 0; i < len(body); {
		c := body[i]
		if c != '\\' {
			out = append(out, c)
			i++
			continue
		}
		if i+1 >= len(body) {
			return "", false
		}
		esc := body[i+1]
		i += 2
		switch esc {
		case '"', '\\', '/':
			out = append(out, esc)
		case 'b':
			out = append(out, '\b')
		case 'f':
			out = append(out, '\f')
		case 'n':
			out = append(out, '\n')
		case 'r':
			out = append(out, '\r')
		case 't':
			out = append(out, '\t')
		case 'u':
			r, ok := hex4(body, i)
			if !ok {
				return "", false
			}
			i += 4
			if utf16.IsSurrogate(r) && r < 0xDC00 && i+6 <= len(body) && body[i] == '\\' && body[i+1] == 'u' {
				if lo, ok := hex4(body, i+2); ok && lo >= 0xDC00 && lo <= 0xDFFF {
					out = utf8.AppendRune(out, utf16.DecodeRune(r, lo))
					i += 6
					continue
				}
			}
			if utf16.IsSurrogate(r) {
				// utf8.AppendRune would write U+FFFD; the raw three-byte form stays invalid UTF-8.
				out = append(out, 0xE0|byte(r>>12), 0x80|byte(r>>6)&0x3F, 0x80|byte(r)&0x3F)
				continue
			}
			out = utf8.AppendRune(out, r)
		default:
			return "", false
		}
	}
	return string(out), true
}

func hex4(b []byte, i int) (rune, bool) {
	if i+4 > len(b) {
		return 0, false
	}
	n, err := strconv.ParseUint(string(b[i:i+4]), 16, 16)
	return rune(n), err == nil
}

package x402

import (
	"encoding/base64"
	"encoding/json"
	"errors"
	"reflect"
	"strconv"
	"testing"
)

// The seed corpora live in testdata/fuzz/<FuzzName>/ (written from the fixtures by
// `go run ./x402/testdata/gencorpus`); the f.Add seeds below cover the edges by hand.
//
// Every fuzzer checks the same two things: no panic, and when decoding succeeds,
// decode(encode(decode(x))) == decode(x) and the encoding is the same JSON value as the decoded document.

func FuzzParsePaymentRequired(f *testing.F) {
	for _, s := range []string{
		`{"x402Version":1,"error":"e","accepts":[{"scheme":"exact","network":"base","maxAmountRequired":"1","payTo":"0xb","maxTimeoutSeconds":60,"asset":"0xc","extra":{"name":"USD Coin"}}]}`,
		`{"x402Version":2,"resource":{"url":"http://x","tags":["a"]},"accepts":[{"amount":"1","extra":null,"z":{ "k" : [1, 2.5e3] }}],"extensions":{"b":{},"a":1}}`,
		`{"x402Version":2,"accepts":[]}`,
		`{"x402Version":2,"accepts":[],"accepts":[{}]}`,
		`{"x402Version":3,"accepts":[]}`,
		`{"x402Version":2,"accepts":[{"amount":"\u0031","payTo":"\ud800"}]}`,
		`[]`, `null`, ``, `{`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		p, err := ParsePaymentRequired(body)
		if err != nil {
			if !errors.Is(err, ErrMalformed) {
				t.Fatalf("error %v does not wrap ErrMalformed", err)
			}
			return
		}
		enc, err := p.MarshalJSON()
		if err != nil {
			t.Fatalf("encode a decoded challenge: %v", err)
		}
		again, err := ParsePaymentRequired(enc)
		if err != nil {
			t.Fatalf("re-decode %s: %v", enc, err)
		}
		if !reflect.DeepEqual(p, again) {
			t.Fatalf("decode(encode(decode(x))) != decode(x)\n%s\n%#v\n%#v", enc, p, again)
		}
		for i := range p.Accepts {
			n := p.Narrowed(i)
			if n == nil || len(n.Accepts) != 1 || !p.Accepts[i].Equal(n.Accepts[0]) {
				t.Fatalf("Narrowed(%d) = %#v", i, n)
			}
		}
	})
}

func FuzzDecodePaymentRequiredHeader(f *testing.F) {
	for _, s := range []string{
		`{"x402Version":2,"error":"Payment required","resource":{"url":"http://127.0.0.1:4021/weather"},"accepts":[{"scheme":"exact","network":"eip155:84532","amount":"10000","asset":"0x036CbD53842c5426634e7929541eC2318f3dCF7e","payTo":"0xf54127927F219FB78C8D1A1fF3D7dc6D7f70C98E","maxTimeoutSeconds":60,"extra":{"name":"USDC","version":"2"}}]}`,
		`{"x402Version":1,"accepts":[]}`,
	} {
		f.Add(base64.StdEncoding.EncodeToString([]byte(s)))
		f.Add(base64.RawStdEncoding.EncodeToString([]byte(s)))
		f.Add(base64.URLEncoding.EncodeToString([]byte(s)))
	}
	f.Add("")
	f.Add("====")
	f.Add("e30=")
	f.Add("e30")
	f.Add("e30==")
	f.Add(`{"x402Version":2,"accepts":[{"amount":"1","extra":{"name":"USDC"}}],"extensions":{}}`) // a JSON seed
	f.Fuzz(func(t *testing.T, value string) {
		// The input is tried as a header value and, so that the JSON structure gets explored too, as the
		// document a header carries.
		checkRequiredHeader(t, value)
		checkRequiredHeader(t, base64.StdEncoding.EncodeToString([]byte(value)))
	})
}

func checkRequiredHeader(t *testing.T, value string) {
	p, err := DecodePaymentRequiredHeader(value)
	if err != nil {
		if !errors.Is(err, ErrMalformed) {
			t.Fatalf("error %v does not wrap ErrMalformed", err)
		}
		return
	}
	h, err := EncodeHeaderJSON(p)
	if err != nil {
		t.Fatalf("encode a decoded challenge: %v", err)
	}
	again, err := DecodePaymentRequiredHeader(h)
	if err != nil {
		t.Fatalf("re-decode: %v", err)
	}
	if !reflect.DeepEqual(p, again) {
		t.Fatalf("decode(encode(decode(x))) != decode(x)\n%#v\n%#v", p, again)
	}
	var original json.RawMessage
	if err := DecodeHeaderJSON(value, &original); err != nil {
		t.Fatalf("DecodeHeaderJSON refuses what DecodePaymentRequiredHeader took: %v", err)
	}
}

func FuzzDecodePaymentPayloadHeader(f *testing.F) {
	const auth = `{"signature":"0xsig","authorization":{"from":"0xa","to":"0xb","value":"10","validAfter":"0","validBefore":"9","nonce":"0x1"}}`
	for _, s := range []string{
		`{"x402Version":1,"scheme":"exact","network":"base","payload":` + auth + `}`,
		`{"x402Version":2,"payload":` + auth + `,"resource":{"url":"u"},"accepted":{"amount":"10","extra":{}},"extensions":{"x":{"info":1}}}`,
		`{"x402Version":2,"payload":{"signature":"s","permit2Authorization":{"deadline":1e400}},"accepted":{}}`,
		`{"x402Version":2,"payload":` + uptoPayload + `,"accepted":{"scheme":"upto","network":"eip155:84532","amount":"5000000"}}`,
		`{"x402Version":2,"payload":{"transaction":"AAAA"},"accepted":{"scheme":"exact","network":"solana:5eykt4UsFv8P8NJdTREpY1vzqKqZKvdp"}}`,
	} {
		f.Add(base64.StdEncoding.EncodeToString([]byte(s)))
	}
	f.Add("")
	f.Add(`{"x402Version":2,"payload":` + auth + `,"accepted":{"amount":"1"}}`) // a JSON seed
	f.Fuzz(func(t *testing.T, value string) {
		checkPayloadHeader(t, value)
		checkPayloadHeader(t, base64.StdEncoding.EncodeToString([]byte(value)))
	})
}

func checkPayloadHeader(t *testing.T, value string) {
	p, err := DecodePaymentPayloadHeader(value)
	if err != nil {
		if !errors.Is(err, ErrMalformed) {
			t.Fatalf("error %v does not wrap ErrMalformed", err)
		}
		return
	}
	_, _ = p.ExactEVM() // must not panic, whatever the payload
	h, err := EncodeHeaderJSON(p)
	if err != nil {
		t.Fatalf("encode a decoded payload: %v", err)
	}
	again, err := DecodePaymentPayloadHeader(h)
	if err != nil {
		t.Fatalf("re-decode: %v", err)
	}
	if !reflect.DeepEqual(p, again) {
		t.Fatalf("decode(encode(decode(x))) != decode(x)\n%#v\n%#v", p, again)
	}
	if p.Accepted != nil && !p.Accepted.Equal(*again.Accepted) {
		t.Fatalf("accepted no longer equal to itself after a round trip")
	}
}

func FuzzDecodeSettleResponseHeader(f *testing.F) {
	for _, s := range []string{
		`{"success":true,"transaction":"0xt","network":"base-sepolia","payer":"0xp"}`,
		`{"success":false,"errorReason":"invalid_exact_evm_nonce_already_used","payer":"0xp","transaction":"","network":"eip155:84532"}`,
		`{"success":true,"payer":"0xp","transaction":"0xt","network":"eip155:8453","amount":"10","extensions":{"offer-receipt":{"info":{}}},"extra":{"k":1}}`,
		`{"success":1}`,
	} {
		f.Add(base64.StdEncoding.EncodeToString([]byte(s)))
	}
	f.Add(`{"success":false,"errorReason":"x","transaction":"","network":"base"}`) // a JSON seed
	f.Fuzz(func(t *testing.T, value string) {
		checkSettleHeader(t, value)
		checkSettleHeader(t, base64.StdEncoding.EncodeToString([]byte(value)))
	})
}

func checkSettleHeader(t *testing.T, value string) {
	s, err := DecodeSettleResponseHeader(value)
	if err != nil {
		if !errors.Is(err, ErrMalformed) {
			t.Fatalf("error %v does not wrap ErrMalformed", err)
		}
		return
	}
	h, err := EncodeHeaderJSON(s)
	if err != nil {
		t.Fatalf("encode a decoded settlement: %v", err)
	}
	again, err := DecodeSettleResponseHeader(h)
	if err != nil {
		t.Fatalf("re-decode: %v", err)
	}
	if !reflect.DeepEqual(s, again) {
		t.Fatalf("decode(encode(decode(x))) != decode(x)\n%#v\n%#v", s, again)
	}
}

func FuzzParseAtomic(f *testing.F) {
	for _, s := range []string{"0", "10000", "0010", "-1", "+1", " 1", "1e6", "1.0", "0x10",
		"1000000000000000000", "1000000000000000001", "18446744073709551616", "١", ""} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		n, err := ParseAtomic(s)
		if err != nil {
			if n != 0 {
				t.Fatalf("ParseAtomic(%q) = %d with error %v", s, n, err)
			}
			if !errors.Is(err, ErrAmountNegative) && !errors.Is(err, ErrAmountMalformed) && !errors.Is(err, ErrAmountOversized) {
				t.Fatalf("ParseAtomic(%q): unclassified error %v", s, err)
			}
			return
		}
		if n > MaxAtomic {
			t.Fatalf("ParseAtomic(%q) = %d above MaxAtomic", s, n)
		}
		// Whatever was accepted is the decimal value, give or take leading zeros.
		if again, err := ParseAtomic(strconv.FormatUint(n, 10)); err != nil || again != n {
			t.Fatalf("ParseAtomic(%q) = %d, but its decimal form reads as %d, %v", s, n, again, err)
		}
		if u, err := strconv.ParseUint(s, 10, 64); err != nil || u != n {
			t.Fatalf("ParseAtomic(%q) = %d disagrees with strconv (%d, %v)", s, n, u, err)
		}
	})
}

package x402

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"
)

func TestDecodeHeaderJSONBase64(t *testing.T) {
	doc := `{"x402Version":2,"accepts":[],"error":"???~~~"}` // encodes with '+' or '/' somewhere
	std := base64.StdEncoding.EncodeToString([]byte(doc))
	raw := base64.RawStdEncoding.EncodeToString([]byte(doc))
	url := base64.URLEncoding.EncodeToString([]byte(doc))
	if !strings.ContainsAny(std, "+/") || std == url {
		t.Fatalf("test document should need '+' or '/' in base64: %s", std)
	}
	ok := map[string]string{
		"standard padded":   std,
		"standard unpadded": raw, // atob accepts it, so the SDK does
	}
	for name, v := range ok {
		var got json.RawMessage
		if err := DecodeHeaderJSON(v, &got); err != nil || string(got) != doc {
			t.Errorf("%s: got %s, %v", name, got, err)
		}
	}
	bad := map[string]string{
		"empty":              "",
		"base64url":          url,
		"base64url unpadded": strings.TrimRight(url, "="),
		"leading space":      " " + std,
		"trailing newline":   std + "\n",
		"inner newline":      std[:8] + "\n" + std[8:],
		"three pads":         raw + "===",
		"pad in middle":      std[:4] + "=" + std[4:],
		"bad length":         std[:len(std)-2] + "=", // padding that does not complete a quantum
		"length 4n+1":        "eyJhIjoxfQa",
		"not base64":         "{\"x402Version\":2}",
		"not json":           base64.StdEncoding.EncodeToString([]byte("hello")),
		"json trailing":      base64.StdEncoding.EncodeToString([]byte(`{} {}`)),
		"invalid utf8":       base64.StdEncoding.EncodeToString([]byte("{\"a\":\"\xc3\x28\"}")),
		"too deep":           base64.StdEncoding.EncodeToString([]byte(strings.Repeat("[", 33) + strings.Repeat("]", 33))),
		"too long value":     strings.Repeat("A", MaxHeaderBytes+4),
		"decoded too large":  base64.StdEncoding.EncodeToString([]byte(`"` + strings.Repeat("a", MaxBodyBytes) + `"`)),
	}
	for name, v := range bad {
		var got any
		err := DecodeHeaderJSON(v, &got)
		if err == nil {
			t.Errorf("%s: decoded %v, want an error", name, got)
		} else if !errors.Is(err, ErrMalformed) {
			t.Errorf("%s: error %v does not wrap ErrMalformed", name, err)
		}
	}
}

func TestEncodeHeaderJSON(t *testing.T) {
	v := map[string]string{"url": "http://x/?a=1&b=<2>"}
	h, err := EncodeHeaderJSON(v)
	if err != nil {
		t.Fatal(err)
	}
	b, err := base64.StdEncoding.Strict().DecodeString(h)
	if err != nil {
		t.Fatalf("not standard padded base64: %v", err)
	}
	if string(b) != `{"url":"http://x/?a=1&b=<2>"}` {
		t.Errorf("got %s (HTML must not be escaped, as JSON.stringify)", b)
	}
	if len(h)%4 != 0 {
		t.Errorf("value %q is not padded", h)
	}
	if _, err := EncodeHeaderJSON(func() {}); err == nil {
		t.Error("encoding a func should fail")
	}
}

func TestDecodePaymentPayloadHeader(t *testing.T) {
	enc := func(s string) string { return base64.StdEncoding.EncodeToString([]byte(s)) }
	const auth = `{"signature":"0xsig","authorization":{"from":"0xa","to":"0xb","value":"10","validAfter":"0","validBefore":"9","nonce":"0x1"}}`
	v1 := `{"x402Version":1,"scheme":"exact","network":"base","payload":` + auth + `}`
	v2 := `{"x402Version":2,"payload":` + auth + `,"resource":{"url":"http://x","serviceName":"s"},"accepted":{"scheme":"exact","network":"eip155:8453","amount":"10","asset":"0xc","payTo":"0xb","maxTimeoutSeconds":60,"extra":{"name":"USD Coin","version":"2"}},"futureMember":[1]}`

	p, err := DecodePaymentPayloadHeader(enc(v1))
	if err != nil || p.X402Version != V1 || p.Scheme != "exact" || p.Network != "base" || p.Accepted != nil {
		t.Fatalf("v1: %+v %v", p, err)
	}
	p, err = DecodePaymentPayloadHeader(enc(v2))
	if err != nil {
		t.Fatal(err)
	}
	if p.Accepted == nil || p.Accepted.Amount != "10" || p.Accepted.Version != V2 || p.Resource.URL != "http://x" ||
		string(p.Resource.Unknown["serviceName"]) != `"s"` || string(p.Unknown["futureMember"]) != `[1]` {
		t.Errorf("v2: %+v", p)
	}
	// decode(encode(decode(x))) == decode(x), and the encoding is the same JSON value.
	h, err := EncodeHeaderJSON(p)
	if err != nil {
		t.Fatal(err)
	}
	again, err := DecodePaymentPayloadHeader(h)
	if err != nil {
		t.Fatal(err)
	}
	if !jsonOf(t, again).equal(jsonOf(t, p)) || !JSONEqual([]byte(v2), jsonOf(t, p)) {
		t.Errorf("round trip changed the payload:\n%s\n%s", jsonOf(t, again), v2)
	}

	if pj, err := ParsePaymentPayload([]byte(v2)); err != nil || !reflect.DeepEqual(pj, p) {
		t.Errorf("ParsePaymentPayload disagrees with the header decoder: %+v %v", pj, err)
	}

	bad := map[string]string{
		"no version":        `{"scheme":"exact","network":"base","payload":{}}`,
		"version 3":         `{"x402Version":3,"payload":{}}`,
		"v1 no scheme":      `{"x402Version":1,"network":"base","payload":{}}`,
		"v1 no network":     `{"x402Version":1,"scheme":"exact","payload":{}}`,
		"v2 no accepted":    `{"x402Version":2,"payload":{}}`,
		"no payload":        `{"x402Version":1,"scheme":"exact","network":"base"}`,
		"payload string":    `{"x402Version":1,"scheme":"exact","network":"base","payload":"x"}`,
		"payload null":      `{"x402Version":1,"scheme":"exact","network":"base","payload":null}`,
		"accepted array":    `{"x402Version":2,"accepted":[],"payload":{}}`,
		"accepted amount 1": `{"x402Version":2,"accepted":{"amount":1},"payload":{}}`,
		"not an object":     `"x"`,
	}
	for name, doc := range bad {
		if p, err := DecodePaymentPayloadHeader(enc(doc)); err == nil {
			t.Errorf("%s: got %+v, want an error", name, p)
		}
		if p, err := ParsePaymentPayload([]byte(doc)); err == nil {
			t.Errorf("%s: ParsePaymentPayload got %+v, want an error", name, p)
		}
	}
}

type jsonBytes []byte

func (a jsonBytes) equal(b jsonBytes) bool { return JSONEqual(a, b) }

func jsonOf(t *testing.T, v any) jsonBytes {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestExactEVM(t *testing.T) {
	p := func(payload string) *PaymentPayload {
		return &PaymentPayload{X402Version: 2, Payload: json.RawMessage(payload)}
	}
	const good = `{"signature":"0xsig","authorization":{"from":"0xa","to":"0xb","value":"10","validAfter":"0","validBefore":"9","nonce":"0x1"}}`
	e, err := p(good).ExactEVM()
	if err != nil || e.Signature != "0xsig" || e.Authorization.To != "0xb" || e.Authorization.Value != "10" {
		t.Fatalf("%+v %v", e, err)
	}
	permit := `{"signature":"0xsig","permit2Authorization":{"permitted":{"token":"0xc","amount":"10"},"from":"0xa","spender":"0xs","nonce":"7","deadline":"123456789012345678901","witness":{"to":"0xb","validAfter":"0"}}}`
	e, err = p(permit).ExactEVM()
	if err != nil || e.Permit2 == nil || e.Authorization != nil {
		t.Fatalf("permit2: %+v %v", e, err)
	}
	if e.Permit2.Deadline != "123456789012345678901" || e.Permit2.Witness.To != "0xb" || e.Permit2.Permitted.Amount != "10" {
		t.Errorf("permit2 fields must stay exact, got %+v", e.Permit2)
	}

	bad := map[string]string{
		// JavaScript reads "to"; encoding/json would have let "To" overwrite it. Exact names only.
		"shadowing To":     `{"signature":"0xsig","authorization":{"from":"0xa","To":"0xevil","value":"10","validAfter":"0","validBefore":"9","nonce":"0x1"}}`,
		"missing to":       `{"signature":"0xsig","authorization":{"from":"0xa","value":"10","validAfter":"0","validBefore":"9","nonce":"0x1"}}`,
		"value number":     `{"signature":"0xsig","authorization":{"from":"0xa","to":"0xb","value":10,"validAfter":"0","validBefore":"9","nonce":"0x1"}}`,
		"no signature":     `{"authorization":{"from":"0xa","to":"0xb","value":"10","validAfter":"0","validBefore":"9","nonce":"0x1"}}`,
		"no authorization": `{"signature":"0xsig"}`,
		"svm":              `{"transaction":"AAAA"}`,
		"not an object":    `[]`,
		"auth array":       `{"signature":"0xsig","authorization":[]}`,
	}
	for name, payload := range bad {
		e, err := p(payload).ExactEVM()
		if err == nil {
			t.Errorf("%s: got %+v, want an error", name, e)
		} else if !errors.Is(err, ErrNotExactEVM) {
			t.Errorf("%s: %v does not wrap ErrNotExactEVM", name, err)
		}
	}
	// With both "to" and "To", the value JavaScript reads is the one we read.
	both := `{"signature":"0xsig","authorization":{"from":"0xa","to":"0xb","To":"0xevil","value":"10","validAfter":"0","validBefore":"9","nonce":"0x1"}}`
	if e, err := p(both).ExactEVM(); err != nil || e.Authorization.To != "0xb" {
		t.Errorf("to/To: %+v %v", e, err)
	}
	var nilPayload *PaymentPayload
	if _, err := nilPayload.ExactEVM(); !errors.Is(err, ErrNotExactEVM) {
		t.Errorf("nil payload: %v", err)
	}
}

// TestExactMemberNames: encoding/json matches member names case-insensitively; this package must not,
// or `"PayTo"` would be read as payTo while the JavaScript seller reads `"payTo"`.
func TestExactMemberNames(t *testing.T) {
	p, err := ParsePaymentRequired([]byte(`{"x402Version":2,"accepts":[{"payTo":"0xgood","PayTo":"0xevil","AMOUNT":"1","amount":"5"}]}`))
	if err != nil {
		t.Fatal(err)
	}
	r := p.Accepts[0]
	if r.PayTo != "0xgood" || r.Amount != "5" || string(r.Unknown["PayTo"]) != `"0xevil"` {
		t.Errorf("got %+v", r)
	}
	// A lone surrogate escape would be read as U+FFFD by Go but kept by JavaScript: refused.
	for _, doc := range []string{
		`{"x402Version":2,"accepts":[{"payTo":"0xab\ud800"}]}`,
		`{"x402Version":2,"accepts":[{"payTo":"0xab\ufffd"}]}`,
		"{\"x402Version\":2,\"accepts\":[{\"payTo\":\"0xab\uFFFD\"}]}",
		`{"x402Version":2,"accepts":[{"\ud800":1,"\ud801":2}]}`,
	} {
		if p, err := ParsePaymentRequired([]byte(doc)); err == nil {
			t.Errorf("%s: got %+v, want an error", doc, p)
		}
	}
	// A valid surrogate pair is an ordinary character.
	if p, err := ParsePaymentRequired([]byte(`{"x402Version":2,"error":"\ud83d\ude00","accepts":[]}`)); err != nil || p.Error != "😀" {
		t.Errorf("surrogate pair: %+v %v", p, err)
	}
	// A repeated member keeps its last value, as JSON.parse does.
	p, err = ParsePaymentRequired([]byte(`{"x402Version":2,"accepts":[{"payTo":"0xfirst","payTo":"0xlast"}]}`))
	if err != nil || p.Accepts[0].PayTo != "0xlast" {
		t.Errorf("duplicate payTo: %+v %v", p, err)
	}
}

func TestSettleResponse(t *testing.T) {
	enc := func(s string) string { return base64.StdEncoding.EncodeToString([]byte(s)) }
	cases := []string{
		`{"success":true,"transaction":"0xt","network":"base-sepolia","payer":"0xp"}`,
		`{"success":false,"errorReason":"invalid_exact_evm_nonce_already_used","payer":"0xp","transaction":"","network":"eip155:84532"}`,
		`{"success":true,"payer":"0xp","transaction":"0xt","network":"eip155:8453","amount":"10","extensions":{"offer-receipt":{"info":{}}},"extra":{"k":1}}`,
	}
	for _, doc := range cases {
		s, err := DecodeSettleResponseHeader(enc(doc))
		if err != nil {
			t.Errorf("%s: %v", doc, err)
			continue
		}
		h, err := EncodeHeaderJSON(s)
		if err != nil {
			t.Fatal(err)
		}
		if h != enc(doc) {
			back, _ := base64.StdEncoding.DecodeString(h)
			t.Errorf("re-encoded\n got %s\nwant %s", back, doc)
		}
	}
	bad := []string{`{}`, `{"success":"true"}`, `{"success":null}`, `{"success":true,"transaction":1}`, `[]`}
	for _, doc := range bad {
		if s, err := DecodeSettleResponseHeader(enc(doc)); err == nil {
			t.Errorf("%s: got %+v, want an error", doc, s)
		}
	}
}

func TestVerifyResponse(t *testing.T) {
	var v VerifyResponse
	doc := `{"isValid":false,"invalidReason":"insufficient_funds","invalidMessage":"m","payer":"0xp","extra":1}`
	if err := json.Unmarshal([]byte(doc), &v); err != nil {
		t.Fatal(err)
	}
	if v.IsValid || v.InvalidReason != "insufficient_funds" || string(v.Unknown["extra"]) != "1" {
		t.Errorf("%+v", v)
	}
	if b, _ := json.Marshal(v); string(b) != doc {
		t.Errorf("got %s", b)
	}
	if err := json.Unmarshal([]byte(`{"payer":"0xp"}`), &v); err == nil {
		t.Error("isValid is required")
	}
}

func TestFacilitatorRequestV1Amount(t *testing.T) {
	doc := `{"x402Version":1,"paymentPayload":{"x402Version":1,"scheme":"exact","network":"base","payload":{}},"paymentRequirements":{"scheme":"exact","network":"base","maxAmountRequired":"7","description":"","mimeType":"","payTo":"0xb","maxTimeoutSeconds":60,"asset":"0xc"}}`
	var f FacilitatorRequest
	if err := json.Unmarshal([]byte(doc), &f); err != nil {
		t.Fatal(err)
	}
	if f.PaymentRequirements.Amount != "7" || f.PaymentRequirements.Version != V1 {
		t.Errorf("%+v", f.PaymentRequirements)
	}
	if b, _ := json.Marshal(f); string(b) != doc {
		t.Errorf("got  %s\nwant %s", b, doc)
	}
}

// TestLoneRequirementVersion: a requirement read on its own infers its version from the amount's name.
func TestLoneRequirementVersion(t *testing.T) {
	for _, c := range []struct {
		doc     string
		version int
		amount  string
	}{
		{`{"maxAmountRequired":"1"}`, V1, "1"},
		{`{"amount":"2"}`, V2, "2"},
		{`{"amount":"2","maxAmountRequired":"1"}`, V2, "2"},
		{`{}`, V2, ""},
	} {
		var r Requirement
		if err := json.Unmarshal([]byte(c.doc), &r); err != nil {
			t.Fatal(err)
		}
		if r.Version != c.version || r.Amount != c.amount {
			t.Errorf("%s: version %d amount %q", c.doc, r.Version, r.Amount)
		}
		b, _ := json.Marshal(r)
		if want := `"` + amountKey(c.version) + `":"` + c.amount + `"`; !strings.Contains(string(b), want) {
			t.Errorf("%s re-encoded as %s, want %s in it", c.doc, b, want)
		}
	}
	// Writing the other version's name follows Version.
	r := Requirement{Version: V1, Amount: "3"}
	if b, _ := json.Marshal(r); !strings.Contains(string(b), `"maxAmountRequired":"3"`) || strings.Contains(string(b), `"amount"`) {
		t.Errorf("v1 requirement encoded as %s", b)
	}
	r.Version = 0 // unset: v2
	if b, _ := json.Marshal(r); !strings.Contains(string(b), `"amount":"3"`) {
		t.Errorf("unversioned requirement encoded as %s", b)
	}
	// A hand-built Unknown that is not JSON is refused rather than written.
	r.Unknown = map[string]json.RawMessage{"bad": json.RawMessage(`{`)}
	if b, err := json.Marshal(r); err == nil {
		t.Errorf("invalid Unknown encoded as %s", b)
	}
}

// Nothing decoded aliases the caller's buffer: the exported parsers copy the document once (ownDocument)
// and ExactEVM copies the payload it reads, so a caller that reuses its buffer (encoding/json does, for
// UnmarshalJSON) changes nothing it was given.
func TestDecodedValuesDoNotAliasTheInput(t *testing.T) {
	const challenge = `{"x402Version":2,"error":"Payment required","resource":{"url":"https://api.example.com/data"},` +
		`"accepts":[{"scheme":"exact","network":"eip155:8453","amount":"10000",` +
		`"asset":"0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913","payTo":"0x3C44CdDdB6a900fa2b585dd299e03d12FA4293BC",` +
		`"maxTimeoutSeconds":60,"extra":{"name":"USD Coin","version":"2"}}],"extensions":{"bazaar":{"info":{"a":[1,2]}}}}`
	const requirement = `{"scheme":"exact","network":"eip155:8453","amount":"10000","asset":"0xa","payTo":"0xb",` +
		`"maxTimeoutSeconds":60,"extra":{"name":"USD Coin","version":"2"}}`
	const payload = `{"signature":"0xsig","authorization":{"from":"0xa","to":"0xb","value":"10","validAfter":"0","validBefore":"9","nonce":"0x1"}}`
	for _, c := range []struct {
		name  string
		doc   string
		parse func(buf []byte) (any, error)
	}{
		{"ParsePaymentRequired", challenge, func(b []byte) (any, error) { return ParsePaymentRequired(b) }},
		{"Requirement.UnmarshalJSON", requirement, func(b []byte) (any, error) {
			var r Requirement
			return &r, r.UnmarshalJSON(b)
		}},
		{"ExactEVM", payload, func(b []byte) (any, error) {
			return (&PaymentPayload{X402Version: 2, Payload: json.RawMessage(b)}).ExactEVM()
		}},
	} {
		buf := []byte(c.doc)
		v, err := c.parse(buf)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		before := jsonOf(t, v)
		for i := range buf {
			buf[i] = ' '
		}
		if after := jsonOf(t, v); !bytes.Equal(before, after) {
			t.Errorf("%s: the decoded value changed with the caller's buffer:\n%s\n%s", c.name, before, after)
		}
	}
}

// A v1 requirement always carries description and mimeType, "" included: x402-express writes them so and
// x402-fetch's schema requires both, so a narrowed v1 challenge without them could not be paid.
func TestV1RequirementKeepsEmptyDescriptionAndMimeType(t *testing.T) {
	body := `{"x402Version":1,"error":"X-PAYMENT header is required","accepts":[{"scheme":"exact","network":"base-sepolia","maxAmountRequired":"10000","resource":"http://s/weather","description":"","mimeType":"","payTo":"0xb","maxTimeoutSeconds":60,"asset":"0xc","extra":{"name":"USDC","version":"2"}}]}`
	pr, err := ParsePaymentRequired([]byte(body))
	if err != nil {
		t.Fatal(err)
	}
	out, err := json.Marshal(pr.Narrowed(0))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(out), `"description":"","mimeType":""`) {
		t.Fatalf("narrowed v1 challenge lost its empty description or mimeType: %s", out)
	}
}

package x402

import (
	"bytes"
	"encoding/json"
	"testing"
)

// TestNestedObjectsWrittenInPlace holds PaymentRequired.MarshalJSON, which writes its resource and accepts
// into its own buffer (objectWriter.object, appendRequirement), to the document built from each nested
// object encoded on its own, as it was before (issue 36): the same bytes, Unknown members, escapes, v1 and
// v2, and a nested object that fails to encode fails the whole.
func TestNestedObjectsWrittenInPlace(t *testing.T) {
	for _, doc := range []string{
		`{"x402Version":2,"error":"Payment required","resource":{"url":"https://s.example/x?a=<b>&c","description":"d\u00e9j\u00e0 \"vu\"","mimeType":"application/json","zz":[1,{"a":null}]},` +
			`"accepts":[{"scheme":"exact","network":"eip155:84532","amount":"10000","asset":"0x036CbD53842c5426634e7929541eC2318f3dCF7e","payTo":"0xf54127927F219FB78C8D1A1fF3D7dc6D7f70C98E","maxTimeoutSeconds":60,"extra":{"name":"USDC","version":"2"},"b":true,"a":"x"},` +
			`{"scheme":"exact","network":"base","amount":"1","asset":"0x1","payTo":"0x2","maxTimeoutSeconds":5}],"extensions":{"k":{"v":1}},"other":"o"}`,
		`{"x402Version":1,"error":"","accepts":[{"scheme":"exact","network":"base-sepolia","maxAmountRequired":"7","resource":"https://s.example/r","description":"","mimeType":"","payTo":"0x2","maxTimeoutSeconds":60,"asset":"0x1","outputSchema":{"input":{}}}]}`,
		`{"x402Version":2,"accepts":[]}`,
	} {
		p, err := ParsePaymentRequired([]byte(doc))
		if err != nil {
			t.Fatalf("%s: %v", doc, err)
		}
		got, err := p.MarshalJSON()
		if err != nil {
			t.Fatal(err)
		}
		// The document as each nested object encodes on its own.
		w := newObjectWriter()
		w.value("x402Version", p.X402Version)
		if p.Error != "" {
			w.str("error", p.Error)
		}
		if p.Resource != nil {
			b, err := p.Resource.MarshalJSON()
			if err != nil {
				t.Fatal(err)
			}
			w.raw("resource", b)
		}
		var accepts [][]byte
		for i := range p.Accepts {
			b, err := encodeRequirement(&p.Accepts[i], p.X402Version)
			if err != nil {
				t.Fatal(err)
			}
			accepts = append(accepts, b)
		}
		w.raw("accepts", append(append([]byte("["), bytes.Join(accepts, []byte(","))...), ']'))
		if p.Extensions != nil {
			w.rawMap("extensions", p.Extensions)
		}
		w.unknown(p.Unknown)
		want, err := w.finish()
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, want) {
			t.Errorf("in place:\n%s\nseparately:\n%s", got, want)
		}
	}
	bad := PaymentRequired{X402Version: V2, Accepts: []Requirement{{Scheme: "exact", Extra: json.RawMessage(`{`)}}}
	if _, err := bad.MarshalJSON(); err == nil {
		t.Error("a requirement with invalid raw JSON encoded")
	}
	badRes := PaymentRequired{X402Version: V2, Resource: &ResourceInfo{URL: "u", Unknown: map[string]json.RawMessage{"x": json.RawMessage(`nul`)}}}
	if _, err := badRes.MarshalJSON(); err == nil {
		t.Error("a resource with invalid raw JSON encoded")
	}
}

package x402

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// sameAsReferenceSeeds are documents at the edges of the members' bookkeeping: repeated names (the last
// wins, and a taken name takes every copy), more members than the small-object path holds, escaped and
// non-ASCII strings, lone surrogates, values of the wrong type, documents past the shared-text size.
var sameAsReferenceSeeds = []string{
	`{"x402Version":2,"accepts":[]}`,
	`{"x402Version":2,"accepts":[],"accepts":[{}]}`,
	`{"x402Version":2,"accepts":[{}],"accepts":[]}`,
	`{"x402Version":2,"x402Version":1,"accepts":[]}`,
	`{"x402Version":2,"error":"a","error":7,"accepts":[]}`,
	`{"x402Version":2,"error":7,"error":"a","accepts":[]}`,
	`{"x402Version":2,"accepts":[{"scheme":"exact","scheme":"upto","amount":"1","amount":"2","z":1,"z":2}]}`,
	`{"x402Version":2,"accepts":[{"scheme":"ex\u0061ct","payTo":"\u00e9","asset":"é","network":"a\"b"}]}`,
	`{"x402Version":2,"accepts":[{"payTo":"\ud800"}]}`,
	`{"x402Version":2,"accepts":[{"\ud800":1}]}`,
	`{"x402Version":2,"accepts":[{"payTo":"\uFFFD"}]}`,
	"{\"x402Version\":2,\"accepts\":[{\"payTo\":\"\xef\xbf\xbd\"}]}",
	`{"x402Version":2,"accepts":[{"payTo":null}]}`,
	`{"x402Version":2,"accepts":[{"maxTimeoutSeconds":1.5}]}`,
	`{"x402Version":2,"accepts":[{"maxTimeoutSeconds":1e2}]}`,
	`{"x402Version":2,"accepts":[{"maxTimeoutSeconds":null}]}`,
	`{"x402Version":2,"accepts":[{"maxTimeoutSeconds":" 5"}]}`,
	`{"x402Version":2,"accepts":[{"extra":null,"outputSchema":{}}]}`,
	`{"x402Version":1,"accepts":[{"maxAmountRequired":"5","amount":"6","resource":"r","description":"d","mimeType":"m","outputSchema":[1]}]}`,
	`{"x402Version":2,"resource":{"url":"u","url":"v","tags":["a"],"tags":[]},"accepts":[]}`,
	`{"x402Version":2,"resource":[],"accepts":[]}`,
	`{"x402Version":2,"resource":null,"accepts":[]}`,
	`{"x402Version":2,"accepts":[],"extensions":{"b":{},"a":1,"a":2}}`,
	`{"x402Version":2,"accepts":[],"extensions":{}}`,
	`{"x402Version":2,"accepts":[],"extensions":null}`,
	`{"x402Version":2,"accepts":[],"extensions":{"\ud800":1}}`,
	`{"x402Version":2,"accepts":{}}`,
	`{"x402Version":2,"accepts":[1]}`,
	`{"x402Version":2,"accepts":[{},]}`,
	`{"x402Version":2,"accepts":[{"a":1}`,
	` {"x402Version" : 2 , "accepts" : [ { "scheme" : "exact" } ] } `,
	`{"x402Version":3,"accepts":[]}`,
	`{"accepts":[]}`,
	`[]`, `null`, ``, `{`, `{}`,
	`{"x402Version":2,"accepts":[` + strings.Repeat(`{},`, MaxOptions) + `{}]}`,
	`{"x402Version":2,"accepts":[` + strings.TrimSuffix(strings.Repeat(`{},`, MaxOptions), ",") + `]}`,
}

// manyMembers is an object of n members named m0..m(n-1) plus the given tail, past the small-object path.
func manyMembers(n int, tail string) string {
	var b strings.Builder
	b.WriteString(`{`)
	for i := range n {
		b.WriteString(`"m`)
		b.WriteString(strings.Repeat("x", i%7))
		b.WriteString(string(rune('a' + i%26)))
		b.WriteString(`":`)
		b.WriteString(`"v"`)
		b.WriteString(`,`)
	}
	b.WriteString(tail)
	b.WriteString(`}`)
	return b.String()
}

func sameAsReferenceCorpus(t testing.TB) []string {
	out := append([]string(nil), sameAsReferenceSeeds...)
	for _, n := range []int{15, 16, 63, 64, 65, 200} {
		out = append(out,
			manyMembers(n, `"x402Version":2,"accepts":[`+manyMembers(n, `"payTo":"0xab","payTo":"0xcd"`)+`]`),
			manyMembers(n, `"x402Version":2,"resource":`+manyMembers(n, `"url":"u"`)+`,"accepts":[],"extensions":`+manyMembers(n, `"k":1`)))
	}
	long := `{"x402Version":2,"error":"` + strings.Repeat("e", 3000) + `","accepts":[{"payTo":"0xab","extra":{"name":"USDC"}}]}`
	out = append(out, long)
	// The captured challenges of the official SDKs: the v1 body, the v2 headers' documents.
	for _, dir := range []string{"v1", "v2", "v2-offer-receipt"} {
		raw, err := os.ReadFile(filepath.Join("testdata", "fixtures", dir, "challenge-402.json"))
		if err != nil {
			t.Fatal(err)
		}
		var capture struct {
			Response struct {
				Headers [][]string `json:"headers"`
				Body    string     `json:"body"`
			} `json:"response"`
		}
		if err := json.Unmarshal(raw, &capture); err != nil {
			t.Fatal(err)
		}
		out = append(out, capture.Response.Body)
		for _, h := range capture.Response.Headers {
			if strings.EqualFold(h[0], HeaderPaymentRequired) {
				doc, err := base64.StdEncoding.DecodeString(h[1])
				if err != nil {
					t.Fatal(err)
				}
				out = append(out, string(doc))
			}
		}
	}
	return out
}

// checkSameAsReference decodes doc with ParsePaymentRequired and, as the header carries it, with
// DecodePaymentRequiredHeader (base64 of doc, and doc itself as a header value), each against the
// reference decoder: the same verdict, value and error text.
func checkSameAsReference(t *testing.T, doc []byte) {
	t.Helper()
	got, err := ParsePaymentRequired(doc)
	want, wantErr := refParsePaymentRequired(doc)
	sameDecode(t, "ParsePaymentRequired", doc, got, err, want, wantErr)
	if err == nil {
		checkSameEncoding(t, got)
	}
	enc := base64.StdEncoding.EncodeToString(doc)
	for _, value := range []string{enc, string(doc), base64.RawStdEncoding.EncodeToString(doc), enc + "=",
		strings.Replace(enc, "A", "\n", 1), strings.Replace(enc, "Q", "\r", 1), strings.Replace(enc, "g", "-", 1),
		strings.Replace(enc, "w", "=", 1), "=" + enc} {
		got, err := DecodePaymentRequiredHeader(value)
		want, wantErr := refDecodePaymentRequiredHeader(value)
		sameDecode(t, "DecodePaymentRequiredHeader", []byte(value), got, err, want, wantErr)
	}
}

// checkSameEncoding: EncodePaymentRequiredHeader writes what EncodeHeaderJSON writes, and NarrowedView(i)
// encodes (as a header, and with json.Marshal as the proxy re-encodes a body) as Narrowed(i) does.
func checkSameEncoding(t *testing.T, p *PaymentRequired) {
	t.Helper()
	want, wantErr := EncodeHeaderJSON(p)
	got, err := EncodePaymentRequiredHeader(p)
	if got != want || (err == nil) != (wantErr == nil) {
		t.Fatalf("EncodePaymentRequiredHeader = %q, %v; EncodeHeaderJSON %q, %v", got, err, want, wantErr)
	}
	for i := -1; i <= len(p.Accepts); i++ {
		view, copied := p.NarrowedView(i), p.Narrowed(i)
		if (view == nil) != (copied == nil) {
			t.Fatalf("NarrowedView(%d) = %v, Narrowed %v", i, view, copied)
		}
		if view == nil {
			continue
		}
		want, wantErr := EncodeHeaderJSON(copied)
		got, err := EncodePaymentRequiredHeader(view)
		if got != want || (err == nil) != (wantErr == nil) {
			t.Fatalf("narrowed %d: header %q, %v; from the copy %q, %v", i, got, err, want, wantErr)
		}
		wantBody, wantErr := json.Marshal(copied)
		gotBody, err := json.Marshal(view)
		if !bytes.Equal(gotBody, wantBody) || (err == nil) != (wantErr == nil) {
			t.Fatalf("narrowed %d: body %s, %v; from the copy %s, %v", i, gotBody, err, wantBody, wantErr)
		}
	}
}

func sameDecode(t *testing.T, fn string, in []byte, got *PaymentRequired, err error, want *PaymentRequired, wantErr error) {
	t.Helper()
	switch {
	case (err == nil) != (wantErr == nil):
		t.Fatalf("%s(%q): error %v, the reference's %v", fn, in, err, wantErr)
	case err != nil:
		if err.Error() != wantErr.Error() || errors.Is(err, ErrTooManyOptions) != errors.Is(wantErr, ErrTooManyOptions) ||
			!errors.Is(err, ErrMalformed) {
			t.Fatalf("%s(%q): error %q, the reference's %q", fn, in, err, wantErr)
		}
	case !reflect.DeepEqual(got, want):
		t.Fatalf("%s(%q):\n got %#v\nwant %#v", fn, in, got, want)
	}
}

func TestDecodeSameAsReference(t *testing.T) {
	for _, s := range sameAsReferenceCorpus(t) {
		checkSameAsReference(t, []byte(s))
	}
}

// FuzzDecodeSameAsReference holds the challenge decoder to the reference (decode_reference_test.go) on
// any input: the accepted language, the decoded values and the errors are the same.
func FuzzDecodeSameAsReference(f *testing.F) {
	for _, s := range sameAsReferenceCorpus(f) {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, doc []byte) {
		checkSameAsReference(t, doc)
	})
}

// TestSameAsReferenceCorpusDecodes keeps the corpus honest: the SDKs' captures are among what it decodes.
func TestSameAsReferenceCorpusDecodes(t *testing.T) {
	decoded := 0
	for _, s := range sameAsReferenceCorpus(t) {
		if _, err := ParsePaymentRequired([]byte(s)); err == nil {
			decoded++
		}
	}
	if decoded < 20 {
		t.Fatalf("only %d documents of the corpus decode", decoded)
	}
}

// TestDocumentStrOnlyInsideItsDocument: a string value is taken from the document's text only for bytes
// inside the document; bytes elsewhere (another buffer, a neighbour in memory) are decoded on their own.
func TestDocumentStrOnlyInsideItsDocument(t *testing.T) {
	buf := []byte(`{"a":"inside"}"outside"`)
	doc := buf[:14]
	d := sharedText(doc)
	if v, ok := d.str(doc[5:13], true); !ok || v != "inside" {
		t.Fatalf("inside: %q, %v", v, ok)
	}
	for _, raw := range [][]byte{buf[14:], []byte(`"inside"`), []byte(`"elsewhere"`)} {
		if v, ok := d.str(raw, false); ok {
			t.Fatalf("str(%q) outside the document = %q", raw, v)
		}
	}
	if _, ok := d.str([]byte(`"esc\"aped"`), false); ok {
		t.Fatal("a string with an escape taken as its bytes")
	}
	if v, ok := (document{}).str(doc[5:13], true); ok {
		t.Fatalf("a document without text gave %q", v)
	}
}

// TestLargeDocumentsCopyTheirStrings: above maxSharedText no text is kept, so a small value kept for long
// (the console's recent decisions, an Index record) never pins a large document.
func TestLargeDocumentsCopyTheirStrings(t *testing.T) {
	small := make([]byte, maxSharedText)
	if sharedText(small).text == "" {
		t.Fatal("a document of maxSharedText bytes has no shared text")
	}
	if sharedText(make([]byte, maxSharedText+1)).text != "" {
		t.Fatal("a document over maxSharedText keeps a shared text")
	}
}

// TestDecodeChallengeAllocations bounds what decoding the bench seller's challenge allocates (issue 36:
// 37 allocations before decode402): the document, its text, the challenge, its resource and accepts.
func TestDecodeChallengeAllocations(t *testing.T) {
	value := base64.StdEncoding.EncodeToString([]byte(benchChallengeDoc))
	if n := testing.AllocsPerRun(100, func() {
		if _, err := DecodePaymentRequiredHeader(value); err != nil {
			t.Fatal(err)
		}
	}); n > 6 {
		t.Fatalf("%v allocations per decode, want at most 6", n)
	}
}

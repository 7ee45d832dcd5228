package x402

import (
	"bufio"
	"bytes"
	"encoding/base64"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The fixtures under testdata/fixtures are the repository's one copy of the x402 captures (testdata/README.md
// says where they came from): real captures of the official SDKs (x402@1.2.0 and @x402/*@2.27.0) talking to
// each other through a local facilitator. preflight's tests read the same copy.

// capture is one HTTP message of a fixture: its headers, its body and the capture tool's own decoding of
// the x402 headers (which the tests compare against).
type capture struct {
	where   string
	status  int
	headers [][2]string
	body    string
	decoded map[string]json.RawMessage
}

// message mirrors the JSON shape of a captured request or response.
type message struct {
	Status  int                        `json:"status"`
	Headers [][]string                 `json:"headers"`
	Body    string                     `json:"body"`
	Decoded map[string]json.RawMessage `json:"decoded"`
}

func (m *message) capture(where string) capture {
	c := capture{where: where, status: m.Status, body: m.Body, decoded: m.Decoded}
	for _, h := range m.Headers {
		if len(h) == 2 {
			c.headers = append(c.headers, [2]string{h[0], h[1]})
		}
	}
	return c
}

// loadCaptures reads every HTTP message in the fixture files: the *-request/*-response/challenge files and
// every line of exchanges.jsonl.
func loadCaptures(t *testing.T) []capture {
	t.Helper()
	var out []capture
	add := func(where string, raw []byte) {
		var doc struct {
			message
			Request  *message `json:"request"`
			Response *message `json:"response"`
		}
		if err := json.Unmarshal(raw, &doc); err != nil {
			t.Fatalf("%s: %v", where, err)
		}
		if len(doc.Headers) > 0 {
			out = append(out, doc.message.capture(where))
		}
		if doc.Request != nil {
			out = append(out, doc.Request.capture(where+" request"))
		}
		if doc.Response != nil {
			out = append(out, doc.Response.capture(where+" response"))
		}
	}
	files, err := filepath.Glob("testdata/fixtures/*/*")
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		base := filepath.Base(f)
		if strings.HasPrefix(base, "facilitator-") {
			continue
		}
		raw, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if strings.HasSuffix(f, ".jsonl") {
			sc := bufio.NewScanner(bytes.NewReader(raw))
			sc.Buffer(nil, 1<<20)
			for line := 1; sc.Scan(); line++ {
				add(f+":"+itoa(line), sc.Bytes())
			}
			if err := sc.Err(); err != nil {
				t.Fatal(err)
			}
			continue
		}
		add(f, raw)
	}
	return out
}

func itoa(i int) string { b, _ := json.Marshal(i); return string(b) }

func mustJSON(t *testing.T, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatalf("marshal %T: %v", v, err)
	}
	return b
}

// TestFixtureHeaders decodes every x402 header of every capture, compares the result with the capture
// tool's own decoding, and checks that re-encoding gives back the seller's exact header value (the
// encoder writes members in the SDK's order).
func TestFixtureHeaders(t *testing.T) {
	counts := map[string]int{}
	for _, c := range loadCaptures(t) {
		for _, h := range c.headers {
			name, value := strings.ToUpper(h[0]), h[1]
			var got any
			var err error
			switch name {
			case HeaderPaymentRequired:
				got, err = DecodePaymentRequiredHeader(value)
			case HeaderPaymentSignature, HeaderXPayment:
				got, err = DecodePaymentPayloadHeader(value)
			case HeaderPaymentResponse, HeaderXPaymentResponse:
				got, err = DecodeSettleResponseHeader(value)
			default:
				continue
			}
			if err != nil {
				t.Errorf("%s: %s: %v", c.where, name, err)
				continue
			}
			counts[name]++
			want, ok := c.decoded[strings.ToLower(name)]
			if !ok {
				t.Errorf("%s: no decoded %s in the capture", c.where, name)
				continue
			}
			if gotJSON := mustJSON(t, got); !JSONEqual(gotJSON, want) {
				t.Errorf("%s: %s decodes to\n%s\nthe capture says\n%s", c.where, name, gotJSON, want)
			}
			// The SDK writes btoa(JSON.stringify(obj)); our encoder uses the same member order.
			again, err := EncodeHeaderJSON(got)
			if err != nil {
				t.Errorf("%s: re-encode %s: %v", c.where, name, err)
			} else if again != value && !hasExtensions(got) {
				// Extensions are a Go map, so their members come back in name order; all else keeps the SDK's.
				raw, _ := base64.StdEncoding.DecodeString(value)
				back, _ := base64.StdEncoding.DecodeString(again)
				t.Errorf("%s: %s re-encodes differently\n got %s\nwant %s", c.where, name, back, raw)
			}
		}
	}
	// Every kind must have been seen, so this test cannot pass on an empty or misread fixture set.
	for _, name := range []string{HeaderPaymentRequired, HeaderPaymentSignature, HeaderXPayment,
		HeaderPaymentResponse, HeaderXPaymentResponse} {
		if counts[name] == 0 {
			t.Errorf("no %s header found in the fixtures", name)
		}
	}
	t.Logf("decoded headers: %v", counts)
}

// TestFixtureV1Bodies parses every v1 challenge body (402 with an x402Version 1 JSON body), including the
// verify-failure one that carries an extra top-level `payer`, and checks it re-encodes byte for byte.
func TestFixtureV1Bodies(t *testing.T) {
	n := 0
	for _, c := range loadCaptures(t) {
		if c.status != 402 || !strings.Contains(c.body, `"x402Version":1`) {
			continue
		}
		p, err := ParsePaymentRequired([]byte(c.body))
		if err != nil {
			t.Errorf("%s: %v", c.where, err)
			continue
		}
		n++
		if p.X402Version != V1 || len(p.Accepts) != 1 || p.Accepts[0].Version != V1 {
			t.Errorf("%s: got version %d with %d accepts", c.where, p.X402Version, len(p.Accepts))
		}
		if p.Accepts[0].Amount != "10000" || p.Accepts[0].Network != "base-sepolia" {
			t.Errorf("%s: accepts[0] = %+v", c.where, p.Accepts[0])
		}
		b, err := json.Marshal(p)
		if err != nil {
			t.Errorf("%s: %v", c.where, err)
			continue
		}
		if string(b) != c.body {
			t.Errorf("%s: re-encoded body differs\n got %s\nwant %s", c.where, b, c.body)
		}
	}
	if n < 5 {
		t.Errorf("found %d v1 challenge bodies, want at least 5", n)
	}
}

// TestFixtureFacilitator decodes the facilitator request and answer of every verify/settle capture.
func TestFixtureFacilitator(t *testing.T) {
	files, err := filepath.Glob("testdata/fixtures/*/facilitator-*.json")
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, f := range files {
		raw, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		var doc struct {
			Endpoint string          `json:"endpoint"`
			Request  json.RawMessage `json:"request"`
			Response json.RawMessage `json:"response"`
		}
		if err := json.Unmarshal(raw, &doc); err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		var req FacilitatorRequest
		if err := json.Unmarshal(doc.Request, &req); err != nil {
			t.Errorf("%s: request: %v", f, err)
			continue
		}
		if req.PaymentPayload == nil || req.PaymentRequirements == nil {
			t.Errorf("%s: request misses payload or requirements", f)
			continue
		}
		if req.PaymentRequirements.Amount != "10000" {
			t.Errorf("%s: requirements amount %q", f, req.PaymentRequirements.Amount)
		}
		if !JSONEqual(mustJSON(t, req), doc.Request) {
			t.Errorf("%s: request re-encodes to a different value\n%s", f, mustJSON(t, req))
		}
		if req.X402Version == V2 && !req.PaymentRequirements.Equal(*req.PaymentPayload.Accepted) {
			t.Errorf("%s: the v2 accepted does not match the requirements", f)
		}
		evm, err := req.PaymentPayload.ExactEVM()
		if err != nil || evm.Authorization == nil || evm.Authorization.To != req.PaymentRequirements.PayTo {
			t.Errorf("%s: ExactEVM = %+v, %v", f, evm, err)
		}
		var answer any
		switch doc.Endpoint {
		case "POST /verify":
			answer = &VerifyResponse{}
		case "POST /settle":
			answer = &SettleResponse{}
		default:
			t.Fatalf("%s: unknown endpoint %q", f, doc.Endpoint)
		}
		if err := json.Unmarshal(doc.Response, answer); err != nil {
			t.Errorf("%s: response: %v", f, err)
			continue
		}
		if !JSONEqual(mustJSON(t, answer), doc.Response) {
			t.Errorf("%s: response re-encodes to a different value\n%s", f, mustJSON(t, answer))
		}
		n++
	}
	if n != 10 {
		t.Errorf("decoded %d facilitator captures, want 10", n)
	}
}

func hasExtensions(v any) bool {
	switch v := v.(type) {
	case *PaymentRequired:
		return len(v.Extensions) > 1
	case *PaymentPayload:
		return len(v.Extensions) > 1
	case *SettleResponse:
		return len(v.Extensions) > 1
	}
	return false
}

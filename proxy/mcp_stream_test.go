package proxy

import (
	"bufio"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/payguard/payguard/store/memory"
)

// The answer stream stays a stream: the first event reaches the agent while the seller still holds the
// second back (nothing waits for the stream's end); an event over 64 KiB is replaced by a JSON-RPC error
// and the stream goes on; an event with payment terms is decided as it passes; events in CR or CRLF line
// endings are read as clients read them.
func TestMCPEventStreamStaysStreamed(t *testing.T) {
	for _, eol := range []string{"\n", "\r\n", "\r"} {
		t.Run(fmt.Sprintf("%q", eol), func(t *testing.T) {
			terms := newMCPSeller(t, "both", false, offer(2, "eip155:84532", baseSepoliaUSDC, sellerPayTo, cent))
			gate := make(chan struct{})
			big := strings.Repeat("b", 70<<10)
			url := newRawServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Content-Type", "text/event-stream")
				ev := func(data string) {
					fmt.Fprintf(w, "event: message%sid: 1%sdata: %s%s%s", eol, eol, data, eol, eol)
					w.(http.Flusher).Flush()
				}
				ev(`{"jsonrpc":"2.0","method":"notifications/progress","params":{"progress":1}}`)
				<-gate
				ev(`{"jsonrpc":"2.0","method":"notifications/message","params":{"data":"` + big + `"}}`)
				pr, _ := json.Marshal(terms.paymentRequired(json.RawMessage("1")))
				ev(string(pr))
			}))
			h := newHarness(t, memory.New(), testRules())
			req, _ := http.NewRequest(http.MethodPost, url+"/mcp", strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"weather"}}`))
			req.Header.Set("Content-Type", "application/json")
			resp, err := h.buyer().client.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			rd := bufio.NewReader(resp.Body)
			first := readEvent(t, rd, eol)
			if !strings.Contains(first, "notifications/progress") {
				t.Fatalf("first event = %q", first)
			}
			close(gate) // only now does the seller write the rest: the first event was not held back
			second := readEvent(t, rd, "\n")
			if !strings.Contains(second, `"id":null`) || !strings.Contains(second, "over 64 KiB") || strings.Contains(second, big[:100]) {
				t.Fatalf("oversized event = %.300q", second)
			}
			third := readEvent(t, rd, "\n")
			var msg map[string]any
			if err := json.Unmarshal([]byte(dataOf(third)), &msg); err != nil {
				t.Fatalf("third event %q: %v", third, err)
			}
			if pr := termsOf(t, msg); pr == nil || len(pr.Accepts) != 1 {
				t.Fatalf("terms event was not decided: %q", third)
			}
			if !strings.Contains(third, "id: 1") || !strings.Contains(third, "event: message") {
				t.Errorf("the decided event lost its other fields: %q", third)
			}
		})
	}
}

// readEvent reads one event (up to its blank line), lines ending in LF, CRLF or CR as SSE clients read them.
func readEvent(t *testing.T, rd *bufio.Reader, _ string) string {
	t.Helper()
	var b, line strings.Builder
	for {
		c, err := rd.ReadByte()
		if err != nil {
			t.Fatalf("stream ended: %v (%q)", err, b.String())
		}
		if c != '\r' && c != '\n' {
			line.WriteByte(c)
			continue
		}
		if c == '\r' && rd.Buffered() > 0 {
			if next, err := rd.Peek(1); err == nil && next[0] == '\n' {
				rd.ReadByte()
			}
		}
		if line.Len() == 0 && c == '\n' && b.Len() == 0 {
			continue // the LF of a CRLF whose CR ended the previous event
		}
		if line.Len() == 0 {
			return b.String()
		}
		b.WriteString(line.String() + "\n")
		line.Reset()
	}
}

func dataOf(ev string) string {
	var parts []string
	for _, l := range strings.FieldsFunc(ev, func(r rune) bool { return r == '\n' || r == '\r' }) {
		if strings.HasPrefix(l, "data:") {
			parts = append(parts, strings.TrimPrefix(strings.TrimPrefix(l, "data:"), " "))
		}
	}
	return strings.Join(parts, "\n")
}

// The older HTTP+SSE transport answers on a GET stream: terms there are decided too (named after the
// seller's resource.url, the only name on that stream), and a blocked one becomes a readable refusal.
func TestMCPGetStreamDecided(t *testing.T) {
	terms := newMCPSeller(t, "both", false, offer(2, "eip155:84532", baseSepoliaUSDC, sellerPayTo, cent))
	url := newRawServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		fmt.Fprint(w, "event: endpoint\ndata: /messages?session_id=abc\n\n")
		pr, _ := json.Marshal(terms.paymentRequired(json.RawMessage("4")))
		fmt.Fprintf(w, "event: message\ndata: %s\n\n", pr)
	}))
	rules := testRules()
	rules.MaxPerPaymentUSD = 5000
	h := newHarness(t, memory.New(), rules)
	resp, body := h.buyer().get(url+"/sse", http.Header{"Accept": {"text/event-stream"}})
	if resp.StatusCode != 200 || !strings.Contains(string(body), "data: /messages?session_id=abc") {
		t.Fatalf("stream %d %q", resp.StatusCode, body)
	}
	if strings.Contains(string(body), `"accepts"`) || !strings.Contains(string(body), `"decision":"block"`) {
		t.Fatalf("the GET stream's terms were not decided: %s", body)
	}
	d := h.proxy.recent.list()
	if len(d) == 0 || d[0].Path != "mcp://tool/weather" {
		t.Errorf("console decision = %+v, want it named mcp://tool/weather", d)
	}
}

// Answers that peers could read differently, or that cannot be read whole, are refused, never guessed.
func TestMCPHostileAnswersRefused(t *testing.T) {
	terms := newMCPSeller(t, "both", false, offer(2, "eip155:84532", baseSepoliaUSDC, sellerPayTo, cent))
	pr, _ := json.Marshal(terms.challenge())
	other := strings.Replace(string(pr), sellerPayTo, otherPayTo, 1)
	for _, tc := range []struct{ name, answer, want string }{
		{"isError twice", `{"jsonrpc":"2.0","id":1,"result":{"isError":false,"structuredContent":` + string(pr) + `,"isError":true}}`, "twice"},
		{"different terms in two places", `{"jsonrpc":"2.0","id":1,"result":{"isError":true,"structuredContent":` + string(pr) +
			`,"content":[{"type":"text","text":` + jsonQuote(other) + `}]}}`, "different payment terms"},
		{"NaN", `{"jsonrpc":"2.0","id":1,"result":{"isError":true,"structuredContent":` + string(pr) + `,"n":NaN}}`, "not valid JSON"},
		{"unreadable terms in text", `{"jsonrpc":"2.0","id":1,"result":{"isError":true,"content":[{"type":"text","text":"Error: {\"x402Version\":2,\"accepts\":[{\"payTo\":7}]}"}]}}`, "content[0].text"},
		{"over 64 KiB", `{"jsonrpc":"2.0","id":1,"result":{"isError":true,"structuredContent":` + string(pr) + `,"pad":"` + strings.Repeat("p", 70<<10) + `"}}`, "over 65536 bytes"},
		{"isError as a string", `{"jsonrpc":"2.0","id":1,"result":{"isError":"yes","structuredContent":` + strings.Replace(string(pr), `"x402Version":2`, `"x402Version":"two"`, 1) + `}}`, "structuredContent"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			url := newRawServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Content-Type", "application/json")
				fmt.Fprint(w, tc.answer)
			}))
			h := newHarness(t, memory.New(), testRules())
			b := h.mcpBuyer(url + "/mcp")
			_, msg := b.call(nil)
			e, _ := msg["error"].(map[string]any)
			if e == nil || !strings.Contains(fmt.Sprint(e["message"]), tc.want) || msg["id"] != float64(1) {
				t.Fatalf("answer = %.400v, want a JSON-RPC error for id 1 naming %q", msg, tc.want)
			}
			if strings.Contains(allTerms(msg), `"accepts"`) {
				t.Errorf("terms passed: %.300v", msg)
			}
		})
	}
}

func jsonQuote(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

// Only answers that may carry terms are read: a tools/list answered with a 70 KiB event passes whole.
func TestMCPLargeToolListPasses(t *testing.T) {
	big := `{"jsonrpc":"2.0","id":1,"result":{"tools":[{"name":"x","description":"` + strings.Repeat("d", 70<<10) + `"}]}}`
	url := newRawServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		fmt.Fprintf(w, "event: message\ndata: %s\n\n", big)
	}))
	h := newHarness(t, memory.New(), testRules())
	_, msgs := h.mcpBuyer(url + "/mcp").post([]byte(`{"jsonrpc":"2.0","id":1,"method":"tools/list"}`))
	if len(msgs) != 1 || msgs[0]["result"] == nil {
		t.Fatalf("a large tools/list answer did not pass: %.200v", msgs)
	}
}

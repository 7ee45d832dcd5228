package proxy

import (
	"bufio"
	"bytes"
	"encoding/json"
	"log/slog"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/payguard/payguard/internal/logbuf"
	"github.com/payguard/payguard/internal/logout"
	"github.com/payguard/payguard/store/memory"
	"github.com/payguard/payguard/x402"
)

// logLines returns the JSON log lines in logs whose msg is msg.
func logLines(t *testing.T, logs *logbuf.Buffer, msg string) []map[string]any {
	t.Helper()
	var out []map[string]any
	sc := bufio.NewScanner(bytes.NewReader(logs.Bytes()))
	for sc.Scan() {
		var m map[string]any
		if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
			t.Fatalf("log line is not JSON: %v: %s", err, sc.Bytes())
		}
		if m["msg"] == msg {
			out = append(out, m)
		}
	}
	return out
}

// Every decision writes exactly one canonical JSON line with the fields an operator searches by: through
// slog's JSON handler, and through the app's handler (logout), which takes the line encoded by hand.
func TestOneCanonicalLogLinePerDecision(t *testing.T) {
	t.Run("slog", func(t *testing.T) {
		logs := &logbuf.Buffer{}
		oneCanonicalLogLinePerDecision(t, logs, slog.New(slog.NewJSONHandler(logs, nil)), func() {})
	})
	t.Run("logout", func(t *testing.T) {
		logs := &logbuf.Buffer{}
		out := logout.NewWriter(logs, time.Hour)
		h := &countingLineWriter{Handler: logout.NewHandler(out, slog.LevelInfo)}
		oneCanonicalLogLinePerDecision(t, logs, slog.New(h), func() { out.Flush() })
		if h.lines != 5 {
			t.Fatalf("%d lines written by hand, want the 5 decisions'", h.lines)
		}
	})
}

// countingLineWriter is logout's handler counting the lines the proxy hands it.
type countingLineWriter struct {
	*logout.Handler
	lines int
}

func (c *countingLineWriter) WriteLine(line []byte) error {
	c.lines++
	return c.Handler.WriteLine(line)
}

func oneCanonicalLogLinePerDecision(t *testing.T, logs *logbuf.Buffer, logger *slog.Logger, flush func()) {
	s := newSeller(t, x402.V2, false,
		offer(x402.V2, "eip155:84532", baseSepoliaUSDC, sellerPayTo, cent))
	pricey := newSeller(t, x402.V2, false, offer(x402.V2, "eip155:84532", baseSepoliaUSDC, sellerPayTo, fiveDollar))
	held := newSeller(t, x402.V2, false, offer(x402.V2, "eip155:84532", baseSepoliaUSDC, sellerPayTo, halfDollar))
	h := newHarness(t, memory.New(), testRules(), func(o *setup) {
		o.Logger = logger
	})
	b := h.buyer()
	ex := b.pay(s.url("/weather"), nil)                            // challenge allow + payment allow
	b.get(pricey.url("/weather"), nil)                             // challenge block
	holdResp, _ := b.get(held.url("/weather"), nil)                // challenge hold
	b.get(s.url("/free"), nil)                                     // no decision
	b.get(s.url("/weather"), http.Header{ex.header: {ex.payment}}) // payment block (replay)
	flush()

	lines := logLines(t, logs, "decision")
	type want struct{ stage, decision, class string }
	wants := []want{
		{"challenge", "allow", "all_rules_passed"},
		{"payment", "allow", "ticket"},
		{"challenge", "block", "max_per_payment"},
		{"challenge", "hold", "hold_pending"},
		{"payment", "block", "payment_replay"},
	}
	if len(lines) != len(wants) {
		t.Fatalf("%d decision lines, want %d: %v", len(lines), len(wants), lines)
	}
	for i, w := range wants {
		l := lines[i]
		if l["stage"] != w.stage || l["decision"] != w.decision || l["reason_class"] != w.class {
			t.Errorf("line %d = %v, want %+v", i, l, w)
		}
		for _, k := range []string{"reasons", "method", "host", "path", "amount_usd", "pay_to", "receipt_id", "hold_id", "latency_ms"} {
			if _, ok := l[k]; !ok {
				t.Errorf("line %d lacks %q: %v", i, k, l)
			}
		}
		if rs, _ := l["reasons"].([]any); len(rs) == 0 {
			t.Errorf("line %d has no reasons: %v", i, l)
		}
	}
	receipt := ex.first.Header.Get(HeaderReceipt)
	if lines[0]["receipt_id"] != receipt || lines[1]["receipt_id"] != receipt {
		t.Errorf("receipt ids %v, %v; want both %s (the payment is logged under the decision that allowed it)",
			lines[0]["receipt_id"], lines[1]["receipt_id"], receipt)
	}
	if lines[0]["amount_usd"] != "0.01" || !strings.EqualFold(lines[0]["pay_to"].(string), sellerPayTo) {
		t.Errorf("allow line amount/payee = %v / %v", lines[0]["amount_usd"], lines[0]["pay_to"])
	}
	// The paid request's line names what was paid, in atomic units and on which network, as the challenge's does.
	for _, i := range []int{0, 1} {
		if lines[i]["amount_atomic"] != cent || lines[i]["network"] != "eip155:84532" {
			t.Errorf("line %d (%s) amount_atomic/network = %v / %v, want %s on eip155:84532", i, lines[i]["stage"],
				lines[i]["amount_atomic"], lines[i]["network"], cent)
		}
	}
	// A block chose no option, but its line says what it refused: the judged option's amount and payee.
	if lines[2]["amount_usd"] != "5" || lines[2]["pay_to"] == "" {
		t.Errorf("a block that chose no option logs amount %v to %v, want the judged $5 and its payee", lines[2]["amount_usd"], lines[2]["pay_to"])
	}
	if lines[3]["hold_id"] != holdResp.Header.Get(HeaderHold) || lines[3]["hold_id"] == "" {
		t.Errorf("hold line hold_id = %v, want %s", lines[3]["hold_id"], holdResp.Header.Get(HeaderHold))
	}
}

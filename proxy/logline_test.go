package proxy

import (
	"bytes"
	"context"
	"io"
	"log/slog"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/payguard/payguard/internal/logout"
)

// slogDecisionLine is the line slog's JSON handler writes for l at now: what logDecision writes through
// slog.
func slogDecisionLine(t testing.TB, now time.Time, l *decisionLine) []byte {
	var buf bytes.Buffer
	r := slog.NewRecord(now, slog.LevelInfo, "decision", 0)
	var attrs [decisionFields]slog.Attr
	r.AddAttrs(decisionAttrs(&attrs, l)...)
	if err := slog.NewJSONHandler(&buf, nil).Handle(context.Background(), r); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// checkDecisionLine fails unless the hand-written line is slog's, byte for byte (or is left to slog).
func checkDecisionLine(t *testing.T, now time.Time, l *decisionLine) {
	t.Helper()
	got, ok := appendDecisionLine(nil, now, l)
	if !ok {
		return
	}
	if want := slogDecisionLine(t, now, l); !bytes.Equal(got, want) {
		t.Fatalf("hand-written decision line differs from slog's:\n got %s\nwant %s", got, want)
	}
}

var decisionLineStrings = []string{
	"", "allow", "challenge", "127.0.0.1:18443", "/402?a=b&c=<d>", "0xf54127927F219FB78C8D1A1fF3D7dc6D7f70C98E",
	`quote " backslash \ slash /`, "tab\there\nnew\rline", "\x00\x01\x08\x0c\x1f\x7f", "é ü 😀", "\u2028\u2029",
	"\xff\xfe bad utf8 \xc3", "\xed\xa0\x80", "\ufffd", "<script>&amp;</script>",
}

func TestDecisionLineAsSlogWritesIt(t *testing.T) {
	now := time.Date(2026, 11, 27, 15, 4, 5, 123456789, time.UTC)
	base := decisionLine{stage: "challenge", decision: "allow", agent: "default", reasons: []string{"allow: all rules passed"},
		class: "all_rules_passed", method: "GET", host: "127.0.0.1:18443", path: "/402", amount: "0.01",
		payTo: "0xf54127927F219FB78C8D1A1fF3D7dc6D7f70C98E", atomic: "10000", network: "eip155:84532", scheme: "exact",
		receipt: "rcpt_0123456789abcdef0123456789abcdef", latencyMs: 0.123}
	checkDecisionLine(t, now, &base)
	for _, s := range decisionLineStrings {
		l := base
		l.host, l.path, l.payTo, l.shadow, l.agent = s, s, s, s, s
		l.reasons = []string{s, "block: " + s}
		checkDecisionLine(t, now, &l)
	}
	for _, lat := range []float64{0, -0.001, 0.001, 1, 12.5, 1234567.891, math.Copysign(0, -1), 1e20, 1e21, 1e-7, math.Inf(1), math.NaN()} {
		l := base
		l.latencyMs = lat
		checkDecisionLine(t, now, &l)
	}
	for _, l := range []decisionLine{{}, {reasons: []string{}}, {reasons: nil}} {
		checkDecisionLine(t, now, &l)
	}
	for _, at := range []time.Time{time.Now(), now.In(time.FixedZone("x", -3*3600-30*60)), time.Unix(0, 0), now.Truncate(time.Second)} {
		checkDecisionLine(t, at, &base)
	}
	// The line is written by hand for an ordinary decision: not left to slog.
	if _, ok := appendDecisionLine(nil, time.Now(), &base); !ok {
		t.Fatal("an ordinary decision's line was not written by hand")
	}
}

// FuzzDecisionLine: any strings in any field, any latency, any time: the hand-written line is slog's.
func FuzzDecisionLine(f *testing.F) {
	for _, s := range decisionLineStrings {
		f.Add(s, s+"|x", int64(123), int64(1764255845123456789))
	}
	f.Fuzz(func(t *testing.T, s, reasons string, micros, nanos int64) {
		l := decisionLine{stage: s, decision: s, agent: s, shadow: s, reasons: strings.Split(reasons, "|"), class: s,
			method: s, host: s, path: s, amount: s, payTo: s, atomic: s, network: s, scheme: s, receipt: s, holdID: s,
			latencyMs: float64(micros) / 1000}
		checkDecisionLine(t, time.Unix(0, nanos).UTC(), &l)
	})
}

// BenchmarkDecisionLine is the decision line of an allowed 402, through slog's JSON handler (as every decision
// was logged before issue 36's decode402) and written by hand into logout's buffered output, both discarded.
func BenchmarkDecisionLine(b *testing.B) {
	l := decisionLine{stage: "challenge", decision: "allow", agent: "default", reasons: []string{"allow: all rules passed"},
		class: "all_rules_passed", method: "GET", host: "127.0.0.1:18443", path: "/402", amount: "0.01",
		payTo: "0xf54127927F219FB78C8D1A1fF3D7dc6D7f70C98E", atomic: "10000", network: "eip155:84532", scheme: "exact",
		receipt: "rcpt_0123456789abcdef0123456789abcdef", latencyMs: 0.123}
	b.Run("slog", func(b *testing.B) {
		log := slog.New(slog.NewJSONHandler(io.Discard, nil))
		b.ReportAllocs()
		for b.Loop() {
			var attrs [decisionFields]slog.Attr
			log.LogAttrs(context.Background(), slog.LevelInfo, "decision", decisionAttrs(&attrs, &l)...)
		}
	})
	b.Run("hand", func(b *testing.B) {
		out := logout.NewWriter(io.Discard, logout.FlushDelay)
		defer out.Close()
		h := logout.NewHandler(out, slog.LevelInfo)
		b.ReportAllocs()
		for b.Loop() {
			if !writeDecisionLine(h, time.Now(), &l) {
				b.Fatal("left to slog")
			}
		}
	})
}

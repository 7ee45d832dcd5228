package proxy

import (
	"encoding/base64"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/elazarl/goproxy"

	"github.com/payguard/payguard/policy"
	"github.com/payguard/payguard/store/memory"
)

// benchChallenge is the v2 402 proxy-bench's upstream answers (the official npm seller's field order).
const benchChallenge = `{"x402Version":2,"error":"Payment required","resource":{"url":"https://127.0.0.1:18443/402",` +
	`"description":"Weather report (proxy-bench upstream)","mimeType":"application/json"},` +
	`"accepts":[{"scheme":"exact","network":"eip155:84532","amount":"10000",` +
	`"asset":"0x036CbD53842c5426634e7929541eC2318f3dCF7e","payTo":"0xf54127927F219FB78C8D1A1fF3D7dc6D7f70C98E",` +
	`"maxTimeoutSeconds":60,"extra":{"name":"USDC","version":"2"}}]}`

// BenchmarkGuardChallenge is the proxy's own work on an intercepted 402, in process and without the
// network: read and decode the challenge, decide (the real engine and ES256 receipt), reserve, record the
// ticket, narrow the challenge, log the decision line (to io.Discard) and count it. The memory store, so
// the figure is CPU, not fsync. docs/benchmarks/proxy.md has the end-to-end figures.
func BenchmarkGuardChallenge(b *testing.B) {
	benchGuardChallenge(b, memory.New(), nil)
}

// benchGuardChallenge is BenchmarkGuardChallenge's loop on st, with the proxy options given; around the
// loop alone, onLoop (when set) is called before it and the function it returns after it.
func benchGuardChallenge(b *testing.B, st *memory.Store, onLoop func() func(), opts ...harnessOption) {
	rules := testRules()
	rules.DailyCapUSD = policy.USD(1_000_000_000_000_000) // the bench never runs out of budget
	// Every iteration leaves an unpaid ticket: the per-site bound (unpaid.go) is out of the way.
	p, _, _ := newTestProxy(b, st, rules, append(opts, maxUnpaid(1<<30))...)
	defer p.Close()
	header := base64.StdEncoding.EncodeToString([]byte(benchChallenge))
	req, _ := http.NewRequest(http.MethodGet, "https://127.0.0.1:18443/402", nil)
	b.ReportAllocs()
	if onLoop != nil {
		defer onLoop()()
	}
	for b.Loop() {
		resp := &http.Response{StatusCode: http.StatusPaymentRequired, Header: http.Header{
			"Payment-Required": {header}, "Content-Type": {"application/json; charset=utf-8"}},
			Body: io.NopCloser(strings.NewReader("{}")), Request: req, ProtoMajor: 1, ProtoMinor: 1}
		ctx := &goproxy.ProxyCtx{Req: req, UserData: &reqState{start: time.Now()}}
		out := p.onResponse(resp, ctx)
		if out.Header.Get(HeaderDecision) != allow {
			b.Fatalf("decision %q, status %d", out.Header.Get(HeaderDecision), out.StatusCode)
		}
		io.Copy(io.Discard, out.Body)
	}
}

// BenchmarkHostileChallenge is the proxy's work on hostile 402s at a 16 KB URL (amplification_test.go):
// 15,000 empty options in a 45 KB v1 body (refused while reading: 403), and 32 empty options, the most
// that is read (decided by the engine: a signed block).
func BenchmarkHostileChallenge(b *testing.B) {
	for _, n := range []int{15000, 32} {
		b.Run(fmt.Sprintf("options=%d", n), func(b *testing.B) {
			p, _, _ := newTestProxy(b, memory.New(), testRules())
			defer p.Close()
			body := hostileBody(n)
			b.ReportAllocs()
			for b.Loop() {
				if out := guard402(p, longURL, nil, body); out.StatusCode != http.StatusForbidden {
					b.Fatalf("status %d", out.StatusCode)
				}
			}
		})
	}
}

// BenchmarkGuardChallengeBesideHostile is BenchmarkGuardChallenge's normal 402 while another goroutine
// decides hostile 402s (15,000 options at a 16 KB URL) without pause: compare its ns/op with
// BenchmarkGuardChallenge's for the delay a hostile seller adds to everyone else.
func BenchmarkGuardChallengeBesideHostile(b *testing.B) {
	rules := testRules()
	rules.DailyCapUSD = policy.USD(1_000_000_000_000_000)
	p, _, _ := newTestProxy(b, memory.New(), rules, maxUnpaid(1<<30))
	defer p.Close()
	stop := make(chan struct{})
	done := make(chan struct{})
	go func() {
		defer close(done)
		body := hostileBody(15000)
		for {
			select {
			case <-stop:
				return
			default:
				guard402(p, longURL, nil, body)
			}
		}
	}()
	b.ReportAllocs()
	for b.Loop() {
		if out := guard402(p, "https://127.0.0.1:18443/402", normalChallenge(), "{}"); out.Header.Get(HeaderDecision) != allow {
			b.Fatalf("decision %q", out.Header.Get(HeaderDecision))
		}
	}
	b.StopTimer()
	close(stop)
	<-done
}

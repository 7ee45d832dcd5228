package proxy

import (
	"context"
	"encoding/base64"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/elazarl/goproxy"

	"github.com/payguard/payguard/screening"
	"github.com/payguard/payguard/store/memory"
)

// countingDomains answers every domain as a valid, old one with an A record, counting the questions per domain.
type countingDomains struct {
	mu    sync.Mutex
	asked map[string]int
}

func (d *countingDomains) Facts(_ context.Context, domain string) screening.DomainFacts {
	d.mu.Lock()
	d.asked[domain]++
	d.mu.Unlock()
	age, yes := 3650, true
	return screening.DomainFacts{Valid: true, AgeDays: &age, HasA: &yes, HasMX: &yes}
}

// TestDomainFactsAskedOncePerDecision: a decided 402 asks the domain checker once, for the host the agent
// requested (issue 36: the proxy asked it first, then the engine again, a second cache lookup per decision).
func TestDomainFactsAskedOncePerDecision(t *testing.T) {
	d := &countingDomains{asked: map[string]int{}}
	p, _, _ := newTestProxy(t, memory.New(), testRules(), withDomains(d), maxUnpaid(1<<30))
	defer p.Close()
	header := base64.StdEncoding.EncodeToString([]byte(benchChallenge))
	req, _ := http.NewRequest(http.MethodGet, "https://127.0.0.1:18443/402", nil)
	resp := &http.Response{StatusCode: http.StatusPaymentRequired, Header: http.Header{"Payment-Required": {header}},
		Body: io.NopCloser(strings.NewReader("{}")), Request: req, ProtoMajor: 1, ProtoMinor: 1}
	out := p.onResponse(resp, &goproxy.ProxyCtx{Req: req, UserData: &reqState{start: time.Now()}})
	if got := out.Header.Get(HeaderDecision); got != allow {
		t.Fatalf("decision %q, status %d", got, out.StatusCode)
	}
	if len(d.asked) != 1 || d.asked["127.0.0.1"] != 1 {
		t.Fatalf("domain checker asked %v, want 127.0.0.1 once", d.asked)
	}
}

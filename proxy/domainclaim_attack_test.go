package proxy

import (
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/elazarl/goproxy"

	"github.com/payguard/payguard/store/memory"
	"github.com/payguard/payguard/x402"
)

// With the proxy's own domain look-up gone (b062ddd: the engine asks, from the input's merchant domain),
// the domain judged must still be the host the agent asked, never one the seller claims (attack2): a v2
// challenge whose resource.url names an old, trusted-looking domain, a v1 body whose options name one in
// their resource, and a v1 challenge carrying a top-level resource. Each decision asks the checker about
// the requested host only.
func TestDomainFactsAreTheRequestedHostsNotTheSellersClaim(t *testing.T) {
	claim := "https://old-trusted.example/402"
	v2 := &x402.PaymentRequired{X402Version: 2, Resource: &x402.ResourceInfo{URL: claim},
		Accepts: []x402.Requirement{offer(x402.V2, "eip155:84532", baseSepoliaUSDC, sellerPayTo, cent)}}
	v1opt := offer(x402.V1, "base-sepolia", baseSepoliaUSDC, sellerPayTo, cent)
	v1opt.Resource = claim
	v1 := &x402.PaymentRequired{X402Version: 1, Accepts: []x402.Requirement{v1opt}}
	v1top := &x402.PaymentRequired{X402Version: 1, Resource: &x402.ResourceInfo{URL: claim}, Accepts: []x402.Requirement{v1opt}}
	hv, err := x402.EncodeHeaderJSON(v2)
	if err != nil {
		t.Fatal(err)
	}
	b1, _ := json.Marshal(v1)
	b1top, _ := json.Marshal(v1top)
	cases := map[string]func() *http.Response{
		"v2 header": func() *http.Response {
			return &http.Response{StatusCode: 402, Header: http.Header{"Payment-Required": {hv}}, Body: io.NopCloser(strings.NewReader("{}"))}
		},
		"v1 body": func() *http.Response {
			return &http.Response{StatusCode: 402, Header: http.Header{"Content-Type": {"application/json"}}, Body: io.NopCloser(strings.NewReader(string(b1)))}
		},
		"v1 body, top resource": func() *http.Response {
			return &http.Response{StatusCode: 402, Header: http.Header{"Content-Type": {"application/json"}}, Body: io.NopCloser(strings.NewReader(string(b1top)))}
		},
	}
	for name, mk := range cases {
		d := &countingDomains{asked: map[string]int{}}
		p, _, _ := newTestProxy(t, memory.New(), testRules(), withDomains(d), maxUnpaid(1<<30))
		req, _ := http.NewRequest(http.MethodGet, "https://shop.example:8443/402", nil)
		resp := mk()
		resp.Request, resp.ProtoMajor, resp.ProtoMinor = req, 1, 1
		out := p.onResponse(resp, &goproxy.ProxyCtx{Req: req, UserData: &reqState{start: time.Now()}})
		p.Close()
		if out.Header.Get(HeaderDecision) == "" {
			t.Fatalf("%s: no decision (status %d)", name, out.StatusCode)
		}
		if d.asked["old-trusted.example"] != 0 || d.asked["shop.example"] == 0 {
			t.Errorf("%s: domain checker asked %v, want shop.example (the requested host) only", name, d.asked)
		}
	}
}

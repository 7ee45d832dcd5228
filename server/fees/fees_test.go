package fees

import (
	"context"
	"encoding/json"
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	"github.com/payguard/payguard/x402"
)

func TestUSD(t *testing.T) {
	for atomic, want := range map[uint64]string{10000: "$0.01", 20000: "$0.02", 5000: "$0.005", 1: "$0.000001", 1_500_000: "$1.50", 0: "$0.00"} {
		if got := USD(atomic); got != want {
			t.Errorf("USD(%d) = %s, want %s", atomic, got, want)
		}
	}
}

func TestCanonicalJSON(t *testing.T) {
	got, err := canonicalJSON(map[string]any{"b": "x\"\\\n\u0001<&>é", "a": 1, "c": int64(1795323957)})
	if err != nil {
		t.Fatal(err)
	}
	// JCS: sorted keys, no whitespace, only '"', '\\' and control characters escaped (no HTML escaping).
	want := `{"a":1,"b":"x\"\\\n\u0001<&>é","c":1795323957}`
	if string(got) != want {
		t.Fatalf("got  %s\nwant %s", got, want)
	}
	if _, err := canonicalJSON(map[string]any{"f": 1.5}); err == nil {
		t.Fatal("a float was accepted")
	}
	if _, err := canonicalJSON(map[string]any{"s": "\xff"}); err == nil {
		t.Fatal("invalid UTF-8 was accepted")
	}
}

func TestPaymentFromJSON(t *testing.T) {
	cases := map[string]string{
		`{"x402Version":3,"payload":{}}`:                      "invalid_x402_version",
		`{"x402Version":2,"payload":{}}`:                      "invalid_payload", // no accepted
		`{"x402Version":1,"scheme":"exact","payload":{}}`:     "invalid_payload", // no network
		`{"x402Version":1,"scheme":"exact","network":"base"}`: "invalid_payload", // no payload
		`[1]`: "invalid_payload",
	}
	for in, reason := range cases {
		_, err := PaymentFromJSON([]byte(in))
		var pe *PaymentError
		if !errors.As(err, &pe) || pe.Reason != reason {
			t.Errorf("%s: %v, want %s", in, err, reason)
		}
	}
	p, err := PaymentFromJSON([]byte(`{"x402Version":1,"scheme":"exact","network":"base","payload":{"signature":"0x01","authorization":{"from":"0xAB","nonce":"0xN"}}}`))
	if err != nil || p.Nonce() != "0xN" || p.NonceKey("eip155:8453") != "x402-nonce:eip155:8453|0xab|0xn" {
		t.Fatalf("%v %+v", err, p)
	}
}

func TestMemoryNonces(t *testing.T) {
	now := time.Unix(1000, 0)
	m := NewMemoryNonces(func() time.Time { return now })
	if err := m.Mark(context.Background(), "k", time.Minute); err != nil {
		t.Fatal(err)
	}
	if err := m.Mark(context.Background(), "k", time.Minute); !errors.Is(err, ErrAlreadyUsed) {
		t.Fatalf("second mark: %v", err)
	}
	now = now.Add(2 * time.Minute)
	if err := m.Mark(context.Background(), "k", time.Minute); err != nil {
		t.Fatalf("after expiry: %v", err)
	}
	if err := m.Release(context.Background(), "k"); err != nil {
		t.Fatal(err)
	}
	if err := m.Mark(context.Background(), "k", time.Minute); err != nil {
		t.Fatalf("after release: %v", err)
	}
}

func TestSettleNotSentIsUnavailableNotUnknown(t *testing.T) {
	// A listener that is closed at once: the dial fails, nothing was written.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	f := NewFacilitator("http://"+addr, nil, time.Second, time.Second)
	_, err = f.Settle(context.Background(), FacilitatorRequest{X402Version: 2, PaymentPayload: json.RawMessage(`{}`)})
	if !errors.Is(err, ErrFacilitatorUnavailable) || errors.Is(err, ErrSettlementUnknown) {
		t.Fatalf("got %v", err)
	}
}

func TestSettleTimeoutAfterSendIsUnknown(t *testing.T) {
	var calls atomic.Int32
	release := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		calls.Add(1)
		<-release
	}))
	defer srv.Close()
	defer close(release)
	f := NewFacilitator(srv.URL, nil, time.Second, 100*time.Millisecond)
	_, err := f.Settle(context.Background(), FacilitatorRequest{X402Version: 2, PaymentPayload: json.RawMessage(`{}`)})
	if !errors.Is(err, ErrSettlementUnknown) || calls.Load() != 1 {
		t.Fatalf("got %v after %d calls", err, calls.Load())
	}
}

func TestVerifyVerdicts(t *testing.T) {
	var answer atomic.Value
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		a := answer.Load().([2]string)
		if a[0] == "400" {
			w.WriteHeader(400)
		}
		w.Write([]byte(a[1]))
	}))
	defer srv.Close()
	f := NewFacilitator(srv.URL, nil, time.Second, time.Second)
	req := FacilitatorRequest{X402Version: 2, PaymentPayload: json.RawMessage(`{}`)}
	answer.Store([2]string{"400", `{"isValid":false,"invalidReason":"insufficient_funds"}`})
	if v, err := f.Verify(context.Background(), req); err != nil || v.IsValid || v.InvalidReason != "insufficient_funds" {
		t.Fatalf("%+v %v", v, err)
	}
	answer.Store([2]string{"200", `{"invalidReason":"x"}`}) // no isValid: never read as a verdict
	if _, err := f.Verify(context.Background(), req); !errors.Is(err, ErrFacilitatorUnavailable) {
		t.Fatalf("%v", err)
	}
}

func TestAcceptedMatchesExtraSubset(t *testing.T) {
	want := requirementV2{Scheme: "exact", Network: "eip155:8453", Amount: "10000", Asset: "0xA", PayTo: "0xB",
		MaxTimeoutSeconds: 60, Extra: assetExtra{Name: "USD Coin", Version: "2"}}
	ok := `{"scheme":"exact","network":"eip155:8453","amount":"10000","asset":"0xA","payTo":"0xB","maxTimeoutSeconds":60,"extra":{"name":"USD Coin","version":"2","more":1}}`
	if !acceptedMatches(req(t, ok), want) {
		t.Fatal("a superset extra must match")
	}
	for _, bad := range []string{
		`{"scheme":"exact","network":"eip155:8453","amount":"10001","asset":"0xA","payTo":"0xB","maxTimeoutSeconds":60,"extra":{"name":"USD Coin","version":"2"}}`,
		`{"scheme":"exact","network":"eip155:8453","amount":"10000","asset":"0xA","payTo":"0xB","maxTimeoutSeconds":60,"extra":{"name":"USDC","version":"2"}}`,
		`{"scheme":"exact","network":"eip155:8453","amount":"10000","asset":"0xA","payTo":"0xB","maxTimeoutSeconds":300,"extra":{"name":"USD Coin","version":"2"}}`,
	} {
		if acceptedMatches(req(t, bad), want) {
			t.Errorf("matched: %s", bad)
		}
	}
}

func req(t *testing.T, s string) *x402.Requirement {
	t.Helper()
	var r x402.Requirement
	if err := json.Unmarshal([]byte(s), &r); err != nil {
		t.Fatal(err)
	}
	return &r
}

package proxy

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/payguard/payguard/store/memory"
	"github.com/payguard/payguard/x402"
	"github.com/payguard/payguard/x402/svm/svmtest"
)

// The same signed Solana transaction is one payment in every encoding that carries it: the payment header
// without base64 padding, the transaction with another fee-payer signature (slot 0, which the facilitator
// fills in and nobody verifies before), the same transaction as a v1 payload naming the network by its v1
// name, the transaction text with padding stripped (refused as unreadable). None reaches the seller again.
// Already stopped when written (the replay key is the signed message's hash on the CAIP-2 network); kept as
// a regression test for the encodings the existing replay test does not try.
func TestAttackSolanaReplayInOtherEncodings(t *testing.T) {
	c := svmtest.Cases(t)[0]
	s := newSVMSeller(t, c)
	h := newHarness(t, memory.New(), solanaRules())
	b := h.buyer()
	url := s.srv.URL + "/weather"
	resp, body := b.get(url, nil)
	pr := b.readChallenge(resp, body)
	if resp, body := b.get(url, svmPayment(t, pr, c.Raw)); resp.StatusCode != http.StatusOK {
		t.Fatalf("official Solana payment: %d %s", resp.StatusCode, body)
	}
	resp, body = b.get(url, nil)
	pr = b.readChallenge(resp, body)
	unpadded := strings.TrimRight(headerValue(svmPayment(t, pr, c.Raw)), "=")
	otherFeePayerSig := bytes.Clone(c.Raw)
	otherFeePayerSig[1] ^= 0xff // first byte of signature slot 0, after the one-byte signature count
	v1 := func(raw []byte, txText string) string {
		if txText == "" {
			txText = base64.StdEncoding.EncodeToString(raw)
		}
		doc := fmt.Sprintf(`{"x402Version":1,"scheme":"exact","network":"solana-devnet","payload":{"transaction":%q}}`, txText)
		return base64.StdEncoding.EncodeToString([]byte(doc))
	}
	for name, value := range map[string]string{
		"header without padding":      unpadded,
		"another fee-payer signature": headerValue(svmPayment(t, pr, otherFeePayerSig)),
		"v1 payload, v1 network name": v1(c.Raw, ""),
		"transaction text unpadded":   v1(nil, strings.TrimRight(base64.StdEncoding.EncodeToString(c.Raw), "=")),
	} {
		resp, body := b.get(url, http.Header{x402.HeaderPaymentSignature: {value}})
		if r := decodeRefusal(t, resp, body); r.Decision == "allow" {
			t.Errorf("%s: allowed %s", name, body)
		} else if name != "transaction text unpadded" && r.ReasonClass != "payment_replay" {
			var out map[string]any
			json.Unmarshal(body, &out)
			t.Errorf("%s: refused as %s, want payment_replay (%v)", name, r.ReasonClass, out)
		}
	}
	if s.seen.Load() != 1 {
		t.Errorf("replays reached the seller: it saw %d payments", s.seen.Load())
	}
}

// headerValue is the value of a one-header set as svmPayment builds it (its key spelled as x402 spells it).
func headerValue(h http.Header) string {
	for _, v := range h {
		return v[0]
	}
	return ""
}

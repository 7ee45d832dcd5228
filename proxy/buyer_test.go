package proxy

import (
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"io"
	"net/http"
	"strconv"
	"testing"
	"time"

	"github.com/payguard/payguard/x402"
)

// buyer is an x402 client like the SDK wrappers: one unpaid request, then one paid retry of the same
// request built from the first offered option of the challenge it saw.
type buyer struct {
	t      *testing.T
	client *http.Client
}

type exchange struct {
	first     *http.Response
	firstBody []byte
	challenge *x402.PaymentRequired // as the buyer saw it (after payguard)
	header    string                // the payment header name used
	payment   string                // the payment header value sent
	paid      *http.Response
	paidBody  []byte
}

func (b *buyer) get(url string, hdr http.Header) (*http.Response, []byte) {
	b.t.Helper()
	return b.do(http.MethodGet, url, hdr)
}

func (b *buyer) do(method, url string, hdr http.Header) (*http.Response, []byte) {
	b.t.Helper()
	req, err := http.NewRequest(method, url, nil)
	if err != nil {
		b.t.Fatal(err)
	}
	for k, v := range hdr {
		req.Header[k] = v
	}
	resp, err := b.client.Do(req)
	if err != nil {
		b.t.Fatalf("%s %s: %v", method, url, err)
	}
	body, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil {
		b.t.Fatalf("%s %s: read body: %v", method, url, err)
	}
	return resp, body
}

// readChallenge reads a 402 the way @x402/fetch does: the header first, else a v1 body.
func (b *buyer) readChallenge(resp *http.Response, body []byte) *x402.PaymentRequired {
	b.t.Helper()
	if h := resp.Header.Get(x402.HeaderPaymentRequired); h != "" {
		pr, err := x402.DecodePaymentRequiredHeader(h)
		if err != nil {
			b.t.Fatalf("buyer cannot read PAYMENT-REQUIRED: %v", err)
		}
		return pr
	}
	pr, err := x402.ParsePaymentRequired(body)
	if err != nil {
		b.t.Fatalf("buyer cannot read the 402 body %q: %v", body, err)
	}
	return pr
}

// pay runs the whole exchange. tamper may change the payload before it is signed and sent.
func (b *buyer) pay(url string, tamper func(*x402.PaymentPayload, *x402.EIP3009Authorization)) exchange {
	b.t.Helper()
	var ex exchange
	ex.first, ex.firstBody = b.get(url, nil)
	if ex.first.StatusCode != http.StatusPaymentRequired {
		return ex
	}
	ex.challenge = b.readChallenge(ex.first, ex.firstBody)
	ex.header, ex.payment = b.sign(ex.challenge, 0, tamper)
	ex.paid, ex.paidBody = b.get(url, http.Header{ex.header: {ex.payment},
		"Access-Control-Expose-Headers": {"PAYMENT-RESPONSE,X-PAYMENT-RESPONSE"}})
	return ex
}

// sign builds the payment header for option i of pr (the signature is a placeholder: the test seller
// checks terms and nonces, as a facilitator would, but not the ECDSA signature).
func (b *buyer) sign(pr *x402.PaymentRequired, i int, tamper func(*x402.PaymentPayload, *x402.EIP3009Authorization)) (header, value string) {
	b.t.Helper()
	opt := pr.Accepts[i]
	var nonce [32]byte
	rand.Read(nonce[:])
	auth := x402.EIP3009Authorization{From: buyerAddress, To: opt.PayTo, Value: opt.Amount, ValidAfter: "0",
		ValidBefore: strconv.FormatInt(time.Now().Add(time.Minute).Unix(), 10), Nonce: "0x" + hex.EncodeToString(nonce[:])}
	pl := &x402.PaymentPayload{X402Version: pr.X402Version}
	if pr.X402Version == x402.V2 {
		pl.Resource, pl.Accepted = pr.Resource, &opt
		header = x402.HeaderPaymentSignature
	} else {
		pl.Scheme, pl.Network = opt.Scheme, opt.Network
		header = x402.HeaderXPayment
	}
	if tamper != nil {
		tamper(pl, &auth)
	}
	raw, err := json.Marshal(map[string]any{"signature": "0x" + hex.EncodeToString(make([]byte, 65)), "authorization": auth})
	if err != nil {
		b.t.Fatal(err)
	}
	pl.Payload = raw
	value, err = x402.EncodeHeaderJSON(pl)
	if err != nil {
		b.t.Fatal(err)
	}
	return header, value
}

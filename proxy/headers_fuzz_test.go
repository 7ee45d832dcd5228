package proxy

import (
	"net/http"
	"net/textproto"
	"strings"
	"testing"

	"github.com/payguard/payguard/x402"
)

// refKey is an independent reading of a header name as the most lenient common stack reads it (WSGI/CGI
// key, nginx variable, with trailing junk trimmed): the classifier must agree with it. Upper-casing is
// ASCII only: Go's server (and Node's) refuse header names with bytes outside the token set with 400, so
// Unicode case mappings (Python's "ſ".upper() == "S") never meet a name that reached the proxy.
func refKey(name string) string {
	up := strings.Map(func(r rune) rune {
		if 'a' <= r && r <= 'z' {
			return r - 'a' + 'A'
		}
		return r
	}, name)
	return strings.TrimRight(strings.ReplaceAll(up, "-", "_"), "_ \t")
}

// FuzzHeaderName holds the header-name classifier to what server stacks fold together: a name is a given
// payment or x402 header exactly when its lenient reading is that header's; the canonical spelling is
// exactly the case-insensitive one; Go's canonicalization never changes a verdict; X-Payguard-* in any
// spelling is payguard's; and a request carrying a non-canonical spelling never yields a payment to release.
func FuzzHeaderName(f *testing.F) {
	for _, s := range []string{"X-PAYMENT", "x_payment", "X-PAYMENT-", "PAYMENT_SIGNATURE_", "Payment-Signature",
		"PAYMENT-REQUIRED", "payment_response", "X-PAYMENT-RESPONSE\t", "X-Payguard-Decision", "x_payguard", "X-Payguardian",
		"Content-Type", "", "-", "_X-PAYMENT", "X--PAYMENT", "X-PAYMENT-_- "} {
		f.Add(s)
	}
	names := map[string]headerKind{
		x402.HeaderXPayment: headerPayment, x402.HeaderPaymentSignature: headerPayment,
		x402.HeaderPaymentRequired: headerX402Resp, x402.HeaderPaymentResponse: headerX402Resp,
		x402.HeaderXPaymentResponse: headerX402Resp,
	}
	f.Fuzz(func(t *testing.T, name string) {
		c := classifyHeader(name)
		if fold := foldHeaderName(name); foldHeaderName(fold) != fold {
			t.Fatalf("fold(%q) = %q is not a fixed point", name, fold)
		}
		want, wantCanon := headerOther, ""
		for n, kind := range names {
			if refKey(name) == refKey(n) {
				want, wantCanon = kind, n
			}
		}
		if k := refKey(name); want == headerOther && (k == "X_PAYGUARD" || strings.HasPrefix(k, "X_PAYGUARD_")) {
			want = headerPayguard
		}
		if c.kind != want || c.canonical != wantCanon {
			t.Fatalf("classify(%q) = %+v, want kind %d canonical %q", name, c, want, wantCanon)
		}
		if wantCanon != "" && c.exact != strings.EqualFold(name, wantCanon) {
			t.Fatalf("classify(%q).exact = %v", name, c.exact)
		}
		if g := classifyHeader(textproto.CanonicalMIMEHeaderKey(name)); g.kind != c.kind || g.canonical != c.canonical || g.exact != c.exact {
			t.Fatalf("Go's canonical form %q classifies as %+v, %q as %+v", textproto.CanonicalMIMEHeaderKey(name), g, name, c)
		}
		h := http.Header{name: {"v"}, "X-Payment": {"w"}}
		got, _, refuse := requestPayment(h)
		if c.kind == headerPayment && !c.exact && (got != "" || refuse == "") {
			t.Fatalf("request with %q and X-Payment: released %q, refusal %q", name, got, refuse)
		}
		stripPayguardHeaders(h)
		if _, ok := h[name]; ok == (c.kind == headerPayguard) {
			t.Fatalf("stripPayguardHeaders kept=%v for %q (kind %d)", ok, name, c.kind)
		}
	})
}

package proxy

import (
	"fmt"
	"io"
	"net/http"
	"strings"

	"github.com/payguard/payguard/x402"
)

// Header names: one classifier for every path (requests, responses, trailers, Connection and Trailer
// declarations), so that a guarantee about "the payment header" holds for every spelling a server stack
// would read as that header.
//
// What common stacks fold together:
//   - Go net/http (textproto.CanonicalMIMEHeaderKey), Node's llhttp (req.headers lower-cases names), ASGI
//     servers (uvicorn, hypercorn: lower-cased byte names), Starlette and fetch's Headers: case only.
//   - Case and "_" == "-": WSGI (PEP 3333 environ key "HTTP_" + name upper-cased, "-" as "_"; Python's
//     wsgiref.simple_server keeps underscore names, and joins X_PAYMENT and X-PAYMENT into one
//     HTTP_X_PAYMENT), CGI (RFC 3875 4.1.18; Go's net/http/cgi too), PHP's $_SERVER, Django's META for WSGI
//     and ASGI (name.upper().replace("-", "_"); only its runserver drops underscore names, CVE-2015-0219),
//     and nginx's $http_<name> variables. nginx drops underscore names by default (underscores_in_headers
//     off, ignore_invalid_headers on, nginx.org/r/underscores_in_headers) but passes them when that is on;
//     gunicorn >= 22 drops them by default (header_map=drop; commit 72b8970) but not with
//     header_map=dangerous. Traefik's docs (security/header-underscores) describe the same spoofing.
//   - Trailing junk: whitespace before the colon is refused by Go (400, as RFC 9112 5.1 requires) and by
//     llhttp unless run with --insecure-http-parser; a trailing "-" or "_" becomes a trailing "_" in a
//     WSGI/CGI key, which key-trimming code folds away. payguard folds trailing "-", "_", spaces and tabs,
//     so no such name reaches a seller unjudged.
//
// A name is a payment header when its folded form equals a payment header's: the canonical spelling
// (equal ignoring case, as every stack reads it) is decided; any other spelling is refused with 403,
// because payguard would judge one header while the seller reads another.

// headerKind is what a header name is to payguard.
type headerKind int

const (
	headerOther    headerKind = iota
	headerPayment             // a paying request's header: X-PAYMENT, PAYMENT-SIGNATURE
	headerX402Resp            // an x402 header a response carries to the agent: PAYMENT-REQUIRED, PAYMENT-RESPONSE, X-PAYMENT-RESPONSE
	headerPayguard            // payguard's own decision headers: X-Payguard-*
)

// headerClass is the classification of one header name.
type headerClass struct {
	kind      headerKind
	canonical string // the x402 name it stands for (headerPayment, headerX402Resp)
	exact     bool   // the name is that header's canonical spelling (equal ignoring case)
}

// x402HeaderKinds maps the folded x402 header names to their kind and canonical name.
var x402HeaderKinds = map[string]headerClass{}

func init() {
	for _, n := range []string{x402.HeaderXPayment, x402.HeaderPaymentSignature} {
		x402HeaderKinds[foldHeaderName(n)] = headerClass{kind: headerPayment, canonical: n}
	}
	for _, n := range []string{x402.HeaderPaymentRequired, x402.HeaderPaymentResponse, x402.HeaderXPaymentResponse} {
		x402HeaderKinds[foldHeaderName(n)] = headerClass{kind: headerX402Resp, canonical: n}
	}
}

// payguardFolded is the folded prefix of payguard's own headers.
var payguardFolded = foldHeaderName(headerPrefix)

// foldHeaderName is a header name as the most lenient common stack reads it: lower-cased, "_" read as
// "-", and trailing "-", "_", spaces and tabs dropped.
func foldHeaderName(name string) string { return string(appendFolded(nil, name)) }

// appendFolded appends foldHeaderName(name) to b.
func appendFolded(b []byte, name string) []byte {
	name = strings.TrimRight(name, "-_ \t")
	for i := 0; i < len(name); i++ {
		c := name[i]
		switch {
		case c == '_':
			c = '-'
		case 'A' <= c && c <= 'Z':
			c += 'a' - 'A'
		}
		b = append(b, c)
	}
	return b
}

// classifyHeader says what a header name is to payguard. It runs for every header of every request and
// response (issue 36: pass-through level with goproxy), so a name of up to 64 bytes is folded on the stack:
// no allocation (a map index by string(bytes) does not copy).
func classifyHeader(name string) headerClass {
	var buf [64]byte
	f := appendFolded(buf[:0], name)
	if c, ok := x402HeaderKinds[string(f)]; ok {
		c.exact = strings.EqualFold(name, c.canonical)
		return c
	}
	// payguardFolded is "x-payguard" (the prefix's trailing "-" folds away): that name alone counts too.
	if len(f) >= len(payguardFolded) && string(f[:len(payguardFolded)]) == payguardFolded &&
		(len(f) == len(payguardFolded) || f[len(payguardFolded)] == '-') {
		return headerClass{kind: headerPayguard}
	}
	return headerClass{kind: headerOther}
}

// isPaymentHeader reports whether name is any spelling of a paying request's header.
func isPaymentHeader(name string) bool { return classifyHeader(name).kind == headerPayment }

// stripPayguardHeaders deletes every header payguard alone may set (X-Payguard-*, in any spelling).
func stripPayguardHeaders(h http.Header) {
	for k := range h {
		if classifyHeader(k).kind == headerPayguard {
			delete(h, k)
		}
	}
}

// requestPayment finds the one payment header of a request. It returns the canonical name and value, or a
// refusal reason: a payment header in another spelling than its canonical one, or more than one payment
// header (several values, or both X-PAYMENT and PAYMENT-SIGNATURE).
func requestPayment(h http.Header) (name, value, refuse string) {
	n := 0
	for k, vs := range h {
		c := classifyHeader(k)
		if c.kind != headerPayment {
			continue
		}
		if !c.exact {
			return "", "", fmt.Sprintf("header %q is a non-canonical spelling of %s; send it as %s", k, c.canonical, c.canonical)
		}
		n += len(vs)
		if len(vs) > 0 {
			name, value = c.canonical, vs[0]
		}
	}
	if n > 1 {
		return "", "", "request carries more than one payment header"
	}
	return name, value, ""
}

// responseX402Spelling returns a refusal reason when a response carries an x402 header the agent reads
// (PAYMENT-REQUIRED, PAYMENT-RESPONSE, X-PAYMENT-RESPONSE) in another spelling than its canonical one, or
// one of them more than once: payguard reads the canonical header, so the agent must not read another.
func responseX402Spelling(h http.Header) string {
	for k, vs := range h {
		c := classifyHeader(k)
		if c.kind != headerX402Resp {
			continue
		}
		if !c.exact {
			return fmt.Sprintf("seller's response carries %q, a non-canonical spelling of %s", k, c.canonical)
		}
		if len(vs) > 1 {
			return fmt.Sprintf("seller's response carries %s %d times", c.canonical, len(vs))
		}
	}
	return ""
}

// stripTrailerHeaders deletes from response trailers every payguard header and every x402 header: the
// agent must not take a decision or a settlement from a trailer, which payguard cannot judge before the
// body has been passed on. Deleting in place keeps the map the writers already hold.
func stripTrailerHeaders(t http.Header) {
	for k := range t {
		if classifyHeader(k).kind != headerOther {
			delete(t, k)
		}
	}
}

// guardTrailers makes sure no response trailer can carry a payguard or x402 header to the agent. Trailers
// are known only once the body has been read to its end, so the body is wrapped to strip them there (and
// on Close). Only a response that can have trailers is wrapped (chunked, or announcing them): a 101's body
// must stay the raw connection, and wrapping a sized body would make goproxy drop its Content-Length.
func guardTrailers(resp *http.Response) {
	if resp.Trailer != nil {
		stripTrailerHeaders(resp.Trailer)
	}
	chunked := false
	for _, te := range resp.TransferEncoding {
		chunked = chunked || strings.EqualFold(te, "chunked")
	}
	if resp.Body == nil || resp.Body == http.NoBody || (!chunked && resp.Trailer == nil) {
		return
	}
	resp.Body = &trailerStripper{ReadCloser: resp.Body, resp: resp}
}

// trailerStripper strips resp's trailers when its body ends. The transport fills resp.Trailer (or sets a
// new map) during the Read that returns io.EOF, before goproxy copies the trailers to the agent.
type trailerStripper struct {
	io.ReadCloser
	resp *http.Response
}

func (t *trailerStripper) Read(p []byte) (int, error) {
	n, err := t.ReadCloser.Read(p)
	if err != nil && t.resp.Trailer != nil {
		stripTrailerHeaders(t.resp.Trailer)
	}
	return n, err
}

func (t *trailerStripper) Close() error {
	err := t.ReadCloser.Close()
	if t.resp.Trailer != nil {
		stripTrailerHeaders(t.resp.Trailer)
	}
	return err
}

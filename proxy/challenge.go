package proxy

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/payguard/payguard/internal/readlimit"
	"github.com/payguard/payguard/x402"
	"github.com/payguard/payguard/x402/jsonscan"
)

// maxChallengeBody bounds the 402 body read for a v1 challenge (SPEC §10's request body limit).
const maxChallengeBody = x402.MaxBodyBytes

// paymentRequiredKey is x402.HeaderPaymentRequired as http.Header keys it: Get and Set canonicalize a key
// that is not in this spelling into a new string each time (one allocation per 402 for each).
var paymentRequiredKey = http.CanonicalHeaderKey(x402.HeaderPaymentRequired)

// challengeReadTimeout bounds how long a 402 body may take to arrive (SPEC §10's body read deadline).
const challengeReadTimeout = 10 * time.Second

// challengeSource says where a challenge was found.
type challengeSource int

const (
	notX402     challengeSource = iota
	fromHeader                  // v2 PAYMENT-REQUIRED
	fromBody                    // a JSON body with x402Version (v1, or a v2 object without the header)
	undecodable                 // looks like x402 but cannot be read: fail closed
)

// readChallenge finds the x402 challenge in a 402: the v2 PAYMENT-REQUIRED header first, else a JSON body
// with x402Version. It leaves resp.Body readable from the start. The body is judged as clients read it,
// without a UTF-8 byte-order mark (see readBody). Without a header, a body in a content coding, or one that
// mentions x402Version but cannot be read whole (over 64 KiB, or unparsable), is undecodable, because the
// agent could still pay from it; any other body is passed on unchanged as not x402.
// A header challenge is decoded through memo (challengememo.go; nil: decoded each time), and entry is memo's
// entry for it when it keeps one.
func readChallenge(resp *http.Response, memo *challengeMemo) (pr *x402.PaymentRequired, entry *memoChallenge, body challengeBody, src challengeSource, why string) {
	raw, complete, err := peekBody(resp)
	if err != nil {
		return nil, nil, body, undecodable, "402 body could not be read: " + err.Error()
	}
	body = readBody(resp.Header.Get("Content-Encoding"), raw, complete)
	if h := resp.Header.Get(paymentRequiredKey); h != "" {
		pr, entry, err := memo.decodeHeader(h)
		if err != nil {
			return nil, nil, body, undecodable, "PAYMENT-REQUIRED header is not a readable x402 challenge: " + err.Error()
		}
		return pr, entry, body, fromHeader, ""
	}
	if body.json == nil && body.coding == "" && !bytes.Contains(raw, []byte("x402Version")) {
		return nil, nil, body, notX402, "" // a long body whose first 64 KiB never mention x402
	}
	pr, src, why = judgeBody(body)
	return pr, nil, body, src, why
}

// judgeBody classifies a 402 body: no challenge (notX402), a challenge (fromBody), or one that may be a
// challenge but cannot be read (undecodable, with why): not read whole, or mentioning x402Version without
// parsing.
func judgeBody(body challengeBody) (*x402.PaymentRequired, challengeSource, string) {
	switch {
	case body.json == nil && body.coding != "":
		return nil, undecodable, "402 body is in a content coding payguard cannot read (" + body.coding + ")"
	case body.json == nil:
		return nil, undecodable, fmt.Sprintf("x402 challenge body exceeds %d bytes", maxChallengeBody)
	case !hasX402Version(body.json):
		if bytes.Contains(body.json, []byte("x402Version")) {
			return nil, undecodable, "402 body mentions x402Version but is not a readable JSON object"
		}
		return nil, notX402, ""
	}
	pr, err := x402.ParsePaymentRequired(body.json)
	if err != nil {
		return nil, undecodable, "402 body is not a readable x402 challenge: " + err.Error()
	}
	return pr, fromBody, ""
}

// challengeBody is a 402 body as payguard judged it.
type challengeBody struct {
	json   []byte // the body as a client's JSON parser reads it; nil when it could not be read whole
	coding string // the content coding it arrived in, which payguard does not read ("" for none)
}

// readBody prepares a 402 body for judging. goproxy drops the agent's Accept-Encoding and Go's transport
// asks for gzip and undoes it, so a body still in a content coding is one the seller sent unasked (br,
// deflate, ...): it is not read, and neither is an incomplete body. A leading UTF-8 byte-order mark is
// dropped, since fetch's response.json() drops it too.
func readBody(coding string, raw []byte, complete bool) challengeBody {
	b := challengeBody{coding: strings.ToLower(strings.TrimSpace(coding))}
	if b.coding == "identity" {
		b.coding = ""
	}
	if complete && b.coding == "" {
		if b.json = bytes.TrimPrefix(raw, []byte("\xEF\xBB\xBF")); b.json == nil {
			b.json = []byte{} // an empty body is read too: there is nothing in it
		}
	}
	return b
}

// heldBody is the body of a response the guard may rewrite (a 402, an inspected MCP answer) as the round
// trip returned it (roundTrip), whose content the guard may replace. goproxy sends a response whose body is not the very one its round trip returned without its
// Content-Length: over plain HTTP it drops the header (net/http then sizes only a body that fits its 2 KiB
// buffer and chunks a longer one), and over MITM'd HTTPS it sends the body chunked, in five TLS records and
// write(2)s instead of two (issue 36: the HTTPS 402 cost ~80 µs more than the plain one). So the guard
// changes what such a body reads (replaceBody), never which body it is, and the response goes out with
// the length setBody states, or the seller's own.
type heldBody struct{ io.ReadCloser }

// holdBody wraps resp's body as a heldBody. A 101's body stays the raw connection goproxy splices (a
// wrapper would hide its io.ReadWriter), and no body stays none.
func holdBody(resp *http.Response) {
	if resp.StatusCode != http.StatusSwitchingProtocols && resp.Body != nil && resp.Body != http.NoBody {
		resp.Body = &heldBody{resp.Body}
	}
}

// replaceBody makes rc what resp's body reads: inside the held body when there is one (the same body
// goproxy got from the round trip), else as resp.Body.
func replaceBody(resp *http.Response, rc io.ReadCloser) {
	if h, ok := resp.Body.(*heldBody); ok {
		h.ReadCloser = rc
		return
	}
	resp.Body = rc
}

// bodyReader is what resp's body reads: a held body's content, not the holder (which replaceBody points
// at a new reader: reading the holder through it would read itself).
func bodyReader(resp *http.Response) io.ReadCloser {
	if h, ok := resp.Body.(*heldBody); ok {
		return h.ReadCloser
	}
	return resp.Body
}

// peekBody reads up to maxChallengeBody bytes and puts them back in front of the rest of the body.
func peekBody(resp *http.Response) (prefix []byte, complete bool, err error) {
	orig := bodyReader(resp)
	if orig == nil || orig == http.NoBody {
		return nil, true, nil
	}
	d := startReadDeadline(orig, challengeReadTimeout)
	prefix, err = readlimit.ReadAll(orig, maxChallengeBody+1, resp.ContentLength)
	if !d.stop() && err == nil {
		err = errors.New("read deadline exceeded")
	}
	if err != nil {
		orig.Close()
		return nil, false, err
	}
	if len(prefix) <= maxChallengeBody {
		orig.Close()
		replaceBody(resp, newPeekedBody(prefix))
		return prefix, true, nil
	}
	replaceBody(resp, struct {
		io.Reader
		io.Closer
	}{io.MultiReader(bytes.NewReader(prefix), orig), orig})
	return prefix, false, nil
}

// peekedBody is a 402 body read whole, read again from memory; closing it does nothing (one allocation
// instead of io.NopCloser's and bytes.NewReader's).
type peekedBody struct{ bytes.Reader }

func newPeekedBody(b []byte) *peekedBody {
	p := &peekedBody{}
	p.Reset(b)
	return p
}

func (*peekedBody) Close() error { return nil }

// readDeadline closes a body that is still being read when its time is up (SPEC §10's body read deadline).
// Its timer is made once and used again (a pool), instead of a time.AfterFunc per 402: it goes back to the
// pool only when stop found it not fired, so a late firing never closes a later body.
type readDeadline struct {
	t    *time.Timer
	mu   sync.Mutex
	body io.Closer // the body being read; nil between uses
}

var readDeadlines = sync.Pool{New: func() any {
	d := &readDeadline{}
	d.t = time.AfterFunc(time.Hour, d.fire)
	d.t.Stop()
	return d
}}

func startReadDeadline(body io.Closer, after time.Duration) *readDeadline {
	d := readDeadlines.Get().(*readDeadline)
	d.mu.Lock()
	d.body = body
	d.mu.Unlock()
	d.t.Reset(after)
	return d
}

func (d *readDeadline) fire() {
	d.mu.Lock()
	b := d.body
	d.mu.Unlock()
	if b != nil {
		b.Close()
	}
}

// stop reports whether the deadline was stopped before it fired (false: the body was closed, or is being).
func (d *readDeadline) stop() bool {
	if !d.t.Stop() {
		return false // fired: not used again
	}
	d.mu.Lock()
	d.body = nil
	d.mu.Unlock()
	readDeadlines.Put(d)
	return true
}

// hasX402Version reports whether body is a JSON object with a top-level x402Version member. jsonscan
// accepts exactly what encoding/json does, without building a map of every member's copy.
func hasX402Version(body []byte) bool {
	members, ok := jsonscan.Object(body)
	for _, m := range members {
		if ok && m.Name == "x402Version" {
			return true
		}
	}
	return false
}

// narrowResponse rewrites an allowed challenge so that it offers only the chosen option: the v2 header is
// re-encoded; a body challenge is re-encoded with its length fixed. When a v2 header comes with a v1 body
// challenge too (sellers serving both generations), the body is narrowed to the entry that names the same
// terms, or emptied if none does, so no client can pay an unapproved option.
// Its headers are set through hv (intercept.go), with the ones the caller sets after. entry, when not nil,
// is the memo's entry pr is a view of, unchanged (readChallenge): its narrowed header is used or kept.
func narrowResponse(resp *http.Response, pr *x402.PaymentRequired, entry *memoChallenge, chosen int, body challengeBody, src challengeSource, hv *headerValues) error {
	if chosen < 0 || chosen >= len(pr.Accepts) {
		return errChosenOutOfRange(chosen, len(pr.Accepts))
	}
	switch src {
	case fromHeader:
		// A view of pr narrowed, encoded at once and not kept: no deep copy (issue 36). It encodes as
		// pr.Narrowed(chosen) does (x402's FuzzDecodeSameAsReference compares the two). The memo's entry
		// keeps the last one made from the same header bytes.
		var v string
		var err error
		if entry != nil {
			v, err = entry.narrowedHeader(chosen, x402.EncodePaymentRequiredHeader)
		} else {
			v, err = x402.EncodePaymentRequiredHeader(pr.NarrowedView(chosen))
		}
		if err != nil {
			return fmt.Errorf("re-encode PAYMENT-REQUIRED: %w", err)
		}
		hv.set(resp.Header, paymentRequiredKey, v)
		want := &pr.Accepts[chosen]
		return rewriteBody(resp, body, func(b *x402.PaymentRequired) *x402.PaymentRequired {
			if idx := matchingOption(b, *want); idx >= 0 {
				return b.NarrowedView(idx)
			}
			return nil
		})
	case fromBody:
		b, err := json.Marshal(pr.NarrowedView(chosen))
		if err != nil {
			return fmt.Errorf("re-encode 402 body: %w", err)
		}
		return setBody(resp, b)
	}
	return fmt.Errorf("no challenge to narrow")
}

// errChosenOutOfRange is the error of narrowing to an option the challenge does not have.
func errChosenOutOfRange(chosen, n int) error {
	return fmt.Errorf("chosen option %d is not among the challenge's %d", chosen, n)
}

// rewriteBody rewrites the body that came with a v2 header: a body that is no challenge goes on as it is; a
// challenge becomes rewrite's result, or {} when rewrite returns nil; a body that may be a challenge but
// cannot be read becomes {}, so that no client pays from options payguard never judged.
func rewriteBody(resp *http.Response, body challengeBody, rewrite func(*x402.PaymentRequired) *x402.PaymentRequired) error {
	pr, src, _ := judgeBody(body)
	switch src {
	case notX402:
		return nil
	case fromBody:
		if out := rewrite(pr); out != nil {
			b, err := json.Marshal(out)
			if err != nil {
				return fmt.Errorf("re-encode 402 body: %w", err)
			}
			return setBody(resp, b)
		}
	}
	return setBody(resp, []byte("{}"))
}

// matchingOption finds the entry of pr naming the same payment as want (scheme, network, asset, payTo,
// amount), across v1 and v2 network names.
func matchingOption(pr *x402.PaymentRequired, want x402.Requirement) int {
	for i, r := range pr.Accepts {
		if sameTerms(r, want) {
			return i
		}
	}
	return -1
}

func sameTerms(a, b x402.Requirement) bool {
	na, okA := x402.CAIP2(a.Network)
	nb, okB := x402.CAIP2(b.Network)
	return okA && okB && na == nb && a.Scheme == b.Scheme && x402.SameAddress(a.Asset, b.Asset) &&
		x402.SameAddress(a.PayTo, b.PayTo) && sameAmount(a.Amount, b.Amount)
}

func sameAmount(a, b string) bool {
	x, errA := x402.ParseAtomic(a)
	y, errB := x402.ParseAtomic(b)
	return errA == nil && errB == nil && x == y
}

func setBody(resp *http.Response, b []byte) error {
	if resp.Body != nil {
		resp.Body.Close()
	}
	replaceBody(resp, io.NopCloser(bytes.NewReader(b)))
	resp.ContentLength = int64(len(b))
	resp.Header.Set("Content-Length", strconv.Itoa(len(b)))
	resp.Header.Del("Content-Encoding")
	resp.Header.Del("ETag")
	resp.TransferEncoding = nil
	return nil
}

// emptyChallenge rewrites a challenge so that it offers nothing to pay, keeping its error text.
func emptyChallenge(resp *http.Response, pr *x402.PaymentRequired, body challengeBody, src challengeSource) error {
	empty := *pr
	empty.Accepts = []x402.Requirement{}
	switch src {
	case fromHeader:
		v, err := x402.EncodeHeaderJSON(&empty)
		if err != nil {
			return err
		}
		resp.Header.Set(paymentRequiredKey, v)
		return rewriteBody(resp, body, func(b *x402.PaymentRequired) *x402.PaymentRequired {
			b.Accepts = []x402.Requirement{}
			return b
		})
	case fromBody:
		b, err := json.Marshal(&empty)
		if err != nil {
			return err
		}
		return setBody(resp, b)
	}
	return fmt.Errorf("no challenge to empty")
}

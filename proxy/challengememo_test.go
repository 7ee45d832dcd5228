package proxy

import (
	"context"
	"encoding/base64"
	"fmt"
	"io"
	"net/http"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/elazarl/goproxy"

	"github.com/payguard/payguard/policy"
	"github.com/payguard/payguard/store/memory"
	"github.com/payguard/payguard/x402"
)

// memoTestRules allow the bench challenge with room for thousands of decisions.
func memoTestRules() policy.Rules {
	r := testRules()
	r.DailyCapUSD = policy.USD(1_000_000_000_000_000)
	return r
}

// checkMemoAgainstPlain fails unless m decodes and narrows h exactly as the plain decode and encoding do:
// the same challenge or the same error, and for every option the same narrowed header; asked twice, so a
// kept entry (a hit) is compared too.
func checkMemoAgainstPlain(t *testing.T, m *challengeMemo, h string) {
	t.Helper()
	want, wantErr := x402.DecodePaymentRequiredHeader(h)
	for round := range 2 {
		got, entry, err := m.decodeHeader(h)
		if (err == nil) != (wantErr == nil) || err != nil && err.Error() != wantErr.Error() {
			t.Fatalf("round %d: memo error %v, plain %v", round, err, wantErr)
		}
		if err != nil {
			if got != nil || entry != nil {
				t.Fatalf("round %d: an error came with a challenge or an entry", round)
			}
			continue
		}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("round %d: memo decoded\n%#v\nplain\n%#v", round, got, want)
		}
		if entry != nil && entry.pr == got {
			t.Fatalf("round %d: the memo handed out its own challenge", round)
		}
		for _, chosen := range []int{0, len(want.Accepts) - 1, 0, -1, len(want.Accepts)} {
			plain, plainErr := "", error(nil)
			if v := want.NarrowedView(chosen); v != nil {
				plain, plainErr = x402.EncodePaymentRequiredHeader(v)
			} else {
				plainErr = errChosenOutOfRange(chosen, len(want.Accepts))
			}
			resp := &http.Response{Header: http.Header{}, Body: http.NoBody}
			err := narrowResponse(resp, got, entry, chosen, challengeBody{}, fromHeader, &headerValues{})
			if (err == nil) != (plainErr == nil) {
				t.Fatalf("round %d option %d: narrowing error %v, plain %v", round, chosen, err, plainErr)
			}
			if err == nil && resp.Header.Get(x402.HeaderPaymentRequired) != plain {
				t.Fatalf("round %d option %d: narrowed %q, plain %q", round, chosen,
					resp.Header.Get(x402.HeaderPaymentRequired), plain)
			}
		}
	}
}

// The memo decodes and narrows as the plain decode and encoding do, for the bench challenge and every
// challenge one byte away from it (in its JSON and in its base64), each asked after the original.
func TestChallengeMemoSameAsPlainOneByteAway(t *testing.T) {
	m := newChallengeMemo()
	two := strings.Replace(benchChallenge, `"accepts":[`, `"accepts":[{"scheme":"exact","network":"eip155:8453",`+
		`"amount":"1","asset":"0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913","payTo":"0x1111111111111111111111111111111111111111",`+
		`"maxTimeoutSeconds":30},`, 1)
	for _, doc := range []string{benchChallenge, two} {
		orig := base64.StdEncoding.EncodeToString([]byte(doc))
		checkMemoAgainstPlain(t, m, orig)
		for i := 0; i < len(doc); i++ {
			for _, c := range []byte{'0', '"', 'x'} {
				if doc[i] == c {
					continue
				}
				b := []byte(doc)
				b[i] = c
				checkMemoAgainstPlain(t, m, base64.StdEncoding.EncodeToString(b))
				checkMemoAgainstPlain(t, m, orig)
			}
		}
		for i := 0; i < len(orig); i++ {
			b := []byte(orig)
			b[i] ^= 1
			checkMemoAgainstPlain(t, m, string(b))
		}
	}
}

// FuzzChallengeMemo holds the memo to the plain decode and encoding on any header, asked after another.
func FuzzChallengeMemo(f *testing.F) {
	f.Add(base64.StdEncoding.EncodeToString([]byte(benchChallenge)), "")
	f.Add(base64.StdEncoding.EncodeToString([]byte(benchChallenge)), base64.StdEncoding.EncodeToString([]byte(benchChallenge))+" ")
	f.Add(base64.StdEncoding.EncodeToString([]byte(`{"x402Version":2,"accepts":[]}`)), "e30=")
	f.Fuzz(func(t *testing.T, a, b string) {
		m := newChallengeMemo()
		checkMemoAgainstPlain(t, m, a)
		checkMemoAgainstPlain(t, m, b)
		checkMemoAgainstPlain(t, m, a)
	})
}

// decisionOf is what an agent gets for a 402 carrying header h at url: the status, the decision, the
// narrowed challenge passed on, and the refusal's reasons.
func decisionOf(p *Proxy, url, h string) string {
	out, body := guard402Header(p, url, h)
	if out.StatusCode != http.StatusPaymentRequired {
		// A refusal: its body names the reasons (and a receipt id, different on every decision: cut).
		s := string(body)
		if i := strings.Index(s, `"receipt`); i >= 0 {
			s = s[:i]
		}
		return fmt.Sprintf("%d %s", out.StatusCode, s)
	}
	return fmt.Sprintf("%d %s %s %s", out.StatusCode, out.Header.Get(HeaderDecision),
		out.Header.Get(x402.HeaderPaymentRequired), body)
}

func guard402Header(p *Proxy, url, h string) (*http.Response, []byte) {
	return guard402State(p, url, h, &reqState{start: time.Now()})
}

// guard402State is guard402Header with the request's state st (a released payment's, ...).
func guard402State(p *Proxy, url, h string, st *reqState) (*http.Response, []byte) {
	req, _ := http.NewRequest(http.MethodGet, url, nil)
	resp := &http.Response{StatusCode: http.StatusPaymentRequired, Request: req, ProtoMajor: 1, ProtoMinor: 1,
		Header: http.Header{"Content-Type": {"application/json"}}, Body: io.NopCloser(strings.NewReader("{}"))}
	resp.Header.Set(x402.HeaderPaymentRequired, h)
	out := p.onResponse(resp, &goproxy.ProxyCtx{Req: req, UserData: st})
	body, _ := io.ReadAll(out.Body)
	out.Body.Close()
	return out, body
}

// A seller that varies one byte of its challenge gets a fresh decision: each variant, asked between asks of
// the original (which the memo keeps), is decided and narrowed through the memo exactly as by a proxy
// without one (allowed, blocked, held, undecodable: whatever the variant is), and the original again as
// the first time.
func TestChallengeMemoOneByteFreshDecision(t *testing.T) {
	memo, _, _ := newTestProxy(t, memory.New(), memoTestRules(), maxUnpaid(1<<30))
	plain, _, _ := newTestProxy(t, memory.New(), memoTestRules(), maxUnpaid(1<<30))
	plain.challenges = nil
	const url = "https://127.0.0.1:18443/402"
	doc := benchChallenge
	orig := base64.StdEncoding.EncodeToString([]byte(doc))
	first := decisionOf(memo, url, orig)
	if !strings.HasPrefix(first, "402 allow ") || first != decisionOf(plain, url, orig) {
		t.Fatalf("the original: %s", first)
	}
	kinds := map[string]int{}
	variants := []string{
		strings.Replace(doc, "eip155:84532", "eip155:84533", 1),          // a network the rules do not allow
		strings.Replace(doc, `"amount":"10000"`, `"amount":"900000"`, 1), // above hold_above_usd
		strings.Replace(doc, `"amount":"10000"`, `"amount":"10001"`, 1),  // another amount, allowed
		strings.Replace(doc, "0xf54127927F", "0xf54127927E", 1),          // another payee
		strings.Replace(doc, `"x402Version":2`, `"x402Version":1`, 1),    // not a v2 header
		strings.Replace(doc, `"maxTimeoutSeconds":60`, `"maxTimeoutSeconds":61`, 1),
	}
	for i := 0; i < len(doc); i += 7 {
		b := []byte(doc)
		b[i] ^= 1
		variants = append(variants, string(b))
	}
	for _, v := range variants {
		h := base64.StdEncoding.EncodeToString([]byte(v))
		got, want := decisionOf(memo, url, h), decisionOf(plain, url, h)
		if got != want {
			t.Fatalf("variant %s:\nmemo  %s\nplain %s", v, got, want)
		}
		kinds[strings.SplitN(got, " ", 3)[0]+" "+strings.SplitN(got, " ", 3)[1]]++
		if again := decisionOf(memo, url, orig); again != first {
			t.Fatalf("the original after variant %s:\n%s\nfirst\n%s", v, again, first)
		}
	}
	for i := 0; i < len(orig); i += 5 { // the base64 itself, one bit away
		b := []byte(orig)
		b[i] ^= 1
		if got, want := decisionOf(memo, url, string(b)), decisionOf(plain, url, string(b)); got != want {
			t.Fatalf("base64 variant %q:\nmemo  %s\nplain %s", b, got, want)
		}
	}
	if len(kinds) < 3 {
		t.Fatalf("the variants were decided only as %v: the test does not reach refusals", kinds)
	}
	t.Logf("variants decided: %v", kinds)
}

// Two sellers' challenges never share an entry: interleaved, each agent gets its own seller's option
// narrowed, never the other's, and the memo keeps two entries.
func TestChallengeMemoTwoSellers(t *testing.T) {
	p, _, _ := newTestProxy(t, memory.New(), memoTestRules(), maxUnpaid(1<<30))
	const payA, payB = "0xf54127927F219FB78C8D1A1fF3D7dc6D7f70C98E", "0x3c44CdDdB6a900fa2b585dd299e03d12FA4293BC"
	a := base64.StdEncoding.EncodeToString([]byte(benchChallenge))
	b := base64.StdEncoding.EncodeToString([]byte(strings.Replace(benchChallenge, payA, payB, 1)))
	for range 5 {
		for _, s := range []struct{ url, h, payTo string }{
			{"https://a.example/402", a, payA}, {"https://b.example/402", b, payB}} {
			out, body := guard402Header(p, s.url, s.h)
			if out.Header.Get(HeaderDecision) != allow {
				t.Fatalf("%s: status %d %s", s.url, out.StatusCode, body)
			}
			pr, err := x402.DecodePaymentRequiredHeader(out.Header.Get(x402.HeaderPaymentRequired))
			if err != nil || len(pr.Accepts) != 1 || pr.Accepts[0].PayTo != s.payTo {
				t.Fatalf("%s got %+v (%v), want payTo %s", s.url, pr, err, s.payTo)
			}
		}
	}
	if n, _ := p.challenges.size(); n != 2 {
		t.Fatalf("memo holds %d entries, want 2", n)
	}
}

// The memo is bounded: a header over memoMaxHeader is never kept, and a seller sending a new challenge
// every time fills at most two generations, each within its weight and entry bounds; what it keeps still
// decodes as the plain decode.
func TestChallengeMemoBounded(t *testing.T) {
	m := newChallengeMemo()
	huge := base64.StdEncoding.EncodeToString([]byte(strings.Replace(benchChallenge, "Weather report",
		strings.Repeat("w", memoMaxHeader), 1)))
	for range 3 {
		checkMemoAgainstPlain(t, m, huge)
	}
	if n, w := m.size(); n != 0 || w != 0 {
		t.Fatalf("a %d-byte header was kept: %d entries, weight %d", len(huge), n, w)
	}
	for i := range 3 * memoGenerationEntries {
		doc := strings.Replace(benchChallenge, `"amount":"10000"`, fmt.Sprintf(`"amount":"%d"`, 10000+i), 1)
		h := base64.StdEncoding.EncodeToString([]byte(doc))
		if _, _, err := m.decodeHeader(h); err != nil {
			t.Fatal(err)
		}
		if n, w := m.size(); n > 2*memoGenerationEntries || w > memoGenerationBytes {
			t.Fatalf("after %d challenges: %d entries, weight %d", i+1, n, w)
		}
	}
	// Large headers: the weight bound turns generations over before the entry bound.
	m = newChallengeMemo()
	for i := range 200 {
		doc := strings.Replace(benchChallenge, "Weather report", fmt.Sprintf("%d%s", i, strings.Repeat("w", 8<<10)), 1)
		h := base64.StdEncoding.EncodeToString([]byte(doc))
		checkMemoAgainstPlain(t, m, h)
		if _, w := m.size(); w > memoGenerationBytes {
			t.Fatalf("weight %d over %d", w, memoGenerationBytes)
		}
	}
	if n, _ := m.size(); n >= 200 || n > 2*memoGenerationBytes/memoWeight(8<<10) {
		t.Fatalf("%d large entries kept", n)
	}
}

// A narrowed header longer than the header it came from (a re-encoding that escapes what the seller sent
// raw) is not kept: the entry's weight stays what memoWeight counted.
func TestChallengeMemoLongNarrowingNotKept(t *testing.T) {
	e := &memoChallenge{pr: &x402.PaymentRequired{X402Version: 2, Accepts: []x402.Requirement{{Scheme: "exact"}}}, size: 10}
	v, err := e.narrowedHeader(0, func(*x402.PaymentRequired) (string, error) { return strings.Repeat("A", 11), nil })
	if err != nil || len(v) != 11 || e.narrowed.Load() != nil {
		t.Fatalf("value %q, error %v, kept %v", v, err, e.narrowed.Load())
	}
	if _, err := e.narrowedHeader(0, func(*x402.PaymentRequired) (string, error) { return "AAAA", nil }); err != nil || e.narrowed.Load() == nil {
		t.Fatal("a short narrowing was not kept")
	}
}

// Nothing a decided 402 does changes the memo's challenge: allowed, blocked, held, shadowed in report
// mode, the challenge after a failed payment (emptied), and a caller changing every field of the challenge
// it was handed. After each, the memo's entry still equals a fresh decode of its header.
func TestChallengeMemoNeverChanged(t *testing.T) {
	const url = "https://127.0.0.1:18443/402"
	headers := map[string]string{
		"allow": base64.StdEncoding.EncodeToString([]byte(benchChallenge)),
		"block": base64.StdEncoding.EncodeToString([]byte(strings.Replace(benchChallenge, "eip155:84532", "eip155:84533", 1))),
		"hold":  base64.StdEncoding.EncodeToString([]byte(strings.Replace(benchChallenge, `"amount":"10000"`, `"amount":"900000"`, 1))),
		"extra": base64.StdEncoding.EncodeToString([]byte(strings.Replace(benchChallenge, `"mimeType":"application/json"}`,
			`"mimeType":"application/json","tags":["a"]},"extensions":{"bazaar":{"x":1}},"zz":[1]`, 1))),
	}
	check := func(t *testing.T, p *Proxy, what string) {
		t.Helper()
		for name, h := range headers {
			e := p.challenges.lookup(h)
			if e == nil {
				continue
			}
			fresh, err := x402.DecodePaymentRequiredHeader(h)
			if err != nil || !reflect.DeepEqual(e.pr, fresh) {
				t.Fatalf("after %s, the memo's %s challenge changed:\n%#v\nfresh\n%#v", what, name, e.pr, fresh)
			}
		}
	}
	p, _, _ := newTestProxy(t, memory.New(), memoTestRules(), maxUnpaid(1<<30))
	want := map[string]string{"allow": allow, "block": block, "hold": hold, "extra": allow}
	for range 2 {
		for name, h := range headers {
			out, _ := guard402Header(p, url, h)
			if out.Header.Get(HeaderDecision) != want[name] {
				t.Fatalf("%s: decision %q, status %d", name, out.Header.Get(HeaderDecision), out.StatusCode)
			}
			check(t, p, name)
		}
	}
	// The challenge after a payment payguard released: emptied for the agent.
	for name, h := range headers {
		resp, _ := guard402State(p, url, h, &reqState{start: time.Now(), release: &release{}})
		if pr, err := x402.DecodePaymentRequiredHeader(resp.Header.Get(x402.HeaderPaymentRequired)); err != nil || len(pr.Accepts) != 0 {
			t.Fatalf("%s after a failed payment: %+v %v", name, pr, err)
		}
		check(t, p, "a failed payment's "+name)
	}
	// Report mode: the refusals are let through, narrowed to the option judged, shadowed.
	f := newAgentFixture(t)
	strict := memoTestRules()
	strict.MaxPerPaymentUSD = 5_000 // the bench's $0.01 is over it
	rep := f.proxy(memory.New(), f.ruleSet(RuleSetConfig{Hash: "h", Rules: strict, Mode: ModeReport}), nil)
	rep.challenges = p.challenges
	for name, h := range headers {
		if out, _ := guard402Header(rep, url, h); out.Header.Get(ShadowHeader) == "" && name == "allow" {
			t.Fatalf("report mode: %d %v", out.StatusCode, out.Header)
		}
		check(t, rep, "report mode's "+name)
	}
	// A caller that changes what it was handed changes its own copy only.
	for name, h := range headers {
		pr, _, err := p.challenges.decodeHeader(h)
		if err != nil {
			t.Fatal(err)
		}
		pr.X402Version, pr.Error = 9, "changed"
		pr.Resource.URL, pr.Resource.Description = "https://evil.example/", "changed"
		for i := range pr.Accepts {
			pr.Accepts[i].PayTo, pr.Accepts[i].Amount, pr.Accepts[i].Network = "0xevil", "1", "x"
		}
		pr.Accepts = append(pr.Accepts, x402.Requirement{Scheme: "added"})
		check(t, p, "changing the "+name+" copy")
	}
}

// BenchmarkChallengeMemo is the bench challenge's decode and narrowing, plain and through the memo (a hit
// after the first): what readChallenge and narrowResponse cost a repeated challenge.
func BenchmarkChallengeMemo(b *testing.B) {
	h := base64.StdEncoding.EncodeToString([]byte(benchChallenge))
	for _, memo := range []bool{false, true} {
		b.Run(fmt.Sprintf("memo=%v", memo), func(b *testing.B) {
			var m *challengeMemo
			if memo {
				m = newChallengeMemo()
			}
			resp := &http.Response{Header: http.Header{}}
			b.ReportAllocs()
			for b.Loop() {
				pr, e, err := m.decodeHeader(h)
				if err != nil {
					b.Fatal(err)
				}
				if err := narrowResponse(resp, pr, e, 0, challengeBody{json: []byte("{}")}, fromHeader, &headerValues{}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// A ticket's option is the chosen option's own encoding whether the memo made it or not: the tickets of
// the same challenge decided through a proxy with the memo and one without hold the same option bytes,
// for each option a two-option challenge may be allowed on, asked more than once (the kept encoding).
func TestChallengeMemoTicketOption(t *testing.T) {
	const url = "https://127.0.0.1:18443/402"
	second := `{"scheme":"exact","network":"eip155:84532","amount":"20000",` +
		`"asset":"0x036CbD53842c5426634e7929541eC2318f3dCF7e","payTo":"0x3c44CdDdB6a900fa2b585dd299e03d12FA4293BC",` +
		`"maxTimeoutSeconds":30,"extra":{"name":"USDC","version":"2"},"zz":{"a":[1,"\u00e9"]}}`
	docs := []string{benchChallenge, strings.Replace(benchChallenge, `"accepts":[`, `"accepts":[`+second+`,`, 1)}
	for _, doc := range docs {
		h := base64.StdEncoding.EncodeToString([]byte(doc))
		pr, err := x402.DecodePaymentRequiredHeader(h)
		if err != nil {
			t.Fatal(err)
		}
		for round := range 3 {
			stores := [2]*memory.Store{memory.New(), memory.New()}
			memo, _, _ := newTestProxy(t, stores[0], memoTestRules(), maxUnpaid(1<<30))
			plain, _, _ := newTestProxy(t, stores[1], memoTestRules(), maxUnpaid(1<<30))
			plain.challenges = nil
			for range round + 1 {
				for _, p := range []*Proxy{memo, plain} {
					if out, body := guard402Header(p, url, h); out.Header.Get(HeaderDecision) != allow {
						t.Fatalf("status %d %s", out.StatusCode, body)
					}
				}
			}
			// The option the engine chose (the cheaper one), its ticket in each store.
			chosen := &pr.Accepts[0]
			if len(pr.Accepts) > 1 && pr.Accepts[1].Amount < chosen.Amount {
				chosen = &pr.Accepts[1]
			}
			key, _ := ticketKey(http.MethodGet, url, chosen.Scheme, chosen.Network, chosen.PayTo, chosen.Amount)
			var raws [2][]byte
			for i, st := range stores {
				tk, err := st.TakeTicket(context.Background(), key, time.Now())
				if err != nil {
					t.Fatalf("round %d store %d: %v", round, i, err)
				}
				raws[i] = tk.Option
			}
			want, _ := chosen.MarshalJSON()
			if string(raws[0]) != string(raws[1]) || string(raws[0]) != string(want) {
				t.Fatalf("ticket options: memo %s, plain %s, want %s", raws[0], raws[1], want)
			}
		}
	}
}

// The kept option encoding is the caller's own: changing the bytes handed out changes nothing kept.
func TestChallengeMemoOptionJSONIsACopy(t *testing.T) {
	m := newChallengeMemo()
	_, e, err := m.decodeHeader(base64.StdEncoding.EncodeToString([]byte(benchChallenge)))
	if err != nil || e == nil {
		t.Fatal(err)
	}
	want, _ := e.pr.Accepts[0].MarshalJSON()
	for range 3 {
		raw, err := e.optionJSON(0)
		if err != nil || string(raw) != string(want) {
			t.Fatalf("%s %v, want %s", raw, err, want)
		}
		for i := range raw {
			raw[i] = 'X'
		}
	}
	if _, err := e.optionJSON(1); err == nil {
		t.Fatal("an option the challenge does not have was encoded")
	}
}

// Decodes, narrowings and option encodings of the same and of other headers from goroutines at once, each
// caller changing its copy: each answer is the plain one (run with -race).
func TestChallengeMemoConcurrent(t *testing.T) {
	m := newChallengeMemo()
	var headers []string
	var want []string
	for i := range 40 {
		doc := strings.Replace(benchChallenge, `"amount":"10000"`, fmt.Sprintf(`"amount":"%d"`, 10000+i), 1)
		h := base64.StdEncoding.EncodeToString([]byte(doc))
		pr, _ := x402.DecodePaymentRequiredHeader(h)
		n, _ := x402.EncodePaymentRequiredHeader(pr.NarrowedView(0))
		headers, want = append(headers, h), append(want, n)
	}
	done := make(chan error, 8)
	for g := range 8 {
		go func() {
			for i := range 400 {
				k := (i*7 + g) % len(headers)
				pr, e, err := m.decodeHeader(headers[k])
				if err != nil {
					done <- err
					return
				}
				resp := &http.Response{Header: http.Header{}}
				if err := narrowResponse(resp, pr, e, 0, challengeBody{json: []byte("{}")}, fromHeader, &headerValues{}); err != nil {
					done <- err
					return
				}
				if got := resp.Header.Get(x402.HeaderPaymentRequired); got != want[k] {
					done <- fmt.Errorf("header %d narrowed to %q, want %q", k, got, want[k])
					return
				}
				if raw, err := e.optionJSON(0); err != nil || !strings.Contains(string(raw), fmt.Sprintf(`"%d"`, 10000+k)) {
					done <- fmt.Errorf("header %d option %s %v", k, raw, err)
					return
				}
				pr.Accepts[0].Amount = "changed" // the caller's own copy
			}
			done <- nil
		}()
	}
	for range 8 {
		if err := <-done; err != nil {
			t.Fatal(err)
		}
	}
	if n, _ := m.size(); n != len(headers) {
		t.Fatalf("memo holds %d entries, want %d", n, len(headers))
	}
}

// size is the number of entries and the current generation's weight (for the bound's tests).
func (m *challengeMemo) size() (entries, curBytes int) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return len(m.cur) + len(m.prev), m.curBytes
}

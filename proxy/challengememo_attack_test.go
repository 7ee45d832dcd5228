package proxy

import (
	"bytes"
	"encoding/base64"
	"fmt"
	"reflect"
	"strings"
	"sync"
	"testing"

	"github.com/payguard/payguard/policy"
	"github.com/payguard/payguard/store/memory"
	"github.com/payguard/payguard/x402"
)

// The memo under concurrent use (run with -race): goroutines ask for more distinct headers than two
// generations hold (so entries are evicted and moved between generations while others read them), each
// header with two options narrowed alternately to one and the other (the entry's kept narrowing and option
// encoding are replaced under the readers), and every caller writes over what it was handed: the view's
// options, resource and accepts, and the option encoding's bytes. Every answer must still be the plain
// decode, narrowing and encoding of the header's own bytes, and the memo stays within its bound.
func TestChallengeMemoConcurrentCallersMutating(t *testing.T) {
	const variants = 2*memoGenerationEntries + 300
	type plain struct {
		h        string
		pr       *x402.PaymentRequired
		narrowed [2]string
		option   [2][]byte
	}
	all := make([]plain, variants)
	for i := range all {
		doc := strings.Replace(benchChallenge, `"accepts":[`, fmt.Sprintf(`"accepts":[{"scheme":"exact","network":"eip155:8453",`+
			`"amount":"%d","asset":"0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913","payTo":"0x1111111111111111111111111111111111111111",`+
			`"maxTimeoutSeconds":30,"extra":{"n":%d}},`, i+1, i), 1)
		p := plain{h: base64.StdEncoding.EncodeToString([]byte(doc))}
		var err error
		if p.pr, err = x402.DecodePaymentRequiredHeader(p.h); err != nil || len(p.pr.Accepts) != 2 {
			t.Fatalf("variant %d: %v", i, err)
		}
		for c := range 2 {
			if p.narrowed[c], err = x402.EncodePaymentRequiredHeader(p.pr.NarrowedView(c)); err != nil {
				t.Fatal(err)
			}
			if p.option[c], err = p.pr.Accepts[c].MarshalJSON(); err != nil {
				t.Fatal(err)
			}
		}
		all[i] = p
	}
	m := newChallengeMemo()
	const workers, rounds = 8, 1500
	var wg sync.WaitGroup
	errs := make(chan error, workers)
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for r := range rounds {
				// A few hot headers asked by everyone, the rest spread over all the variants.
				i := (r*7919 + w*104729) % variants
				if r%3 == 0 {
					i = r % 4
				}
				want := &all[i]
				c := (r + w) % 2
				got, entry, err := m.decodeHeader(want.h)
				if err != nil || entry == nil {
					errs <- fmt.Errorf("variant %d: %v, entry %v", i, err, entry)
					return
				}
				if !reflect.DeepEqual(got, want.pr) {
					errs <- fmt.Errorf("variant %d: the memo handed out\n%#v\nwant\n%#v", i, got, want.pr)
					return
				}
				v, err := entry.narrowedHeader(c, x402.EncodePaymentRequiredHeader)
				if err != nil || v != want.narrowed[c] {
					errs <- fmt.Errorf("variant %d option %d: narrowed %q, %v; want %q", i, c, v, err, want.narrowed[c])
					return
				}
				raw, err := entry.optionJSON(c)
				if err != nil || !bytes.Equal(raw, want.option[c]) {
					errs <- fmt.Errorf("variant %d option %d: option %s, %v; want %s", i, c, raw, err, want.option[c])
					return
				}
				// The caller's own: writing over it must change nothing the memo gives the next caller.
				got.Accepts[0].Amount, got.Accepts[1].PayTo, got.Accepts[c].Network = "999999999", "0xattacker", "eip155:1"
				got.Resource.URL, got.Error = "https://attacker.example/", "changed"
				got.Accepts = append(got.Accepts[:1], x402.Requirement{Amount: "1"})
				for j := range raw {
					raw[j] = 'X'
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	if n, w := m.size(); n > 2*memoGenerationEntries || w > memoGenerationBytes {
		t.Fatalf("the memo holds %d entries weighing %d in its current generation: over its bound", n, w)
	}
	for i := range all { // and each entry kept is still its header's plain decode
		if e := m.lookup(all[i].h); e != nil && !reflect.DeepEqual(e.pr, all[i].pr) {
			t.Fatalf("variant %d: the memo's entry changed", i)
		}
	}
}

// The memo across rule-set reloads: the same header bytes, kept by the memo with the narrowing made under
// the first rules, must be decided and narrowed afresh under each new rule set: to the option the new
// rules allow, or refused. A narrowing made under old rules that survived a reload would let the agent
// pay an option the active rules do not allow.
func TestChallengeMemoAcrossReloads(t *testing.T) {
	const url = "https://127.0.0.1:18443/402"
	doc := strings.Replace(benchChallenge, `"accepts":[`, `"accepts":[{"scheme":"exact","network":"eip155:8453",`+
		`"amount":"1","asset":"0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913","payTo":"0x1111111111111111111111111111111111111111",`+
		`"maxTimeoutSeconds":30},`, 1)
	h := base64.StdEncoding.EncodeToString([]byte(doc))
	pr, err := x402.DecodePaymentRequiredHeader(h)
	if err != nil || len(pr.Accepts) != 2 {
		t.Fatalf("%v %d", err, len(pr.Accepts))
	}
	rulesFor := func(networks ...string) policy.Rules {
		r := memoTestRules()
		r.AllowedNetworks = networks
		return r
	}
	f := newAgentFixture(t)
	p := f.proxy(memory.New(), f.ruleSet(RuleSetConfig{Hash: "sepolia", Rules: rulesFor("eip155:84532")}), nil)
	for round, step := range []struct {
		networks []string
		chosen   int // -1: refused
	}{
		{[]string{"eip155:84532"}, 1}, {[]string{"eip155:84532"}, 1}, // the second one through the memo's narrowing
		{[]string{"eip155:8453"}, 0}, {[]string{"eip155:8453"}, 0},
		{[]string{"solana:5eykt4UsFv8P8NJdTREpY1vzqKqZKvdp"}, -1},
		{[]string{"eip155:84532"}, 1},
	} {
		if round > 0 {
			p.Reload(f.ruleSet(RuleSetConfig{Hash: fmt.Sprint("r", round), Rules: rulesFor(step.networks...)}))
		}
		out, body := guard402Header(p, url, h)
		got := out.Header.Get(x402.HeaderPaymentRequired)
		if step.chosen < 0 {
			if out.StatusCode == 402 && got != "" {
				t.Fatalf("round %d (%v): %d with challenge %q, want a refusal", round, step.networks, out.StatusCode, got)
			}
			continue
		}
		want, err := x402.EncodePaymentRequiredHeader(pr.NarrowedView(step.chosen))
		if err != nil {
			t.Fatal(err)
		}
		if out.StatusCode != 402 || got != want {
			t.Fatalf("round %d (%v): %d %s narrowed to\n%q\nwant option %d\n%q", round, step.networks, out.StatusCode, body, got, step.chosen, want)
		}
	}
}

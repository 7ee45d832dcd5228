package preflight

import (
	"bytes"
	"encoding/json"
	"maps"

	"github.com/payguard/payguard/internal/slotmemo"
	"github.com/payguard/payguard/x402"
)

// An agent asks about the same few sellers' challenges over and over, and decoding one (x402's strict
// reader: limits, member scan, every requirement's fields) was about 6 % of payguard serve's CPU per trial
// preflight (docs/benchmarks/server.md, section serve5). x402.ParsePaymentRequired is a pure function of
// the challenge's bytes, so its successes are kept in a slotmemo table keyed by those bytes, and
// a hit hands out a deep copy of the kept challenge (cloneChallenge): a *x402.PaymentRequired is exported
// and mutable, and no two inputs may share one. Strings are shared (Go strings are immutable; x402's are
// its own copy of the text, never the caller's buffer); byte slices and maps are copied. Failures are not
// kept. The table holds at most challengeSlots challenges of at most maxMemoChallenge bytes.

const (
	challengeSlots   = 64
	maxMemoChallenge = 8 << 10
)

var (
	// challengeTable's challenges are never handed out: only their clones are.
	challengeTable = slotmemo.New[*x402.PaymentRequired](challengeSlots)
	// parsePaymentRequired is what a miss calls: x402.ParsePaymentRequired, or a counting stand-in in tests.
	parsePaymentRequired = x402.ParsePaymentRequired
)

// parsePaymentRequiredMemo is x402.ParsePaymentRequired, with its successes kept (see above).
func parsePaymentRequiredMemo(raw []byte) (*x402.PaymentRequired, error) {
	if len(raw) > maxMemoChallenge {
		return parsePaymentRequired(raw)
	}
	if ch, ok := challengeTable.GetBytes(raw); ok {
		return cloneChallenge(ch), nil
	}
	ch, err := parsePaymentRequired(raw)
	if err != nil {
		return nil, err
	}
	challengeTable.Put(string(raw), cloneChallenge(ch))
	return ch, nil
}

// cloneChallenge is a deep copy of p that shares no byte slice, map or pointer with it (strings aside).
// TestCloneChallengeKnowsEveryField fails when one of the types gains a field this does not copy.
func cloneChallenge(p *x402.PaymentRequired) *x402.PaymentRequired {
	c := *p
	if p.Resource != nil {
		r := *p.Resource
		r.Unknown = cloneRawMap(r.Unknown)
		c.Resource = &r
	}
	if p.Accepts != nil {
		c.Accepts = make([]x402.Requirement, len(p.Accepts), cap(p.Accepts))
		for i := range p.Accepts {
			a := p.Accepts[i]
			a.Extra = json.RawMessage(bytes.Clone(a.Extra))
			a.OutputSchema = json.RawMessage(bytes.Clone(a.OutputSchema))
			a.Unknown = cloneRawMap(a.Unknown)
			c.Accepts[i] = a
		}
	}
	c.Extensions = cloneRawMap(p.Extensions)
	c.Unknown = cloneRawMap(p.Unknown)
	return &c
}

// cloneRawMap copies m and its values (nil stays nil, empty stays empty, a nil value stays nil).
func cloneRawMap(m map[string]json.RawMessage) map[string]json.RawMessage {
	if m == nil {
		return nil
	}
	c := maps.Clone(m)
	for k, v := range c {
		c[k] = json.RawMessage(bytes.Clone(v))
	}
	return c
}

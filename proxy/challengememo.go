package proxy

import (
	"sync"
	"sync/atomic"

	"github.com/payguard/payguard/x402"
)

// A seller sends the same PAYMENT-REQUIRED header to every agent that asks for the same resource, and its
// decode (x402.DecodePaymentRequiredHeader) and, once allowed, its narrowed re-encoding are pure functions
// of the header's bytes (and of the option chosen). challengeMemo keeps both for recent headers, so a
// repeated challenge is decoded and narrowed once (issue 36: about 15 µs of CPU and 7 allocations per
// decided 402 in the live profile). It memoises only what the bytes decide: every decision, reservation,
// ticket and log line is made afresh for every 402.
//
// Bounds: a header longer than memoMaxHeader is decoded every time and never kept; a generation holds at
// most memoGenerationBytes of weighed entries (memoWeight) and memoGenerationEntries entries, and the
// memo at most two generations (the current one and the one before, whose entries move to the current one
// when used again), so a seller sending a new challenge with every 402 costs the memo a bounded amount of
// memory and only evicts others' entries sooner. A header that does not decode is not kept: its error is
// made afresh each time.
//
// Sharing: the memo's decoded challenge is never handed out. view copies it (the challenge, its resource
// and its options, in one allocation), so a caller may change any field or option of what it gets; only the
// contents of the Unknown/Extensions maps and of the json.RawMessage values are shared, and nothing in the
// proxy writes into them (TestChallengeMemoNeverChanged runs every path of a decided 402 and compares the
// memo with a fresh decode).
type challengeMemo struct {
	mu        sync.Mutex
	cur, prev map[string]*memoChallenge
	curBytes  int // the weight of cur's entries
}

const (
	memoMaxHeader         = 16 << 10 // longer headers are decoded each time
	memoGenerationBytes   = 1 << 20  // the weight one generation may hold
	memoGenerationEntries = 1024     // and its entries
)

// memoWeight is what an entry of a header of n bytes is counted as: the key, the decoded text (each
// string of the decode is a substring of one copy of the JSON: x402's sharedText), the narrowed header and
// the chosen option's JSON (each kept only when no longer than the header), and the structures around them.
func memoWeight(n int) int { return 4*n + 1024 }

// memoChallenge is a decoded header and the last narrowed re-encoding made from it.
type memoChallenge struct {
	pr       *x402.PaymentRequired // as decoded; never handed out, never changed
	size     int                   // the header's length: a narrowed header longer than it is not kept
	narrowed atomic.Pointer[narrowedHeader]
	option   atomic.Pointer[optionJSON]
}

// optionJSON is option chosen of pr as a ticket keeps it (x402.Requirement.MarshalJSON).
type optionJSON struct {
	chosen int
	raw    []byte
}

// narrowedHeader is the header value of pr narrowed to option chosen (narrowResponse).
type narrowedHeader struct {
	chosen int
	value  string
}

func newChallengeMemo() *challengeMemo {
	return &challengeMemo{cur: make(map[string]*memoChallenge)}
}

// decodeHeader is x402.DecodePaymentRequiredHeader(h), with the memo's entry for h (nil when h is not
// kept). The challenge returned is the caller's own (view).
func (m *challengeMemo) decodeHeader(h string) (*x402.PaymentRequired, *memoChallenge, error) {
	if m == nil || len(h) > memoMaxHeader {
		pr, err := x402.DecodePaymentRequiredHeader(h)
		return pr, nil, err
	}
	if e := m.lookup(h); e != nil {
		return e.view(), e, nil
	}
	pr, err := x402.DecodePaymentRequiredHeader(h)
	if err != nil {
		return nil, nil, err
	}
	e := &memoChallenge{pr: pr, size: len(h)}
	m.add(h, e)
	return e.view(), e, nil
}

// lookup finds h's entry; one found in the previous generation moves to the current one.
func (m *challengeMemo) lookup(h string) *memoChallenge {
	m.mu.Lock()
	defer m.mu.Unlock()
	if e := m.cur[h]; e != nil {
		return e
	}
	e := m.prev[h]
	if e != nil {
		delete(m.prev, h)
		m.insertLocked(h, e)
	}
	return e
}

func (m *challengeMemo) add(h string, e *memoChallenge) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if _, ok := m.cur[h]; !ok {
		m.insertLocked(h, e)
	}
}

// insertLocked puts e in the current generation, which first becomes the previous one when it is full (the
// previous one, and what is not used from it, is dropped).
func (m *challengeMemo) insertLocked(h string, e *memoChallenge) {
	w := memoWeight(len(h))
	if m.curBytes+w > memoGenerationBytes || len(m.cur) >= memoGenerationEntries {
		m.prev, m.cur, m.curBytes = m.cur, make(map[string]*memoChallenge, len(m.cur)), 0
	}
	m.cur[h] = e
	m.curBytes += w
}

// view is the caller's own copy of the decoded challenge: the challenge, its resource and its options are
// copied (in one allocation for the usual single option); the maps and raw JSON values inside are shared.
func (e *memoChallenge) view() *x402.PaymentRequired {
	c := &struct {
		pr  x402.PaymentRequired
		res x402.ResourceInfo
		one [1]x402.Requirement
	}{pr: *e.pr}
	if e.pr.Resource != nil {
		c.res = *e.pr.Resource
		c.pr.Resource = &c.res
	}
	switch n := len(e.pr.Accepts); {
	case n == 1:
		c.one[0] = e.pr.Accepts[0]
		c.pr.Accepts = c.one[:]
	case n > 1:
		c.pr.Accepts = append([]x402.Requirement(nil), e.pr.Accepts...)
	default:
		c.pr.Accepts = e.pr.Accepts[:0:0] // nil stays nil, empty stays empty (they encode differently)
	}
	return &c.pr
}

// optionJSON is option chosen of the memo's challenge encoded as a ticket keeps it (newTicket), the last
// one encoded kept, like narrowedHeader's: the caller gets its own copy of the bytes.
func (e *memoChallenge) optionJSON(chosen int) ([]byte, error) {
	if o := e.option.Load(); o != nil && o.chosen == chosen {
		return append([]byte(nil), o.raw...), nil
	}
	if chosen < 0 || chosen >= len(e.pr.Accepts) {
		return nil, errChosenOutOfRange(chosen, len(e.pr.Accepts))
	}
	raw, err := e.pr.Accepts[chosen].MarshalJSON()
	if err != nil {
		return nil, err
	}
	if len(raw) <= e.size {
		e.option.Store(&optionJSON{chosen: chosen, raw: raw})
	}
	return append([]byte(nil), raw...), nil
}

// narrowedHeader is the header value of the memo's challenge narrowed to option chosen, made by encode
// when it is not the one kept. One is kept per entry (an allowed challenge is narrowed to the same option
// again and again), and only when it is no longer than the header it came from, so memoWeight counts it.
func (e *memoChallenge) narrowedHeader(chosen int, encode func(*x402.PaymentRequired) (string, error)) (string, error) {
	if n := e.narrowed.Load(); n != nil && n.chosen == chosen {
		return n.value, nil
	}
	narrowed := e.pr.NarrowedView(chosen)
	if narrowed == nil {
		return "", errChosenOutOfRange(chosen, len(e.pr.Accepts))
	}
	v, err := encode(narrowed)
	if err != nil {
		return "", err
	}
	if len(v) <= e.size {
		e.narrowed.Store(&narrowedHeader{chosen: chosen, value: v})
	}
	return v, nil
}

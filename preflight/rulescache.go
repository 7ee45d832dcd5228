package preflight

import (
	"sync"

	"github.com/payguard/payguard/policy"
)

// A caller sends the same rules object with every preflight (an agent's policy does not change between
// calls), and vetting it is a reflection-based decode (encoding/json, DisallowUnknownFields) that cost about
// a tenth of serve's CPU per request before the signature. So ParseInput memoizes the vetted patch by the
// rules object's exact bytes: vetting is a pure function of those bytes (policy.NewRulesPatch decodes over
// the fixed defaults), a *policy.RulesPatch is never changed after it is built (Apply returns copies), and
// only patches that passed are kept, so a refused object is vetted, and refused, every time. The receipt's
// input_sha256 is computed over the whole body, rules included, whether or not the patch came from here.
//
// The memo is bounded: at most maxCachedRules objects of at most maxCachedRulesBytes each (well under a
// MiB with their decoded rules). When it is full it is emptied, so a caller who varies its rules on every
// call costs what it cost without the memo, plus one map insert.
const (
	maxCachedRules      = 64
	maxCachedRulesBytes = 2048
)

type rulesMemo struct {
	mu sync.Mutex
	m  map[string]*policy.RulesPatch
}

var vettedRules = rulesMemo{m: make(map[string]*policy.RulesPatch, maxCachedRules)}

// get returns the patch vetted earlier from exactly raw, or nil. The lookup does not copy raw.
func (c *rulesMemo) get(raw []byte) *policy.RulesPatch {
	if len(raw) > maxCachedRulesBytes {
		return nil
	}
	c.mu.Lock()
	p := c.m[string(raw)]
	c.mu.Unlock()
	return p
}

// put remembers p as the vetted patch of raw (the key is a copy: raw aliases a request's body).
func (c *rulesMemo) put(raw []byte, p *policy.RulesPatch) {
	if len(raw) > maxCachedRulesBytes {
		return
	}
	key := string(raw)
	c.mu.Lock()
	if len(c.m) >= maxCachedRules {
		clear(c.m)
	}
	c.m[key] = p
	c.mu.Unlock()
}

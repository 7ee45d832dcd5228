package preflight

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"unicode/utf8"

	"github.com/payguard/payguard/internal/inputerr"
	"github.com/payguard/payguard/policy"
	"github.com/payguard/payguard/x402"
	"github.com/payguard/payguard/x402/jsonscan"
)

// Limits on the input itself (SPEC §10's Limits table, and payguard's bound on text fields, which SPEC §10 leaves to
// the implementation).
const (
	// MaxBodyBytes is SPEC §10's request body limit: 64 KiB of actual bytes.
	MaxBodyBytes = x402.MaxBodyBytes
	// MaxDepth is SPEC §10's JSON nesting limit.
	MaxDepth = 32
	// MaxOptions is SPEC §10's limit on payment options per request.
	MaxOptions = policy.MaxOptions
	// MaxTextBytes bounds every text field payguard reads: URLs, the method, cart fields, the agent id,
	// each rule list entry, and the scheme, network, asset, payTo, amount and resource of every payment
	// option. 2048 bytes holds any real URL or wallet identifier with room to spare.
	MaxTextBytes = 2048
)

// InputError is an input refused before any payment: a preflight input that violates SPEC §10's limits or
// shape, and a payee check query screening refuses (screening returns the same type). Channels answer it with
// 400 (413 for body_too_large) before any payment, and never charge for it. The pay-per-call server
// (server/core) uses it for every input it refuses before payment: there is no second such type.
//
// Its Code is one of: body_too_large, invalid_utf8, invalid_json, too_deep, unknown_field, invalid_field,
// field_too_long, invalid_challenge, too_many_options, unknown_rule, too_many_entries, invalid_rules; a check
// query's is missing_input or invalid_parameter. The type is defined in internal/inputerr, below both
// preflight and screening (preflight imports screening); this is its public name.
type InputError = inputerr.Error

func inputErr(code, format string, args ...any) *InputError {
	return &InputError{Code: code, Message: fmt.Sprintf(format, args...)}
}

// Input is SPEC §2's PreflightInput. A challenge or a cart is needed in practice, but neither is not an input
// error: the decision is then "block: no payment options found in input".
type Input struct {
	Challenge      *x402.PaymentRequired `json:"challenge,omitempty"`
	Cart           *Cart                 `json:"cart,omitempty"`
	ResourceURL    string                `json:"resource_url,omitempty"`
	ResourceMethod string                `json:"resource_method,omitempty"`
	Rules          *policy.RulesPatch    `json:"rules,omitempty"`
	Context        *Context              `json:"context,omitempty"`

	// raw is the body ParseInput read; the receipt's input_sha256 is computed over it.
	raw []byte
}

// Cart is SPEC §2's cart input: a checkout already priced in USD.
type Cart struct {
	MerchantDomain string     `json:"merchant_domain,omitempty"`
	TotalUSD       policy.USD `json:"total_usd"` // exact, from the JSON number text
	PayTo          string     `json:"pay_to,omitempty"`
	MerchantName   string     `json:"merchant_name,omitempty"`

	// TotalProblem is set by ParseInput when total_usd is missing, negative or not representable in
	// micro-dollars; the decision then blocks on it rather than the input being refused, because it is a
	// fact about the payment, not a malformed request.
	TotalProblem policy.AmountProblem `json:"-"`
}

// Context is SPEC §2's context object.
type Context struct {
	SpentTodayUSD policy.USD `json:"spent_today_usd"` // the caller's own ledger
	AgentID       string     `json:"agent_id,omitempty"`
	// ConfigSHA256 is the hash of the rule set that decided (set by the proxy, which builds its inputs in
	// code; ParseInput does not accept it from a caller), so that the receipt's input hash binds it.
	ConfigSHA256 string `json:"config_sha256,omitempty"`
}

// ParseInput reads a PreflightInput body and enforces SPEC §10's limits before any work: the body size, valid
// UTF-8, JSON depth, bounded text fields, at most MaxOptions payment options, at most policy.MaxListEntries
// per rule list, and known member and rule names (a misspelt "context" would otherwise silently drop the
// caller's spend from the daily cap). Members inside the challenge are x402's and are kept, not refused.
// Every error is an *InputError.
func ParseInput(body []byte) (*Input, error) {
	return parseInput(body, false)
}

// ParseInputOwned is ParseInput for a body the caller gives away: the Input keeps body itself (its members
// alias it) instead of a copy, so the caller must never change body afterwards. serve's HTTP handler reads
// each request's body into a buffer of its own and hands it here (issue 36: the copy was 0.3–0.5 KB per
// preflight).
func ParseInputOwned(body []byte) (*Input, error) {
	return parseInput(body, true)
}

func parseInput(body []byte, owned bool) (*Input, error) {
	if len(body) > MaxBodyBytes {
		return nil, inputErr("body_too_large", "body is %d bytes; the limit is %d", len(body), MaxBodyBytes)
	}
	if !utf8.Valid(body) {
		return nil, inputErr("invalid_utf8", "body is not valid UTF-8")
	}
	if !jsonscan.Valid(body) { // the same verdict as json.Valid
		return nil, inputErr("invalid_json", "body is not a JSON document")
	}
	if d := jsonscan.Depth(body); d > MaxDepth {
		return nil, inputErr("too_deep", "JSON nesting is %d levels deep; the limit is %d", d, MaxDepth)
	}
	// The members are read from the Input's own copy of the body (they alias it, read-only), never from
	// a buffer the caller may change, unless the caller gave the body away.
	if !owned {
		body = bytes.Clone(body)
	}
	in := &Input{raw: body}
	var room [8]jsonscan.Member // the members on the stack: the input has at most seven
	m, err := objectMembers(room[:0], in.raw, "input", "challenge", "cart", "resource_url", "resource_method", "rules", "context")
	if err != nil {
		return nil, err
	}
	if err := textMember(m, "", "resource_url", &in.ResourceURL); err != nil {
		return nil, err
	}
	if err := textMember(m, "", "resource_method", &in.ResourceMethod); err != nil {
		return nil, err
	}
	if raw, ok := m.get("challenge"); ok && !isNull(raw) {
		if in.Challenge, err = parseChallenge(raw); err != nil {
			return nil, err
		}
	}
	if raw, ok := m.get("cart"); ok && !isNull(raw) {
		if in.Cart, err = parseCart(raw); err != nil {
			return nil, err
		}
	}
	if raw, ok := m.get("rules"); ok && !isNull(raw) {
		if in.Rules, err = parseRules(raw); err != nil {
			return nil, err
		}
	}
	if raw, ok := m.get("context"); ok && !isNull(raw) {
		if in.Context, err = parseContext(raw); err != nil {
			return nil, err
		}
	}
	return in, nil
}

func parseChallenge(raw json.RawMessage) (*x402.PaymentRequired, error) {
	// x402 stops reading at the (MaxOptions+1)th option, before any per-option work.
	ch, err := parsePaymentRequiredMemo(raw)
	if errors.Is(err, x402.ErrTooManyOptions) {
		return nil, inputErr("too_many_options", "challenge has more than %d payment options; the limit is %d", MaxOptions, MaxOptions)
	}
	if err != nil {
		return nil, inputErr("invalid_challenge", "%v", err)
	}
	if len(ch.Accepts) > MaxOptions {
		return nil, inputErr("too_many_options", "challenge has %d payment options; the limit is %d", len(ch.Accepts), MaxOptions)
	}
	if ch.Resource != nil {
		if err := boundText("challenge.resource.url", ch.Resource.URL); err != nil {
			return nil, err
		}
	}
	for i := range ch.Accepts {
		r := &ch.Accepts[i]
		for _, f := range [...]struct{ name, v string }{
			{"scheme", r.Scheme}, {"network", r.Network}, {"asset", r.Asset}, {"payTo", r.PayTo}, {"amount", r.Amount}, {"resource", r.Resource},
		} {
			if len(f.v) > MaxTextBytes { // the field's name is formatted only for the error
				return nil, boundText(fmt.Sprintf("challenge.accepts[%d].%s", i, f.name), f.v)
			}
		}
	}
	return ch, nil
}

func parseCart(raw json.RawMessage) (*Cart, error) {
	var room [8]jsonscan.Member
	m, err := objectMembers(room[:0], raw, "cart", "merchant_domain", "total_usd", "pay_to", "merchant_name")
	if err != nil {
		return nil, err
	}
	c := &Cart{}
	for name, dst := range map[string]*string{
		"merchant_domain": &c.MerchantDomain, "pay_to": &c.PayTo, "merchant_name": &c.MerchantName,
	} {
		if err := textMember(m, "cart.", name, dst); err != nil {
			return nil, err
		}
	}
	total, ok := m.get("total_usd")
	switch {
	case !ok || isNull(total):
		c.TotalProblem = policy.AmountMalformed
	default:
		t := bytes.TrimSpace(total)
		if len(t) == 0 || !(t[0] == '-' || '0' <= t[0] && t[0] <= '9') {
			return nil, inputErr("invalid_field", "cart.total_usd must be a JSON number")
		}
		if t[0] == '-' {
			c.TotalProblem = policy.AmountNegative
		} else if v, err := policy.ParseUSD(string(t)); err != nil {
			c.TotalProblem = policy.AmountMalformed
		} else {
			c.TotalUSD = v
		}
	}
	return c, nil
}

func parseContext(raw json.RawMessage) (*Context, error) {
	var room [4]jsonscan.Member
	m, err := objectMembers(room[:0], raw, "context", "spent_today_usd", "agent_id")
	if err != nil {
		return nil, err
	}
	c := &Context{}
	if err := textMember(m, "context.", "agent_id", &c.AgentID); err != nil {
		return nil, err
	}
	if v, ok := m.get("spent_today_usd"); ok && !isNull(v) {
		if err := json.Unmarshal(v, &c.SpentTodayUSD); err != nil {
			return nil, inputErr("invalid_field", "context.spent_today_usd: %v", err)
		}
	}
	return c, nil
}

// parseRules vets a rules object, once per distinct object (rulesMemo).
func parseRules(raw json.RawMessage) (*policy.RulesPatch, error) {
	if p := vettedRules.get(raw); p != nil {
		return p, nil
	}
	p, err := vetRules(raw)
	if err != nil {
		return nil, err
	}
	vettedRules.put(raw, p)
	return p, nil
}

func vetRules(raw json.RawMessage) (*policy.RulesPatch, error) {
	p, err := policy.NewRulesPatch(raw)
	switch {
	case errors.Is(err, policy.ErrUnknownRule):
		return nil, inputErr("unknown_rule", "%v", err)
	case errors.Is(err, policy.ErrTooManyEntries):
		return nil, inputErr("too_many_entries", "%v", err)
	case err != nil:
		return nil, inputErr("invalid_rules", "%v", err)
	}
	r, _ := p.Apply(policy.DefaultRules())
	// An array, not a map: nothing allocated per request, and the first long entry is always reported first.
	for _, l := range [...]struct {
		name string
		list []string
	}{
		{"allowed_networks", r.AllowedNetworks}, {"domain_allowlist", r.DomainAllowlist},
		{"domain_blocklist", r.DomainBlocklist}, {"payto_allowlist", r.PayToAllowlist}, {"payto_blocklist", r.PayToBlocklist},
	} {
		for i, e := range l.list {
			if len(e) > MaxTextBytes { // the entry's name is only formatted for the error
				return nil, boundText(fmt.Sprintf("rules.%s[%d]", l.name, i), e)
			}
		}
	}
	return p, nil
}

// objectMembers reads a JSON object's members by exact name (encoding/json would match names without case)
// and refuses names not in known.
//
// jsonscan splits the object without reflection and accepts exactly what encoding/json accepts; on a
// refusal encoding/json decodes again for its error message. Values alias data.
func objectMembers(room []jsonscan.Member, data []byte, what string, known ...string) (members, error) {
	if t := bytes.TrimSpace(data); len(t) == 0 || t[0] != '{' {
		return nil, inputErr("invalid_json", "%s must be a JSON object", what)
	}
	ms, ok := jsonscan.AppendObject(room, data)
	if !ok { // encoding/json refuses the same documents; ask it for the error message
		var m map[string]json.RawMessage
		if err := json.Unmarshal(data, &m); err != nil {
			return nil, inputErr("invalid_json", "%s: %v", what, err)
		}
		return nil, inputErr("invalid_json", "%s is not a valid JSON object", what)
	}
	for _, mb := range ms {
		if !slices.Contains(known, mb.Name) { // the first unknown name in document order
			return nil, inputErr("unknown_field", "%s has an unknown member %q (known: %v)", what, mb.Name, known)
		}
	}
	return members(ms), nil
}

// members are an object's members in document order (objectMembers): a few known names, looked up without
// building a map.
type members []jsonscan.Member

// get is the value of the last member named name: a repeated name keeps its last value, as encoding/json
// and JSON.parse do.
func (ms members) get(name string) (json.RawMessage, bool) {
	for i := len(ms) - 1; i >= 0; i-- {
		if ms[i].Name == name {
			return ms[i].Value, true
		}
	}
	return nil, false
}

// textMember reads the string member name of m; prefix ("cart.") only makes error messages precise.
func textMember(m members, prefix, name string, dst *string) error {
	raw, ok := m.get(name)
	if !ok || isNull(raw) {
		return nil
	}
	if v, ok := jsonscan.String(raw); ok { // as json.Unmarshal into a string decodes it
		*dst = v
	} else if err := json.Unmarshal(raw, dst); err != nil {
		return inputErr("invalid_field", "%s%s must be a string", prefix, name)
	}
	if len(*dst) > MaxTextBytes {
		return boundText(prefix+name, *dst)
	}
	return nil
}

func boundText(name, v string) error {
	if len(v) > MaxTextBytes {
		return inputErr("field_too_long", "%s is %d bytes; the limit is %d", name, len(v), MaxTextBytes)
	}
	return nil
}

func isNull(raw json.RawMessage) bool { return string(bytes.TrimSpace(raw)) == "null" }

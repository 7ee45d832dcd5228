package policy

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"slices"

	"gopkg.in/yaml.v3"
)

// Errors a rules decoder wraps, so that callers can tell an input mistake's kind (errors.Is).
var (
	ErrUnknownRule    = errors.New("unknown rule")
	ErrTooManyEntries = errors.New("too many list entries")
	ErrInvalidRules   = errors.New("invalid rules")
)

// ruleNames are SPEC §3's rule names, in SPEC §3's order.
var ruleNames = []string{
	"max_per_payment_usd", "hold_above_usd", "daily_cap_usd", "allowed_networks", "usdc_only",
	"strict_allowlist", "new_domain_days", "screen_sanctions", "max_price_multiple", "require_live",
	"hold_on_payto_change", "domain_allowlist", "domain_blocklist", "payto_allowlist", "payto_blocklist",
}

var listRules = []string{"allowed_networks", "domain_allowlist", "domain_blocklist", "payto_allowlist", "payto_blocklist"}

// Clone returns a deep copy, so that decoding over it never writes into the original's lists.
func (r Rules) Clone() Rules {
	c := r
	c.AllowedNetworks = slices.Clone(r.AllowedNetworks)
	c.DomainAllowlist = slices.Clone(r.DomainAllowlist)
	c.DomainBlocklist = slices.Clone(r.DomainBlocklist)
	c.PayToAllowlist = slices.Clone(r.PayToAllowlist)
	c.PayToBlocklist = slices.Clone(r.PayToBlocklist)
	if r.MaxPriceMultiple != nil {
		m := *r.MaxPriceMultiple
		c.MaxPriceMultiple = &m
	}
	return c
}

// DecodeRulesJSON decodes a JSON rules object over base: rules the object omits keep base's values (a
// request's rules overlay the deployment's). Unknown rule names, lists over MaxListEntries, null for any rule
// but max_price_multiple (where null disables the rule) and out-of-range values are errors that name the rule.
func DecodeRulesJSON(data []byte, base Rules) (Rules, error) {
	var members map[string]json.RawMessage
	if err := json.Unmarshal(data, &members); err != nil {
		return Rules{}, fmt.Errorf("rules: %w: not a JSON object: %v", ErrInvalidRules, err)
	}
	if members == nil {
		return Rules{}, fmt.Errorf("rules: %w: null is not a rules object", ErrInvalidRules)
	}
	for _, name := range sortedKeys(members) {
		if err := checkRuleMember(name, isJSONNull(members[name]), func() (int, error) {
			var l []json.RawMessage
			err := json.Unmarshal(members[name], &l)
			return len(l), err
		}); err != nil {
			return Rules{}, err
		}
	}
	r := base.Clone()
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&r); err != nil {
		return Rules{}, fmt.Errorf("rules: %w: %s: %v", ErrInvalidRules, failingMember(members), err)
	}
	return finishDecode(r)
}

// failingMember finds the first member (by name) that does not decode on its own, so that an error from a
// value's own decoder (USD's, for example) can name its rule.
func failingMember(members map[string]json.RawMessage) string {
	for _, name := range sortedKeys(members) {
		var r Rules
		one, _ := json.Marshal(map[string]json.RawMessage{name: members[name]})
		if json.Unmarshal(one, &r) != nil {
			return name
		}
	}
	return "rules object"
}

// DecodeRulesYAML is DecodeRulesJSON for YAML (yaml.v3 with KnownFields). An empty document keeps base.
func DecodeRulesYAML(data []byte, base Rules) (Rules, error) {
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil {
		return Rules{}, fmt.Errorf("rules: %w: %v", ErrInvalidRules, err)
	}
	if doc.Kind == 0 {
		return finishDecode(base.Clone())
	}
	m := &doc
	if m.Kind == yaml.DocumentNode && len(m.Content) == 1 {
		m = m.Content[0]
	}
	if m.Kind != yaml.MappingNode {
		return Rules{}, fmt.Errorf("rules: %w: line %d: not a mapping of rule names", ErrInvalidRules, m.Line)
	}
	for i := 0; i+1 < len(m.Content); i += 2 {
		k, v := m.Content[i], m.Content[i+1]
		isNull := v.Kind == yaml.ScalarNode && v.Tag == "!!null"
		if err := checkRuleMember(k.Value, isNull, func() (int, error) {
			if v.Kind != yaml.SequenceNode {
				return 0, fmt.Errorf("line %d: not a list", v.Line)
			}
			return len(v.Content), nil
		}); err != nil {
			return Rules{}, err
		}
	}
	r := base.Clone()
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true)
	if err := dec.Decode(&r); err != nil {
		return Rules{}, fmt.Errorf("rules: %w: %v", ErrInvalidRules, err)
	}
	return finishDecode(r)
}

// checkRuleMember vets one member before the typed decode, so that errors name the rule plainly.
func checkRuleMember(name string, isNull bool, listLen func() (int, error)) error {
	if !slices.Contains(ruleNames, name) {
		return fmt.Errorf("rules: %w %q", ErrUnknownRule, name)
	}
	if isNull {
		if name == "max_price_multiple" {
			return nil
		}
		return fmt.Errorf("rules: %w: %s must not be null", ErrInvalidRules, name)
	}
	if slices.Contains(listRules, name) {
		n, err := listLen()
		if err != nil {
			return fmt.Errorf("rules: %w: %s: %v", ErrInvalidRules, name, err)
		}
		if n > MaxListEntries {
			return fmt.Errorf("rules: %w: %s has %d entries (at most %d)", ErrTooManyEntries, name, n, MaxListEntries)
		}
	}
	return nil
}

func finishDecode(r Rules) (Rules, error) {
	for _, l := range []*[]string{&r.AllowedNetworks, &r.DomainAllowlist, &r.DomainBlocklist, &r.PayToAllowlist, &r.PayToBlocklist} {
		if *l == nil {
			*l = []string{}
		}
	}
	if err := r.Validate(); err != nil {
		return Rules{}, fmt.Errorf("%w: %v", ErrInvalidRules, err)
	}
	return r, nil
}

func isJSONNull(b json.RawMessage) bool { return string(bytes.TrimSpace(b)) == "null" }

func sortedKeys(m map[string]json.RawMessage) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// RulesPatch is a request's rules object, kept as its JSON text so that it can be overlaid on whichever
// base rules the deployment has. Unmarshalling vets it (unknown names, list sizes, value types) against the
// defaults, so a bad patch is an input error before any work is done.
type RulesPatch struct {
	raw json.RawMessage
	// overDefaults is the patch applied to DefaultRules(), decoded while vetting. Decoding is a pure function
	// of the patch and the base, so Apply over a base equal to the defaults (the usual deployment) returns a
	// copy of it instead of decoding the same text again: a preflight applies its patch two more times.
	overDefaults *Rules
}

// NewRulesPatch vets and wraps a JSON rules object.
func NewRulesPatch(data []byte) (*RulesPatch, error) {
	r, err := DecodeRulesJSON(data, DefaultRules())
	if err != nil {
		return nil, err
	}
	return &RulesPatch{raw: bytes.Clone(data), overDefaults: &r}, nil
}

// UnmarshalJSON vets the patch (see NewRulesPatch).
func (p *RulesPatch) UnmarshalJSON(data []byte) error {
	q, err := NewRulesPatch(data)
	if err != nil {
		return err
	}
	*p = *q
	return nil
}

// MarshalJSON writes the patch as it was given.
func (p RulesPatch) MarshalJSON() ([]byte, error) {
	if p.raw == nil {
		return []byte("{}"), nil
	}
	return p.raw, nil
}

// Apply overlays the patch on base. A nil patch returns a copy of base.
func (p *RulesPatch) Apply(base Rules) (Rules, error) {
	if p == nil || p.raw == nil {
		return base.Clone(), nil
	}
	if p.overDefaults != nil && base.sameAs(&defaultRules) {
		return p.overDefaults.Clone(), nil
	}
	return DecodeRulesJSON(p.raw, base)
}

// defaultRules is DefaultRules() for comparisons only; it is never handed out.
var defaultRules = DefaultRules()

// sameAs reports whether decoding any patch over r gives what it gives over o: every rule is equal. Lists
// compare by content (nil and empty alike: finishDecode makes both empty) and max_price_multiple by value.
// TestSameAsSeesEveryRule fails when a rule is added to Rules and not here.
func (r *Rules) sameAs(o *Rules) bool {
	sameMultiple := r.MaxPriceMultiple == nil && o.MaxPriceMultiple == nil ||
		r.MaxPriceMultiple != nil && o.MaxPriceMultiple != nil && *r.MaxPriceMultiple == *o.MaxPriceMultiple
	return sameMultiple &&
		r.MaxPerPaymentUSD == o.MaxPerPaymentUSD && r.HoldAboveUSD == o.HoldAboveUSD && r.DailyCapUSD == o.DailyCapUSD &&
		r.USDCOnly == o.USDCOnly && r.StrictAllowlist == o.StrictAllowlist && r.NewDomainDays == o.NewDomainDays &&
		r.ScreenSanctions == o.ScreenSanctions && r.RequireLive == o.RequireLive && r.HoldOnPayToChange == o.HoldOnPayToChange &&
		slices.Equal(r.AllowedNetworks, o.AllowedNetworks) && slices.Equal(r.DomainAllowlist, o.DomainAllowlist) &&
		slices.Equal(r.DomainBlocklist, o.DomainBlocklist) && slices.Equal(r.PayToAllowlist, o.PayToAllowlist) &&
		slices.Equal(r.PayToBlocklist, o.PayToBlocklist)
}

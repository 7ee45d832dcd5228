package policy

import (
	"strings"

	"github.com/payguard/payguard/internal/evmaddr"
)

// Lists are a rule set's domain and payee lists in the forms Evaluate compares them in, made once per rule
// set (Rules.Lists) instead of on every decision: each domain entry mapped by canonicalHost, each payee
// entry trimmed (and an EVM address in lower case), as sets. Evaluate uses them through Facts.Lists only for
// the lists they were made from (the same slices: rule lists are not changed in place once in use); for
// any other rules it compares the lists entry by entry as before. TestListsDecideAsTheLists holds both ways
// to the same answers.
type Lists struct {
	src                      [4][]string // DomainAllowlist, DomainBlocklist, PayToAllowlist, PayToBlocklist
	domainAllow, domainBlock map[string]struct{}
	payAllow, payBlock       payeeSet
}

// payeeSet is a payee list: EVM addresses (evmaddr.Is) in lower case, other identifiers exactly.
type payeeSet struct{ evm, other map[string]struct{} }

// Lists prepares r's lists.
func (r *Rules) Lists() *Lists {
	l := &Lists{src: [4][]string{r.DomainAllowlist, r.DomainBlocklist, r.PayToAllowlist, r.PayToBlocklist},
		domainAllow: domainSet(r.DomainAllowlist), domainBlock: domainSet(r.DomainBlocklist),
		payAllow: payeeSetOf(r.PayToAllowlist), payBlock: payeeSetOf(r.PayToBlocklist)}
	return l
}

func domainSet(list []string) map[string]struct{} {
	m := make(map[string]struct{}, len(list))
	for _, e := range list {
		if e = canonicalHost(e); e != "" {
			m[e] = struct{}{}
		}
	}
	return m
}

func payeeSetOf(list []string) payeeSet {
	s := payeeSet{evm: map[string]struct{}{}, other: map[string]struct{}{}}
	for _, e := range list {
		e = strings.TrimSpace(e)
		if evmaddr.Is(e) {
			s.evm[evmaddr.Canonical(e)] = struct{}{}
		} else {
			s.other[e] = struct{}{}
		}
	}
	return s
}

// of reports whether l was made from r's lists.
func (l *Lists) of(r *Rules) bool {
	return l != nil && sameSlice(l.src[0], r.DomainAllowlist) && sameSlice(l.src[1], r.DomainBlocklist) &&
		sameSlice(l.src[2], r.PayToAllowlist) && sameSlice(l.src[3], r.PayToBlocklist)
}

func sameSlice(a, b []string) bool {
	return len(a) == len(b) && (len(a) == 0 || &a[0] == &b[0])
}

// domainIn is domainListed over a prepared set: domain or one of its parent names is an entry.
func domainIn(domain string, set map[string]struct{}) bool {
	if domain == "" || len(set) == 0 {
		return false
	}
	if _, ok := set[domain]; ok {
		return true
	}
	for i := 0; i < len(domain); i++ {
		if domain[i] == '.' {
			if _, ok := set[domain[i+1:]]; ok {
				return true
			}
		}
	}
	return false
}

// has is payeeListed over a prepared set.
func (s payeeSet) has(payTo string) bool {
	if payTo == "" {
		return false
	}
	if evmaddr.Is(payTo) {
		key := evmaddr.CanonicalKey(payTo)
		_, ok := s.evm[string(key[:])]
		return ok
	}
	_, ok := s.other[payTo]
	return ok
}

// lists are f's prepared lists when they are its rules' (nil otherwise).
func (f *Facts) lists() *Lists {
	if f.Lists.of(&f.Rules) {
		return f.Lists
	}
	return nil
}

// domainBlocked, domainAllowed and the payee checks are the list checks through l when it has them.
func domainBlockedBy(domain string, r *Rules, l *Lists) bool {
	if l != nil {
		return domainIn(domain, l.domainBlock)
	}
	return domainListed(domain, r.DomainBlocklist)
}

func domainAllowedBy(domain string, r *Rules, l *Lists) bool {
	if l != nil {
		return domainIn(domain, l.domainAllow)
	}
	return domainListed(domain, r.DomainAllowlist)
}

func payeeBlockedBy(payTo string, r *Rules, l *Lists) bool {
	if l != nil {
		return l.payBlock.has(payTo)
	}
	return payeeListed(payTo, r.PayToBlocklist)
}

func payeeAllowedBy(payTo string, r *Rules, l *Lists) bool {
	if l != nil {
		return l.payAllow.has(payTo)
	}
	return payeeListed(payTo, r.PayToAllowlist)
}

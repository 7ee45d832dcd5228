// Package screening answers "who is this payee?": OFAC SDN sanctions by wallet address and by name
// (screening/sanctions), and a merchant domain's registration age and DNS (screening/domain). Check combines
// them into SPEC §7.1's CheckResult; the preflight engine asks the same interfaces for its facts.
//
// Missing data is unknown, never positive evidence: a component that is absent or fails says so.
package screening

import (
	"context"
	"time"
)

// SanctionsMatch is one SDN entry that matched a query, for an approver to review.
type SanctionsMatch struct {
	UID         int      `json:"uid"`
	Name        string   `json:"name"`                   // the entry's primary name
	MatchedName string   `json:"matched_name,omitempty"` // the primary name or alias that matched
	Type        string   `json:"type,omitempty"`         // individual, entity, vessel, aircraft
	Programs    []string `json:"programs,omitempty"`
	Score       float64  `json:"score"` // 1 for exact matches
	Address     string   `json:"address,omitempty"`
	Currency    string   `json:"currency,omitempty"` // XBT, ETH, USDC, ...
	// Steps are the normalisation steps a name match needed beyond case, accents and punctuation (the
	// Step… constants), so an approver sees why the names were taken as one; empty for an address match
	// and for a name that equals the listed one as written.
	Steps []string `json:"steps,omitempty"`
}

// Normalisation steps a name match can need (SanctionsMatch.Steps; docs/SCREENING.md "Match evidence").
const (
	StepLegalFormRemoved   = "legal_form_removed"   // a legal form (LLC, GmbH, ...) was removed from one side or both
	StepLegalFormDifferent = "legal_form_different" // both names carry a legal form and they differ: never exact
	StepReordered          = "reordered"            // the words matched in another order
	StepSpacing            = "spacing"              // words written joined on one side and apart on the other
	StepTransliterated     = "transliterated"       // a word matched as another romanization or spelling (Mohammed/Muhammad)
	StepTypo               = "typo"                 // a word matched one typing slip away
	StepShortForm          = "short_form"           // matched a form people write the listed name in (middle names dropped, first of two surnames)
	StepWordsOmitted       = "words_omitted"        // some words of the listed name have no partner in the query
	StepExtraWords         = "extra_words"          // some words of the query have no partner in the listed name
	StepGluedLegalForm     = "glued_legal_form"     // a legal form written glued to the name was cut off
	StepWeakAlias          = "weak_alias"           // the listed name is an alias OFAC marks weak (never exact)
	StepParticle           = "particle_changed"     // one connecting word for another (bin for al)
)

// NameResult is the outcome of screening one name.
type NameResult struct {
	Exact    []SanctionsMatch // exact normalized match on a primary name or alias
	Possible []SanctionsMatch // fuzzy matches above the documented threshold
}

// Sanctions screens against a loaded SDN list. Implementations are safe for concurrent use and swap lists
// atomically on refresh. Ready is false while no list has been loaded: callers must then report the
// sanctions facts as unknown.
type Sanctions interface {
	ScreenAddress(address string) []SanctionsMatch
	ScreenName(name string) NameResult
	DataAsOf() time.Time
	Ready() bool
}

// DataAsOfSourcer is a Sanctions that says what its DataAsOf is (sanctions.Screener and sanctions.List:
// publish_date, http_last_modified, fetch_time or file_mtime). The payee check reports it as
// data_as_of_source; with a Sanctions that is not one, data_as_of_source is left out (unknown).
type DataAsOfSourcer interface {
	DataAsOfSource() string
}

// DomainFacts is what could be learned about a merchant domain. Pointers are nil when unknown.
type DomainFacts struct {
	Domain       string     `json:"domain"`                  // normalized (lower case, no scheme/port/path, no trailing dot)
	Valid        bool       `json:"valid"`                   // readable as a public merchant domain
	RegisteredAt *time.Time `json:"registered_at,omitempty"` // from RDAP; nil = unknown
	AgeDays      *int       `json:"age_days,omitempty"`
	AgeError     string     `json:"age_error,omitempty"` // why the age is unknown
	HasA         *bool      `json:"has_a,omitempty"`     // nil = lookup failed or was not made
	HasMX        *bool      `json:"has_mx,omitempty"`
	DNSError     string     `json:"dns_error,omitempty"`

	// RegistrableDomain is the registered domain (eTLD+1) that the age is for; MX is looked up there too.
	RegistrableDomain string `json:"registrable_domain,omitempty"`
}

// Domains gathers domain facts. An offline or disabled checker returns facts with unknown age and DNS.
type Domains interface {
	Facts(ctx context.Context, domain string) DomainFacts
}

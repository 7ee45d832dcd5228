package screening

import (
	"context"
	"fmt"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/payguard/payguard/internal/inputerr"
)

// Flags of SPEC §7.1's payee check flag table.
const (
	FlagSanctionedAddress      = "sanctioned_address"       // high
	FlagSanctionedNameExact    = "sanctioned_name_exact"    // high
	FlagSanctionedNamePossible = "sanctioned_name_possible" // medium
	FlagInvalidDomain          = "invalid_domain"           // medium
	FlagNewDomain              = "new_domain"               // medium
	FlagDomainAgeUnknown       = "domain_age_unknown"       // unknown
	FlagDomainNoDNS            = "domain_no_dns"            // medium
)

// Risk levels, from weakest to strongest signal.
const (
	RiskLow     = "low"
	RiskUnknown = "unknown"
	RiskMedium  = "medium"
	RiskHigh    = "high"
)

// flagRisk is SPEC §7.1's flag table: the risk each flag carries.
var flagRisk = map[string]string{
	FlagSanctionedAddress:      RiskHigh,
	FlagSanctionedNameExact:    RiskHigh,
	FlagSanctionedNamePossible: RiskMedium,
	FlagInvalidDomain:          RiskMedium,
	FlagNewDomain:              RiskMedium,
	FlagDomainAgeUnknown:       RiskUnknown,
	FlagDomainNoDNS:            RiskMedium,
	FlagUnrecognizedAddress:    RiskUnknown,
}

// riskRank orders the risks by strength: high > medium > unknown > low. "Unknown is not low risk", but a
// known medium signal says more than an unknown one.
var riskRank = map[string]int{RiskLow: 0, RiskUnknown: 1, RiskMedium: 2, RiskHigh: 3}

// Disclaimer is the informational-screening notice every CheckResult carries (SPEC §1.4).
const Disclaimer = "Informational screening only. Not legal advice, not a compliance certification and not a " +
	"guarantee. Sanctions data is as of data_as_of. Matches must be verified before acting."

// DataAsOfUnknown is data_as_of when no sanctions list is loaded. SPEC §6.4 types the field as a date-time, so
// instead of a word it is the Unix epoch: a valid RFC 3339 date-time that every freshness check reads as
// "older than anything", with sanctions.status "unknown" saying why.
const DataAsOfUnknown = "1970-01-01T00:00:00Z"

// Sanctions screening status values (SanctionsResult.Status).
const (
	StatusClear        = "clear"         // screened, no match
	StatusMatch        = "match"         // screened, at least one match
	StatusUnknown      = "unknown"       // asked, but no list is loaded: nothing was screened
	StatusNotRequested = "not_requested" // neither a name nor an address was given
)

// Input bounds (SPEC §10: text fields bounded and valid UTF-8).
const (
	MaxNameLen    = 256
	MaxAddressLen = 256
	MaxDomainLen  = 2048
)

// Query is what a payee check asks about. Every field is optional; at least one is required.
type Query struct {
	Name    string `json:"name,omitempty"`
	Address string `json:"address,omitempty"`
	Domain  string `json:"domain,omitempty"`
}

// ErrNoInput is returned when a query has no name, address or domain. Like every error Validate returns it
// is an *inputerr.Error, whose public name is *preflight.InputError (one type for every input refused before
// payment; it lives below both packages because preflight imports screening).
var ErrNoInput = &inputerr.Error{Code: inputerr.CodeMissingInput, Message: "give at least one of name, address or domain"}

// CheckResult is SPEC §7.1's payee check answer.
type CheckResult struct {
	Risk      string          `json:"risk"`
	Flags     []string        `json:"flags"`
	Sanctions SanctionsResult `json:"sanctions"`
	Domain    *DomainFacts    `json:"domain"` // null when no domain was given
	DataAsOf  string          `json:"data_as_of"`
	// DataAsOfSource says what DataAsOf is: publish_date (SDN.XML's), http_last_modified (the download's
	// Last-Modified), fetch_time, or file_mtime (a local copy's modification time). Absent when unknown.
	DataAsOfSource string `json:"data_as_of_source,omitempty"`
	Disclaimer     string `json:"disclaimer"`
}

// SanctionsResult is the sanctions part of a CheckResult.
type SanctionsResult struct {
	Status string `json:"status"` // clear | match | unknown | not_requested
	// Screened lists what was screened against the list: "address", "name". Empty when nothing was.
	Screened       []string         `json:"screened"`
	AddressMatches []SanctionsMatch `json:"address_matches"`
	NameMatches    NameMatches      `json:"name_matches"`
	Error          string           `json:"error,omitempty"` // why the status is unknown
}

// NameMatches are the name screening's exact and possible matches.
type NameMatches struct {
	Exact    []SanctionsMatch `json:"exact"`
	Possible []SanctionsMatch `json:"possible"`
}

// CheckerOptions configures a Checker.
type CheckerOptions struct {
	Sanctions Sanctions // nil or not Ready: sanctions unknown
	Domains   Domains   // nil: domain age and DNS unknown (as offline)
	// NewDomainDays is the new_domain threshold: a known age below it is flagged. Default 30.
	NewDomainDays int
}

// Checker runs payee checks. It is safe for concurrent use.
type Checker struct {
	sanctions     Sanctions
	domains       Domains
	newDomainDays int
}

// NewChecker returns a Checker.
func NewChecker(opts CheckerOptions) *Checker {
	if opts.NewDomainDays <= 0 {
		opts.NewDomainDays = 30
	}
	return &Checker{sanctions: opts.Sanctions, domains: opts.Domains, newDomainDays: opts.NewDomainDays}
}

// Sanctions is the screener the Checker uses (possibly nil), for the preflight engine.
func (c *Checker) Sanctions() Sanctions { return c.sanctions }

// Domains is the domain fact source the Checker uses (possibly nil), for the preflight engine.
func (c *Checker) Domains() Domains { return c.domains }

// Validate checks a query's fields: at least one given, each bounded and valid UTF-8 (an *inputerr.Error, the
// one input error type: invalid_parameter naming the field, or ErrNoInput). Surrounding white
// space is not content.
func (q Query) Validate() error {
	fields := []struct {
		name, value string
		max         int
	}{{"name", q.Name, MaxNameLen}, {"address", q.Address, MaxAddressLen}, {"domain", q.Domain, MaxDomainLen}}
	given := false
	for _, f := range fields {
		if !utf8.ValidString(f.value) {
			return &inputerr.Error{Code: inputerr.CodeInvalidParameter, Field: f.name, Message: "not valid UTF-8"}
		}
		if len(f.value) > f.max {
			return &inputerr.Error{Code: inputerr.CodeInvalidParameter, Field: f.name, Message: fmt.Sprintf("longer than %d bytes", f.max)}
		}
		if strings.TrimSpace(f.value) != "" {
			given = true
		}
	}
	if !given {
		return ErrNoInput
	}
	return nil
}

// Check screens the query. The error is an *inputerr.Error (preflight.InputError; ErrNoInput among them); a component that is
// missing or fails is reported as unknown in the result, never as an error and never as low risk.
//
// Risk is the strongest signal, high > medium > unknown > low: each flag carries its risk from SPEC §7.1's
// table, and a fact that was asked for but could not be established raises the floor to unknown even
// without a flag of its own (sanctions asked about with no list loaded; a DNS lookup that failed). Low
// therefore means: nothing flagged and everything asked about known. A part that was not asked about (no
// name or address: sanctions "not_requested"; no domain: domain null) does not affect the risk.
func (c *Checker) Check(ctx context.Context, q Query) (CheckResult, error) {
	if err := q.Validate(); err != nil {
		return CheckResult{}, err
	}
	name, address, domain := strings.TrimSpace(q.Name), strings.TrimSpace(q.Address), strings.TrimSpace(q.Domain)

	res := CheckResult{Flags: []string{}, DataAsOf: DataAsOfUnknown, Disclaimer: Disclaimer}
	sanctions, sanctionsKnown := c.screen(name, address)
	res.Sanctions = sanctions
	if s := c.sanctions; s != nil && sanctionsReady(s) {
		if t := s.DataAsOf(); !t.IsZero() {
			res.DataAsOf = t.UTC().Format(time.RFC3339)
			if src, ok := s.(DataAsOfSourcer); ok {
				res.DataAsOfSource = src.DataAsOfSource()
			}
		}
	}
	if len(res.Sanctions.AddressMatches) > 0 {
		res.Flags = append(res.Flags, FlagSanctionedAddress)
	} else if address != "" && AddressKind(NormalizeAddress(address)) == "" {
		// Not on the list says nothing about a string that is no wallet address (a typo, "0xZZ", a name
		// in the wrong field): unknown, never low.
		res.Flags = append(res.Flags, FlagUnrecognizedAddress)
	}
	if len(res.Sanctions.NameMatches.Exact) > 0 {
		res.Flags = append(res.Flags, FlagSanctionedNameExact)
	}
	if len(res.Sanctions.NameMatches.Possible) > 0 {
		res.Flags = append(res.Flags, FlagSanctionedNamePossible)
	}

	domainKnown := true
	if domain != "" {
		f := c.facts(ctx, domain)
		res.Domain = &f
		var flags []string
		flags, domainKnown = c.domainFlags(f)
		res.Flags = append(res.Flags, flags...)
	}

	res.Risk = RiskLow
	if !sanctionsKnown || !domainKnown {
		res.Risk = RiskUnknown
	}
	for _, f := range res.Flags {
		if r := flagRisk[f]; riskRank[r] > riskRank[res.Risk] {
			res.Risk = r
		}
	}
	return res, nil
}

// screen runs the sanctions part. known is false when something was to be screened and could not be.
func (c *Checker) screen(name, address string) (res SanctionsResult, known bool) {
	res = SanctionsResult{
		Screened:       []string{},
		AddressMatches: []SanctionsMatch{},
		NameMatches:    NameMatches{Exact: []SanctionsMatch{}, Possible: []SanctionsMatch{}},
	}
	if name == "" && address == "" {
		res.Status = StatusNotRequested
		return res, true
	}
	if c.sanctions == nil || !sanctionsReady(c.sanctions) {
		res.Status = StatusUnknown
		res.Error = "no sanctions list is loaded"
		return res, false
	}
	defer func() {
		// A screener that panics must not take the check down with it, nor pass for "no match".
		if p := recover(); p != nil {
			res = SanctionsResult{Status: StatusUnknown, Screened: []string{}, AddressMatches: []SanctionsMatch{},
				NameMatches: NameMatches{Exact: []SanctionsMatch{}, Possible: []SanctionsMatch{}},
				Error:       fmt.Sprintf("sanctions screening failed: %v", p)}
			known = false
		}
	}()
	if address != "" {
		res.Screened = append(res.Screened, "address")
		res.AddressMatches = append(res.AddressMatches, c.sanctions.ScreenAddress(address)...)
	}
	if name != "" {
		res.Screened = append(res.Screened, "name")
		nr := c.sanctions.ScreenName(name)
		res.NameMatches.Exact = append(res.NameMatches.Exact, nr.Exact...)
		res.NameMatches.Possible = append(res.NameMatches.Possible, nr.Possible...)
	}
	res.Status = StatusClear
	if len(res.AddressMatches)+len(res.NameMatches.Exact)+len(res.NameMatches.Possible) > 0 {
		res.Status = StatusMatch
	}
	return res, true
}

// facts asks the domain source, treating a missing or panicking one as "unknown".
func (c *Checker) facts(ctx context.Context, domain string) (f DomainFacts) {
	if c.domains == nil {
		return DomainFacts{Domain: domain, Valid: true, AgeError: "domain lookups are not configured",
			DNSError: "domain lookups are not configured"}
	}
	defer func() {
		if p := recover(); p != nil {
			f = DomainFacts{Domain: domain, Valid: true, AgeError: fmt.Sprintf("domain screening failed: %v", p),
				DNSError: fmt.Sprintf("domain screening failed: %v", p)}
		}
	}()
	return c.domains.Facts(ctx, domain)
}

// domainFlags maps domain facts to flags. known is false when a fact the risk depends on is unknown
// (age without a flag of its own is covered by domain_age_unknown; a failed DNS lookup has no flag).
//
// An invalid domain gets invalid_domain alone: age and DNS do not apply to something that is not a public
// domain name. Note that the Valid field of a nil-Domains result is an assumption, so a domain given
// without a domain source is never reported invalid; its age and DNS are unknown instead.
func (c *Checker) domainFlags(f DomainFacts) (flags []string, known bool) {
	if !f.Valid {
		return []string{FlagInvalidDomain}, true
	}
	known = true
	switch {
	case f.AgeDays == nil:
		flags = append(flags, FlagDomainAgeUnknown)
	case *f.AgeDays < c.newDomainDays:
		flags = append(flags, FlagNewDomain)
	}
	switch {
	case f.HasA == nil:
		known = false // a failed lookup is not "no A record", and not "has one" either
	case !*f.HasA:
		flags = append(flags, FlagDomainNoDNS)
	}
	return flags, known
}

// sanctionsReady asks Ready, treating a panic as not ready.
func sanctionsReady(s Sanctions) (ok bool) {
	defer func() {
		if recover() != nil {
			ok = false
		}
	}()
	return s.Ready()
}

package screening_test

import (
	"context"
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/payguard/payguard/preflight"
	"github.com/payguard/payguard/screening"
	"github.com/payguard/payguard/screening/sanctions"
	"github.com/payguard/payguard/screening/screeningtest"
)

var (
	sdnAddressMatch = screening.SanctionsMatch{UID: 30581, Name: "LAZARUS GROUP", Programs: []string{"DPRK3"}, Score: 1,
		Address: "0x098b716b8aaf21512996dc57eb0615e2383e2f96", Currency: "ETH"}
	sdnExact    = screening.SanctionsMatch{UID: 36, Name: "AEROCARIBBEAN AIRLINES", Programs: []string{"CUBA"}, Score: 1}
	sdnPossible = screening.SanctionsMatch{UID: 173, Name: "ANGLO-CARIBBEAN CO., LTD.", Programs: []string{"CUBA"}, Score: 0.91}
)

// sdnList is a loaded list with one sanctioned address (a real SDN entry's) and one name of each kind.
func sdnList(ready bool, panics bool) *screeningtest.Sanctions {
	s := &screeningtest.Sanctions{Unready: !ready, Panics: panics, AsOf: asOf, Names: map[string]screening.NameResult{
		"AEROCARIBBEAN AIRLINES": {Exact: []screening.SanctionsMatch{sdnExact}},
		"Anglo Caribbean":        {Possible: []screening.SanctionsMatch{sdnPossible}},
	}}
	s.ListMatch(sdnAddressMatch.Address, sdnAddressMatch)
	return s
}

var asOf = time.Date(2026, 11, 21, 18, 43, 0, 0, time.FixedZone("EST", -5*3600))

func knownFacts(domain string, age int, hasA bool) screening.DomainFacts {
	reg := time.Date(2020, 1, 1, 0, 0, 0, 0, time.UTC)
	return screening.DomainFacts{Domain: domain, Valid: true, RegisteredAt: &reg, AgeDays: &age, HasA: &hasA, HasMX: &hasA}
}

func testDomains() *screeningtest.Domains {
	unknownAge := knownFacts("unknown-age.com", 0, true)
	unknownAge.RegisteredAt, unknownAge.AgeDays, unknownAge.AgeError = nil, nil, "not registered (RDAP 404 from rdap.example)"
	dnsFailed := knownFacts("dns-failed.com", 400, true)
	dnsFailed.HasA, dnsFailed.HasMX, dnsFailed.DNSError = nil, nil, "A lookup for dns-failed.com: server answered SERVFAIL"
	// A domain not in the table is not a domain.
	return &screeningtest.Domains{Unknown: func(d string) screening.DomainFacts {
		return screening.DomainFacts{Domain: d, AgeError: "invalid domain: not a domain"}
	}, Table: map[string]screening.DomainFacts{
		"old.com":         knownFacts("old.com", 4000, true),
		"new.com":         knownFacts("new.com", 29, true),
		"day30.com":       knownFacts("day30.com", 30, true),
		"nodns.com":       knownFacts("nodns.com", 4000, false),
		"unknown-age.com": unknownAge,
		"dns-failed.com":  dnsFailed,
		"new-nodns.com":   knownFacts("new-nodns.com", 2, false),
	}}
}

func newTestChecker() *screening.Checker {
	return screening.NewChecker(screening.CheckerOptions{Sanctions: sdnList(true, false), Domains: testDomains()})
}

// TestCheckFlags has one case per flag of SPEC §7.1's table, each alone, with the risk it carries.
func TestCheckFlags(t *testing.T) {
	tests := []struct {
		flag string
		q    screening.Query
		risk string
	}{
		{screening.FlagSanctionedAddress, screening.Query{Address: "0x098B716B8Aaf21512996dC57EB0615e2383E2f96"}, screening.RiskHigh},
		{screening.FlagSanctionedNameExact, screening.Query{Name: "AEROCARIBBEAN AIRLINES"}, screening.RiskHigh},
		{screening.FlagSanctionedNamePossible, screening.Query{Name: "Anglo Caribbean"}, screening.RiskMedium},
		{screening.FlagInvalidDomain, screening.Query{Domain: "localhost"}, screening.RiskMedium},
		{screening.FlagNewDomain, screening.Query{Domain: "new.com"}, screening.RiskMedium},
		{screening.FlagDomainAgeUnknown, screening.Query{Domain: "unknown-age.com"}, screening.RiskUnknown},
		{screening.FlagDomainNoDNS, screening.Query{Domain: "nodns.com"}, screening.RiskMedium},
	}
	for _, tt := range tests {
		t.Run(tt.flag, func(t *testing.T) {
			res, err := newTestChecker().Check(context.Background(), tt.q)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(res.Flags, []string{tt.flag}) || res.Risk != tt.risk {
				t.Fatalf("flags %v risk %s, want [%s] %s", res.Flags, res.Risk, tt.flag, tt.risk)
			}
		})
	}
}

func TestCheckRisk(t *testing.T) {
	tests := []struct {
		name  string
		q     screening.Query
		flags []string
		risk  string
	}{
		{"all clear and known", screening.Query{Name: "Acme Widgets", Address: "0x1111111111111111111111111111111111111111", Domain: "old.com"}, []string{}, screening.RiskLow},
		// Not on the list says nothing about a string that is no wallet address: never low (issue 18).
		{"0xZZ is no address", screening.Query{Address: "0xZZ"}, []string{screening.FlagUnrecognizedAddress}, screening.RiskUnknown},
		{"0xabc is no address", screening.Query{Address: "0xabc"}, []string{screening.FlagUnrecognizedAddress}, screening.RiskUnknown},
		{"words are no address", screening.Query{Address: "hello world"}, []string{screening.FlagUnrecognizedAddress}, screening.RiskUnknown},
		{"a name in the address field", screening.Query{Name: "Acme Widgets", Address: "Acme Widgets"}, []string{screening.FlagUnrecognizedAddress}, screening.RiskUnknown},
		{"a recognized address without 0x is clear", screening.Query{Address: "1111111111111111111111111111111111111111"}, []string{}, screening.RiskLow},
		{"a Solana address is clear", screening.Query{Address: "4Nd1mBQtrMJVYVfKf2PJy9NZUZdTAsp7D4xWLs4gDB4T"}, []string{}, screening.RiskLow},
		{"new domain at the threshold is not new", screening.Query{Domain: "day30.com"}, []string{}, screening.RiskLow},
		{"name only, clear", screening.Query{Name: "Acme Widgets"}, []string{}, screening.RiskLow},
		{"medium beats unknown", screening.Query{Name: "Anglo Caribbean", Domain: "unknown-age.com"},
			[]string{screening.FlagSanctionedNamePossible, screening.FlagDomainAgeUnknown}, screening.RiskMedium},
		{"high beats everything", screening.Query{Address: "0x098b716b8aaf21512996dc57eb0615e2383e2f96", Name: "Anglo Caribbean", Domain: "new-nodns.com"},
			[]string{screening.FlagSanctionedAddress, screening.FlagSanctionedNamePossible, screening.FlagNewDomain, screening.FlagDomainNoDNS}, screening.RiskHigh},
		{"two highs", screening.Query{Address: "0x098b716b8aaf21512996dc57eb0615e2383e2f96", Name: "AEROCARIBBEAN AIRLINES"},
			[]string{screening.FlagSanctionedAddress, screening.FlagSanctionedNameExact}, screening.RiskHigh},
		{"dns failure is unknown, not no-DNS", screening.Query{Domain: "dns-failed.com"}, []string{}, screening.RiskUnknown},
		{"dns failure does not lower a medium", screening.Query{Name: "Anglo Caribbean", Domain: "dns-failed.com"},
			[]string{screening.FlagSanctionedNamePossible}, screening.RiskMedium},
		{"invalid domain alone, age and DNS not applicable", screening.Query{Domain: "not a domain"}, []string{screening.FlagInvalidDomain}, screening.RiskMedium},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res, err := newTestChecker().Check(context.Background(), tt.q)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(res.Flags, tt.flags) || res.Risk != tt.risk {
				t.Fatalf("flags %v risk %s, want %v %s", res.Flags, res.Risk, tt.flags, tt.risk)
			}
		})
	}
}

func TestCheckNewDomainThresholdConfigurable(t *testing.T) {
	c := screening.NewChecker(screening.CheckerOptions{Sanctions: sdnList(true, false), Domains: testDomains(), NewDomainDays: 5000})
	res, _ := c.Check(context.Background(), screening.Query{Domain: "old.com"})
	if !reflect.DeepEqual(res.Flags, []string{screening.FlagNewDomain}) {
		t.Fatalf("4000 days with a 5000-day threshold: flags %v", res.Flags)
	}
}

func TestCheckSanctionsUnavailable(t *testing.T) {
	for name, s := range map[string]screening.Sanctions{
		"nil":       nil,
		"not ready": sdnList(false, false),
	} {
		t.Run(name, func(t *testing.T) {
			c := screening.NewChecker(screening.CheckerOptions{Sanctions: s, Domains: testDomains()})
			res, err := c.Check(context.Background(), screening.Query{Name: "Acme Widgets", Domain: "old.com"})
			if err != nil {
				t.Fatal(err)
			}
			if res.Risk != screening.RiskUnknown || res.Sanctions.Status != screening.StatusUnknown || len(res.Sanctions.Screened) != 0 {
				t.Fatalf("risk %s, sanctions %+v; want unknown, nothing screened", res.Risk, res.Sanctions)
			}
			if res.DataAsOf != screening.DataAsOfUnknown {
				t.Fatalf("data_as_of %q, want %q", res.DataAsOf, screening.DataAsOfUnknown)
			}
			if fs, ok := s.(*screeningtest.Sanctions); ok && fs.Calls() != 0 {
				t.Fatal("a list that is not ready was asked")
			}
			// A medium signal still shows through.
			res, _ = c.Check(context.Background(), screening.Query{Name: "Acme Widgets", Domain: "new.com"})
			if res.Risk != screening.RiskMedium {
				t.Fatalf("risk %s with new_domain and unknown sanctions, want medium", res.Risk)
			}
		})
	}
}

func TestCheckDomainOnlyDoesNotNeedSanctions(t *testing.T) {
	c := screening.NewChecker(screening.CheckerOptions{Domains: testDomains()})
	res, _ := c.Check(context.Background(), screening.Query{Domain: "old.com"})
	if res.Risk != screening.RiskLow || res.Sanctions.Status != screening.StatusNotRequested {
		t.Fatalf("risk %s sanctions %s, want low and not_requested", res.Risk, res.Sanctions.Status)
	}
}

func TestCheckNoDomainSource(t *testing.T) {
	c := screening.NewChecker(screening.CheckerOptions{Sanctions: sdnList(true, false)})
	res, _ := c.Check(context.Background(), screening.Query{Domain: "old.com"})
	if res.Risk != screening.RiskUnknown || !reflect.DeepEqual(res.Flags, []string{screening.FlagDomainAgeUnknown}) || res.Domain.HasA != nil {
		t.Fatalf("risk %s flags %v domain %+v, want unknown age and DNS", res.Risk, res.Flags, res.Domain)
	}
}

type panickingDomains struct{}

func (panickingDomains) Facts(context.Context, string) screening.DomainFacts { panic("boom") }

func TestCheckPanicsBecomeUnknown(t *testing.T) {
	c := screening.NewChecker(screening.CheckerOptions{Sanctions: sdnList(true, true), Domains: panickingDomains{}})
	res, err := c.Check(context.Background(), screening.Query{Address: "0xabc", Domain: "old.com"})
	if err != nil {
		t.Fatal(err)
	}
	if res.Risk != screening.RiskUnknown || res.Sanctions.Status != screening.StatusUnknown || !strings.Contains(res.Sanctions.Error, "index corrupted") {
		t.Fatalf("risk %s sanctions %+v", res.Risk, res.Sanctions)
	}
	if !strings.Contains(res.Domain.AgeError, "boom") {
		t.Fatalf("domain %+v", res.Domain)
	}
}

// A query screening refuses is the one input error type, *preflight.InputError (issue 33: no second type),
// with the code the server answers and the field at fault.
func TestCheckInputErrors(t *testing.T) {
	c := newTestChecker()
	tests := []struct {
		q           screening.Query
		code, field string
	}{
		{screening.Query{}, "missing_input", ""},
		{screening.Query{Name: "  ", Domain: "\t"}, "missing_input", ""},
		{screening.Query{Name: "\xff"}, "invalid_parameter", "name"},
		{screening.Query{Address: strings.Repeat("a", screening.MaxAddressLen+1)}, "invalid_parameter", "address"},
		{screening.Query{Domain: strings.Repeat("a", screening.MaxDomainLen+1)}, "invalid_parameter", "domain"},
	}
	for _, tt := range tests {
		_, err := c.Check(context.Background(), tt.q)
		var ie *preflight.InputError
		if !errors.As(err, &ie) || ie.Code != tt.code || ie.Field != tt.field || ie.HTTPStatus() != 400 {
			t.Errorf("Check(%+v) error %v, want a preflight.InputError %s on %q", tt.q, err, tt.code, tt.field)
		}
	}
	if _, err := c.Check(context.Background(), screening.Query{}); !errors.Is(err, screening.ErrNoInput) {
		t.Errorf("empty query: %v, want screening.ErrNoInput", err)
	}
}

func TestCheckResultJSON(t *testing.T) {
	res, err := newTestChecker().Check(context.Background(), screening.Query{Name: "AEROCARIBBEAN AIRLINES"})
	if err != nil {
		t.Fatal(err)
	}
	b, _ := json.Marshal(res)
	var doc map[string]any
	if err := json.Unmarshal(b, &doc); err != nil {
		t.Fatal(err)
	}
	keys := make([]string, 0, len(doc))
	for k := range doc {
		keys = append(keys, k)
	}
	for _, k := range []string{"risk", "flags", "sanctions", "domain", "data_as_of", "disclaimer"} {
		if _, ok := doc[k]; !ok {
			t.Errorf("JSON lacks %q: %s", k, b)
		}
	}
	if len(doc) != 6 {
		t.Errorf("JSON has fields %v, want exactly SPEC's six", keys)
	}
	if doc["domain"] != nil {
		t.Errorf("domain = %v, want null when no domain was given", doc["domain"])
	}
	if doc["data_as_of"] != "2026-11-21T23:43:00Z" {
		t.Errorf("data_as_of %v, want the list's date in UTC RFC 3339", doc["data_as_of"])
	}
	if _, err := time.Parse(time.RFC3339, screening.DataAsOfUnknown); err != nil {
		t.Errorf("DataAsOfUnknown is not a date-time: %v", err)
	}
	want := `"sanctions":{"status":"match","screened":["name"],"address_matches":[],"name_matches":{"exact":[{"uid":36,"name":"AEROCARIBBEAN AIRLINES","programs":["CUBA"],"score":1}],"possible":[]}}`
	if !strings.Contains(string(b), want) {
		t.Errorf("JSON %s\nlacks %s", b, want)
	}
}

// sourcedSanctions is a Sanctions with the DataAsOfSourcer capability.
type sourcedSanctions struct{ *screeningtest.Sanctions }

func (sourcedSanctions) DataAsOfSource() string { return sanctions.AsOfPublishDate }

// The real screener says what its data_as_of is (a compile-time check of the capability).
var _ screening.DataAsOfSourcer = (*sanctions.Screener)(nil)

// data_as_of_source with and without the DataAsOfSourcer capability: reported when the Sanctions says it,
// left out (unknown) when it cannot.
func TestCheckDataAsOfSourceCapability(t *testing.T) {
	q := screening.Query{Name: "Acme"}
	for _, tt := range []struct {
		name string
		s    screening.Sanctions
		want string
	}{
		{"with", sourcedSanctions{screeningtest.Listed()}, sanctions.AsOfPublishDate},
		{"without", screeningtest.Listed(), ""},
	} {
		res, err := screening.NewChecker(screening.CheckerOptions{Sanctions: tt.s}).Check(context.Background(), q)
		if err != nil || res.DataAsOf == screening.DataAsOfUnknown || res.DataAsOfSource != tt.want {
			t.Errorf("%s: data_as_of %q, source %q (%v), want source %q", tt.name, res.DataAsOf, res.DataAsOfSource, err, tt.want)
		}
	}
}

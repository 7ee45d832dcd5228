package screening

import (
	"context"
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"
)

// fakeSanctions lists one sanctioned address and names by exact and possible match.
type fakeSanctions struct {
	ready   bool
	asOf    time.Time
	panics  bool
	screens int
}

var (
	sdnAddressMatch = SanctionsMatch{UID: 30581, Name: "LAZARUS GROUP", Programs: []string{"DPRK3"}, Score: 1,
		Address: "0x098b716b8aaf21512996dc57eb0615e2383e2f96", Currency: "ETH"}
	sdnExact    = SanctionsMatch{UID: 36, Name: "AEROCARIBBEAN AIRLINES", Programs: []string{"CUBA"}, Score: 1}
	sdnPossible = SanctionsMatch{UID: 173, Name: "ANGLO-CARIBBEAN CO., LTD.", Programs: []string{"CUBA"}, Score: 0.91}
)

func (f *fakeSanctions) ScreenAddress(a string) []SanctionsMatch {
	f.screens++
	if f.panics {
		panic("index corrupted")
	}
	if strings.EqualFold(a, sdnAddressMatch.Address) {
		return []SanctionsMatch{sdnAddressMatch}
	}
	return nil
}

func (f *fakeSanctions) ScreenName(n string) NameResult {
	f.screens++
	if f.panics {
		panic("index corrupted")
	}
	switch n {
	case "AEROCARIBBEAN AIRLINES":
		return NameResult{Exact: []SanctionsMatch{sdnExact}}
	case "Anglo Caribbean":
		return NameResult{Possible: []SanctionsMatch{sdnPossible}}
	}
	return NameResult{}
}

func (f *fakeSanctions) DataAsOf() time.Time { return f.asOf }
func (f *fakeSanctions) Ready() bool         { return f.ready }

// fakeDomains answers from a table; a domain not in it is invalid.
type fakeDomains map[string]DomainFacts

func (d fakeDomains) Facts(_ context.Context, domain string) DomainFacts {
	if f, ok := d[domain]; ok {
		return f
	}
	return DomainFacts{Domain: domain, AgeError: "invalid domain: not a domain"}
}

var asOf = time.Date(2026, 11, 21, 18, 43, 0, 0, time.FixedZone("EST", -5*3600))

func knownFacts(domain string, age int, hasA bool) DomainFacts {
	reg := time.Date(2020, 1, 1, 0, 0, 0, 0, time.UTC)
	return DomainFacts{Domain: domain, Valid: true, RegisteredAt: &reg, AgeDays: &age, HasA: &hasA, HasMX: &hasA}
}

func testDomains() fakeDomains {
	unknownAge := knownFacts("unknown-age.com", 0, true)
	unknownAge.RegisteredAt, unknownAge.AgeDays, unknownAge.AgeError = nil, nil, "not registered (RDAP 404 from rdap.example)"
	dnsFailed := knownFacts("dns-failed.com", 400, true)
	dnsFailed.HasA, dnsFailed.HasMX, dnsFailed.DNSError = nil, nil, "A lookup for dns-failed.com: server answered SERVFAIL"
	return fakeDomains{
		"old.com":         knownFacts("old.com", 4000, true),
		"new.com":         knownFacts("new.com", 29, true),
		"day30.com":       knownFacts("day30.com", 30, true),
		"nodns.com":       knownFacts("nodns.com", 4000, false),
		"unknown-age.com": unknownAge,
		"dns-failed.com":  dnsFailed,
		"new-nodns.com":   knownFacts("new-nodns.com", 2, false),
	}
}

func newTestChecker() *Checker {
	return NewChecker(CheckerOptions{Sanctions: &fakeSanctions{ready: true, asOf: asOf}, Domains: testDomains()})
}

// TestCheckFlags has one case per flag of SPEC §7.1's table, each alone, with the risk it carries.
func TestCheckFlags(t *testing.T) {
	tests := []struct {
		flag string
		q    Query
		risk string
	}{
		{FlagSanctionedAddress, Query{Address: "0x098B716B8Aaf21512996dC57EB0615e2383E2f96"}, RiskHigh},
		{FlagSanctionedNameExact, Query{Name: "AEROCARIBBEAN AIRLINES"}, RiskHigh},
		{FlagSanctionedNamePossible, Query{Name: "Anglo Caribbean"}, RiskMedium},
		{FlagInvalidDomain, Query{Domain: "localhost"}, RiskMedium},
		{FlagNewDomain, Query{Domain: "new.com"}, RiskMedium},
		{FlagDomainAgeUnknown, Query{Domain: "unknown-age.com"}, RiskUnknown},
		{FlagDomainNoDNS, Query{Domain: "nodns.com"}, RiskMedium},
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
		q     Query
		flags []string
		risk  string
	}{
		{"all clear and known", Query{Name: "Acme Widgets", Address: "0xabc", Domain: "old.com"}, []string{}, RiskLow},
		{"new domain at the threshold is not new", Query{Domain: "day30.com"}, []string{}, RiskLow},
		{"name only, clear", Query{Name: "Acme Widgets"}, []string{}, RiskLow},
		{"medium beats unknown", Query{Name: "Anglo Caribbean", Domain: "unknown-age.com"},
			[]string{FlagSanctionedNamePossible, FlagDomainAgeUnknown}, RiskMedium},
		{"high beats everything", Query{Address: "0x098b716b8aaf21512996dc57eb0615e2383e2f96", Name: "Anglo Caribbean", Domain: "new-nodns.com"},
			[]string{FlagSanctionedAddress, FlagSanctionedNamePossible, FlagNewDomain, FlagDomainNoDNS}, RiskHigh},
		{"two highs", Query{Address: "0x098b716b8aaf21512996dc57eb0615e2383e2f96", Name: "AEROCARIBBEAN AIRLINES"},
			[]string{FlagSanctionedAddress, FlagSanctionedNameExact}, RiskHigh},
		{"dns failure is unknown, not no-DNS", Query{Domain: "dns-failed.com"}, []string{}, RiskUnknown},
		{"dns failure does not lower a medium", Query{Name: "Anglo Caribbean", Domain: "dns-failed.com"},
			[]string{FlagSanctionedNamePossible}, RiskMedium},
		{"invalid domain alone, age and DNS not applicable", Query{Domain: "not a domain"}, []string{FlagInvalidDomain}, RiskMedium},
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
	c := NewChecker(CheckerOptions{Sanctions: &fakeSanctions{ready: true}, Domains: testDomains(), NewDomainDays: 5000})
	res, _ := c.Check(context.Background(), Query{Domain: "old.com"})
	if !reflect.DeepEqual(res.Flags, []string{FlagNewDomain}) {
		t.Fatalf("4000 days with a 5000-day threshold: flags %v", res.Flags)
	}
}

func TestCheckSanctionsUnavailable(t *testing.T) {
	for name, s := range map[string]Sanctions{
		"nil":       nil,
		"not ready": &fakeSanctions{ready: false, asOf: asOf},
	} {
		t.Run(name, func(t *testing.T) {
			c := NewChecker(CheckerOptions{Sanctions: s, Domains: testDomains()})
			res, err := c.Check(context.Background(), Query{Name: "Acme Widgets", Domain: "old.com"})
			if err != nil {
				t.Fatal(err)
			}
			if res.Risk != RiskUnknown || res.Sanctions.Status != StatusUnknown || len(res.Sanctions.Screened) != 0 {
				t.Fatalf("risk %s, sanctions %+v; want unknown, nothing screened", res.Risk, res.Sanctions)
			}
			if res.DataAsOf != DataAsOfUnknown {
				t.Fatalf("data_as_of %q, want %q", res.DataAsOf, DataAsOfUnknown)
			}
			if fs, ok := s.(*fakeSanctions); ok && fs.screens != 0 {
				t.Fatal("a list that is not ready was asked")
			}
			// A medium signal still shows through.
			res, _ = c.Check(context.Background(), Query{Name: "Acme Widgets", Domain: "new.com"})
			if res.Risk != RiskMedium {
				t.Fatalf("risk %s with new_domain and unknown sanctions, want medium", res.Risk)
			}
		})
	}
}

func TestCheckDomainOnlyDoesNotNeedSanctions(t *testing.T) {
	c := NewChecker(CheckerOptions{Domains: testDomains()})
	res, _ := c.Check(context.Background(), Query{Domain: "old.com"})
	if res.Risk != RiskLow || res.Sanctions.Status != StatusNotRequested {
		t.Fatalf("risk %s sanctions %s, want low and not_requested", res.Risk, res.Sanctions.Status)
	}
}

func TestCheckNoDomainSource(t *testing.T) {
	c := NewChecker(CheckerOptions{Sanctions: &fakeSanctions{ready: true, asOf: asOf}})
	res, _ := c.Check(context.Background(), Query{Domain: "old.com"})
	if res.Risk != RiskUnknown || !reflect.DeepEqual(res.Flags, []string{FlagDomainAgeUnknown}) || res.Domain.HasA != nil {
		t.Fatalf("risk %s flags %v domain %+v, want unknown age and DNS", res.Risk, res.Flags, res.Domain)
	}
}

type panickingDomains struct{}

func (panickingDomains) Facts(context.Context, string) DomainFacts { panic("boom") }

func TestCheckPanicsBecomeUnknown(t *testing.T) {
	c := NewChecker(CheckerOptions{Sanctions: &fakeSanctions{ready: true, panics: true}, Domains: panickingDomains{}})
	res, err := c.Check(context.Background(), Query{Address: "0xabc", Domain: "old.com"})
	if err != nil {
		t.Fatal(err)
	}
	if res.Risk != RiskUnknown || res.Sanctions.Status != StatusUnknown || !strings.Contains(res.Sanctions.Error, "index corrupted") {
		t.Fatalf("risk %s sanctions %+v", res.Risk, res.Sanctions)
	}
	if !strings.Contains(res.Domain.AgeError, "boom") {
		t.Fatalf("domain %+v", res.Domain)
	}
}

func TestCheckInputErrors(t *testing.T) {
	c := newTestChecker()
	tests := []struct {
		q     Query
		field string
	}{
		{Query{}, ""},
		{Query{Name: "  ", Domain: "\t"}, ""},
		{Query{Name: "\xff"}, "name"},
		{Query{Address: strings.Repeat("a", MaxAddressLen+1)}, "address"},
		{Query{Domain: strings.Repeat("a", MaxDomainLen+1)}, "domain"},
	}
	for _, tt := range tests {
		_, err := c.Check(context.Background(), tt.q)
		var ie *InputError
		if !errors.As(err, &ie) || ie.Field != tt.field {
			t.Errorf("Check(%+v) error %v, want an InputError on %q", tt.q, err, tt.field)
		}
	}
	if _, err := c.Check(context.Background(), Query{}); !errors.Is(err, ErrNoInput) {
		t.Errorf("empty query: %v, want ErrNoInput", err)
	}
}

func TestCheckResultJSON(t *testing.T) {
	res, err := newTestChecker().Check(context.Background(), Query{Name: "AEROCARIBBEAN AIRLINES"})
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
	if _, err := time.Parse(time.RFC3339, DataAsOfUnknown); err != nil {
		t.Errorf("DataAsOfUnknown is not a date-time: %v", err)
	}
	want := `"sanctions":{"status":"match","screened":["name"],"address_matches":[],"name_matches":{"exact":[{"uid":36,"name":"AEROCARIBBEAN AIRLINES","programs":["CUBA"],"score":1}],"possible":[]}}`
	if !strings.Contains(string(b), want) {
		t.Errorf("JSON %s\nlacks %s", b, want)
	}
}

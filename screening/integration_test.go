package screening_test

import (
	"github.com/payguard/payguard/internal/realdata"

	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/payguard/payguard/policy"
	"github.com/payguard/payguard/preflight"
	"github.com/payguard/payguard/receipts"
	"github.com/payguard/payguard/screening"
	"github.com/payguard/payguard/screening/domain"
	"github.com/payguard/payguard/screening/domain/domaintest"
	"github.com/payguard/payguard/screening/sanctions"
)

// The real components behind these tests: rows of OFAC's sdn.csv of 2024-05-03 (the first 200 entries and
// the ones named below, so the test stays fast under -race) with the 2025-12 alt.csv, and domain.Checker
// asking local RDAP and DNS servers that answer with real registry answers (example.com registered
// 1995-08-14, google.com 1997-09-15).
const (
	lazarusAddr = "0x098B716B8Aaf21512996dC57EB0615e2383E2f96" // LAZARUS GROUP, uid 27307, as OFAC writes it
	cleanAddr   = "0x1111111111111111111111111111111111111111"
)

var (
	listAsOf = time.Date(2024, 5, 3, 18, 43, 23, 0, time.UTC)
	// today is a fixed clock; young is six days after example.com's registration.
	today = time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC)
	young = time.Date(1995, 8, 20, 12, 0, 0, 0, time.UTC)
)

func realList(t *testing.T) *sanctions.List {
	t.Helper()
	ofac := realdata.OFACDir(t)
	sdn, err := os.ReadFile(filepath.Join(ofac, "sdn_csv_2024-05-03", "sdn.csv"))
	if err != nil {
		t.Fatal(err)
	}
	alt, err := os.ReadFile(filepath.Join(ofac, "alt_add_comments_2025-12", "alt.csv"))
	if err != nil {
		t.Fatal(err)
	}
	keep := []string{"27307,", "306,", "6365,", "39796,"} // LAZARUS GROUP, BANCO NACIONAL DE CUBA, BIN LADIN, TORNADO CASH
	var rows bytes.Buffer
	for i, line := range bytes.SplitAfter(sdn, []byte("\n")) {
		if i < 200 || slices.ContainsFunc(keep, func(p string) bool { return bytes.HasPrefix(line, []byte(p)) }) {
			rows.Write(line)
		}
	}
	l, _, err := sanctions.ParseCSV(sanctions.CSVFiles{SDN: &rows, Alt: bytes.NewReader(alt)}, listAsOf, "test")
	if err != nil {
		t.Fatal(err)
	}
	for _, uid := range []int{27307, 306, 6365, 39796} {
		if _, ok := l.Entry(uid); !ok {
			t.Fatalf("uid %d not loaded", uid)
		}
	}
	return l
}

func realDomains(t *testing.T, now time.Time) *domain.Checker {
	t.Helper()
	rdap := domaintest.NewRDAPServer(t)
	dnsSrv := domaintest.NewDNSServer(t, domaintest.DefaultZone())
	return domain.New(domain.Options{RDAPBaseURL: rdap.URL + "/", Resolver: dnsSrv.Addr,
		RDAPTimeout: 10 * time.Second, DNSTimeout: 10 * time.Second, Now: func() time.Time { return now }})
}

// TestPreflightWithRealScreening runs the preflight engine on the real screener and domain checker and
// checks SPEC §5's reason texts for payTo sanctions, merchant name, domain age and DNS.
func TestPreflightWithRealScreening(t *testing.T) {
	list := realList(t)
	keys, err := receipts.GenerateKey(today)
	if err != nil {
		t.Fatal(err)
	}
	engine := func(now time.Time) *preflight.Engine {
		return preflight.New(preflight.Options{Rules: policy.DefaultRules(), Sanctions: list, Domains: realDomains(t, now),
			Signer: keys, Now: func() time.Time { return now }})
	}
	cart := func(domain, payTo, name string) []byte {
		b, _ := json.Marshal(map[string]any{"cart": map[string]any{"merchant_domain": domain, "total_usd": 0.1,
			"pay_to": payTo, "merchant_name": name}})
		return b
	}
	tests := []struct {
		name     string
		now      time.Time
		body     []byte
		decision string
		reasons  []string
	}{
		{"listed payTo", today, cart("google.com", lazarusAddr, "Acme Widgets"), "block",
			[]string{"block: payTo " + lazarusAddr + " is an OFAC SDN-listed address"}},
		{"listed payTo, other letter case", today, cart("google.com", strings.ToLower(lazarusAddr), "Acme Widgets"), "block",
			[]string{"block: payTo " + strings.ToLower(lazarusAddr) + " is an OFAC SDN-listed address"}},
		{"merchant name exact", today, cart("google.com", cleanAddr, "Tornado.Cash"), "block",
			[]string{"block: merchant name exactly matches an OFAC SDN entry"}},
		{"merchant name possible", today, cart("google.com", cleanAddr, "Usama bin Mohamed bin Awad bin Ladin"), "hold",
			[]string{"hold: merchant name possibly matches an OFAC SDN entry"}},
		{"other bank, same prefix", today, cart("google.com", cleanAddr, "Banco Nacional de Panama"), "allow",
			[]string{"allow: all rules passed"}},
		{"young domain", young, cart("example.com", cleanAddr, "Acme Widgets"), "hold",
			[]string{"hold: domain registered 6 days ago (< 30)"}},
		{"no A record", today, cart("noa.example.com", cleanAddr, "Acme Widgets"), "hold",
			[]string{"hold: domain has no DNS A record"}},
		{"DNS failure is not 'no A record'", today, cart("servfail.example.com", cleanAddr, "Acme Widgets"), "allow",
			[]string{"allow: all rules passed"}},
		{"unknown age is not invented", today, cart("never-registered-zz9.com", cleanAddr, "Acme Widgets"), "hold",
			[]string{"hold: domain has no DNS A record"}}, // NXDOMAIN: no A; the age stays unknown, no age reason
		{"all clear", today, cart("https://www.example.com/pay", cleanAddr, "Acme Widgets"), "allow",
			[]string{"allow: all rules passed"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			in, err := preflight.ParseInput(tt.body)
			if err != nil {
				t.Fatal(err)
			}
			res, err := engine(tt.now).Decide(context.Background(), in)
			if err != nil {
				t.Fatal(err)
			}
			if res.Decision != tt.decision || !reflect.DeepEqual(res.Reasons, tt.reasons) {
				t.Errorf("decision %s reasons %q, want %s %q", res.Decision, res.Reasons, tt.decision, tt.reasons)
			}
			if res.DataAsOf != listAsOf.Format(time.RFC3339) {
				t.Errorf("data_as_of %q, want %q", res.DataAsOf, listAsOf.Format(time.RFC3339))
			}
		})
	}
}

// TestCheckWithRealScreening runs the payee check on the same real components: each flag of SPEC §7.1's table
// with its risk.
func TestCheckWithRealScreening(t *testing.T) {
	list := realList(t)
	checker := func(now time.Time) *screening.Checker {
		return screening.NewChecker(screening.CheckerOptions{Sanctions: list, Domains: realDomains(t, now)})
	}
	tests := []struct {
		name  string
		now   time.Time
		q     screening.Query
		flags []string
		risk  string
		uid   int // expected first match, 0 for none
	}{
		{"address", today, screening.Query{Address: lazarusAddr}, []string{"sanctioned_address"}, "high", 27307},
		{"name exact", today, screening.Query{Name: "BANCO NACIONAL DE CUBA S.A."}, []string{"sanctioned_name_exact"}, "high", 306},
		{"name possible", today, screening.Query{Name: "Osama bin Mohammed bin Awad bin Laden"}, []string{"sanctioned_name_possible"}, "medium", 6365},
		{"new domain", young, screening.Query{Domain: "example.com"}, []string{"new_domain"}, "medium", 0},
		{"no DNS", today, screening.Query{Domain: "noa.example.com"}, []string{"domain_no_dns"}, "medium", 0},
		{"DNS failure", today, screening.Query{Domain: "servfail.example.com"}, []string{}, "unknown", 0},
		{"age unknown", today, screening.Query{Domain: "rdap-error.com"}, []string{"domain_age_unknown"}, "unknown", 0},
		{"invalid domain", today, screening.Query{Domain: "localhost"}, []string{"invalid_domain"}, "medium", 0},
		{"strongest signal", young, screening.Query{Domain: "example.com", Address: lazarusAddr, Name: "Acme Widgets"},
			[]string{"sanctioned_address", "new_domain"}, "high", 27307},
		{"all known, nothing found", today, screening.Query{Domain: "google.com", Address: cleanAddr, Name: "Acme Widgets"}, []string{}, "low", 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res, err := checker(tt.now).Check(context.Background(), tt.q)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(res.Flags, tt.flags) || res.Risk != tt.risk {
				t.Errorf("flags %v risk %s, want %v %s (domain %+v)", res.Flags, res.Risk, tt.flags, tt.risk, res.Domain)
			}
			ms := append(append(slices.Clone(res.Sanctions.AddressMatches), res.Sanctions.NameMatches.Exact...), res.Sanctions.NameMatches.Possible...)
			if tt.uid != 0 && (len(ms) == 0 || ms[0].UID != tt.uid || ms[0].Name == "" || len(ms[0].Programs) == 0) {
				t.Errorf("matches %+v, want uid %d first with name and programs", ms, tt.uid)
			}
			if res.DataAsOf != listAsOf.Format(time.RFC3339) {
				t.Errorf("data_as_of %q", res.DataAsOf)
			}
		})
	}
}

// TestMatchStepsReachTheApprover: the normalisation steps a name match needed travel in the CheckResult's
// and the preflight result's matches (JSON "steps"), which is what an approver of a hold reads.
func TestMatchStepsReachTheApprover(t *testing.T) {
	list := realList(t)
	res, err := screening.NewChecker(screening.CheckerOptions{Sanctions: list}).Check(context.Background(),
		screening.Query{Name: "Osama bin Mohammed bin Awad bin Laden"})
	if err != nil {
		t.Fatal(err)
	}
	b, _ := json.Marshal(res)
	if !strings.Contains(string(b), `"steps":["transliterated"`) {
		t.Errorf("CheckResult %s: want the match's steps (transliterated)", b)
	}
	keys, err := receipts.GenerateKey(today)
	if err != nil {
		t.Fatal(err)
	}
	engine := preflight.New(preflight.Options{Rules: policy.DefaultRules(), Sanctions: list, Signer: keys,
		Now: func() time.Time { return today }})
	body, _ := json.Marshal(map[string]any{"cart": map[string]any{"merchant_domain": "google.com", "total_usd": 0.1,
		"pay_to": cleanAddr, "merchant_name": "Banco Nacional de Cuba GmbH"}})
	in, err := preflight.ParseInput(body)
	if err != nil {
		t.Fatal(err)
	}
	pr, err := engine.Decide(context.Background(), in)
	if err != nil {
		t.Fatal(err)
	}
	if pr.Payee == nil || len(pr.Payee.Sanctions.Matches) == 0 || !slices.Contains(pr.Payee.Sanctions.Matches[0].Steps, screening.StepLegalFormRemoved) {
		t.Errorf("preflight payee %+v: want the match's step legal_form_removed", pr.Payee)
	}
}

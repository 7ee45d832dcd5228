package main

import (
	"github.com/payguard/payguard/internal/realdata"
	"github.com/payguard/payguard/x402"

	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/payguard/payguard/screening"
	"github.com/payguard/payguard/screening/domain/domaintest"
)

// checkEnv is a config file pointing the domain lookups at local RDAP and DNS servers, a sanctions dir
// with three real SDN rows dated sanctionsAsOf, and an empty sanctions cache dir.
type checkEnv struct {
	config, sanctionsDir, cacheDir string
	rdap                           *domaintest.RDAPServer
}

var sanctionsAsOf = time.Date(2024, 5, 3, 18, 43, 23, 0, time.UTC)

func newCheckEnv(t *testing.T) checkEnv {
	t.Helper()
	dir := t.TempDir()
	env := checkEnv{
		config:       filepath.Join(dir, "payguard.yaml"),
		sanctionsDir: filepath.Join(dir, "sdn"),
		cacheDir:     filepath.Join(dir, "cache"),
		rdap:         domaintest.NewRDAPServer(t),
	}
	dnsSrv := domaintest.NewDNSServer(t, domaintest.DefaultZone())
	sdn, err := os.ReadFile("testdata/check-sanctions/sdn.csv")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(env.sanctionsDir, 0o755); err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(env.sanctionsDir, "sdn.csv")
	if err := os.WriteFile(p, sdn, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Chtimes(p, sanctionsAsOf, sanctionsAsOf); err != nil { // a CSV list is as of its file time
		t.Fatal(err)
	}
	yaml := "screening:\n  sanctions:\n    cache_dir: " + env.cacheDir + "\n  domain:\n    rdap_base_url: " + env.rdap.URL +
		"/\n    resolver: " + dnsSrv.Addr + "\n    rdap_timeout: 10s\n    dns_timeout: 10s\n"
	if err := os.WriteFile(env.config, []byte(yaml), 0o644); err != nil {
		t.Fatal(err)
	}
	return env
}

func decodeCheck(t *testing.T, out string) screening.CheckResult {
	t.Helper()
	var r screening.CheckResult
	if err := json.Unmarshal([]byte(out), &r); err != nil {
		t.Fatalf("output is not a CheckResult: %v\n%s", err, out)
	}
	return r
}

func TestCheckCommandSanctions(t *testing.T) {
	env := newCheckEnv(t)
	tests := []struct {
		args  []string
		flags []string
		risk  string
		uid   int
	}{
		{[]string{"--name", "AEROCARIBBEAN AIRLINES"}, []string{"sanctioned_name_exact"}, "high", 36},
		{[]string{"--address", "0x098b716b8aaf21512996dc57eb0615e2383e2f96"}, []string{"sanctioned_address"}, "high", 27307},
		{[]string{"--name", "Acme Widgets Ltd", "--address", "0x1111111111111111111111111111111111111111"}, []string{}, "low", 0},
		// Confusable forms of a listed address are found (issue 18): zero-width space, no 0x, fullwidth ０ｘ.
		{[]string{"--address", "0x098b716b8a\u200baf21512996dc57eb0615e2383e2f96"}, []string{"sanctioned_address"}, "high", 27307},
		{[]string{"--address", "098b716b8aaf21512996dc57eb0615e2383e2f96"}, []string{"sanctioned_address"}, "high", 27307},
		{[]string{"--address", "０ｘ098b716b8aaf21512996dc57eb0615e2383e2f96 "}, []string{"sanctioned_address"}, "high", 27307},
		// A string that is no wallet address is never low.
		{[]string{"--address", "0xZZ"}, []string{"unrecognized_address"}, "unknown", 0},
		{[]string{"--address", "hello world"}, []string{"unrecognized_address"}, "unknown", 0},
	}
	for _, tt := range tests {
		args := append([]string{"check", "--offline", "--config", env.config, "--sanctions-dir", env.sanctionsDir}, tt.args...)
		code, out, errs := runPG(t, "", args...)
		if code != 0 {
			t.Fatalf("%v: exit %d: %s", tt.args, code, errs)
		}
		r := decodeCheck(t, out)
		if !reflect.DeepEqual(r.Flags, tt.flags) || r.Risk != tt.risk {
			t.Errorf("%v: flags %v risk %s, want %v %s", tt.args, r.Flags, r.Risk, tt.flags, tt.risk)
		}
		if r.DataAsOf != "2024-05-03T18:43:23Z" || r.Domain != nil || r.Disclaimer != screening.Disclaimer {
			t.Errorf("%v: data_as_of %q domain %v disclaimer %q", tt.args, r.DataAsOf, r.Domain, r.Disclaimer)
		}
		var uids []int
		for _, m := range append(r.Sanctions.AddressMatches, r.Sanctions.NameMatches.Exact...) {
			uids = append(uids, m.UID)
		}
		if tt.uid != 0 && (len(uids) == 0 || uids[0] != tt.uid) {
			t.Errorf("%v: matched uids %v, want %d", tt.args, uids, tt.uid)
		}
	}
}

func TestCheckCommandDomain(t *testing.T) {
	env := newCheckEnv(t)
	code, out, errs := runPG(t, "", "check", "--config", env.config, "--domain", "https://WWW.Example.com/pay")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	r := decodeCheck(t, out)
	d := r.Domain
	if d == nil || d.Domain != "www.example.com" || d.RegisteredAt == nil ||
		!d.RegisteredAt.Equal(time.Date(1995, 8, 14, 4, 0, 0, 0, time.UTC)) || d.HasA == nil || !*d.HasA {
		t.Fatalf("domain facts %+v", d)
	}
	// Sanctions were not asked about, so their absence does not make the answer unknown.
	if r.Risk != "low" || len(r.Flags) != 0 || r.Sanctions.Status != screening.StatusNotRequested {
		t.Fatalf("risk %s flags %v sanctions %s", r.Risk, r.Flags, r.Sanctions.Status)
	}
	if env.rdap.Requests("example.com") != 1 {
		t.Fatalf("RDAP requests %d", env.rdap.Requests("example.com"))
	}

	code, out, _ = runPG(t, "", "check", "--config", env.config, "--domain", "never-registered-zz9.com")
	r = decodeCheck(t, out)
	if code != 0 || r.Risk != "medium" || !reflect.DeepEqual(r.Flags, []string{"domain_age_unknown", "domain_no_dns"}) ||
		!strings.Contains(r.Domain.AgeError, "not registered") {
		t.Fatalf("unregistered domain: exit %d risk %s flags %v age error %q", code, r.Risk, r.Flags, r.Domain.AgeError)
	}
}

func TestCheckCommandOfflineAndNoList(t *testing.T) {
	env := newCheckEnv(t)
	code, out, errs := runPG(t, "", "check", "--offline", "--config", env.config, "--name", "Acme", "--domain", "example.com")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	r := decodeCheck(t, out)
	if r.Risk != "unknown" || r.Sanctions.Status != screening.StatusUnknown || r.DataAsOf != screening.DataAsOfUnknown ||
		!reflect.DeepEqual(r.Flags, []string{"domain_age_unknown"}) || !strings.Contains(r.Domain.AgeError, "offline") {
		t.Fatalf("risk %s sanctions %s data_as_of %s flags %v domain %+v", r.Risk, r.Sanctions.Status, r.DataAsOf, r.Flags, r.Domain)
	}
	if !strings.Contains(errs, "nothing cached in "+env.cacheDir) {
		t.Errorf("stderr %q does not explain the missing list", errs)
	}
	if env.rdap.Requests("example.com") != 0 {
		t.Error("--offline made an RDAP request")
	}
}

func TestCheckCommandCachedList(t *testing.T) {
	env := newCheckEnv(t)
	// The refresher keeps its last good copy in cache_dir/current.
	cacheDir := t.TempDir()
	if err := os.Rename(env.sanctionsDir, filepath.Join(cacheDir, "current")); err != nil {
		t.Fatal(err)
	}
	cfg := filepath.Join(t.TempDir(), "cached.yaml")
	yaml := "screening:\n  sanctions:\n    cache_dir: " + cacheDir + "\n"
	if err := os.WriteFile(cfg, []byte(yaml), 0o644); err != nil {
		t.Fatal(err)
	}
	code, out, errs := runPG(t, "", "check", "--offline", "--config", cfg, "--name", "AEROCARIBBEAN AIRLINES")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	if r := decodeCheck(t, out); r.Risk != "high" || r.DataAsOf != "2024-05-03T18:43:23Z" {
		t.Fatalf("with the cached list: risk %s data_as_of %s", r.Risk, r.DataAsOf)
	}
}

func TestCheckCommandUsage(t *testing.T) {
	env := newCheckEnv(t)
	tests := []struct {
		args []string
		want string
	}{
		{[]string{"check"}, "give at least one of name, address or domain"},
		{[]string{"check", "--name", "  "}, "give at least one"},
		{[]string{"check", "--name", "\xff"}, "name: not valid UTF-8"},
		{[]string{"check", "--batch", "-", "--name", "x"}, "do not combine"},
		{[]string{"check", "--name", "x", "extra"}, "unexpected argument"},
		{[]string{"check", "--name", "x", "--config", filepath.Join(t.TempDir(), "none.yaml")}, "--config"},
		{[]string{"check", "--name", "x", "--sanctions-dir", filepath.Join(t.TempDir(), "none")}, "--sanctions-dir"},
		{[]string{"check", "--batch", filepath.Join(t.TempDir(), "none.jsonl"), "--config", env.config}, "--batch"},
		{[]string{"check", "--parallel", "0", "--batch", "-"}, "--parallel"},
		{[]string{"check", "--bogus"}, "bogus"},
	}
	for _, tt := range tests {
		code, out, errs := runPG(t, "", tt.args...)
		if code != 2 || out != "" || !strings.Contains(errs, tt.want) {
			t.Errorf("%q: exit %d stdout %q stderr %q, want 2 and %q", tt.args, code, out, errs, tt.want)
		}
	}
}

func TestCheckCommandBatch(t *testing.T) {
	env := newCheckEnv(t)
	input := strings.Join([]string{
		`{"name":"AEROCARIBBEAN AIRLINES"}`,
		`{"domain":"google.com"}`,
		`not json`,
		``,
		`{"name":"x","wallet":"0x1"}`,
		`{"address":"0x098B716B8Aaf21512996dC57EB0615e2383E2f96","domain":"example.cz"}`,
		`{}`,
		`{"name":"a"} {"name":"b"}`,
		`{"domain":"localhost"}` + "\r",
		`{"name":"` + strings.Repeat("n", x402.MaxBodyBytes) + `"}`,
		`{"domain":"servfail.example.com"}`, // no final newline
	}, "\n")
	code, out, errs := runPG(t, input, "check", "--config", env.config, "--sanctions-dir", env.sanctionsDir, "--batch", "-", "--parallel", "3")
	if code != 2 {
		t.Fatalf("exit %d, want 2 for the bad lines: %s", code, errs)
	}
	lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	if len(lines) != 11 {
		t.Fatalf("%d output lines for 11 input lines:\n%s", len(lines), out)
	}
	type want struct {
		errLine int    // for error lines
		err     string // substring
		risk    string // for results
		flags   []string
	}
	wants := []want{
		{risk: "high", flags: []string{"sanctioned_name_exact"}},
		{risk: "low", flags: []string{}},
		{errLine: 3, err: "not a query object"},
		{errLine: 4, err: "empty line"},
		{errLine: 5, err: `unknown field "wallet"`},
		{risk: "high", flags: []string{"sanctioned_address"}},
		{errLine: 7, err: "give at least one"},
		{errLine: 8, err: "text after the JSON object"},
		{risk: "medium", flags: []string{"invalid_domain"}},
		{errLine: 10, err: "line longer than"},
		{risk: "unknown", flags: []string{}}, // SERVFAIL: DNS unknown, not "no DNS"
	}
	for i, w := range wants {
		if w.err != "" {
			var e struct {
				Line  int    `json:"line"`
				Error string `json:"error"`
			}
			if err := json.Unmarshal([]byte(lines[i]), &e); err != nil || e.Line != w.errLine || !strings.Contains(e.Error, w.err) {
				t.Errorf("line %d: %s, want error line %d with %q", i+1, lines[i], w.errLine, w.err)
			}
			continue
		}
		r := decodeCheck(t, lines[i])
		if r.Risk != w.risk || !reflect.DeepEqual(r.Flags, w.flags) {
			t.Errorf("line %d: risk %s flags %v, want %s %v (%s)", i+1, r.Risk, r.Flags, w.risk, w.flags, lines[i])
		}
	}
	// The list is loaded once and the lookups share the caches: google.com was asked once.
	if env.rdap.Requests("google.com") != 1 {
		t.Errorf("RDAP asked %d times for google.com", env.rdap.Requests("google.com"))
	}

	code, out, errs = runPG(t, `{"name":"Acme"}`+"\n"+`{"domain":"example.com"}`+"\n", "check", "--config", env.config,
		"--sanctions-dir", env.sanctionsDir, "--batch", "-")
	if code != 0 || strings.Count(out, "\n") != 2 {
		t.Fatalf("all-good batch: exit %d, output %q, stderr %q", code, out, errs)
	}
}

// TestCheckCommandSDNXML: --sanctions-dir takes a folder with an SDN.XML (here the real 2020-10-29 excerpt),
// and data_as_of is its Publish_Date.
func TestCheckCommandSDNXML(t *testing.T) {
	env := newCheckEnv(t)
	dir := filepath.Join(realdata.OFACDir(t), "sdn_xml_excerpt_2020-10-29")
	code, out, errs := runPG(t, "", "check", "--offline", "--config", env.config, "--sanctions-dir", dir, "--name", "Avia Import")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	r := decodeCheck(t, out)
	if r.Risk != "high" || !reflect.DeepEqual(r.Flags, []string{"sanctioned_name_exact"}) || r.DataAsOf != "2020-10-29T00:00:00Z" ||
		len(r.Sanctions.NameMatches.Exact) != 1 || r.Sanctions.NameMatches.Exact[0].UID != 173 {
		t.Fatalf("risk %s flags %v data_as_of %s matches %+v", r.Risk, r.Flags, r.DataAsOf, r.Sanctions.NameMatches)
	}
}

package main

import (
	"github.com/payguard/payguard/internal/realdata"

	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/payguard/payguard/policy"
)

// runPG runs payguard in process and returns the exit code, stdout and stderr.
func runPG(t *testing.T, stdin string, args ...string) (int, string, string) {
	t.Helper()
	var out, errb bytes.Buffer
	code := runMain(args, strings.NewReader(stdin), &out, &errb)
	return code, out.String(), errb.String()
}

const cliPayee = "0x1111111111111111111111111111111111111111"

var cliInput = `{"challenge":{"x402Version":2,"resource":{"url":"https://api.shop.example/x"},"accepts":[` +
	`{"scheme":"exact","network":"eip155:8453","amount":"20000","asset":"0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913","payTo":"` + cliPayee + `","maxTimeoutSeconds":300},` +
	`{"scheme":"exact","network":"eip155:8453","amount":"10000","asset":"0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913","payTo":"` + cliPayee + `","maxTimeoutSeconds":300}]}}`

type cliResult struct {
	Decision         string          `json:"decision"`
	Reasons          []string        `json:"reasons"`
	ChosenOption     json.RawMessage `json:"chosen_option"`
	OptionsEvaluated int             `json:"options_evaluated"`
	DataAsOf         string          `json:"data_as_of"`
	Receipt          struct {
		ID  string `json:"id"`
		JWS string `json:"jws"`
	} `json:"receipt"`
}

func decodeResult(t *testing.T, out string) cliResult {
	t.Helper()
	var r cliResult
	if err := json.Unmarshal([]byte(out), &r); err != nil {
		t.Fatalf("output is not a result: %v\n%s", err, out)
	}
	return r
}

func TestPreflightWithoutSanctionsDataHolds(t *testing.T) {
	t.Chdir(t.TempDir()) // no list cached in ./payguard-data
	code, out, errs := runPG(t, cliInput, "preflight", "--offline")
	if code != 0 || !strings.Contains(errs, "nothing cached in") {
		t.Fatalf("exit %d, stderr %q", code, errs)
	}
	r := decodeResult(t, out)
	if r.Decision != "hold" || len(r.Reasons) != 1 || r.Reasons[0] != "hold: sanctions data unavailable" ||
		r.DataAsOf != "unknown" || r.OptionsEvaluated != 2 || !strings.Contains(string(r.ChosenOption), `"10000"`) {
		t.Fatalf("%+v", r)
	}
}

// Without --sanctions-dir, preflight screens with the list 'payguard sdn update' cached, as check does.
func TestPreflightUsesCachedSanctionsList(t *testing.T) {
	sdn, err := os.ReadFile("testdata/check-sanctions/sdn.csv")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	cache := filepath.Join(dir, "payguard-data", "sanctions")
	if err := os.MkdirAll(cache, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(cache, "sdn.csv"), sdn, 0o644); err != nil {
		t.Fatal(err)
	}
	t.Chdir(dir)
	code, out, errs := runPG(t, cliInput, "preflight", "--offline")
	if code != 0 || errs != "" {
		t.Fatalf("exit %d, stderr %q", code, errs)
	}
	r := decodeResult(t, out)
	if r.DataAsOf == "unknown" || r.Decision != "allow" {
		t.Fatalf("the cached list was not used: %+v", r)
	}
}

func TestPreflightRulesFileAndKeysThenVerify(t *testing.T) {
	dir := t.TempDir()
	keys := filepath.Join(dir, "keys.json")
	jwks := filepath.Join(dir, "jwks.json")
	if code, out, errs := runPG(t, "", "keys", "generate", "--out", keys, "--jwks", jwks); code != 0 || !strings.Contains(out, "generated key") {
		t.Fatalf("keys generate: %d %s %s", code, out, errs)
	}
	if st, err := os.Stat(keys); err != nil || st.Mode().Perm() != 0o600 {
		t.Fatalf("key file mode: %v %v", st.Mode(), err)
	}
	if code, _, errs := runPG(t, "", "keys", "generate", "--out", keys); code != 1 || !strings.Contains(errs, "exists") {
		t.Fatalf("overwrite allowed: %d %s", code, errs)
	}
	rulesYAML := filepath.Join(dir, "rules.yaml")
	os.WriteFile(rulesYAML, []byte("screen_sanctions: false\nhold_above_usd: 0.5\n"), 0o644)
	inFile := filepath.Join(dir, "in.json")
	os.WriteFile(inFile, []byte(cliInput), 0o644)

	code, out, errs := runPG(t, "", "preflight", "--offline", "--rules", rulesYAML, "--keys", keys, "--in", inFile)
	if code != 0 {
		t.Fatalf("preflight: %d %s", code, errs)
	}
	r := decodeResult(t, out)
	if r.Decision != "allow" || r.Reasons[0] != "allow: all rules passed" {
		t.Fatalf("%+v", r)
	}

	// The whole result verifies against the public set and against the key file.
	for _, k := range []string{jwks, keys} {
		if code, vout, verr := runPG(t, out, "verify-receipt", "--keys", k); code != 0 || strings.TrimSpace(vout) != "valid" {
			t.Fatalf("verify with %s: %d %q %q", k, code, vout, verr)
		}
	}
	// So does the bare JWS.
	if code, _, verr := runPG(t, r.Receipt.JWS, "verify-receipt", "--keys", jwks); code != 0 {
		t.Fatalf("verify JWS: %s", verr)
	}
	// A tampered decision is caught and named.
	bad := strings.Replace(out, `"decision": "allow"`, `"decision": "block"`, 1)
	if code, _, verr := runPG(t, bad, "verify-receipt", "--keys", jwks); code != 1 || !strings.Contains(verr, `field "decision"`) {
		t.Fatalf("tampered: %d %q", code, verr)
	}

	// After rotation, old receipts still verify and the public set holds both keys.
	if code, rout, rerr := runPG(t, "", "keys", "rotate", "--keys", keys, "--jwks", jwks); code != 0 || !strings.Contains(rout, "2 keys") {
		t.Fatalf("rotate: %d %s %s", code, rout, rerr)
	}
	if code, _, verr := runPG(t, out, "verify-receipt", "--keys", jwks); code != 0 {
		t.Fatalf("old receipt after rotation: %s", verr)
	}
	code, pub, _ := runPG(t, "", "keys", "jwks", "--keys", keys)
	if code != 0 || strings.Count(pub, `"kid"`) != 2 || strings.Contains(pub, `"d"`) {
		t.Fatalf("jwks: %s", pub)
	}

	// A receipt from an ephemeral key (no --keys) does not verify against the pinned set.
	_, eph, _ := runPG(t, cliInput, "preflight", "--offline", "--rules", rulesYAML)
	if code, _, verr := runPG(t, eph, "verify-receipt", "--keys", jwks); code != 1 || !strings.Contains(verr, "not in the pinned key set") {
		t.Fatalf("ephemeral: %d %q", code, verr)
	}
}

func TestVerifyReceiptMaxAgeFlag(t *testing.T) {
	dir := t.TempDir()
	keys := filepath.Join(dir, "keys.json")
	runPG(t, "", "keys", "generate", "--out", keys)
	rules := filepath.Join(dir, "rules.json")
	os.WriteFile(rules, []byte(`{"screen_sanctions": false}`), 0o644)
	_, out, _ := runPG(t, cliInput, "preflight", "--offline", "--rules", rules, "--keys", keys)
	if code, _, _ := runPG(t, out, "verify-receipt", "--keys", keys, "--max-age", "1ns"); code != 0 {
		// --max-age 1ns still has the 60 s tolerance, so a fresh receipt passes.
		t.Fatal("fresh receipt failed with 60s tolerance")
	}
	if code, _, errs := runPG(t, out, "verify-receipt", "--keys", keys, "--max-age", "-1s"); code != 2 {
		t.Fatalf("negative max-age: %d %s", code, errs)
	}
}

func TestPreflightBadInputExit2(t *testing.T) {
	dir := t.TempDir()
	badRules := filepath.Join(dir, "bad.json")
	os.WriteFile(badRules, []byte(`{"max_amount": 1}`), 0o644)
	cases := []struct {
		name  string
		stdin string
		args  []string
		want  string
	}{
		{"not JSON", "{", []string{"preflight", "--offline"}, "invalid_json"},
		{"unknown rule in input", `{"rules":{"nope":1}}`, []string{"preflight", "--offline"}, `unknown rule "nope"`},
		{"unknown rule in file", `{}`, []string{"preflight", "--rules", badRules}, `unknown rule "max_amount"`},
		{"missing keys file", `{}`, []string{"preflight", "--keys", filepath.Join(dir, "none.json")}, "--keys"},
		{"too large", `{"resource_url":"` + strings.Repeat("a", 70000) + `"}`, []string{"preflight"}, "body_too_large"},
		{"bad flag", `{}`, []string{"preflight", "--bogus"}, "bogus"},
		{"sanctions dir unusable", `{}`, []string{"preflight", "--sanctions-dir", filepath.Join(dir, "missing")}, "--sanctions-dir"},
		{"verify without keys", `{}`, []string{"verify-receipt"}, "--keys"},
		{"keys generate without out", ``, []string{"keys", "generate"}, "--out"},
		{"rules validate bad file", ``, []string{"rules", "validate", badRules}, `unknown rule "max_amount"`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			code, out, errs := runPG(t, c.stdin, c.args...)
			if code != 2 || out != "" || !strings.Contains(errs, c.want) {
				t.Fatalf("exit %d, stdout %q, stderr %q (want %q)", code, out, errs, c.want)
			}
		})
	}
}

func TestPreflightNoOptionsIsADecision(t *testing.T) {
	code, out, _ := runPG(t, `{}`, "preflight", "--offline")
	r := decodeResult(t, out)
	if code != 0 || r.Decision != "block" || r.Reasons[0] != "block: no payment options found in input" || string(r.ChosenOption) != "null" {
		t.Fatalf("%d %+v", code, r)
	}
}

func TestRulesDefault(t *testing.T) {
	code, out, _ := runPG(t, "", "rules", "default")
	if code != 0 {
		t.Fatal(code)
	}
	got, err := policy.DecodeRulesJSON([]byte(out), policy.Rules{})
	if err != nil {
		t.Fatal(err)
	}
	want, _ := json.Marshal(policy.DefaultRules())
	again, _ := json.Marshal(got)
	if string(want) != string(again) || !strings.Contains(out, `"max_per_payment_usd": 1,`) || !strings.Contains(out, `"hold_above_usd": 0.25,`) {
		t.Fatalf("rules default printed:\n%s", out)
	}
	if code, _, _ := runPG(t, "", "rules"); code != 2 {
		t.Fatal("rules without subcommand")
	}
}

// TestPreflightWithRealSanctionsList runs the command on rows of the real OFAC SDN CSV in testdata/ofac (the
// first 200 entries and the LAZARUS GROUP entry, copied to a temporary list so that the test stays fast under
// the race detector): a listed Ethereum address is blocked, a clean one is allowed, and data_as_of is stated.
func TestPreflightWithRealSanctionsList(t *testing.T) {
	full, err := os.ReadFile(filepath.Join(realdata.OFACDir(t), "sdn_csv_2024-05-03", "sdn.csv"))
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.SplitAfter(string(full), "\n")
	var rows []string
	for i, l := range lines {
		if i < 200 || strings.HasPrefix(l, "27307,") {
			rows = append(rows, l)
		}
	}
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "sdn.csv"), []byte(strings.Join(rows, "")), 0o644); err != nil {
		t.Fatal(err)
	}
	const listed = "0x098B716B8Aaf21512996dC57EB0615e2383E2f96" // LAZARUS GROUP, SDN uid 27307
	blocked := strings.ReplaceAll(cliInput, cliPayee, listed)
	code, out, errs := runPG(t, blocked, "preflight", "--offline", "--sanctions-dir", dir)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	r := decodeResult(t, out)
	if r.Decision != "block" || r.Reasons[0] != "block: payTo "+listed+" is an OFAC SDN-listed address" || r.DataAsOf == "unknown" {
		t.Fatalf("listed payee: %+v", r)
	}
	_, out, _ = runPG(t, cliInput, "preflight", "--offline", "--sanctions-dir", dir)
	if r := decodeResult(t, out); r.Decision != "allow" || r.Reasons[0] != "allow: all rules passed" {
		t.Fatalf("clean payee: %+v", r)
	}
}

// --config gives preflight what the proxy decides with: the config's rules (--rules overlays them), its
// sanctions cache directory, and its receipt key, so that the receipt verifies against the proxy's keys.
func TestPreflightConfig(t *testing.T) {
	sdn, err := os.ReadFile("testdata/check-sanctions/sdn.csv")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	cache := filepath.Join(dir, "elsewhere", "sanctions")
	if err := os.MkdirAll(cache, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(cache, "sdn.csv"), sdn, 0o644); err != nil {
		t.Fatal(err)
	}
	keys, jwks := filepath.Join(dir, "keys.json"), filepath.Join(dir, "jwks.json")
	if code, _, errs := runPG(t, "", "keys", "generate", "--out", keys, "--jwks", jwks); code != 0 {
		t.Fatalf("keys generate: %s", errs)
	}
	cfgPath := filepath.Join(dir, "payguard.yaml")
	cfgYAML := "screening:\n  sanctions:\n    cache_dir: " + cache + "\n  domain:\n    enabled: false\nkeys:\n  receipt_key_file: " + keys +
		"\nrules:\n  max_per_payment_usd: 0.005\n"
	if err := os.WriteFile(cfgPath, []byte(cfgYAML), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Chdir(t.TempDir()) // nothing cached where the embedded default looks
	code, out, errs := runPG(t, cliInput, "preflight", "--config", cfgPath)
	if code != 0 || errs != "" {
		t.Fatalf("exit %d, stderr %q", code, errs)
	}
	// The config's $0.005 maximum blocks both options ($0.02, $0.01); its cached list was used.
	if r := decodeResult(t, out); r.Decision != "block" || r.DataAsOf == "unknown" {
		t.Fatalf("the config's rules or list were not used: %+v", r)
	}
	// --rules overlays the config's rules: raised to $1, the $0.01 option is allowed.
	rules := filepath.Join(dir, "r.yaml")
	os.WriteFile(rules, []byte("max_per_payment_usd: 1\n"), 0o644)
	code, out, errs = runPG(t, cliInput, "preflight", "--config", cfgPath, "--rules", rules)
	if r := decodeResult(t, out); code != 0 || r.Decision != "allow" || !strings.Contains(string(r.ChosenOption), `"10000"`) {
		t.Fatalf("--rules over --config: %d %q %+v", code, errs, r)
	}
	if code, _, errs := runPG(t, out, "verify-receipt", "--keys", jwks); code != 0 {
		t.Fatalf("the receipt was not signed with the config's key: %s", errs)
	}
	// A config that does not parse is bad usage, before any input is read.
	os.WriteFile(cfgPath, []byte("rules:\n  max_per_paymnt_usd: 1\n"), 0o644)
	if code, _, errs := runPG(t, cliInput, "preflight", "--config", cfgPath); code != 2 || !strings.Contains(errs, "--config") {
		t.Fatalf("bad config: %d %q", code, errs)
	}
}

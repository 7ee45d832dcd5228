package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/payguard/payguard/config"
	"github.com/payguard/payguard/internal/app"
	"github.com/payguard/payguard/internal/logout"
)

// TestConfigValidateReportsEveryError: one run lists every problem in the file (an unknown key, a value of
// the wrong kind, values out of bounds in several sections), not only the first.
func TestConfigValidateReportsEveryError(t *testing.T) {
	path := filepath.Join(t.TempDir(), "bad.yaml")
	os.WriteFile(path, []byte("proxy:\n  listen: nope\n  hold_wiat: 5s\n  hold_wait: soon\n  cert_cache_size: 0\n"+
		"server:\n  contact: bob\nrules:\n  new_domain_days: -1\n  daily_cap_usd: lots\nindex:\n  queue: 0\n"), 0o600)
	var out, errb bytes.Buffer
	if code := runMain([]string{"config", "validate", path}, nil, &out, &errb); code != 2 {
		t.Fatalf("exit %d", code)
	}
	for _, want := range []string{"8 problem(s)", "proxy.hold_wiat: unknown key", `proxy.hold_wait (line 4): "soon" is not a duration`,
		`proxy.listen: "nope"`, "proxy.cert_cache_size", "server.contact", "rules.daily_cap_usd (line 10)", "index.queue",
		"new_domain_days must not be negative"} {
		if !strings.Contains(errb.String(), want) {
			t.Errorf("stderr lacks %q:\n%s", want, errb.String())
		}
	}
}

// TestRulesValidateWarns: rules that can never fire and network names payguard does not know are warned
// about (on stderr; the file is still valid, exit 0). The default rules draw no warning.
func TestRulesValidateWarns(t *testing.T) {
	path := filepath.Join(t.TempDir(), "rules.yaml")
	os.WriteFile(path, []byte("hold_above_usd: 2\nmax_per_payment_usd: 2\nallowed_networks: [\"base\", \"Base-Mainnet\", \"eip155:999999\"]\n"), 0o600)
	var out, errb bytes.Buffer
	if code := runMain([]string{"rules", "validate", path}, nil, &out, &errb); code != 0 {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	for _, want := range []string{"warning: rules.hold_above_usd (2) is not below max_per_payment_usd (2)", "the hold rule can never fire",
		`"Base-Mainnet" is not a network payguard knows`, `"eip155:999999" (eip155:999999) has no USDC contract`} {
		if !strings.Contains(errb.String(), want) {
			t.Errorf("stderr lacks %q:\n%s", want, errb.String())
		}
	}
	if strings.Contains(errb.String(), `"base"`) {
		t.Errorf("a known network was warned about:\n%s", errb.String())
	}
	errb.Reset()
	out.Reset()
	runMain([]string{"rules", "default"}, nil, &out, &errb)
	def := filepath.Join(t.TempDir(), "default.json")
	os.WriteFile(def, out.Bytes(), 0o600)
	errb.Reset()
	if code := runMain([]string{"rules", "validate", def}, nil, &out, &errb); code != 0 || errb.Len() != 0 {
		t.Errorf("the default rules: exit %d, stderr %q", code, errb.String())
	}
	errb.Reset()
	if code := runMain([]string{"config", "validate", path}, nil, &out, &errb); code != 2 {
		t.Errorf("a rules file is not a config: exit %d", code)
	}
}

// A file written before data_dir moved to the top level still validates, with a warning saying what to
// write instead; the start log of proxy and serve says the same.
func TestConfigValidateWarnsOfTheOldDataDir(t *testing.T) {
	path := filepath.Join(t.TempDir(), "old.yaml")
	os.WriteFile(path, []byte("proxy:\n  data_dir: /srv/payguard\n"), 0o600)
	var out, errb bytes.Buffer
	if code := runMain([]string{"config", "validate", path}, nil, &out, &errb); code != 0 || strings.TrimSpace(out.String()) != "ok" {
		t.Fatalf("exit %d, stdout %q, stderr %q", code, out.String(), errb.String())
	}
	if !strings.Contains(errb.String(), "warning: proxy.data_dir is data_dir's old name") {
		t.Errorf("no migration note: %q", errb.String())
	}
	cfg, err := config.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	var logs bytes.Buffer
	lw := logout.NewWriter(&logs, logout.FlushDelay)
	_, err = app.NewBufferedLogger(lw, cfg, "")
	if lw.Close(); err != nil || !strings.Contains(logs.String(), `"level":"WARN","msg":"config: proxy.data_dir is data_dir's old name`) {
		t.Errorf("start log: %v %q", err, logs.String())
	}
}

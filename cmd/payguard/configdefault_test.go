package main

import (
	"bytes"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"

	"github.com/payguard/payguard/config"
)

// `payguard config default` prints every section of the configuration (server: included) with the values
// the embedded defaults have, so a copy of it is a complete starting point; `payguard serve` started from
// that copy says the one setting it needs, and starts once it is set.
func TestConfigDefaultIsComplete(t *testing.T) {
	var out, errb bytes.Buffer
	if code := runMain([]string{"config", "default"}, nil, &out, &errb); code != 0 {
		t.Fatalf("config default: exit %d %s", code, errb.String())
	}
	var doc map[string]any
	if err := yaml.Unmarshal(out.Bytes(), &doc); err != nil {
		t.Fatal(err)
	}
	ct := reflect.TypeFor[config.Config]()
	for i := range ct.NumField() {
		if !ct.Field(i).IsExported() {
			continue // not read from the file
		}
		key, _, _ := strings.Cut(ct.Field(i).Tag.Get("yaml"), ",")
		if _, ok := doc[key]; !ok {
			t.Errorf("config default has no %s: section", key)
		}
	}
	// Every key of server: is written out, with the defaults' values.
	printed, err := config.Parse(out.Bytes())
	if err != nil {
		t.Fatal(err)
	}
	srv, _ := doc["server"].(map[string]any)
	for _, key := range []string{"listen", "base_url", "contact", "trusted_proxies", "trial_limit", "trial_retention",
		"index_freshness", "metrics_listen", "shutdown_grace", "fees"} {
		if _, ok := srv[key]; !ok {
			t.Errorf("config default's server: lacks %s", key)
		}
	}
	if printed.Server.Listen != config.DefaultServerListen {
		t.Errorf("server.listen %q", printed.Server.Listen)
	}

	dir := t.TempDir()
	file := filepath.Join(dir, "payguard.yaml")
	if err := os.WriteFile(file, out.Bytes(), 0o600); err != nil {
		t.Fatal(err)
	}
	errb.Reset()
	if code := runMain([]string{"serve", "--config", file}, nil, &out, &errb); code != 2 {
		t.Fatalf("serve from the copied default: exit %d, want 2 (no pay_to)", code)
	}
	for _, want := range []string{"server.fees.pay_to is not set", "payguard config default > payguard.yaml", "pay_to: \"0xYourWallet\""} {
		if !strings.Contains(errb.String(), want) {
			t.Errorf("serve's message lacks %q:\n%s", want, errb.String())
		}
	}
	errb.Reset()
	if code := runMain([]string{"serve"}, nil, &out, &errb); code != 2 || !strings.Contains(errb.String(), "server.fees.pay_to is not set") {
		t.Errorf("serve with no config: exit %d:\n%s", code, errb.String())
	}
}

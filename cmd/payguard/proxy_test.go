package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestConfigValidate(t *testing.T) {
	dir := t.TempDir()
	good := filepath.Join(dir, "good.yaml")
	bad := filepath.Join(dir, "bad.yaml")
	os.WriteFile(good, []byte("proxy:\n  listen: 127.0.0.1:9402\nrules:\n  daily_cap_usd: 5\n"), 0o600)
	os.WriteFile(bad, []byte("proxy:\n  listen: 127.0.0.1:9402\n  hold_wiat: 5s\n"), 0o600)
	var out, errb bytes.Buffer
	if code := runMain([]string{"config", "validate", good}, nil, &out, &errb); code != 0 || strings.TrimSpace(out.String()) != "ok" {
		t.Errorf("valid file: exit %d, stdout %q, stderr %q", code, out.String(), errb.String())
	}
	out.Reset()
	errb.Reset()
	if code := runMain([]string{"config", "validate", bad}, nil, &out, &errb); code != 2 || !strings.Contains(errb.String(), "hold_wiat") {
		t.Errorf("unknown key: exit %d, stderr %q", code, errb.String())
	}
	if code := runMain([]string{"config", "validate"}, nil, &out, &errb); code != 2 {
		t.Errorf("no file: exit %d, want 2", code)
	}
	out.Reset()
	if code := runMain([]string{"config", "default"}, nil, &out, &errb); code != 0 || !strings.Contains(out.String(), "127.0.0.1:8402") {
		t.Errorf("config default: exit %d", code)
	}
}

func TestCAInit(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "ca")
	var out, errb bytes.Buffer
	if code := runMain([]string{"ca", "init", "--out", dir}, nil, &out, &errb); code != 0 {
		t.Fatalf("ca init: exit %d: %s", code, errb.String())
	}
	st, err := os.Stat(filepath.Join(dir, "payguard-ca-key.pem"))
	if err != nil || st.Mode().Perm() != 0o600 {
		t.Fatalf("key file: %v %v", err, st)
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "payguard-ca.pem")); !bytes.HasPrefix(b, []byte("-----BEGIN CERTIFICATE-----")) {
		t.Error("no PEM certificate written")
	}
	if code := runMain([]string{"ca", "init", "--out", dir}, nil, &out, &errb); code != 1 {
		t.Errorf("second ca init into the same dir: exit %d, want 1 (never overwrite a CA)", code)
	}
	if code := runMain([]string{"ca"}, nil, &out, &errb); code != 2 {
		t.Errorf("ca without init: exit %d, want 2", code)
	}
}

func TestProxyBadUsage(t *testing.T) {
	var out, errb bytes.Buffer
	if code := runMain([]string{"proxy", "--config", filepath.Join(t.TempDir(), "missing.yaml")}, nil, &out, &errb); code != 2 {
		t.Errorf("missing config: exit %d, want 2", code)
	}
	if code := runMain([]string{"proxy", "extra"}, nil, &out, &errb); code != 2 {
		t.Errorf("stray argument: exit %d, want 2", code)
	}
}

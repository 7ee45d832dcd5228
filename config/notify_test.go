package config

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestNotifyConfig(t *testing.T) {
	for _, bad := range []string{
		"admin:\n  notify:\n    webhooks: [{url_env: A, url_file: b}]\n",
		"admin:\n  notify:\n    webhooks: [{}]\n",
		"admin:\n  notify:\n    webhooks: [{url_env: A, secret_env: B, secret_file: c}]\n",
		"admin:\n  notify:\n    queue_size: 0\n",
		"admin:\n  notify:\n    console_url: javascript:alert(1)\n",
		"admin:\n  notify:\n    webhooks: [{url: https://hooks.example/abc}]\n", // the URL is a secret: never inline
	} {
		if _, err := Parse([]byte(bad)); err == nil {
			t.Errorf("accepted:\n%s", bad)
		}
	}
	c, err := Parse([]byte("admin:\n  notify:\n    webhooks: [{url_env: PG_T_URL, secret_file: " + filepath.Join(t.TempDir(), "missing") + "}]\n"))
	if err != nil {
		t.Fatal(err)
	}
	w := c.Admin.Notify.Webhooks[0]
	t.Setenv("PG_T_URL", "")
	if _, _, err := w.Resolve(); err == nil || !strings.Contains(err.Error(), "$PG_T_URL is empty") {
		t.Errorf("empty URL variable: %v", err)
	}
	t.Setenv("PG_T_URL", "ftp://x")
	if _, _, err := w.Resolve(); err == nil || strings.Contains(err.Error(), "ftp://x") {
		t.Errorf("a non-http URL must be refused without echoing it: %v", err)
	}
	t.Setenv("PG_T_URL", "https://hooks.example/secret-path")
	if _, _, err := w.Resolve(); err == nil {
		t.Error("a missing secret file was ignored: the signature asked for would be skipped")
	}
	secret := filepath.Join(t.TempDir(), "secret")
	os.WriteFile(secret, []byte("s3cret\n"), 0o600)
	w.SecretFile = secret
	u, s, err := w.Resolve()
	if err != nil || u != "https://hooks.example/secret-path" || string(s) != "s3cret" {
		t.Errorf("Resolve = %q %q %v", u, s, err)
	}
}

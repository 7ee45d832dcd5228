package apitoken

import (
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/payguard/payguard/config"
)

func TestAdminTokenSources(t *testing.T) {
	dir := t.TempDir()
	cfg, _ := config.Default()
	cfg.DataDir = dir
	log := slog.New(slog.DiscardHandler)

	t.Setenv(AdminEnv, "from-the-environment-0123")
	file := filepath.Join(dir, "token")
	os.WriteFile(file, []byte("from-the-file-0123456789\n"), 0o600)
	cfg.Admin.TokenFile = file
	if tok, from, err := Admin(cfg, log); err != nil || tok != "from-the-environment-0123" || from != "$"+AdminEnv {
		t.Errorf("environment: %q %q %v", tok, from, err)
	}
	t.Setenv(AdminEnv, "short")
	if _, _, err := Admin(cfg, log); err == nil {
		t.Error("a 5-character token from the environment was accepted")
	}
	t.Setenv(AdminEnv, "")
	if tok, from, err := Admin(cfg, log); err != nil || tok != "from-the-file-0123456789" || from != file {
		t.Errorf("token_file: %q %q %v", tok, from, err)
	}
	os.WriteFile(file, []byte("short\n"), 0o600)
	if _, _, err := Admin(cfg, log); err == nil {
		t.Error("a short token file was accepted")
	}
	cfg.Admin.TokenFile = filepath.Join(dir, "missing")
	if _, _, err := Admin(cfg, log); err == nil {
		t.Error("a missing token_file did not stop the start (it must not silently fall back to a generated token)")
	}
	cfg.Admin.TokenFile = ""
	tok, from, err := Admin(cfg, log)
	if err != nil || len(tok) != 64 || from != filepath.Join(dir, "admin-token") {
		t.Fatalf("generated: %q %q %v", tok, from, err)
	}
	if st, _ := os.Stat(from); st.Mode().Perm() != 0o600 {
		t.Errorf("generated token file mode %v", st.Mode().Perm())
	}
	if again, _, _ := Admin(cfg, log); again != tok {
		t.Error("the generated token was not reused")
	}
}

// The decide-only token (the in-process guards' sidecar option): PAYGUARD_DECIDE_TOKEN, else one generated into
// <data_dir>/decide-token (0600) and reused; never the admin token's file.
func TestDecideTokenSources(t *testing.T) {
	dir := t.TempDir()
	cfg, _ := config.Default()
	cfg.DataDir = dir
	log := slog.New(slog.DiscardHandler)

	t.Setenv(DecideEnv, "decide-from-the-environment-01")
	if tok, from, err := Decide(cfg, log); err != nil || tok != "decide-from-the-environment-01" || from != "$"+DecideEnv {
		t.Errorf("environment: %q %q %v", tok, from, err)
	}
	t.Setenv(DecideEnv, "short")
	if _, _, err := Decide(cfg, log); err == nil {
		t.Error("a 5-character decide token from the environment was accepted")
	}
	t.Setenv(DecideEnv, "")
	tok, from, err := Decide(cfg, log)
	if err != nil || len(tok) != 64 || from != filepath.Join(dir, "decide-token") {
		t.Fatalf("generated: %q %q %v", tok, from, err)
	}
	if st, _ := os.Stat(from); st.Mode().Perm() != 0o600 {
		t.Errorf("generated decide token file mode %v", st.Mode().Perm())
	}
	if again, _, _ := Decide(cfg, log); again != tok {
		t.Error("the generated decide token was not reused")
	}
	if admin, _, _ := Admin(cfg, log); admin == tok {
		t.Error("the admin and decide-only tokens are the same")
	}
}

// A damaged decide-token file is named as the decide token's, not the admin token's: the operator is sent to
// the right file and the right variable. Seen failing before (every file was "admin token in ...").
func TestDecideTokenFileErrorsNameTheDecideToken(t *testing.T) {
	dir := t.TempDir()
	cfg, _ := config.Default()
	cfg.DataDir = dir
	t.Setenv(DecideEnv, "")
	os.WriteFile(filepath.Join(dir, "decide-token"), []byte("short\n"), 0o600)
	_, _, err := Decide(cfg, slog.New(slog.DiscardHandler))
	if err == nil || !strings.Contains(err.Error(), "decide token in") || strings.Contains(err.Error(), "admin") {
		t.Errorf("a short decide-token file: %v, want an error naming the decide token", err)
	}
}

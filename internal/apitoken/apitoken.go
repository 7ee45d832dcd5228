// Package apitoken is where the proxy's bearer tokens come from, for the process that serves them
// (internal/app) and the command-line clients that send them (payguard holds): the admin token
// ($PAYGUARD_ADMIN_TOKEN, else admin.token_file, else <data_dir>/admin-token) and the decide-only token
// ($PAYGUARD_DECIDE_TOKEN, else <data_dir>/decide-token). A token shorter than 16 characters is refused.
package apitoken

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"strings"

	"github.com/payguard/payguard/config"
)

// AdminEnv overrides admin.token_file.
const AdminEnv = "PAYGUARD_ADMIN_TOKEN"

// DecideEnv sets the decide-only token.
const DecideEnv = "PAYGUARD_DECIDE_TOKEN"

// minLen refuses tokens short enough to guess.
const minLen = 16

// AdminFile is where a generated admin token is kept: <data_dir>/admin-token.
func AdminFile(cfg *config.Config) string { return filepath.Join(cfg.DataDir, "admin-token") }

// Admin is PAYGUARD_ADMIN_TOKEN, else admin.token_file, else a token generated into the data dir (reused on
// later starts). from says where it came from, for the operator: the variable's name or a file.
func Admin(cfg *config.Config, log *slog.Logger) (token, from string, err error) {
	return bearer("admin", AdminEnv, cfg.Admin.TokenFile, AdminFile(cfg), log)
}

// Decide is the in-process guards' token (their sidecar option): PAYGUARD_DECIDE_TOKEN, else one generated
// into <data_dir>/decide-token. It may call POST /v1/decide and nothing else, so that an agent given it
// cannot approve its own holds (proxy/admin Options.DecideToken).
func Decide(cfg *config.Config, log *slog.Logger) (token, from string, err error) {
	return bearer("decide", DecideEnv, "", filepath.Join(cfg.DataDir, "decide-token"), log)
}

// bearer is the environment variable, else the configured file, else a token generated into path.
func bearer(kind, env, file, path string, log *slog.Logger) (token, from string, err error) {
	if t := strings.TrimSpace(os.Getenv(env)); t != "" {
		if len(t) < minLen {
			return "", "", fmt.Errorf("%s token in %s is shorter than %d characters", kind, env, minLen)
		}
		return t, "$" + env, nil
	}
	if file != "" {
		t, err := read(kind, file)
		return t, file, err
	}
	if t, err := read(kind, path); err == nil {
		log.Info(kind+" API token", "file", path)
		return t, path, nil
	} else if !errors.Is(err, fs.ErrNotExist) {
		return "", "", err
	}
	var b [32]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", "", fmt.Errorf("%s token: %w", kind, err)
	}
	t := hex.EncodeToString(b[:])
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return "", "", fmt.Errorf("%s token: %w", kind, err)
	}
	if _, err := f.WriteString(t + "\n"); err != nil {
		f.Close()
		return "", "", fmt.Errorf("%s token: %w", kind, err)
	}
	if err := f.Close(); err != nil {
		return "", "", fmt.Errorf("%s token: %w", kind, err)
	}
	log.Info("generated a token", "kind", kind, "file", path)
	return t, path, nil
}

// Read reads an admin token file, refusing one shorter than minLen.
func Read(path string) (string, error) { return read("admin", path) }

// read reads kind's token file, refusing one shorter than minLen; errors name kind's token.
func read(kind, path string) (string, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return "", fmt.Errorf("%s token: %w", kind, err)
	}
	t := strings.TrimSpace(string(b))
	if len(t) < minLen {
		return "", fmt.Errorf("%s token in %s is shorter than %d characters", kind, path, minLen)
	}
	return t, nil
}

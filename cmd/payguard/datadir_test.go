package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/payguard/payguard/config"
	"github.com/payguard/payguard/internal/apitoken"
	"github.com/payguard/payguard/internal/app"
	"github.com/payguard/payguard/server/fees"
)

// --data-dir moves all the state the proxy creates (CA, receipt keys, ledger, admin token) into one
// directory, and a second payguard on that directory (here serve, after a proxy) refuses to start with a
// message that names the process holding it. Nothing is created in the working directory.
func TestDataDirIsOneAndExclusive(t *testing.T) {
	t.Setenv(apitoken.AdminEnv, "")
	t.Setenv(config.DataDirEnv, "")
	wd := t.TempDir()
	t.Chdir(wd)
	dir := filepath.Join(t.TempDir(), "state")
	cfg, err := config.Default()
	if err != nil {
		t.Fatal(err)
	}
	cfg.SetDataDir(dir)
	startProxy(t, cfg, app.Flags{Offline: true})
	for _, f := range []string{"ca/payguard-ca.pem", "ca/payguard-ca-key.pem", "receipt-keys.json", "payguard.db", "admin-token", app.DataDirLockFile} {
		if _, err := os.Stat(filepath.Join(dir, f)); err != nil {
			t.Errorf("%s not in the data dir: %v", f, err)
		}
	}
	if ents, _ := os.ReadDir(wd); len(ents) != 0 {
		t.Errorf("the working directory got %d entries (%s...)", len(ents), ents[0].Name())
	}

	serveCfg, err := config.Default()
	if err != nil {
		t.Fatal(err)
	}
	serveCfg.SetDataDir(dir)
	ln := serveListeners(t, serveCfg)
	err = serveAPI(ln, context.Background(), serveCfg, feesForTest(t, serveCfg), app.Flags{Offline: true}, slog.New(slog.DiscardHandler))
	want := fmt.Sprintf("is used by payguard proxy (pid %d", os.Getpid())
	if err == nil || !strings.Contains(err.Error(), want) || !strings.Contains(err.Error(), "--data-dir") {
		t.Fatalf("second process on the data dir: %v, want it to say %q", err, want)
	}
	// A second proxy is refused the same way, before it touches the ledger.
	pln := proxyListeners(t)
	err = serveProxy(pln, context.Background(), serveCfg, app.Flags{Offline: true}, slog.New(slog.DiscardHandler), nil)
	if err == nil || !strings.Contains(err.Error(), want) {
		t.Fatalf("second proxy: %v", err)
	}
}

// feesForTest gives serve the pay_to it needs.
func feesForTest(t *testing.T, cfg *config.Config) fees.Terms {
	t.Helper()
	cfg.Server.Fees.PayTo = "0xf54127927F219FB78C8D1A1fF3D7dc6D7f70C98E"
	terms, err := fees.TermsFromConfig(cfg.Server.Fees)
	if err != nil {
		t.Fatal(err)
	}
	return terms
}

// The flag and PAYGUARD_DATA_DIR reach the command: `payguard proxy --data-dir DIR` on a DIR another
// process holds is refused naming DIR. A bad --listen fails first, creating nothing.
func TestDataDirFlag(t *testing.T) {
	t.Chdir(t.TempDir())
	t.Setenv(config.DataDirEnv, "")
	cfgPath := filepath.Join(t.TempDir(), "proxy.yaml")
	if err := os.WriteFile(cfgPath, []byte("admin:\n  listen: 127.0.0.1:0\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(t.TempDir(), "flag")
	var out, errb strings.Builder
	if code := runMain([]string{"proxy", "--config", cfgPath, "--offline", "--data-dir", dir, "--listen", "256.0.0.1:bad"}, nil, &out, &errb); code != 1 {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	if !strings.Contains(errb.String(), "proxy listener: listen tcp: lookup tcp/bad") {
		t.Errorf("--listen was not used: %s", errb.String())
	}
	if _, err := os.Stat(dir); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a start that could not listen created %s (stat: %v)", dir, err)
	}
	for _, viaEnv := range []bool{false, true} {
		dir := filepath.Join(t.TempDir(), "held")
		release, err := app.LockDataDir(dir, "serve", "test")
		if err != nil {
			t.Fatal(err)
		}
		args := []string{"proxy", "--config", cfgPath, "--offline", "--listen", "127.0.0.1:0"}
		if viaEnv {
			t.Setenv(config.DataDirEnv, dir)
		} else {
			args = append(args, "--data-dir", dir)
		}
		errb.Reset()
		if code := runMain(args, nil, &out, &errb); code != 1 || !strings.Contains(errb.String(), dir+" is used by payguard serve") {
			t.Errorf("data dir via env %v: exit %d: %s", viaEnv, code, errb.String())
		}
		release()
	}
}

// serve takes --listen and --data-dir from its command line as the proxy does: a bad listen address fails
// naming that address, before creating anything; a held --data-dir is refused naming it.
func TestServeListenAndDataDirFlags(t *testing.T) {
	t.Chdir(t.TempDir())
	t.Setenv(config.DataDirEnv, "")
	cfgPath := filepath.Join(t.TempDir(), "serve.yaml")
	if err := os.WriteFile(cfgPath, []byte("server:\n  contact: mailto:ops@example.com\n  fees:\n    network: eip155:84532\n    pay_to: \"0xf54127927F219FB78C8D1A1fF3D7dc6D7f70C98E\"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(t.TempDir(), "flag")
	var out, errb strings.Builder
	if code := runMain([]string{"serve", "--config", cfgPath, "--offline", "--data-dir", dir, "--listen", "256.0.0.1:bad"}, nil, &out, &errb); code != 1 {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	if !strings.Contains(errb.String(), "listener: listen tcp: lookup tcp/bad") {
		t.Errorf("--listen was not used: %s", errb.String())
	}
	if _, err := os.Stat(dir); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a start that could not listen created %s (stat: %v)", dir, err)
	}
	release, err := app.LockDataDir(dir, "proxy", "test")
	if err != nil {
		t.Fatal(err)
	}
	defer release()
	errb.Reset()
	if code := runMain([]string{"serve", "--config", cfgPath, "--offline", "--data-dir", dir, "--listen", "127.0.0.1:0"}, nil, &out, &errb); code != 1 ||
		!strings.Contains(errb.String(), dir+" is used by payguard proxy") {
		t.Errorf("held --data-dir: exit %d: %s", code, errb.String())
	}
}

package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/payguard/payguard/config"
	"github.com/payguard/payguard/internal/app"
	"github.com/payguard/payguard/internal/logout"
)

// --log-level overrides log.level; both refuse what is not a level.
func TestLogLevel(t *testing.T) {
	cfg, err := config.Parse([]byte("log:\n  level: warn\n"))
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	lw := logout.NewWriter(&buf, logout.FlushDelay)
	log, err := app.NewBufferedLogger(lw, cfg, "")
	if err != nil {
		t.Fatal(err)
	}
	log.Info("quiet")
	log.Warn("loud")
	lw.Close() // what waits is written; buf is read only after
	if strings.Contains(buf.String(), "quiet") || !strings.Contains(buf.String(), "loud") {
		t.Errorf("log.level warn wrote %q", buf.String())
	}
	buf.Reset()
	lw = logout.NewWriter(&buf, logout.FlushDelay)
	if log, err = app.NewBufferedLogger(lw, cfg, "debug"); err != nil {
		t.Fatal(err)
	}
	log.Debug("detail")
	if lw.Close(); !strings.Contains(buf.String(), "detail") {
		t.Errorf("--log-level debug wrote %q", buf.String())
	}
	if !log.Enabled(context.Background(), -4) {
		t.Error("debug not enabled")
	}
	if _, err := config.Parse([]byte("log:\n  level: loud\n")); err == nil || !strings.Contains(err.Error(), "log.level") {
		t.Errorf("log.level loud: %v", err)
	}
	var out, errb bytes.Buffer
	dir := t.TempDir()
	cfgFile := filepath.Join(dir, "c.yaml")
	if err := os.WriteFile(cfgFile, []byte("proxy:\n  data_dir: "+dir+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, cmd := range []string{"proxy", "serve"} {
		errb.Reset()
		if code := runMain([]string{cmd, "--config", cfgFile, "--log-level", "chatty"}, nil, &out, &errb); code != 2 || !strings.Contains(errb.String(), "chatty") {
			t.Errorf("%s --log-level chatty: exit %d, %s", cmd, code, errb.String())
		}
	}
}

// The proxy's logger (buffered: logout) keeps the level the same way; a WARN line is written at once, an
// INFO line by Close at the latest.
func TestProxyLogLevel(t *testing.T) {
	cfg, err := config.Parse([]byte("log:\n  level: warn\n"))
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	out := logout.NewWriter(&buf, time.Hour)
	log, err := app.NewBufferedLogger(out, cfg, "")
	if err != nil {
		t.Fatal(err)
	}
	log.Info("quiet")
	log.Warn("loud")
	if strings.Contains(buf.String(), "quiet") || !strings.Contains(buf.String(), "loud") {
		t.Errorf("log.level warn wrote %q", buf.String())
	}
	if log, err = app.NewBufferedLogger(out, cfg, "debug"); err != nil {
		t.Fatal(err)
	}
	log.Debug("detail")
	out.Close()
	if !strings.Contains(buf.String(), "detail") {
		t.Errorf("--log-level debug wrote %q", buf.String())
	}
	if _, err := app.NewBufferedLogger(out, cfg, "chatty"); err == nil {
		t.Error("--log-level chatty accepted")
	}
}

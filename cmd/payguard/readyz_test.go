package main

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"path/filepath"
	"strings"
	"testing"

	"github.com/payguard/payguard/config"
	"github.com/payguard/payguard/internal/app"
)

// startProxy runs `payguard proxy` on cfg (on listeners the test holds) with sf and returns the admin URL.
func startProxy(t *testing.T, cfg *config.Config, sf app.Flags) string {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	out := bannerWriter{ch: make(chan string, 1)}
	done := make(chan error, 1)
	ln := proxyListeners(t)
	go func() { done <- serveProxy(ln, ctx, cfg, sf, slog.New(slog.DiscardHandler), out) }()
	var banner string
	select {
	case banner = <-out.ch:
	case err := <-done:
		cancel()
		t.Fatalf("payguard proxy exited before listening: %v", err)
	}
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("serveProxy: %v", err)
		}
	})
	return bannerField(t, banner, "admin API")
}

func httpGet(t *testing.T, url string) (int, string) {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// With --sanctions-dir the list is never refreshed, but its age is still watched: the proxy exports the
// list's gauges (and no refresh gauges it cannot know), and /readyz shows the list, its data_as_of and what
// that date is (here the file's modification time: the CSV set states no publication date).
func TestProxySanctionsDirStatus(t *testing.T) {
	dir, err := filepath.Abs(filepath.Join("testdata", "check-sanctions"))
	if err != nil {
		t.Fatal(err)
	}
	t.Chdir(t.TempDir())
	cfg, err := config.Default()
	if err != nil {
		t.Fatal(err)
	}
	admin := startProxy(t, cfg, app.Flags{Offline: true, SanctionsDir: dir})

	code, body := httpGet(t, admin+"/readyz")
	if code != 200 {
		t.Fatalf("/readyz = %d %s", code, body)
	}
	var ready struct {
		Status    string
		Sanctions struct {
			Loaded     bool
			Entries    int
			DataAsOf   string `json:"data_as_of"`
			AsOfSource string `json:"data_as_of_source"`
			Refreshed  bool
		}
	}
	if err := json.Unmarshal([]byte(body), &ready); err != nil {
		t.Fatal(err)
	}
	s := ready.Sanctions
	if ready.Status != "ready" || !s.Loaded || s.Entries == 0 || s.DataAsOf == "" || s.AsOfSource != "file_mtime" || s.Refreshed {
		t.Errorf("/readyz = %s", body)
	}
	_, metrics := httpGet(t, admin+"/metrics")
	for _, want := range []string{"payguard_sanctions_list_loaded 1", "payguard_sanctions_entries ", "payguard_sanctions_list_age_seconds ",
		"payguard_sanctions_data_as_of_timestamp_seconds "} {
		if !strings.Contains(metrics, want) {
			t.Errorf("/metrics lacks %q", want)
		}
	}
	for _, absent := range []string{"payguard_sanctions_last_success_timestamp_seconds", "payguard_sanctions_refresh_consecutive_failures"} {
		if strings.Contains(metrics, absent) {
			t.Errorf("/metrics has %s with --sanctions-dir (no refresher)", absent)
		}
	}
}

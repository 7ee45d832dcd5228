package main

import (
	"context"
	"log/slog"
	"path/filepath"
	"strings"
	"testing"

	"github.com/payguard/payguard/config"
	"github.com/payguard/payguard/internal/app"
	"github.com/payguard/payguard/internal/realdata"
)

// startProxyLogged is startProxy with the proxy's log kept for the test.
func startProxyLogged(t *testing.T, cfg *config.Config, sf app.Flags) (admin string, logs *syncLog) {
	t.Helper()
	logs = &syncLog{}
	ctx, cancel := context.WithCancel(context.Background())
	out := bannerWriter{ch: make(chan string, 1)}
	done := make(chan error, 1)
	ln := proxyListeners(t)
	go func() { done <- serveProxy(ln, ctx, cfg, sf, slog.New(slog.NewJSONHandler(logs, nil)), out) }()
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
	return bannerField(t, banner, "admin API"), logs
}

// TestFileMtimeDateIsFlaggedLoudly: a CSV set states no publication date, so a list given by hand is dated by
// its files' modification time; a copy made today of a 2024 list then reports today. That is said at start
// (a warning), on /readyz (data_as_of_warning) and in the metrics (payguard_sanctions_data_as_of_is_file_mtime
// 1). SDN.XML states its Publish_Date: that date is used, and nothing is flagged.
func TestFileMtimeDateIsFlaggedLoudly(t *testing.T) {
	csvDir, err := filepath.Abs(filepath.Join("testdata", "check-sanctions"))
	if err != nil {
		t.Fatal(err)
	}
	xmlDir := filepath.Join(realdata.OFACDir(t), "sdn_xml_excerpt_2020-10-29")
	for _, c := range []struct {
		name, dir string
		flagged   bool
	}{{"csv set", csvDir, true}, {"SDN.XML", xmlDir, false}} {
		t.Run(c.name, func(t *testing.T) {
			t.Chdir(t.TempDir())
			cfg, err := config.Default()
			if err != nil {
				t.Fatal(err)
			}
			admin, logs := startProxyLogged(t, cfg, app.Flags{Offline: true, SanctionsDir: c.dir})
			_, ready := httpGet(t, admin+"/readyz")
			_, metrics := httpGet(t, admin+"/metrics")
			if c.flagged {
				if !strings.Contains(ready, `"data_as_of_warning":"data_as_of is the list files' modification time`) {
					t.Errorf("/readyz does not flag the file date: %s", ready)
				}
				if !strings.Contains(metrics, "payguard_sanctions_data_as_of_is_file_mtime 1") {
					t.Errorf("/metrics does not flag the file date")
				}
				if !strings.Contains(logs.String(), `"level":"WARN","msg":"SANCTIONS LIST DATE UNKNOWN`) {
					t.Errorf("no warning at start:\n%s", logs.String())
				}
				return
			}
			if strings.Contains(ready, "data_as_of_warning") || !strings.Contains(ready, `"data_as_of":"2020-10-29T00:00:00Z"`) ||
				!strings.Contains(ready, `"data_as_of_source":"publish_date"`) {
				t.Errorf("/readyz for SDN.XML: %s", ready)
			}
			if !strings.Contains(metrics, "payguard_sanctions_data_as_of_is_file_mtime 0") {
				t.Errorf("/metrics for SDN.XML lacks payguard_sanctions_data_as_of_is_file_mtime 0")
			}
			if strings.Contains(logs.String(), "SANCTIONS LIST DATE UNKNOWN") {
				t.Errorf("SDN.XML's publication date flagged as unknown:\n%s", logs.String())
			}
		})
	}
}

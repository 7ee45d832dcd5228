package main

import (
	"bytes"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"testing"

	"github.com/payguard/payguard/config"
)

func TestHealthcheck(t *testing.T) {
	status := http.StatusOK
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(status) }))
	defer srv.Close()
	var out, errb bytes.Buffer
	if code := runMain([]string{"healthcheck", "--url", srv.URL}, nil, &out, &errb); code != 0 {
		t.Fatalf("200: code %d, %s", code, errb.String())
	}
	status = http.StatusServiceUnavailable
	if code := runMain([]string{"healthcheck", "--url", srv.URL}, nil, &out, &errb); code != 1 {
		t.Fatalf("503: code %d", code)
	}
	srv.Close()
	if code := runMain([]string{"healthcheck", "--url", srv.URL}, nil, &out, &errb); code != 1 {
		t.Fatalf("no server: code %d", code)
	}
}

// The image's configuration is valid, listens where a container is reached, and keeps every piece of state
// under the /data volume (the root file system may be read-only).
func TestContainerConfig(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("..", "..", "docker", "payguard.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	c, err := config.Parse(data)
	if err != nil {
		t.Fatal(err)
	}
	if c.Proxy.Listen != "0.0.0.0:8402" || c.Admin.Listen != "0.0.0.0:8403" {
		t.Errorf("listens on %s and %s", c.Proxy.Listen, c.Admin.Listen)
	}
	for name, path := range map[string]string{"data_dir": c.DataDir, "proxy.ca_cert_file": c.Proxy.CACertFile,
		"proxy.ca_key_file": c.Proxy.CAKeyFile, "store.path": c.Store.Path, "keys.receipt_key_file": c.Keys.ReceiptKeyFile,
		"screening.sanctions.cache_dir": c.Screening.Sanctions.CacheDir} {
		if rel, err := filepath.Rel("/data", path); err != nil || rel == ".." || filepath.IsAbs(rel) || len(rel) >= 2 && rel[:2] == ".." {
			t.Errorf("%s = %q is outside /data", name, path)
		}
	}
}

package config

import (
	"path/filepath"
	"strings"
	"testing"
)

// statePaths are every state file the data directory holds, as the config has them.
func statePaths(c *Config) []string {
	return []string{c.Proxy.CACertFile, c.Proxy.CAKeyFile, c.Keys.ReceiptKeyFile, c.Store.Path, c.Screening.Sanctions.CacheDir}
}

// One data directory moves all the state: --data-dir (SetDataDir), PAYGUARD_DATA_DIR and a file's
// proxy.data_dir each move the CA, the receipt keys, the ledger and the list cache together; a path a file
// set to somewhere else stays. (Before, proxy.data_dir moved none of them.)
func TestDataDirMovesState(t *testing.T) {
	t.Setenv(DataDirEnv, "")
	want := func(t *testing.T, c *Config, dir string) {
		t.Helper()
		if c.DataDir != dir {
			t.Errorf("data_dir = %q, want %q", c.DataDir, dir)
		}
		for i, p := range statePaths(c) {
			if filepath.Dir(p) != dir && filepath.Dir(filepath.Dir(p)) != dir {
				t.Errorf("state path %d = %q, not under %q", i, p, dir)
			}
		}
	}
	c, err := Default()
	if err != nil {
		t.Fatal(err)
	}
	c.SetDataDir("/srv/pg")
	want(t, c, "/srv/pg")

	c, err = Parse([]byte("proxy:\n  data_dir: /var/lib/payguard\n"))
	if err != nil {
		t.Fatal(err)
	}
	want(t, c, "/var/lib/payguard")

	// A copied default (every path spelled out at its default) moves too.
	c, err = Parse(append(DefaultYAML(), []byte("")...))
	if err != nil {
		t.Fatal(err)
	}
	c.SetDataDir("/d")
	want(t, c, "/d")

	t.Setenv(DataDirEnv, "/from/env")
	c, err = Default()
	if err != nil {
		t.Fatal(err)
	}
	want(t, c, "/from/env")
	c.SetDataDir("/flag/wins")
	want(t, c, "/flag/wins")
	t.Setenv(DataDirEnv, "")

	// A path set elsewhere is the operator's choice and stays.
	c, err = Parse([]byte("proxy:\n  data_dir: /var/lib/payguard\nkeys:\n  receipt_key_file: /etc/payguard/keys.json\n"))
	if err != nil {
		t.Fatal(err)
	}
	if c.Keys.ReceiptKeyFile != "/etc/payguard/keys.json" || c.Store.Path != "/var/lib/payguard/payguard.db" {
		t.Errorf("keys %q store %q", c.Keys.ReceiptKeyFile, c.Store.Path)
	}
}

// data_dir is top-level, proxy's and serve's alike; proxy.data_dir, its old name, still works (a config
// written before keeps its state where it was), and both naming different directories is refused rather
// than one silently winning.
func TestDataDirTopLevelAndOldName(t *testing.T) {
	t.Setenv(DataDirEnv, "")
	c, err := Parse([]byte("data_dir: /srv/new\n"))
	if err != nil {
		t.Fatal(err)
	}
	if c.DataDir != "/srv/new" || c.Keys.ReceiptKeyFile != "/srv/new/receipt-keys.json" || c.Proxy.DataDir != "" {
		t.Errorf("data_dir = %q, keys %q, proxy.data_dir %q", c.DataDir, c.Keys.ReceiptKeyFile, c.Proxy.DataDir)
	}
	c, err = Parse([]byte("proxy:\n  data_dir: /srv/old\n"))
	if err != nil {
		t.Fatal(err)
	}
	if c.DataDir != "/srv/old" || c.Store.Path != "/srv/old/payguard.db" || c.Proxy.DataDir != "" {
		t.Errorf("old name: data_dir = %q, store %q, proxy.data_dir %q", c.DataDir, c.Store.Path, c.Proxy.DataDir)
	}
	if d := c.Deprecations(); len(d) != 1 || !strings.Contains(d[0], "move it to the top level as data_dir") {
		t.Errorf("the old name is not reported as such: %q", d)
	}
	if c, _ := Parse([]byte("data_dir: /srv/new\n")); len(c.Deprecations()) != 0 {
		t.Errorf("the new name reported: %q", c.Deprecations())
	}
	if c, err = Parse([]byte("data_dir: /srv/same\nproxy:\n  data_dir: /srv/same/\n")); err != nil || c.DataDir != "/srv/same" {
		t.Errorf("both names, one directory: %v, %q", err, c.DataDir)
	}
	_, err = Parse([]byte("data_dir: /srv/a\nproxy:\n  data_dir: /srv/b\n"))
	if err == nil || !strings.Contains(err.Error(), "proxy.data_dir is data_dir's old name") {
		t.Errorf("two different data dirs: %v", err)
	}
}

// Leaving both CA files empty puts the CA under data_dir.
func TestCAFilesFollowDataDir(t *testing.T) {
	c := &Config{DataDir: "/var/lib/payguard"}
	if cert, key := c.CAFiles(); cert != "/var/lib/payguard/ca/payguard-ca.pem" || key != "/var/lib/payguard/ca/payguard-ca-key.pem" {
		t.Errorf("derived CA files %q %q", cert, key)
	}
	c.Proxy.CACertFile, c.Proxy.CAKeyFile = "/etc/ca.pem", "/etc/ca-key.pem"
	if cert, key := c.CAFiles(); cert != "/etc/ca.pem" || key != "/etc/ca-key.pem" {
		t.Errorf("configured CA files %q %q", cert, key)
	}
}

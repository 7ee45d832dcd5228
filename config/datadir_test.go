package config

import (
	"path/filepath"
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
		if c.Proxy.DataDir != dir {
			t.Errorf("data_dir = %q, want %q", c.Proxy.DataDir, dir)
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

package config

import (
	"os"
	"path/filepath"
)

// DefaultDataDir is where payguard keeps its state when nothing says otherwise.
const DefaultDataDir = "./payguard-data"

// DataDirEnv moves the data directory, as `--data-dir` does (the flag wins).
const DataDirEnv = "PAYGUARD_DATA_DIR"

// The state files under the data directory. A path still where the data directory would put it follows the
// data directory when it moves; a path set elsewhere stays where it was set.
var dataDirFiles = []struct {
	rel string
	ptr func(*Config) *string
}{
	{filepath.Join("ca", "payguard-ca.pem"), func(c *Config) *string { return &c.Proxy.CACertFile }},
	{filepath.Join("ca", "payguard-ca-key.pem"), func(c *Config) *string { return &c.Proxy.CAKeyFile }},
	{"receipt-keys.json", func(c *Config) *string { return &c.Keys.ReceiptKeyFile }},
	{"payguard.db", func(c *Config) *string { return &c.Store.Path }},
	{"sanctions", func(c *Config) *string { return &c.Screening.Sanctions.CacheDir }},
}

// SetDataDir moves the data directory to dir: proxy.data_dir, and with it the MITM CA, the receipt keys,
// the bolt ledger and the sanctions list cache, each unless its path was set to somewhere else than its
// place in the current data directory. (The admin token follows proxy.data_dir already.)
func (c *Config) SetDataDir(dir string) {
	from := c.Proxy.DataDir
	for _, f := range dataDirFiles {
		p := f.ptr(c)
		if *p != "" && filepath.Clean(*p) == filepath.Join(from, f.rel) {
			*p = filepath.Join(dir, f.rel)
		}
	}
	c.Proxy.DataDir = dir
}

// applyDataDir makes a file's proxy.data_dir move the state paths it left at their defaults (a file that
// sets only data_dir moves everything), then applies PAYGUARD_DATA_DIR.
func (c *Config) applyDataDir() {
	if dir := c.Proxy.DataDir; filepath.Clean(dir) != filepath.Clean(DefaultDataDir) {
		c.Proxy.DataDir = DefaultDataDir
		c.SetDataDir(dir)
	}
	if dir := os.Getenv(DataDirEnv); dir != "" {
		c.SetDataDir(dir)
	}
}

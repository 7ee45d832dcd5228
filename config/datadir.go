package config

import (
	"fmt"
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

// SetDataDir moves the data directory to dir: data_dir, and with it the MITM CA, the receipt keys, the bolt
// ledger and the sanctions list cache, each unless its path was set to somewhere else than its place in the
// current data directory. (The admin and decide tokens follow data_dir already.)
func (c *Config) SetDataDir(dir string) {
	from := c.DataDir
	for _, f := range dataDirFiles {
		p := f.ptr(c)
		if *p != "" && filepath.Clean(*p) == filepath.Join(from, f.rel) {
			*p = filepath.Join(dir, f.rel)
		}
	}
	c.DataDir = dir
}

// applyDataDir settles the data directory of a decoded file: data_dir, else its old name proxy.data_dir
// (both set to different directories is an error), else DefaultDataDir. A directory other than the default
// moves the state paths the file left at their defaults (a file that sets only data_dir moves everything);
// then PAYGUARD_DATA_DIR applies.
func (c *Config) applyDataDir() error {
	dir, old := c.DataDir, c.Proxy.DataDir
	c.Proxy.DataDir = ""
	switch {
	case dir != "" && old != "" && filepath.Clean(dir) != filepath.Clean(old):
		c.DataDir = DefaultDataDir
		return fmt.Errorf("data_dir (%s) and proxy.data_dir (%s) differ: proxy.data_dir is data_dir's old name; keep only data_dir", dir, old)
	case dir == "":
		dir = old
	}
	if old != "" {
		c.deprecated = append(c.deprecated, "proxy.data_dir is data_dir's old name (proxy and serve share it): move it to the top level as data_dir")
	}
	if dir == "" {
		dir = DefaultDataDir
	}
	c.DataDir = DefaultDataDir
	if filepath.Clean(dir) != filepath.Clean(DefaultDataDir) {
		c.SetDataDir(dir)
	}
	if env := os.Getenv(DataDirEnv); env != "" {
		c.SetDataDir(env)
	}
	return nil
}

// CAFiles are the MITM CA's files: proxy.ca_cert_file and proxy.ca_key_file, or, both left empty,
// <data_dir>/ca/payguard-ca.pem and payguard-ca-key.pem, so that a config that moves data_dir moves the CA
// with it.
func (c *Config) CAFiles() (cert, key string) {
	if c.Proxy.CACertFile == "" && c.Proxy.CAKeyFile == "" {
		return filepath.Join(c.DataDir, dataDirFiles[0].rel), filepath.Join(c.DataDir, dataDirFiles[1].rel)
	}
	return c.Proxy.CACertFile, c.Proxy.CAKeyFile
}

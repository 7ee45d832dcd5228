package cli

import (
	"flag"

	"github.com/payguard/payguard/config"
)

// dataDirContents says, per command (its FlagSet's name), what its data directory holds: serve has no
// interception CA and no admin token, so its help must not speak of them.
var dataDirContents = map[string]string{
	"proxy": "MITM CA, receipt keys, ledger, sanctions cache, admin token",
	"serve": "receipt keys, ledger (trial counters, fee records), sanctions cache",
	"env":   "the proxy's, read here for its MITM CA",
}

// DataDirFlag adds --data-dir to fs; apply moves cfg's data directory when it was given.
func DataDirFlag(fs *flag.FlagSet) (apply func(*config.Config)) {
	what, ok := dataDirContents[fs.Name()]
	if !ok {
		what = "state"
	}
	dir := fs.String("data-dir", "", "directory for all state: "+what+" (default ./payguard-data, or $"+config.DataDirEnv+")")
	return func(cfg *config.Config) {
		if *dir != "" {
			cfg.SetDataDir(*dir)
		}
	}
}

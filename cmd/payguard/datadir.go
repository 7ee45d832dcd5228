package main

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/payguard/payguard/config"
)

// dataDirLockFile is the lock one running payguard holds in its data directory, with who holds it.
const dataDirLockFile = "payguard.lock"

// dataDirHolder is what the lock file says about the process that holds it.
type dataDirHolder struct {
	Role    string    `json:"role"` // "proxy" or "serve"
	PID     int       `json:"pid"`
	Listen  string    `json:"listen,omitempty"`
	Started time.Time `json:"started"`
}

// errDataDirBusy is returned (wrapped, naming the holder) when another process holds the data directory.
var errDataDirBusy = errors.New("data directory in use")

// lockDataDir takes the data directory for this process (role, listening on listen): one payguard per data
// directory, since they would share the ledger file, the CA and the receipt keys. It fails at once when
// another process holds it, naming that process's role, pid and address. The lock is the kernel's (flock),
// so it goes with the process, kill -9 included; the file's content is only the description. release gives
// it back.
func lockDataDir(dir, role, listen string) (release func(), err error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("data dir: %w", err)
	}
	path := filepath.Join(dir, dataDirLockFile)
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("data dir lock: %w", err)
	}
	if err := tryLock(f); err != nil {
		f.Close()
		holder := "another payguard"
		if b, rerr := os.ReadFile(path); rerr == nil {
			var h dataDirHolder
			if json.Unmarshal(b, &h) == nil && h.Role != "" {
				holder = fmt.Sprintf("payguard %s (pid %d", h.Role, h.PID)
				if h.Listen != "" {
					holder += ", listening on " + h.Listen
				}
				holder += ", since " + h.Started.UTC().Format(time.RFC3339) + ")"
			}
		}
		return nil, fmt.Errorf("%w: %s is used by %s; stop it, or give this one another --data-dir (or %s)",
			errDataDirBusy, dir, holder, config.DataDirEnv)
	}
	b, _ := json.Marshal(dataDirHolder{Role: role, PID: os.Getpid(), Listen: listen, Started: time.Now().UTC()})
	if err := f.Truncate(0); err == nil {
		f.WriteAt(append(b, '\n'), 0)
	}
	return func() { unlock(f); f.Close() }, nil
}

// dataDirContents says, per command (its FlagSet's name), what its data directory holds: serve has no
// interception CA and no admin token, so its help must not speak of them.
var dataDirContents = map[string]string{
	"proxy": "MITM CA, receipt keys, ledger, sanctions cache, admin token",
	"serve": "receipt keys, ledger (trial counters, fee records), sanctions cache",
	"env":   "the proxy's, read here for its MITM CA",
}

// dataDirFlag adds --data-dir to fs; apply moves cfg's data directory when it was given.
func dataDirFlag(fs *flag.FlagSet) (apply func(*config.Config)) {
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

package app

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/payguard/payguard/config"
)

// DataDirLockFile is the lock one running payguard holds in its data directory, with who holds it.
const DataDirLockFile = "payguard.lock"

// dataDirHolder is what the lock file says about the process that holds it.
type dataDirHolder struct {
	Role    string    `json:"role"` // "proxy" or "serve"
	PID     int       `json:"pid"`
	Listen  string    `json:"listen,omitempty"`
	Started time.Time `json:"started"`
}

// errDataDirBusy is returned (wrapped, naming the holder) when another process holds the data directory.
var errDataDirBusy = errors.New("data directory in use")

// LockDataDir takes the data directory for this process (role, listening on listen): one payguard per data
// directory, since they would share the ledger file, the CA and the receipt keys. It fails at once when
// another process holds it, naming that process's role, pid and address. The lock is the kernel's (flock),
// so it goes with the process, kill -9 included; the file's content is only the description. release gives
// it back.
func LockDataDir(dir, role, listen string) (release func(), err error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("data dir: %w", err)
	}
	path := filepath.Join(dir, DataDirLockFile)
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

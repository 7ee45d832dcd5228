//go:build unix

package bolt

import (
	"fmt"
	"os"
	"syscall"
)

// notInUse fails when another process (a running payguard) holds the file's lock, the same flock bbolt
// takes: Reinit must never move a live ledger aside.
func notInUse(path string) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		return fmt.Errorf("store/bolt: %s is in use by a running payguard (stop it first): %w", path, err)
	}
	return syscall.Flock(int(f.Fd()), syscall.LOCK_UN)
}

package bolt

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"time"

	bbolt "go.etcd.io/bbolt"
)

// Reinit is the operator's recovery (`payguard store reinit --confirm`) for a file Open refuses; the
// operator has decided that spend the file no longer holds is forgotten. What bbolt can still read (the tree
// of the newest valid meta page) is copied into a new, consistent file that replaces it, and the mark is set
// to that copy's commit. A file nothing can be read from starts a new ledger. The damaged file is kept as
// <path>.damaged-<time> for inspection, and the journals are kept, so operations not yet applied still
// count. It says what it did.
func Reinit(path string) (string, error) {
	if st, err := os.Stat(path); errors.Is(err, fs.ErrNotExist) || (err == nil && st.Size() == 0) {
		if err == nil {
			if err := os.Remove(path); err != nil {
				return "", err
			}
		}
		if err := removeMark(path); err != nil {
			return "", err
		}
		return fmt.Sprintf("%s was missing or empty; its mark is removed and the next start creates a new ledger", path), nil
	}
	if err := notInUse(path); err != nil {
		return "", err
	}
	aside := fmt.Sprintf("%s.damaged-%s", path, time.Now().UTC().Format("20060102T150405.000Z"))
	salvage := path + ".salvage"
	txid, salvaged := salvageCopy(path, salvage)
	if err := os.Rename(path, aside); err != nil {
		return "", fmt.Errorf("store/bolt: moving the damaged file aside: %w", err)
	}
	if !salvaged {
		os.Remove(salvage)
		if err := removeMark(path); err != nil {
			return "", err
		}
		return fmt.Sprintf("nothing could be read from %s: it is moved to %s and the next start creates a new "+
			"ledger (its spend starts from what the journals still hold)", path, aside), nil
	}
	if err := os.Rename(salvage, path); err != nil {
		return "", fmt.Errorf("store/bolt: putting the salvaged copy in place: %w", err)
	}
	f, err := openMark(path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	if err := writeMark(f, txid); err != nil {
		return "", err
	}
	if err := f.Sync(); err != nil {
		return "", err
	}
	return fmt.Sprintf("%s now holds what could be read of it, at commit %d (the original is kept as %s); "+
		"spend recorded after that commit is forgotten", path, txid, aside), nil
}

func removeMark(path string) error {
	if err := os.Remove(markPath(path)); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	return nil
}

// salvageCopy copies what bbolt reads of path into dst and checks the copy; a panic is a failed salvage.
func salvageCopy(path, dst string) (txid uint64, ok bool) {
	var file *os.File
	defer func() {
		if recover() != nil {
			if file != nil {
				file.Close()
			}
			ok = false
		}
	}()
	db, err := bbolt.Open(path, 0o600, &bbolt.Options{ReadOnly: true, Timeout: DefaultTimeout,
		OpenFile: func(name string, flag int, mode os.FileMode) (*os.File, error) {
			f, err := os.OpenFile(name, flag, mode)
			file = f
			return f, err
		}})
	if err != nil {
		return 0, false
	}
	defer db.Close()
	os.Remove(dst)
	if err := db.View(func(tx *bbolt.Tx) error {
		txid = uint64(tx.ID())
		return tx.CopyFile(dst, 0o600)
	}); err != nil {
		return 0, false
	}
	cp, err := bbolt.Open(dst, 0o600, &bbolt.Options{ReadOnly: true, Timeout: DefaultTimeout})
	if err != nil {
		return 0, false
	}
	defer cp.Close()
	err = cp.View(func(tx *bbolt.Tx) error {
		var bad error
		for e := range tx.Check() {
			bad = e
		}
		if uint64(tx.ID()) != txid {
			bad = fmt.Errorf("the copy is at commit %d, not %d", tx.ID(), txid)
		}
		return bad
	})
	return txid, err == nil
}

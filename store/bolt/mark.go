package bolt

// The high-water mark: a small file next to the database (<path>-mark) that records the bbolt transaction id
// of the newest commit: the ledger's applier's, and every other write's (holds, payment digests, taken
// tickets, released leases: bolt.go's update and batch.go's write). bbolt itself cannot tell that it went back in time: a file emptied to 0 bytes
// opens as a new database, and a damaged meta page makes it fall back silently to the other meta page, one
// commit older. Either way the spend recorded since is gone and a restart would let it be spent again. So
// Open compares the file's transaction id with the mark before it writes anything, and refuses to start
// when the file is older than the mark, or when bbolt finds the file inconsistent (or panics reading it,
// which it does on garbage in data pages), naming the recovery command.
//
// The mark is written after each ledger commit has been fsynced, without an fsync of its own: a power cut
// can leave it older than the file (never newer), which is no alarm. Deleting both the database and the
// mark is indistinguishable from a new installation; that stays out of reach of a local file.

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io/fs"
	"os"

	bbolt "go.etcd.io/bbolt"

	"github.com/payguard/payguard/store"
)

const markMagic = "PGMARK01"

// markSize is the magic, the transaction id (uint64 BE) and a CRC-32C of both.
const markSize = len(markMagic) + 8 + 4

// markPath is the mark of the store at path.
func markPath(path string) string { return path + "-mark" }

// RecoveryCommand is what an operator runs to accept a damaged or rolled-back file (printed in errors).
const RecoveryCommand = "payguard store reinit --confirm"

// readMark returns the recorded transaction id, or ok false when there is no mark (a new installation, or a
// file from before marks existed). A mark that is there but unreadable is an error: refusing is safe.
func readMark(path string) (txid uint64, ok bool, err error) {
	b, err := os.ReadFile(markPath(path))
	if errors.Is(err, fs.ErrNotExist) {
		return 0, false, nil
	}
	if err != nil {
		return 0, false, fmt.Errorf("store/bolt: reading the mark %s: %w", markPath(path), err)
	}
	if len(b) != markSize || string(b[:len(markMagic)]) != markMagic ||
		crc32.Checksum(b[:markSize-4], castagnoli) != binary.BigEndian.Uint32(b[markSize-4:]) {
		return 0, false, fmt.Errorf("%w: the mark %s is damaged; if the database is known good, run `%s`",
			store.ErrLedgerLost, markPath(path), RecoveryCommand)
	}
	return binary.BigEndian.Uint64(b[len(markMagic):]), true, nil
}

// appendMark appends the mark of txid to b: markSize bytes, written in place at offset 0 with one write,
// within one sector.
func appendMark(b []byte, txid uint64) []byte {
	b = append(b, markMagic...)
	b = binary.BigEndian.AppendUint64(b, txid)
	return binary.BigEndian.AppendUint32(b, crc32.Checksum(b[len(b)-markSize+4:], castagnoli))
}

// writeMark records txid in f in place.
func writeMark(f *os.File, txid uint64) error {
	_, err := f.WriteAt(appendMark(nil, txid), 0)
	return err
}

// openMark opens (creating) the mark file for writing.
func openMark(path string) (*os.File, error) {
	f, err := os.OpenFile(markPath(path), os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("store/bolt: opening the mark: %w", err)
	}
	return f, nil
}

// checkEmptied refuses, before bbolt would initialize it as a new database, a file emptied to 0 bytes or
// deleted while its mark says it held commits.
func checkEmptied(path string) error {
	recorded, known, err := readMark(path)
	if err != nil || !known {
		return err
	}
	st, err := os.Stat(path)
	if err == nil && st.Size() > 0 {
		return nil
	}
	what := "is empty (0 bytes)"
	if err != nil {
		what = "is missing"
	}
	return fmt.Errorf("%w: %s %s but commit %d was recorded (%s); restore it from a backup, or start a new "+
		"ledger with `%s` (the spend it recorded is then forgotten)", store.ErrLedgerLost, path, what, recorded,
		markPath(path), RecoveryCommand)
}

// checkFile verifies, before Open writes anything, that db is consistent and not older than the mark.
// bbolt panics on some damage (garbage in data pages); the panic becomes the same refusal.
func checkFile(db *bbolt.DB, path string) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = damaged(path, fmt.Sprint("bbolt panicked reading it: ", r))
		}
	}()
	recorded, known, err := readMark(path)
	if err != nil {
		return err
	}
	return db.View(func(tx *bbolt.Tx) error {
		if known && uint64(tx.ID()) < recorded {
			return fmt.Errorf("%w: %s holds commit %d but commit %d was recorded (%s): the file was emptied, "+
				"replaced or damaged (a bad meta page makes bbolt fall back to an older commit), and the spend "+
				"recorded since would be spent again. Restore the file from a backup, or accept it as it is "+
				"with `%s`", store.ErrLedgerLost, path, tx.ID(), recorded, markPath(path), RecoveryCommand)
		}
		var problems []string
		for e := range tx.Check() { // read to the end: Check's goroutine sends every error it finds
			if len(problems) < 3 {
				problems = append(problems, e.Error())
			}
		}
		if len(problems) > 0 {
			return damaged(path, fmt.Sprint("bbolt's check found ", problems))
		}
		return nil
	})
}

func damaged(path, why string) error {
	return fmt.Errorf("%w: %s is damaged (%s); restore it from a backup, or move it aside and start a new "+
		"ledger with `%s` (the spend it recorded is then forgotten)", store.ErrLedgerLost, path, why, RecoveryCommand)
}

// currentTxID is the id of the newest commit in db.
func currentTxID(db *bbolt.DB) (uint64, error) {
	var id uint64
	err := db.View(func(tx *bbolt.Tx) error { id = uint64(tx.ID()); return nil })
	return id, err
}

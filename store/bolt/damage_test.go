package bolt_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/payguard/payguard/store"
	"github.com/payguard/payguard/store/bolt"
)

const damageDay = "2026-11-25"

// recorded is what spendTwenty leaves.
var recorded = store.BudgetState{Day: damageDay, Spent: 190_000, Reserved: 10_000}

// spendTwenty records $0.20 of spend: 19 payments of $0.01 reserved and committed, then one reserved (Reserve
// waits for each commit), so the newest commit of the file adds spend; then it closes.
func spendTwenty(t *testing.T, path string) {
	t.Helper()
	s, err := bolt.Open(path, bolt.Options{})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	for i := range 20 {
		id, err := s.Reserve(ctx, "b", damageDay, 10_000, 1_000_000)
		if err != nil {
			t.Fatal(err)
		}
		if i == 19 {
			break
		}
		if err := s.Commit(ctx, "b", damageDay, id); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
}

// spendAfterOpen opens path and returns its recorded figures, or Open's error.
func spendAfterOpen(t *testing.T, path string) (store.BudgetState, error) {
	t.Helper()
	s, err := bolt.Open(path, bolt.Options{})
	if err != nil {
		return store.BudgetState{}, err
	}
	defer s.Close()
	st, err := s.State(context.Background(), "b", damageDay)
	if err != nil {
		t.Fatal(err)
	}
	return st, nil
}

func overwrite(t *testing.T, path string, off int64, n int) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	garbage := make([]byte, n)
	for i := range garbage {
		garbage[i] = byte(0xA5 ^ i)
	}
	if _, err := f.WriteAt(garbage, off); err != nil {
		t.Fatal(err)
	}
}

// wantRefused checks that Open refused with ErrLedgerLost naming the recovery command.
func wantRefused(t *testing.T, spent store.BudgetState, err error) {
	t.Helper()
	if !errors.Is(err, store.ErrLedgerLost) || !strings.Contains(err.Error(), bolt.RecoveryCommand) {
		t.Fatalf("Open of the damaged file: figures %+v, error %v; want a refusal wrapping ErrLedgerLost that names %q",
			spent, err, bolt.RecoveryCommand)
	}
}

// The three damages of payguard.db: none may start with less spend than was recorded without
// saying so. On the old code the first opened a new ledger ($0.20 → $0), the second fell back one commit
// and the third panicked.
func TestDamagedFileNeverStartsWithLessSpend(t *testing.T) {
	pageSize := int64(os.Getpagesize())
	for _, tc := range []struct {
		name   string
		damage func(t *testing.T, path string)
	}{
		{"emptied", func(t *testing.T, path string) {
			if err := os.Truncate(path, 0); err != nil {
				t.Fatal(err)
			}
		}},
		// The newest commit's meta page is page txid%2; garbage in its first 64 bytes makes bbolt fall back
		// to the other, one commit older. Both pages are tried: the newest one must be refused, the other
		// must open with every cent.
		{"garbage in meta page 0", func(t *testing.T, path string) { overwrite(t, path, 0, 64) }},
		{"garbage in meta page 1", func(t *testing.T, path string) { overwrite(t, path, pageSize, 64) }},
		// The same within the meta's fields only, past the 16-byte page header bbolt's check reads: the
		// fallback is then caught by the mark alone.
		{"garbage in meta page 0's fields", func(t *testing.T, path string) { overwrite(t, path, 16, 48) }},
		{"garbage in meta page 1's fields", func(t *testing.T, path string) { overwrite(t, path, pageSize+16, 48) }},
		{"garbage in data pages", func(t *testing.T, path string) {
			st, err := os.Stat(path)
			if err != nil {
				t.Fatal(err)
			}
			overwrite(t, path, 2*pageSize, int(st.Size()-2*pageSize))
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "payguard.db")
			spendTwenty(t, path)
			tc.damage(t, path)
			// A bbolt panic leaves its mapping, and with it the file's lock, in this process (a refused start
			// exits), so the second start and the recovery each work on a copy, as a new process would.
			again, recover := filepath.Join(t.TempDir(), "payguard.db"), filepath.Join(t.TempDir(), "payguard.db")
			for _, dst := range []string{again, recover} {
				copyFile(t, path, dst)
				copyFile(t, path+"-mark", dst+"-mark")
			}
			spent, err := spendAfterOpen(t, path)
			if err == nil && spent == recorded {
				return // this damage lost nothing (the older meta page): every cent is there
			}
			wantRefused(t, spent, err)
			// The refusal holds on every start until the operator acts, and the recovery command works.
			if _, err := spendAfterOpen(t, again); !errors.Is(err, store.ErrLedgerLost) {
				t.Fatalf("second start: %v", err)
			}
			msg, err := bolt.Reinit(recover)
			if err != nil {
				t.Fatal(err)
			}
			t.Log(msg)
			if _, err := spendAfterOpen(t, recover); err != nil {
				t.Fatalf("start after %s: %v", bolt.RecoveryCommand, err)
			}
		})
	}
}

// Of the two meta pages one holds the newest commit: damaging it must be refused (the fallback is not
// silent), whichever page that is.
func TestDamagedNewestMetaIsRefused(t *testing.T) {
	pageSize := int64(os.Getpagesize())
	refused := 0
	for page := range int64(2) {
		path := filepath.Join(t.TempDir(), "payguard.db")
		spendTwenty(t, path)
		overwrite(t, path, page*pageSize, 64)
		if _, err := spendAfterOpen(t, path); errors.Is(err, store.ErrLedgerLost) {
			refused++
		}
	}
	if refused == 0 {
		t.Fatal("garbage in either meta page opened without a word: one of them held the newest commit")
	}
}

func copyFile(t *testing.T, from, to string) {
	t.Helper()
	b, err := os.ReadFile(from)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(to, b, 0o600); err != nil {
		t.Fatal(err)
	}
}

// The recovery never moves aside the file of a payguard that is running on it.
func TestReinitRefusesALiveFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "payguard.db")
	s, err := bolt.Open(path, bolt.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if _, err := bolt.Reinit(path); err == nil || !strings.Contains(err.Error(), "in use") {
		t.Fatalf("Reinit of a live file: %v", err)
	}
	if _, err := os.Stat(path); err != nil {
		t.Fatal(err)
	}
}

// The newest commit need not be the ledger's: a payment digest marked (the proxy's and serve's replay memory)
// commits outside the journal. Garbage in the meta page holding it must be refused too, not fall back past it
// without a word; garbage in the other one is refused (bbolt's check) or opens with the digest remembered.
// Before every commit was marked, the fallback forgot the digest silently.
func TestDamagedMetaNeverForgetsAReplayMark(t *testing.T) {
	pageSize := int64(os.Getpagesize())
	ctx := context.Background()
	refused := 0
	for page := range int64(2) {
		path := filepath.Join(t.TempDir(), "payguard.db")
		spendTwenty(t, path)
		s, err := bolt.Open(path, bolt.Options{})
		if err != nil {
			t.Fatal(err)
		}
		if err := s.MarkPaymentSeen(ctx, "digest-of-a-released-payment", time.Hour); err != nil {
			t.Fatal(err)
		}
		if err := s.Close(); err != nil {
			t.Fatal(err)
		}
		// Garbage in the meta itself, after the page header (16 bytes) that bbolt's check reads: only the
		// fallback to the other meta page can tell.
		overwrite(t, path, page*pageSize+16, 48)
		s, err = bolt.Open(path, bolt.Options{})
		if errors.Is(err, store.ErrLedgerLost) {
			t.Logf("garbage in meta page %d: %v", page, err)
			refused++
			continue
		}
		if err != nil {
			t.Fatal(err)
		}
		err = s.MarkPaymentSeen(ctx, "digest-of-a-released-payment", time.Hour)
		s.Close()
		if !errors.Is(err, store.ErrAlreadyUsed) {
			t.Fatalf("garbage in meta page %d: opened and forgot the payment digest (mark again: %v)", page, err)
		}
	}
	if refused == 0 {
		t.Fatal("garbage in either meta page opened: one of them held the newest commit")
	}
}

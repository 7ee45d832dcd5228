// Package bolt is payguard's embedded default store: one bbolt file that survives restarts and kill -9.
// bbolt runs one write transaction at a time, so each operation that reads and then writes (TakeTicket,
// TakeTrial, ...) is atomic without further locking.
//
// Every change is committed and fsynced before the call returns, with three exceptions on hot paths.
// ReserveTicket returns once its reservation counts and is journaled (safe from kill -9), and TakeTicket
// waits for it to be committed, so the payment it allows is never released before it is durable. Commit,
// likewise journaled, moves an amount from reserved to spent and leaves the budget as it was. TakeTrial, the
// server's free-trial counter, is journaled too: a power cut (not a kill -9) can forgive the calls of the
// last few milliseconds (Options.CommitDelay), and no money moves on them (trial.go). These share one write path with group
// commit; see ledgerlog.go.
//
// The other hot write, the paid-call nonce mark, goes through write, which lets concurrent callers share one
// commit and its fsync (bbolt's DB.Batch) instead of queueing for one fsync each; see batch.go.
//
// The file is locked while open: a second payguard on the same file gets a clear "locked" error after
// Options.Timeout instead of hanging.
package bolt

import (
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"time"

	bbolt "go.etcd.io/bbolt"
	berrors "go.etcd.io/bbolt/errors"

	"github.com/payguard/payguard/store"
)

// DefaultTimeout is how long Open waits for another process's lock on the file.
const DefaultTimeout = 2 * time.Second

// purgeEvery bounds how often expired trial counters, payment digests and tickets are swept.
const purgeEvery = time.Minute

// Bucket names. Keys that start with a day rely on the day being exactly 10 bytes ("2006-01-02"), so
// day+name never collides with another day or name.
var (
	bucketBudgets      = []byte("budgets")      // day+budget → spent, reserved (2 × uint64 BE)
	bucketReservations = []byte("reservations") // day+id → amount (uint64 BE), committed (1 byte), day+budget
	bucketHolds        = []byte("holds")        // id → holdRecord JSON
	bucketHoldKeys     = []byte("holdkeys")     // hold key → id of the newest hold with that key
	bucketTickets      = []byte("tickets")      // ticket key → nested bucket: sequence (uint64 BE) → Ticket JSON
	bucketTicketIDs    = []byte("ticketids")    // ticket id → ExpiresAt (unix ns), for duplicate checks
	bucketTicketExpiry = []byte("ticketexpiry") // ExpiresAt (unix ns, uint64 BE) + ticket id → sequence + ticket key
	bucketSeen         = []byte("seen")         // payment digest → expiry (unix ns)
	bucketTrial        = []byte("trial")        // day+client → count, expiry (unix ns)
	bucketObservations = []byte("observations") // URL → nested bucket: sequence → Observation JSON
	bucketMeta         = []byte("meta")         // "index_updated_at" → time (MarshalBinary)
	bucketSellers      = []byte("sellers")      // host that answered 402 → empty (store.Sellers)
	bucketCatPrices    = []byte("catprices")    // category → nested bucket: URL → CategoryPrice JSON
	bucketDeliveries   = []byte("deliveries")   // delivery key → value, expiry (unix ns) (store.Deliveries)
	bucketSitePayees   = []byte("sitepayees")   // site → nested bucket: SitePayee.Key() → SitePayee JSON
	bucketAlarms       = []byte("alarms")       // seller host → store.Alarm JSON (store.Alarms)
	allBuckets         = [][]byte{bucketBudgets, bucketReservations, bucketHolds, bucketHoldKeys, bucketTickets,
		bucketTicketIDs, bucketTicketExpiry, bucketSeen, bucketTrial, bucketObservations, bucketMeta, bucketSellers, bucketCatPrices,
		bucketDeliveries, bucketSitePayees, bucketAlarms}
	keyIndexUpdatedAt = []byte("index_updated_at")
)

// Options tune Open; the zero value is the default.
type Options struct {
	// Timeout is how long to wait for another process's lock on the file; 0 means DefaultTimeout.
	Timeout time.Duration
	// Now is the clock for checks whose interface method takes no time (UseHold's expiry, digest and trial
	// expiry); nil means time.Now.
	Now func() time.Time
	// BatchDelay is how long a batched write waits for others to join its commit while another write is
	// in flight (see batch.go); 0 means DefaultBatchDelay, a negative value turns batching off.
	BatchDelay time.Duration
	// CommitDelay is how long the ledger's applier lets journaled operations gather before it commits them,
	// when nobody waits for the commit (ledgerlog.go); 0 means DefaultCommitDelay, a negative value commits
	// at once.
	CommitDelay time.Duration

	idlePurge  time.Duration // tests: how often an idle applier purges; 0 means purgeEvery
	idlePurged func()        // tests: called after each purge an idle applier runs, so a test can wait for one
}

// DefaultCommitDelay is Options.CommitDelay's default. Only reservations no payment was released against
// wait that long for the file (a power cut, not a kill -9, loses them), and a release cuts it short.
//
// Why 20 ms and not the 5 it was (issue 36, ticketstore): a commit costs about 0.3 ms of CPU whatever it
// holds (two fdatasyncs, the mark, the pages of five buckets written), so at 5 ms the proxy at c=8 paid
// 7-9 µs of each decided 402 in commits of ~30 reservations; at 20 ms the same commits hold ~120
// (docs/benchmarks/store.md, "ticketstore"). What a power cut can forget grows from 5 to 20 ms of unpaid
// reservations and free-trial calls: no payment is released before its commit (TakeTicket hurries it).
// At c=1 too: at 5 ms the applier's thread spent ~48 µs of CPU per decided 402, a tenth of the proxy's, and
// its commits overlapped 15-31% of the requests; at 25 ms ~22 µs and 9% (docs/benchmarks/proxy.md, "tail402").
const DefaultCommitDelay = 20 * time.Millisecond

// Store implements store.Store on a bbolt file.
type Store struct {
	db        *bbolt.DB
	now       func() time.Time
	lastPurge time.Time // read and written only inside write transactions, which bbolt serializes
	writers   atomic.Int64
	batching  bool
	log       ledgerLog // the ledger's write path (ledgerlog.go)
	closeOnce sync.Once
	closeErr  error
	// noAlarms is set at Open when the alarms bucket is empty and cleared before any alarm is written
	// (RaiseAlarm, the only writer of the bucket, and one process owns the file): while it is set, Alarm
	// answers ErrNotFound without a read transaction. Every decision reads its seller's alarm, and the
	// bucket is nearly always empty (issue 36: one bbolt transaction per decided 402 saved).
	noAlarms atomic.Bool
	// trialReadHook, set by tests only, runs in TakeTrial between its read of the file and taking the
	// journal's lock (trial.go's fileTrial).
	trialReadHook func()
}

var (
	_ store.Store              = (*Store)(nil)
	_ store.Sellers            = (*Store)(nil)
	_ store.ObservationBatcher = (*Store)(nil)
)

// growStep is how far past its data bbolt grows the file.
const growStep = 1 << 20

// Open opens or creates the file at path (and its directory, mode 0700). A file older than its mark, or
// one bbolt finds damaged, is refused with an error wrapping store.ErrLedgerLost (mark.go); a bbolt panic
// while opening becomes that error too.
func Open(path string, opts Options) (s *Store, err error) {
	// bbolt's file, closed if bbolt panics while opening. Its mapping stays (bbolt gives no way to reach
	// it), and with it the file's lock, until the process exits, which a refused start does.
	var file *os.File
	defer func() {
		if r := recover(); r != nil {
			if file != nil {
				file.Close()
			}
			s, err = nil, damaged(path, fmt.Sprint("bbolt panicked opening it: ", r))
		}
	}()
	if path == "" {
		return nil, fmt.Errorf("store/bolt: empty path")
	}
	if opts.Timeout <= 0 {
		opts.Timeout = DefaultTimeout
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return nil, fmt.Errorf("store/bolt: creating the data directory: %w", err)
	}
	if err := checkEmptied(path); err != nil {
		return nil, err
	}
	db, err := bbolt.Open(path, 0o600, &bbolt.Options{Timeout: opts.Timeout,
		OpenFile: func(name string, flag int, mode os.FileMode) (*os.File, error) {
			f, err := os.OpenFile(name, flag, mode)
			file = f
			return f, err
		}})
	if errors.Is(err, berrors.ErrTimeout) {
		return nil, fmt.Errorf("store/bolt: database %s is locked by another payguard (waited %v; stop the other process or use another path)", path, opts.Timeout)
	}
	if err != nil {
		return nil, fmt.Errorf("store/bolt: opening %s: %w", path, err)
	}
	if err := checkFile(db, path); err != nil {
		db.Close()
		return nil, err
	}
	// The file grows 1 MB past what it uses, not bbolt's 16 MB: payguard's records are small, and the disk a
	// bounded store takes should be close to what it holds (issue 36). A grow is a truncate and an fsync,
	// about one per two thousand unpaid 402s.
	db.AllocSize = growStep
	s = &Store{db: db, now: opts.Now, batching: opts.BatchDelay >= 0}
	if opts.BatchDelay == 0 {
		opts.BatchDelay = DefaultBatchDelay
	}
	if s.batching {
		db.MaxBatchDelay = opts.BatchDelay
	}
	err = db.Update(func(tx *bbolt.Tx) error {
		indexed := tx.Bucket(bucketTicketExpiry) != nil
		for _, name := range allBuckets {
			if _, err := tx.CreateBucketIfNotExists(name); err != nil {
				return err
			}
		}
		if !indexed { // a file from before the expiry index
			if err := indexTicketExpiry(tx); err != nil {
				return err
			}
		}
		k, _ := tx.Bucket(bucketAlarms).Cursor().First()
		s.noAlarms.Store(k == nil)
		return s.purge(tx, s.now())
	})
	if err != nil {
		db.Close()
		return nil, fmt.Errorf("store/bolt: preparing %s: %w", path, err)
	}
	s.log.idlePurge = opts.idlePurge
	s.log.idlePurged = opts.idlePurged
	switch {
	case opts.CommitDelay == 0:
		s.log.delay = DefaultCommitDelay
	case opts.CommitDelay > 0:
		s.log.delay = opts.CommitDelay
	}
	if err := s.openLedger(path); err != nil {
		db.Close()
		return nil, err
	}
	// Leases that fell due while payguard was down are released now, not at the first decision.
	s.log.mu.Lock()
	_, err = s.releaseLocked(s.now())
	s.log.mu.Unlock()
	if err != nil {
		s.Close()
		return nil, fmt.Errorf("store/bolt: releasing expired tickets in %s: %w", path, err)
	}
	return s, nil
}

// markNow records the file's newest commit in the mark.
func (s *Store) markNow() error {
	id, err := currentTxID(s.db)
	if err != nil {
		return fmt.Errorf("store/bolt: reading the newest commit: %w", err)
	}
	return s.mark(id)
}

// mark records commit txid in the mark unless it already holds a newer one (commits of other writes may
// finish in any order); a closed store's mark is left alone. For the ledger's applier an error stops the
// ledger like a failed commit; update and write ignore it (mark.go).
func (s *Store) mark(txid uint64) error {
	l := &s.log
	l.markMu.Lock()
	defer l.markMu.Unlock()
	if l.mark == nil || txid <= l.marked {
		return nil
	}
	b := appendMark(l.markBuf[:0], txid)
	if _, err := l.mark.WriteAt(b, 0); err != nil {
		return fmt.Errorf("store/bolt: recording the commit in the mark: %w", err)
	}
	l.marked = txid
	return nil
}

// update is db.Update followed by the mark of its commit, for every write outside the ledger's journal
// (holds, taken tickets, released leases, observations): a damaged meta page that falls back past such a
// commit is refused at the next start like one that falls back past a ledger commit. A mark that cannot be
// written is left older, which is never a false alarm; the write itself succeeded and is reported so.
func (s *Store) update(fn func(*bbolt.Tx) error) error {
	var txid uint64
	err := s.db.Update(func(tx *bbolt.Tx) error {
		txid = uint64(tx.ID())
		return fn(tx)
	})
	if err == nil {
		_ = s.mark(txid)
	}
	return err
}

// Close applies the queued ledger operations and releases the file and its lock. Concurrent and repeated
// calls wait for the first one and return its result.
func (s *Store) Close() error {
	s.closeOnce.Do(func() {
		s.closeLedger()
		s.closeErr = s.db.Close()
	})
	return s.closeErr
}

// Path is the file's path.
func (s *Store) Path() string { return s.db.Path() }

func u64(v uint64) []byte { return binary.BigEndian.AppendUint64(nil, v) }

// maybePurge sweeps expired entries at most once per purgeEvery; tx is a write transaction.
func (s *Store) maybePurge(tx *bbolt.Tx, now time.Time) error {
	if now.Sub(s.lastPurge) < purgeEvery {
		return nil
	}
	return s.purge(tx, now)
}

// purge deletes trial counters, payment digests and ticket ids whose expiry is before now, and tickets that
// expired. Deletion is collected first: bbolt cursors must not delete while iterating.
func (s *Store) purge(tx *bbolt.Tx, now time.Time) error {
	s.lastPurge = now
	nowNS := now.UnixNano()
	expired := func(b *bbolt.Bucket, expiryAt func(v []byte) int64) error {
		var dead [][]byte
		err := b.ForEach(func(k, v []byte) error {
			if len(v) >= 8 && expiryAt(v) < nowNS {
				dead = append(dead, append([]byte(nil), k...))
			}
			return nil
		})
		if err != nil {
			return err
		}
		for _, k := range dead {
			if err := b.Delete(k); err != nil {
				return err
			}
		}
		return nil
	}
	first := func(v []byte) int64 { return int64(binary.BigEndian.Uint64(v)) }
	second := func(v []byte) int64 { return int64(binary.BigEndian.Uint64(v[len(v)-8:])) }
	if err := expired(tx.Bucket(bucketSeen), first); err != nil {
		return err
	}
	if err := expired(tx.Bucket(bucketTrial), second); err != nil {
		return err
	}
	if err := expired(tx.Bucket(bucketDeliveries), second); err != nil {
		return err
	}
	// Tickets are not swept here: an expired ticket's reservation is released with it, under the ledger's
	// lock (release.go), which this transaction (the applier's, or Open's) does not hold.
	cutoff := []byte(store.Day(now.Add(-store.LedgerRetention)))
	for _, b := range [][]byte{bucketBudgets, bucketReservations} {
		if err := purgeDaysBefore(tx.Bucket(b), cutoff); err != nil {
			return err
		}
	}
	return nil
}

// maxPurgeKeys bounds one sweep of old ledger days, so a write transaction never stalls on a backlog; the
// next sweep continues.
const maxPurgeKeys = 10_000

// purgeDaysBefore deletes keys that start with a day before cutoff; such keys sort first.
func purgeDaysBefore(b *bbolt.Bucket, cutoff []byte) error {
	var dead [][]byte
	c := b.Cursor()
	for k, _ := c.First(); k != nil && len(dead) < maxPurgeKeys; k, _ = c.Next() {
		if len(k) < len(cutoff) || string(k[:len(cutoff)]) >= string(cutoff) {
			break
		}
		dead = append(dead, append([]byte(nil), k...))
	}
	for _, k := range dead {
		if err := b.Delete(k); err != nil {
			return err
		}
	}
	return nil
}

package bolt

// The ledger's write path: reservations, their tickets, and commits.
//
// An allowed 402's reservation must count at once (the next decision's cap check sees it) and must survive a
// kill -9, and it must be on disk (fsynced) before the payment it allows can leave the proxy. It need not be
// fsynced before the agent sees the narrowed challenge: nothing has been paid then, and a payment is released
// only through TakeTicket, which waits for it. So a ledger operation is:
//
//  1. decided under ledgerLog.mu against the budget's figures with every queued operation counted (the cap
//     check; the figures live in memory while operations on them are queued, and are read from the file
//     otherwise);
//  2. appended to a journal file with one write(2): in the page cache it survives the process being killed,
//     and Open replays it;
//  3. applied to the bbolt file by one goroutine that commits all operations queued meanwhile in one
//     transaction (group commit: one commit and its fsyncs for the lot), after which the journal is emptied.
//     Nobody waits for that commit on the 402 path, so the applier lets operations gather for up to
//     Options.CommitDelay before it commits, unless someone is waiting for it (TakeTicket, Reserve, Close,
//     or a call waiting for room in a full queue), who cuts the delay short. A commit costs CPU, mostly in
//     the kernel's fdatasync (docs/benchmarks/store.md, "Group commit"); at one commit per allowed 402 that
//     CPU was taken from the proxy on a two-core machine. For the same reason the applier runs on its own thread at nice 10
//     (Linux): on a busy machine its commits yield to the threads answering requests. The price is paid
//     when the machine is saturated: commits, and the releases waiting for them, slow down first.
//
// ReserveTicket and Commit return after step 2 (a lost commit loses only the split between reserved and
// spent, never budget). Reserve waits for step 3. An operation that finds maxQueued operations queued waits
// for room before it is decided, so that an error always means nothing was queued.
// TakeTicket first waits for every queued operation (flush), so no ticket is taken before its reservation is
// durable. A power failure can lose only operations not yet applied; no payment was released for them, and
// their agents' retries find no ticket and are decided afresh.
//
// If a commit fails (a full or failing disk), the ledger stops: that operation and every later one fail, and
// nothing more is accepted until payguard is restarted; the journal then replays what it holds. Failing
// closed keeps the in-memory figures and the file from ever disagreeing in a way that could let a payment
// through.

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"sort"
	"sync"
	"sync/atomic"
	"time"

	bbolt "go.etcd.io/bbolt"

	"github.com/payguard/payguard/store"
)

// Journal operation kinds.
const (
	opReserve = "reserve"
	opCommit  = "commit"
	opSettle  = "settle" // a commit for less than the reservation: Amount is what was spent (an upto payment)
	opTrial   = "trial"  // a free-trial counter's new value (trial.go)
)

// ledgerOp is one journaled ledger operation. The exported fields and the ticket are its journal record
// (journalrecord.go).
type ledgerOp struct {
	Seq    uint64
	Kind   string
	Budget string
	Day    string
	ID     string // the reservation; a trial's client
	Amount int64  // micro-dollars; a trial's count after the call
	// Expires is a trial counter's expiry (unix ns).
	Expires int64

	ticket *store.Ticket // a reserve's ticket; nil without one
	// budgetKey and resKey are the keys of l.budgets and l.reservations a queued reserve or commit holds,
	// kept so that settling it builds neither again.
	budgetKey string
	resKey    resRef
	// replayed: read from a journal at Open, so the file may have it already (applyOp skips it then). An
	// operation queued by this process is new to the file: its reservation id was made for it and its
	// ticket id checked under the ledger's lock.
	replayed bool
	bad      error // a replayed record that cannot be applied (applyOp returns it)
	err      error // its batch's outcome, set under ledgerLog.mu once l.applied reaches Seq
}

// figures are a budget's spent and reserved amounts with every queued operation counted.
type figures struct {
	key             string // its key in ledgerLog.budgets (day+budget), which the operations on it keep
	spent, reserved int64
	refs            int // queued operations on this budget; the entry is dropped at zero
}

// resRef is a reservation's key in ledgerLog.reservations: its day and id, without building day+id.
type resRef struct{ day, id string }

// reserveAlloc is a reservation's queued operation, its ticket and its pending entry in one allocation:
// they are made together under the ledger's lock for every allowed 402 (issue 36, ticketstore).
type reserveAlloc struct {
	op     ledgerOp
	ticket store.Ticket
	res    pendingRes
}

// appendBudgetKey appends a budget's key (day+budget, as budgetKey) to b.
func appendBudgetKey(b []byte, budget, day string) []byte {
	return append(append(b, day...), budget...)
}

// pendingRes is a reservation with a queued operation on it.
type pendingRes struct {
	amount    int64
	budgetKey string
	committed bool
	refs      int
}

// ledgerLog is the state of the write path; mu guards every field but the journals' contents, which only
// enqueueLocked (under mu) appends to and only the applier truncates (for the journal it took under mu).
type ledgerLog struct {
	mu           sync.Mutex
	budgets      map[string]*figures    // budgetKey → figures, while operations on it are queued
	reservations map[resRef]*pendingRes // while operations on it are queued
	ticketIDs    map[string]struct{}    // ids of queued tickets, for the duplicate check
	trials       map[string]trialCount  // day+client, while operations on it are queued (trial.go)
	// trialSettled counts the counters dropped from trials once the file had them (settleTrialLocked): a
	// file read taken before the lock is still good if it has not moved since (fileTrial). Written under mu.
	trialSettled atomic.Uint64
	queue        []*ledgerOp
	last         *ledgerOp // the newest operation enqueued: waiting for it waits for all
	seq          uint64
	// applied is the Seq of the newest operation whose batch was applied (or failed); applyBatch closes
	// batchDone and makes a new one each time it moves. A waiter for an operation waits on batchDone until
	// applied reaches the operation's Seq: one channel per commit instead of one per operation.
	applied   uint64
	batchDone chan struct{}
	// maxTicketID is at least every ticket id in the file and in the queue (in bbolt's byte order): an id
	// above it is free without a read transaction (ticketIDFreeLocked). The proxy's ids are time-ordered, so
	// nearly every new one is.
	maxTicketID string
	journals    [2]*os.File
	markMu      sync.Mutex // guards mark, markBuf and marked: every committing path writes the mark
	mark        *os.File   // the high-water mark (mark.go), written after each commit
	markBuf     [markSize]byte
	marked      uint64   // the transaction id the mark holds
	sizes       [2]int64 // bytes in each journal, to undo a short write
	cur         int      // the journal new operations go to; the applier takes the other one's turn
	broken      error    // a commit failed: the ledger refuses everything until a restart
	journalErr  error    // the last journal write failed (a full disk); cleared by a later write (health.go)
	closed      bool
	wake        chan struct{} // capacity 1: the applier has work
	urgent      chan struct{} // capacity 1: someone waits for the next commit
	delay       time.Duration // Options.CommitDelay
	idlePurge   time.Duration // how often an idle applier runs the purge (purgeEvery; tests shorten it)
	idlePurged  func()        // tests: called after each idle purge (Options.idlePurged)
	stopped     chan struct{} // closed when the applier has returned
	failApply   error         // tests: fail the next commits with this error
	applyGate   chan struct{} // tests: if set, each commit waits for a value from it
	records     recordEncoder // builds each operation's journal record (under mu)
	nextRelease int64         // unix ns before which no lease is due (release.go); 0: look in the file
	lastRelease time.Time     // the applier's last release (release.go)
}

var errClosed = errors.New("store/bolt: store is closed")

// journalPath is journal i of the store at path.
func journalPath(path string, i int) string { return fmt.Sprintf("%s-journal-%d", path, i) }

// maxQueued bounds the operations waiting for a commit: an operation that finds this many queued waits
// for room before it is decided, so a disk slower than the decisions holds the proxy back instead of the
// queue growing without bound.
const maxQueued = 4096

// openLedger opens the journals of the store at path, applies what they hold to the file (idempotently: an
// operation the file already has is skipped), empties them and starts the applier.
func (s *Store) openLedger(path string) error {
	l := &s.log
	l.budgets = map[string]*figures{}
	l.reservations = map[resRef]*pendingRes{}
	l.ticketIDs = map[string]struct{}{}
	l.trials = map[string]trialCount{}
	l.wake = make(chan struct{}, 1)
	l.urgent = make(chan struct{}, 1)
	l.stopped = make(chan struct{})
	l.batchDone = make(chan struct{})
	if l.idlePurge <= 0 {
		l.idlePurge = purgeEvery
	}
	var ops []*ledgerOp
	for i := range l.journals {
		f, err := os.OpenFile(journalPath(path, i), os.O_RDWR|os.O_CREATE|os.O_APPEND, 0o600)
		if err != nil {
			s.closeJournals()
			return fmt.Errorf("store/bolt: opening the journal: %w", err)
		}
		l.journals[i] = f
		data, err := io.ReadAll(f)
		if err != nil {
			s.closeJournals()
			return fmt.Errorf("store/bolt: reading the journal %s: %w", f.Name(), err)
		}
		ops = append(ops, readJournal(data)...)
	}
	for _, op := range ops {
		op.replayed = true
	}
	sort.Slice(ops, func(i, j int) bool { return ops[i].Seq < ops[j].Seq })
	if len(ops) > 0 {
		l.seq = ops[len(ops)-1].Seq
		err := s.db.Update(func(tx *bbolt.Tx) error { return applyOps(tx, ops) })
		if err != nil {
			s.closeJournals()
			return fmt.Errorf("store/bolt: replaying the journal: %w", err)
		}
	}
	err := s.db.View(func(tx *bbolt.Tx) error {
		if k, _ := tx.Bucket(bucketTicketIDs).Cursor().Last(); k != nil {
			l.maxTicketID = string(k)
		}
		return nil
	})
	if err != nil {
		s.closeJournals()
		return fmt.Errorf("store/bolt: reading the ticket ids: %w", err)
	}
	l.markMu.Lock()
	l.mark, err = openMark(path)
	l.markMu.Unlock()
	if err != nil {
		s.closeJournals()
		return err
	}
	if err := s.markNow(); err != nil { // the replay's commit, or the file as it was opened
		s.closeJournals()
		return err
	}
	for _, f := range l.journals {
		if err := f.Truncate(0); err != nil {
			s.closeJournals()
			return fmt.Errorf("store/bolt: emptying the journal: %w", err)
		}
	}
	go s.applyLoop()
	return nil
}

func (s *Store) closeJournals() {
	for i, f := range s.log.journals {
		if f != nil {
			f.Close()
			s.log.journals[i] = nil
		}
	}
	s.log.markMu.Lock()
	if s.log.mark != nil {
		s.log.mark.Close()
		s.log.mark = nil
	}
	s.log.markMu.Unlock()
}

// closeLedger applies what is queued, stops the applier and closes the journals.
func (s *Store) closeLedger() {
	l := &s.log
	l.mu.Lock()
	if l.closed {
		l.mu.Unlock()
		return
	}
	l.closed = true
	l.mu.Unlock()
	s.signal()
	s.hurry()
	<-l.stopped
	s.closeJournals()
}

func (s *Store) signal() {
	select {
	case s.log.wake <- struct{}{}:
	default:
	}
}

// hurry tells the applier that someone waits for its next commit.
func (s *Store) hurry() {
	select {
	case s.log.urgent <- struct{}{}:
	default:
	}
}

// budgetLocked is the budget's figures with every queued operation counted, key its key (budgetKey); l.mu
// is held. Figures not in the map have no queued operation, so the file has them whole. key is only read:
// a caller may build it on its stack.
func (s *Store) budgetLocked(key []byte) (*figures, error) {
	if f := s.log.budgets[string(key)]; f != nil {
		return f, nil
	}
	f := &figures{key: string(key)}
	err := s.db.View(func(tx *bbolt.Tx) error {
		f.spent, f.reserved = readBudget(tx.Bucket(bucketBudgets), []byte(f.key))
		return nil
	})
	return f, err
}

// reservationLocked is a reservation as it will be once the queue is applied, or nil if there is none;
// l.mu is held.
func (s *Store) reservationLocked(day, id string) (*pendingRes, error) {
	if r := s.log.reservations[resRef{day, id}]; r != nil {
		return r, nil
	}
	var r *pendingRes
	err := s.db.View(func(tx *bbolt.Tx) error {
		if rec := tx.Bucket(bucketReservations).Get([]byte(day + id)); len(rec) >= 9 && rec[8] != resReleased {
			r = &pendingRes{amount: int64(binary.BigEndian.Uint64(rec[:8])), committed: rec[8] == 1,
				budgetKey: string(rec[9:])}
		}
		return nil
	})
	return r, err
}

// usableLocked reports why the ledger takes no operation now, if it does not; l.mu is held.
func (s *Store) usableLocked() error {
	if s.log.broken != nil {
		return s.log.broken
	}
	if s.log.closed {
		return errClosed
	}
	return nil
}

// enqueueLocked journals op and queues it for the applier; l.mu is held. On error nothing was queued and
// the journal is as it was.
func (s *Store) enqueueLocked(op *ledgerOp) error {
	l := &s.log
	op.Seq = l.seq + 1
	rec, err := l.records.record(op)
	if err != nil {
		return err
	}
	f := l.journals[l.cur]
	if _, err := f.Write(rec); err != nil {
		f.Truncate(l.sizes[l.cur]) // a torn record would hide the ones after it from the replay
		l.journalErr = fmt.Errorf("store/bolt: writing the journal: %w", err)
		return l.journalErr
	}
	l.journalErr = nil
	l.sizes[l.cur] += int64(len(rec))
	l.seq = op.Seq
	l.queue = append(l.queue, op)
	l.last = op
	s.signal()
	return nil
}

// roomLocked waits, if maxQueued operations are queued, until there is room; l.mu is held on entry and on
// return (it is released while waiting). It runs before an operation is decided, so that a caller whose
// wait fails (ctx, a stopped ledger) has queued nothing: once journaled, an operation is reported done.
func (s *Store) roomLocked(ctx context.Context) error {
	l := &s.log
	for len(l.queue) >= maxQueued {
		last := l.last
		l.mu.Unlock()
		err := s.wait(ctx, last)
		l.mu.Lock()
		if err != nil {
			return err
		}
	}
	return s.usableLocked()
}

// reserve decides and queues a reservation (with its ticket t, encoded as tv, if t is not nil). Over the cap
// it is ErrBudgetExceeded and nothing is queued; on any error nothing is.
func (s *Store) reserve(ctx context.Context, budget, day, id string, amountMicros, capMicros int64, t *store.Ticket) (*ledgerOp, error) {
	l := &s.log
	l.mu.Lock()
	defer l.mu.Unlock()
	if err := s.usableLocked(); err != nil {
		return nil, err
	}
	if err := s.roomLocked(ctx); err != nil {
		return nil, err
	}
	var kb [64]byte
	key := appendBudgetKey(kb[:0], budget, day)
	f, err := s.budgetLocked(key)
	if err != nil {
		return nil, err
	}
	if !store.Fits(f.spent, f.reserved, amountMicros, capMicros) {
		// Leases due may be what fills the budget: release them and decide again.
		if n, err := s.releaseDueLocked(ctx, s.now()); err != nil {
			return nil, err
		} else if n > 0 {
			if err := s.roomLocked(ctx); err != nil { // the lock was let go while waiting
				return nil, err
			}
			if f, err = s.budgetLocked(key); err != nil {
				return nil, err
			}
		}
	}
	if !store.Fits(f.spent, f.reserved, amountMicros, capMicros) {
		return nil, fmt.Errorf("%w: budget %s on %s: spent %d + reserved %d + %d > cap %d",
			store.ErrBudgetExceeded, budget, day, f.spent, f.reserved, amountMicros, capMicros)
	}
	if t != nil {
		if err := s.ticketIDFreeLocked(t.ID); err != nil {
			return nil, err
		}
	}
	a := &reserveAlloc{op: ledgerOp{Kind: opReserve, Budget: budget, Day: day, ID: id, Amount: amountMicros,
		budgetKey: f.key, resKey: resRef{day, id}}}
	op := &a.op
	if t != nil {
		a.ticket = *t // the applier's, until the next commit; the caller's may change
		op.ticket = &a.ticket
	}
	if err := s.enqueueLocked(op); err != nil {
		return nil, err
	}
	f.reserved += amountMicros
	f.refs++
	l.budgets[f.key] = f
	a.res = pendingRes{amount: amountMicros, budgetKey: f.key, refs: 1}
	l.reservations[op.resKey] = &a.res
	if t != nil {
		l.ticketIDs[t.ID] = struct{}{}
		if t.ID > l.maxTicketID {
			l.maxTicketID = t.ID
		}
		s.noteTicketLocked(t.ExpiresAt)
	}
	return op, nil
}

func (s *Store) ticketIDFreeLocked(id string) error {
	if id > s.log.maxTicketID {
		return nil // above every id in the file and the queue
	}
	if _, queued := s.log.ticketIDs[id]; queued {
		return fmt.Errorf("%w: ticket %s already exists", store.ErrConflict, id)
	}
	return s.db.View(func(tx *bbolt.Tx) error { return ticketIDFree(tx, id) })
}

// commit queues moving a reservation from reserved to spent; a reservation committed before is left as it
// is. A reservation unknown under that budget and day is ErrNotFound; on any error nothing is queued.
func (s *Store) commit(ctx context.Context, budget, day, id string, settled int64) error {
	l := &s.log
	l.mu.Lock()
	defer l.mu.Unlock()
	if err := s.usableLocked(); err != nil {
		return err
	}
	if err := s.roomLocked(ctx); err != nil {
		return err
	}
	var kb [64]byte
	key := appendBudgetKey(kb[:0], budget, day)
	r, err := s.reservationLocked(day, id)
	if err != nil {
		return err
	}
	if r == nil || r.budgetKey != string(key) {
		return store.NoReservation(budget, day, id)
	}
	if r.committed {
		return nil
	}
	op := &ledgerOp{Kind: opCommit, Budget: budget, Day: day, ID: id, budgetKey: r.budgetKey, resKey: resRef{day, id}}
	spent := r.amount
	if settled >= 0 {
		if settled > r.amount {
			return store.SettledAbove(id, settled, r.amount)
		}
		op.Kind, op.Amount, spent = opSettle, settled, settled
	}
	f, err := s.budgetLocked(key)
	if err != nil {
		return err
	}
	if err := s.enqueueLocked(op); err != nil {
		return err
	}
	f.spent += spent
	f.reserved -= r.amount
	f.refs++
	l.budgets[f.key] = f
	r.committed = true
	r.refs++
	l.reservations[op.resKey] = r
	return nil
}

// wait returns op's outcome once it is applied, or ctx's error first. A nil op has nothing to wait for.
func (s *Store) wait(ctx context.Context, op *ledgerOp) error {
	if op == nil {
		return nil
	}
	l := &s.log
	for {
		l.mu.Lock()
		if l.applied >= op.Seq {
			err := op.err
			l.mu.Unlock()
			return err
		}
		done := l.batchDone
		l.mu.Unlock()
		// Again after a commit that did not hold op (it was queued while that one was being written): op
		// is in the next batch, which is then waited for too.
		s.hurry()
		select {
		case <-done:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// flush waits until every operation queued before the call is applied (durable in the file).
func (s *Store) flush(ctx context.Context) error {
	s.log.mu.Lock()
	last, broken := s.log.last, s.log.broken
	s.log.mu.Unlock()
	if broken != nil {
		return broken
	}
	return s.wait(ctx, last)
}

// applyLoop is the applier: it commits the queued operations, all at once, until the store is closed and
// the queue is empty.
func (s *Store) applyLoop() {
	l := &s.log
	defer close(l.stopped)
	lowerApplierPriority()
	timer := time.NewTimer(time.Hour)
	timer.Stop()
	idle := time.NewTicker(l.idlePurge)
	defer idle.Stop()
	lastDrop := time.Now()
	for {
		l.mu.Lock()
		empty, closed := len(l.queue) == 0, l.closed
		l.mu.Unlock()
		if empty {
			if closed {
				return
			}
			select {
			case <-l.wake:
			case <-idle.C:
				s.purgeWhileIdle()
				s.dropMapped()
			}
			continue
		}
		if l.delay > 0 && !closed {
			timer.Reset(l.delay)
			select {
			case <-timer.C:
			case <-l.urgent:
				timer.Stop()
			}
		}
		// This commit answers whoever asked so far; one who asks later asks for the next one (their
		// operation was queued before they asked, so it is in this batch or the next).
		select {
		case <-l.urgent:
		default:
		}
		l.mu.Lock()
		// Every queued operation is in journal j and nothing else is; new ones go to the other journal, which
		// the previous batch left empty.
		batch, j := l.queue, l.cur
		l.queue, l.cur = nil, 1-j
		failApply, broken, gate := l.failApply, l.broken, l.applyGate
		l.mu.Unlock()
		if gate != nil {
			<-gate
		}
		s.applyBatch(batch, j, failApply, broken)
		if now := time.Now(); now.Sub(lastDrop) >= dropMappedEvery {
			lastDrop = now
			s.dropMapped()
		}
	}
}

// dropMappedEvery is how often a busy applier lets go of the file's mapped pages (mapped_linux.go): after
// it, the transactions of the next few seconds map again only the pages they read.
const dropMappedEvery = 5 * time.Second

// purgeWhileIdle runs the periodic purge when nothing else writes. Every write transaction already purges
// at most once per purgeEvery, but a store nobody writes to would keep expired entries for as long as it
// stays idle, and SPEC §8.4 deletes a free-trial counter (a client's IP address) 48 hours after the day's first
// call, not at the next call after that. A failure changes nothing that was stored and is left to the next
// try; a disk that fails for good stops the ledger at its next commit.
func (s *Store) purgeWhileIdle() {
	_ = s.db.Update(func(tx *bbolt.Tx) error { return s.maybePurge(tx, s.now()) })
	s.log.mu.Lock()
	s.releasePeriodicallyLocked()
	s.log.mu.Unlock()
	if s.log.idlePurged != nil {
		s.log.idlePurged()
	}
}

// applyBatch commits batch, the operations journaled in journal j, and settles them.
func (s *Store) applyBatch(batch []*ledgerOp, j int, failApply, broken error) {
	l := &s.log
	err := broken
	if err == nil {
		err = failApply
	}
	if err == nil {
		var txid uint64 // this commit's transaction, for the mark
		err = s.db.Update(func(tx *bbolt.Tx) error {
			txid = uint64(tx.ID())
			if err := s.maybePurge(tx, s.now()); err != nil {
				return err
			}
			return applyOps(tx, batch)
		})
		if err == nil {
			err = s.mark(txid)
		}
	}
	if err == nil {
		// The file has the batch: its journal records are spent. If emptying fails, they stay and are
		// skipped by the replay, which is idempotent.
		if l.journals[j].Truncate(0) == nil {
			l.mu.Lock()
			l.sizes[j] = 0
			l.mu.Unlock()
		}
	} else {
		err = fmt.Errorf("store/bolt: the ledger could not be written and takes nothing until payguard restarts: %w", err)
	}
	l.mu.Lock()
	if err == nil {
		for _, op := range batch {
			s.settleLocked(op)
		}
	} else {
		for _, op := range batch {
			op.err = err
		}
		if l.broken == nil {
			// The figures keep counting the failed operations: they are in the journal, which the restart replays.
			l.broken = err
		}
	}
	if len(batch) > 0 {
		l.applied = batch[len(batch)-1].Seq
	}
	close(l.batchDone)
	l.batchDone = make(chan struct{})
	if err == nil {
		s.releasePeriodicallyLocked()
	}
	l.mu.Unlock()
}

// settleLocked drops an applied op's hold on the in-memory figures; l.mu is held.
func (s *Store) settleLocked(op *ledgerOp) {
	l := &s.log
	if op.Kind == opTrial {
		s.settleTrialLocked(op)
		return
	}
	if f := l.budgets[op.budgetKey]; f != nil {
		if f.refs--; f.refs <= 0 {
			delete(l.budgets, op.budgetKey)
		}
	}
	if r := l.reservations[op.resKey]; r != nil {
		if r.refs--; r.refs <= 0 {
			delete(l.reservations, op.resKey)
		}
	}
	if op.ticket != nil {
		delete(l.ticketIDs, op.ticket.ID)
	}
}

// applyOps writes ops in tx, in order.
func applyOps(tx *bbolt.Tx, ops []*ledgerOp) error {
	w := batchWrites{budgetWrites: budgetWrites{b: tx.Bucket(bucketBudgets), figs: map[string]*[2]int64{}}}
	for _, op := range ops {
		if err := applyOp(tx, &w, op); err != nil {
			return err
		}
	}
	return w.flush()
}

// budgetWrites gathers the changes a batch makes to the budgets' figures (spent, reserved), so that each
// budget is read and written once per commit instead of once per operation: two searches of the budgets
// bucket per operation were a fifth of the applier's bbolt work on the 402 path.
type budgetWrites struct {
	b    *bbolt.Bucket
	figs map[string]*[2]int64
}

// figures are a budget's spent and reserved as the batch has them so far.
func (w *budgetWrites) figures(key []byte) *[2]int64 {
	if f := w.figs[string(key)]; f != nil {
		return f
	}
	spent, reserved := readBudget(w.b, key)
	f := &[2]int64{spent, reserved}
	w.figs[string(key)] = f
	return f
}

// flush writes the figures the batch changed.
func (w *budgetWrites) flush() error {
	for k, f := range w.figs {
		if err := writeBudget(w.b, []byte(k), f[0], f[1]); err != nil {
			return err
		}
	}
	return nil
}

// batchWrites is what one commit's operations share in its transaction (issue 36, ticketstore): the
// budgets' figures, each written once; each ticket key's bucket and shared option, looked up once; and the
// memory the keys and values they put are built in. bbolt copies a key on Put but keeps the value slice
// itself until the commit, so keys are built in buf, reused, and values are copied into arena, whose
// chunks are never written over during the transaction: a ticket's four puts allocated eight small values
// and keys of their own, and the batch's garbage was the applier's largest share of the process's.
type batchWrites struct {
	budgetWrites
	keys  map[string]*keyBucket
	arena []byte
	buf   []byte
}

// keyBucket is a ticket key's bucket in the batch's transaction and its shared option (nil: none yet).
type keyBucket struct {
	b      *bbolt.Bucket
	option []byte
}

// arenaChunk is the size of the arena's chunks: a 402's values take about 400 bytes.
const arenaChunk = 4 << 10

// keep copies v into the arena and returns the copy, which nothing writes over until the transaction ends.
func (w *batchWrites) keep(v []byte) []byte {
	if cap(w.arena)-len(w.arena) < len(v) {
		w.arena = make([]byte, 0, max(arenaChunk, len(v)))
	}
	n := len(w.arena)
	w.arena = append(w.arena, v...)
	return w.arena[n:len(w.arena):len(w.arena)]
}

// key is the bucket of ticket key in tx, created if need be, with its shared option.
func (w *batchWrites) key(tx *bbolt.Tx, key string) (*keyBucket, error) {
	if k := w.keys[key]; k != nil {
		return k, nil
	}
	b, err := tx.Bucket(bucketTickets).CreateBucketIfNotExists([]byte(key))
	if err != nil {
		return nil, err
	}
	b.FillPercent = appendFill
	k := &keyBucket{b: b, option: b.Get(optionKey)}
	if w.keys == nil {
		w.keys = map[string]*keyBucket{}
	}
	w.keys[key] = k
	return k, nil
}

// applyOp writes one operation in tx, its budget's figures in w. It is idempotent, for the replay: a
// reservation the file has is not written again, and committing is a no-op for a committed or unknown
// reservation.
func applyOp(tx *bbolt.Tx, w *batchWrites, op *ledgerOp) error {
	if op.bad != nil {
		return op.bad
	}
	if op.Kind == opTrial {
		return applyTrial(tx, op)
	}
	// The budget's key (day+budget) is the tail of the reservation's record; the reservation's key
	// (day+id) is built in w.buf after it. Whatever a key or value is built in becomes w.buf, so the buffer
	// keeps what it grew to.
	rec := binary.BigEndian.AppendUint64(w.buf[:0], uint64(op.Amount))
	rec = append(rec, resOpen)
	rec = append(append(rec, op.Day...), op.Budget...)
	key := rec[9:]
	resKey := append(append(rec[len(rec):], op.Day...), op.ID...)
	w.buf = resKey[:0:cap(resKey)]
	res := tx.Bucket(bucketReservations)
	switch op.Kind {
	case opReserve:
		if op.replayed && res.Get(resKey) != nil {
			return nil
		}
		rec = w.keep(rec)
		w.figures(rec[9:])[1] += op.Amount
		res.FillPercent = appendFill // day + time-ordered id
		if err := res.Put(resKey, rec); err != nil {
			return err
		}
		t := op.ticket
		if t == nil {
			return nil
		}
		if op.replayed && ticketIDFree(tx, t.ID) != nil {
			return nil // checked when queued; kept from failing the whole batch should a record be replayed twice
		}
		return w.putTicket(tx, t)
	case opCommit, opSettle:
		rec := res.Get(resKey)
		if len(rec) < 9 || string(rec[9:]) != string(key) || rec[8] != resOpen {
			return nil
		}
		amount := int64(binary.BigEndian.Uint64(rec[:8]))
		settled := amount
		if op.Kind == opSettle && op.Amount >= 0 && op.Amount <= amount {
			settled = op.Amount // checked when queued; a replayed record out of range commits the whole amount
		}
		f := w.figures(key)
		f[0] += settled
		f[1] -= amount
		done := w.keep(rec)
		done[8] = resCommitted
		return res.Put(resKey, done)
	default:
		return fmt.Errorf("journal record %d: unknown operation %q (written by a newer payguard?)", op.Seq, op.Kind)
	}
}

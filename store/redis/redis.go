// Package redis is the store for a fleet: every payguard replica shares one Redis. Each operation that
// reads and then writes is one Lua script, which Redis runs atomically, so the daily cap holds across
// processes. Scripts never decide with Lua numbers (doubles): money is added with HINCRBY (exact int64 in
// Redis) and compared as decimal strings; times are compared as fixed-width sortable strings.
//
// Retention: ledger days expire after LedgerRetention, payment digests after their ttl, trial counters after
// their retention, tickets an hour after they expire, an endpoint's observation list its Retention.MaxAge after its last put
// (and trimmed to Retention.MaxPerURL on every put). Holds are kept.
package redis

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	goredis "github.com/redis/go-redis/v9"

	"github.com/payguard/payguard/store"
)

// LedgerRetention is how long a budget's day is kept after its last reservation (and at most an hour more:
// reserveLua sets the expiry once an hour, ledgerSlackMillis).
const LedgerRetention = store.LedgerRetention

// DefaultPrefix starts every key payguard writes.
const DefaultPrefix = "payguard:"

// ticketGrace keeps a ticket's keys a while past its expiry, so that clock skew between replicas does not
// drop a ticket early.
const ticketGrace = time.Hour

// Options configure Open.
type Options struct {
	// URL is a redis:// or rediss:// URL (it may carry a password and a database number).
	URL string
	// Prefix starts every key; empty means DefaultPrefix.
	Prefix string
	// Now is the clock for checks whose interface method takes no time (UseHold's expiry); nil means
	// time.Now. Digest and trial expiry use Redis's own clock.
	Now func() time.Time
	// AllowVolatile accepts a Redis whose CONFIG says it keeps nothing across a restart or may evict keys;
	// without it Open refuses one (a refused CONFIG is reported as unknown, not refused).
	AllowVolatile bool
	// InitIfEmpty creates the ledger epoch when the prefix has none (a new deployment's first start).
	// Without it a missing epoch is ErrNoEpoch: a wiped Redis never silently starts a fresh ledger.
	InitIfEmpty bool

	skipEpoch bool // InitEpoch opens without reading the epoch it is about to write
}

// Store implements store.Store on Redis.
type Store struct {
	rdb         *goredis.Client
	scripts     *batcher // runs every guarded script: concurrent ones share a round trip (batch.go)
	prefix      string
	now         func() time.Time
	epoch       string // the ledger epoch read at Open; every guarded script checks it (epoch.go)
	persistence Persistence
	// Keys every allowed 402 names, made once at Open rather than on each decision (issue 36, store402:
	// building keys was a tenth of the proxy's CPU on the Redis 402 path).
	epochK, alarmsK, alarmsAtK string
	tids                       [tidBuckets]string // tidBucket's names
}

var (
	_ store.Store   = (*Store)(nil)
	_ store.Sellers = (*Store)(nil)
	_ store.Warner  = (*Store)(nil)
)

// Open connects and pings; it fails when Redis cannot be reached, so a misconfigured fleet never starts.
func Open(ctx context.Context, opts Options) (*Store, error) {
	if opts.URL == "" {
		return nil, errors.New("store/redis: no URL")
	}
	ro, err := goredis.ParseURL(opts.URL)
	if err != nil {
		return nil, fmt.Errorf("store/redis: bad URL: %w", err)
	}
	if opts.Prefix == "" {
		opts.Prefix = DefaultPrefix
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	rdb := goredis.NewClient(ro)
	pingCtx, cancel := context.WithTimeout(ctx, 3*time.Second)
	defer cancel()
	if err := rdb.Ping(pingCtx).Err(); err != nil {
		rdb.Close()
		return nil, fmt.Errorf("store/redis: cannot reach redis at %s: %w", ro.Addr, err)
	}
	s := &Store{rdb: rdb, scripts: &batcher{rdb: rdb}, prefix: opts.Prefix, now: opts.Now, persistence: checkPersistence(pingCtx, rdb)}
	s.fixKeys()
	if problem := persistenceProblem(s.persistence); problem != "" && !opts.AllowVolatile {
		rdb.Close()
		return nil, fmt.Errorf("store/redis: refusing the redis at %s: %s", ro.Addr, problem)
	}
	if !opts.skipEpoch {
		if err := s.loadEpoch(pingCtx, opts.InitIfEmpty); err != nil {
			rdb.Close()
			return nil, err
		}
	}
	return s, nil
}

// Persistence is what Redis's CONFIG said at Open.
func (s *Store) Persistence() Persistence { return s.persistence }

// Warnings are facts about the store an operator should see in the log at start (store.Warner).
func (s *Store) Warnings() []string {
	var w []string
	p := s.persistence
	switch {
	case !p.Known:
		w = append(w, "redis "+p.String()+": payguard cannot tell whether this Redis keeps the ledger across a "+
			"restart; the ledger epoch still refuses payments after a wipe")
	case persistenceProblem(p) != "":
		w = append(w, "redis may forget the ledger ("+p.String()+"), accepted by store.redis.allow_volatile")
	case p.AppendOnly != "yes":
		w = append(w, "redis keeps RDB snapshots only ("+p.String()+"): a crash loses the spend since the last "+
			"snapshot; appendonly yes is safer")
	}
	return w
}

// Healthy reports whether the ledger epoch this store opened with is still in Redis (readiness).
func (s *Store) Healthy(ctx context.Context) error {
	v, err := s.rdb.Get(ctx, s.epochKey()).Result()
	if err != nil && !errors.Is(err, goredis.Nil) {
		return fmt.Errorf("store/redis: unreachable: %w", err)
	}
	if v != s.epoch {
		return s.lost(errors.New(ledgerLostReply))
	}
	return nil
}

// Close closes the connection pool.
func (s *Store) Close() error { return s.rdb.Close() }

// Client is the underlying client (tests use it to clean up their prefix).
func (s *Store) Client() *goredis.Client { return s.rdb }

func (s *Store) key(parts ...string) string {
	n := len(s.prefix)
	for _, p := range parts {
		n += len(p)
	}
	var b strings.Builder
	b.Grow(n)
	b.WriteString(s.prefix)
	for _, p := range parts {
		b.WriteString(p)
	}
	return b.String()
}

// fixKeys makes the keys Store keeps (epochK, alarmsK, alarmsAtK, tids).
func (s *Store) fixKeys() {
	s.epochK, s.alarmsK, s.alarmsAtK = s.key("epoch"), s.key("alarms"), s.key("alarms:at")
	for i := range s.tids {
		s.tids[i] = s.key("tids:", strconv.FormatUint(uint64(i), 16))
	}
}

// sortable renders t as 20 digits whose string order is time order (unix ns shifted to be non-negative).
func sortable(t time.Time) string {
	var b [20]byte
	return string(appendSortable(b[:0], t))
}

// appendSortable appends sortable(t) to b.
func appendSortable(b []byte, t time.Time) []byte {
	u := uint64(t.UnixNano()) ^ (1 << 63)
	var d [20]byte
	for i := len(d) - 1; i >= 0; i-- {
		d[i] = byte('0' + u%10)
		u /= 10
	}
	return append(b, d[:]...)
}

func fromSortable(s string) (time.Time, error) {
	u, err := strconv.ParseUint(s, 10, 64)
	if err != nil {
		return time.Time{}, err
	}
	return time.Unix(0, int64(u^(1<<63))).UTC(), nil
}

// millis rounds d up to whole milliseconds, at least one.
func millis(d time.Duration) int64 {
	ms := (d + time.Millisecond - 1) / time.Millisecond
	if ms < 1 {
		ms = 1
	}
	return int64(ms)
}

// Prefix is the key prefix in use.
func (s *Store) Prefix() string { return s.prefix }

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

// LedgerRetention is how long a budget's day is kept after its last reservation.
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
}

// Store implements store.Store on Redis.
type Store struct {
	rdb    *goredis.Client
	prefix string
	now    func() time.Time
}

var _ store.Store = (*Store)(nil)

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
	return &Store{rdb: rdb, prefix: opts.Prefix, now: opts.Now}, nil
}

// Close closes the connection pool.
func (s *Store) Close() error { return s.rdb.Close() }

// Client is the underlying client (tests use it to clean up their prefix).
func (s *Store) Client() *goredis.Client { return s.rdb }

func (s *Store) key(parts ...string) string { return s.prefix + strings.Join(parts, "") }

// sortable renders t as 20 digits whose string order is time order (unix ns shifted to be non-negative).
func sortable(t time.Time) string {
	return fmt.Sprintf("%020d", uint64(t.UnixNano())^(1<<63))
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

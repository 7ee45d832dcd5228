package redis

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	goredis "github.com/redis/go-redis/v9"

	"github.com/payguard/payguard/store"
)

// A Redis that is wiped (FLUSHALL, a restart without persistence, a failover to an empty replica) would
// otherwise start every budget's day again from zero and forget every payment digest and ticket, silently.
// The ledger epoch guards against that at the depth of the store: a key (<prefix>epoch) written once, when a
// deployment is initialized, that never expires. Open reads it and every script that reads or changes the
// ledger, tickets, payment digests, trial counters or holds checks it first, inside the same atomic script:
// when it is gone or changed the script changes nothing and fails with ledgerLostReply, which the Go side
// turns into store.ErrLedgerLost. Plain reads of holds read it in the same round trip (epochAnd). A wipe between two operations is therefore caught by the next one, on
// every replica, and the store keeps refusing until an operator acts (InitEpoch with replace, i.e.
// `payguard store reinit --confirm`) and restarts the replicas.

// ledgerLostReply is the error a guarded script returns; Redis prefixes nothing to it.
const ledgerLostReply = "PAYGUARD_LEDGER_LOST"

// epochGuard starts every guarded script. The epoch key is the script's last key and the expected epoch its
// last argument, so that each script's own KEYS and ARGV keep their positions.
const epochGuard = `
if redis.call('GET', KEYS[#KEYS]) ~= ARGV[#ARGV] then
  return redis.error_reply('` + ledgerLostReply + `')
end
`

// guarded is a script whose body runs only while the epoch is the one this store opened with.
func guarded(body string) *goredis.Script { return goredis.NewScript(epochGuard + body) }

func (s *Store) epochKey() string { return s.epochK }

// run runs a guarded script with the epoch key and value appended.
func (s *Store) run(ctx context.Context, sc *goredis.Script, keys []string, args ...any) *goredis.Cmd {
	keys = append(keys[:len(keys):len(keys)], s.epochKey())
	args = append(args[:len(args):len(args)], s.epoch)
	return s.scripts.run(ctx, sc, keys, args)
}

// runOwned is run for keys and args the caller made for this call alone: the epoch's key and value are
// appended in place (in the room left for them) instead of to copies.
func (s *Store) runOwned(ctx context.Context, sc *goredis.Script, keys []string, args []any) *goredis.Cmd {
	return s.scripts.run(ctx, sc, append(keys, s.epochKey()), append(args, s.epoch))
}

// lost maps the guard's reply to store.ErrLedgerLost and passes every other error through.
func (s *Store) lost(err error) error {
	if err != nil && strings.Contains(err.Error(), ledgerLostReply) {
		return fmt.Errorf("%w: the redis ledger under prefix %q was wiped or replaced since this process opened it "+
			"(epoch %s); spend, replay memory and tickets recorded before are gone, so every payment is refused "+
			"until an operator runs `payguard store reinit --confirm` and restarts the replicas", store.ErrLedgerLost, s.prefix, s.epoch)
	}
	return err
}

// ErrNoEpoch is Open's error when the prefix holds no ledger epoch: a new deployment, or a wiped one.
var ErrNoEpoch = errors.New("store/redis: no payguard ledger epoch")

// loadEpoch reads the epoch at Open; with init set it creates one when there is none (never replacing one).
func (s *Store) loadEpoch(ctx context.Context, init bool) error {
	if init {
		if _, err := s.rdb.SetNX(ctx, s.epochKey(), newEpoch("init"), 0).Result(); err != nil {
			return fmt.Errorf("store/redis: create the ledger epoch: %w", err)
		}
	}
	v, err := s.rdb.Get(ctx, s.epochKey()).Result()
	if errors.Is(err, goredis.Nil) {
		return fmt.Errorf("%w under prefix %q: either this is a new deployment (run `payguard store init` once, "+
			"or set store.redis.init_if_empty: true) or the Redis was wiped or restarted without persistence "+
			"and the day's spend is lost (check it, then `payguard store reinit --confirm`)", ErrNoEpoch, s.prefix)
	}
	if err != nil {
		return fmt.Errorf("store/redis: read the ledger epoch: %w", err)
	}
	s.epoch = v
	return nil
}

// newEpoch is a fresh epoch value: a unique id, how it was made and when (for an operator reading it).
func newEpoch(how string) string {
	return store.NewID() + " " + how + " " + time.Now().UTC().Format(time.RFC3339)
}

// InitEpoch writes the ledger epoch under opts' prefix: a new deployment's first (replace false; an epoch
// already there is kept and reported), or, with replace, a new one after a loss, which tells every running
// replica that opened the old one to keep refusing until it is restarted. It returns the epoch now stored and
// whether this call wrote it.
func InitEpoch(ctx context.Context, opts Options, replace bool) (epoch string, wrote bool, err error) {
	opts.AllowVolatile = true // the operator's command is about the epoch, not about persistence
	opts.skipEpoch = true
	s, err := Open(ctx, opts)
	if err != nil {
		return "", false, err
	}
	defer s.Close()
	how := "init"
	if replace {
		how = "reinit"
	}
	v := newEpoch(how)
	if replace {
		err = s.rdb.Set(ctx, s.epochKey(), v, 0).Err()
		wrote = err == nil
	} else {
		wrote, err = s.rdb.SetNX(ctx, s.epochKey(), v, 0).Result()
	}
	if err != nil {
		return "", false, fmt.Errorf("store/redis: write the ledger epoch: %w", err)
	}
	if !wrote {
		if v, err = s.rdb.Get(ctx, s.epochKey()).Result(); err != nil {
			return "", false, fmt.Errorf("store/redis: read the ledger epoch: %w", err)
		}
	}
	return v, wrote, nil
}

// Epoch is the ledger epoch this store opened with.
func (s *Store) Epoch() string { return s.epoch }

// epochAnd runs read, a plain read the scripts need not guard (it changes nothing), in one round trip with a
// read of the epoch, and refuses its result when the epoch is gone or changed: after a wipe a hold is
// reported lost, not "not found", and the approval API's list is an error, not an empty queue.
func (s *Store) epochAnd(ctx context.Context, read func(p goredis.Pipeliner)) error {
	var epoch *goredis.StringCmd
	_, err := s.rdb.Pipelined(ctx, func(p goredis.Pipeliner) error {
		epoch = p.Get(ctx, s.epochKey())
		read(p)
		return nil
	})
	if v, eerr := epoch.Result(); eerr == nil || errors.Is(eerr, goredis.Nil) {
		if v != s.epoch {
			return s.lost(errors.New(ledgerLostReply))
		}
	} else {
		return eerr
	}
	if err != nil && !errors.Is(err, goredis.Nil) {
		return err
	}
	return nil
}

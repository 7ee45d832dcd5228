package redis

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"time"

	goredis "github.com/redis/go-redis/v9"

	"github.com/payguard/payguard/store"
)

// Settlement alarms are one hash, host → store.Alarm JSON, and a sorted set beside it, host → raise time
// (unix ms), which finds the oldest when store.MaxAlarms are kept. Both are written in one script under the
// epoch guard (a wiped Redis has forgotten its alarms: it must fail closed, not answer "no alarm").

// raiseAlarmScript: KEYS alarms hash, its times; ARGV host, JSON, raised at (unix ms), max.
var raiseAlarmScript = guarded(`
if redis.call('HEXISTS', KEYS[1], ARGV[1]) == 0 and redis.call('HLEN', KEYS[1]) >= tonumber(ARGV[4]) then
  local oldest = redis.call('ZRANGE', KEYS[2], 0, 0)
  if oldest[1] then
    redis.call('HDEL', KEYS[1], oldest[1])
    redis.call('ZREM', KEYS[2], oldest[1])
  end
end
redis.call('HSET', KEYS[1], ARGV[1], ARGV[2])
redis.call('ZADD', KEYS[2], ARGV[3], ARGV[1])
return 1
`)

// alarmScript: KEYS alarms hash; ARGV host. The alarm's JSON, or false.
var alarmScript = guarded(`return redis.call('HGET', KEYS[1], ARGV[1])`)

// clearAlarmScript: KEYS alarms hash, its times; ARGV host.
var clearAlarmScript = guarded(`
redis.call('ZREM', KEYS[2], ARGV[1])
return redis.call('HDEL', KEYS[1], ARGV[1])
`)

// listAlarmsScript: KEYS alarms hash. Every alarm's JSON (at most store.MaxAlarms).
var listAlarmsScript = guarded(`return redis.call('HVALS', KEYS[1])`)

func (s *Store) alarmKeys() []string { return []string{s.alarmsK, s.alarmsAtK} }

// RaiseAlarm implements store.Alarms in one script.
func (s *Store) RaiseAlarm(ctx context.Context, a store.Alarm) error {
	if err := store.CheckAlarm(a); err != nil {
		return err
	}
	v, err := json.Marshal(a)
	if err != nil {
		return err
	}
	if err := s.run(ctx, raiseAlarmScript, s.alarmKeys(), a.Host, string(v),
		strconv.FormatInt(a.At.UnixMilli(), 10), store.MaxAlarms).Err(); err != nil {
		return fmt.Errorf("store/redis: raise alarm: %w", s.lost(err))
	}
	return nil
}

// Alarm implements store.Alarms.
func (s *Store) Alarm(ctx context.Context, host string, now time.Time) (store.Alarm, error) {
	v, err := s.run(ctx, alarmScript, s.alarmKeys()[:1], host).Text()
	if err == goredis.Nil {
		return store.Alarm{}, store.ErrNotFound
	}
	if err != nil {
		return store.Alarm{}, fmt.Errorf("store/redis: alarm: %w", s.lost(err))
	}
	return readAlarm(host, v, now)
}

// readAlarm is the alarm of host stored as v, ErrNotFound when it is no longer in force at now.
func readAlarm(host, v string, now time.Time) (store.Alarm, error) {
	var a store.Alarm
	if err := json.Unmarshal([]byte(v), &a); err != nil {
		return store.Alarm{}, fmt.Errorf("store/redis: alarm of %s unreadable: %w", host, err)
	}
	if !now.Before(a.Until) {
		return store.Alarm{}, store.ErrNotFound
	}
	return a, nil
}

// ClearAlarm implements store.Alarms.
func (s *Store) ClearAlarm(ctx context.Context, host string, now time.Time) error {
	if _, err := s.Alarm(ctx, host, now); err != nil {
		return err
	}
	if err := s.run(ctx, clearAlarmScript, s.alarmKeys(), host).Err(); err != nil {
		return fmt.Errorf("store/redis: clear alarm: %w", s.lost(err))
	}
	return nil
}

// ListAlarms implements store.Alarms.
func (s *Store) ListAlarms(ctx context.Context, now time.Time) ([]store.Alarm, error) {
	vals, err := s.run(ctx, listAlarmsScript, s.alarmKeys()[:1]).StringSlice()
	if err != nil {
		return nil, fmt.Errorf("store/redis: list alarms: %w", s.lost(err))
	}
	out := []store.Alarm{}
	for _, v := range vals {
		var a store.Alarm
		if err := json.Unmarshal([]byte(v), &a); err != nil {
			return nil, fmt.Errorf("store/redis: an alarm is unreadable: %w", err)
		}
		if now.Before(a.Until) {
			out = append(out, a)
		}
	}
	return out, nil
}

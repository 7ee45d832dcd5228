package memory

import (
	"context"

	"time"

	"github.com/payguard/payguard/store"
)

// RaiseAlarm implements store.Alarms.
func (s *Store) RaiseAlarm(ctx context.Context, a store.Alarm) error {
	if err := store.CheckAlarm(a); err != nil {
		return err
	}
	if err := s.lock(ctx); err != nil {
		return err
	}
	defer s.mu.Unlock()
	if _, ok := s.alarms[a.Host]; !ok && len(s.alarms) >= store.MaxAlarms {
		oldest := ""
		for h, x := range s.alarms {
			if oldest == "" || x.At.Before(s.alarms[oldest].At) {
				oldest = h
			}
		}
		delete(s.alarms, oldest)
	}
	s.alarms[a.Host] = a
	return nil
}

// Alarm implements store.Alarms.
func (s *Store) Alarm(ctx context.Context, host string, now time.Time) (store.Alarm, error) {
	if err := s.lock(ctx); err != nil {
		return store.Alarm{}, err
	}
	defer s.mu.Unlock()
	a, ok := s.alarms[host]
	if !ok || !now.Before(a.Until) {
		return store.Alarm{}, store.ErrNotFound
	}
	return a, nil
}

// ClearAlarm implements store.Alarms.
func (s *Store) ClearAlarm(ctx context.Context, host string, now time.Time) error {
	if err := s.lock(ctx); err != nil {
		return err
	}
	defer s.mu.Unlock()
	a, ok := s.alarms[host]
	delete(s.alarms, host)
	if !ok || !now.Before(a.Until) {
		return store.ErrNotFound
	}
	return nil
}

// ListAlarms implements store.Alarms.
func (s *Store) ListAlarms(ctx context.Context, now time.Time) ([]store.Alarm, error) {
	if err := s.lock(ctx); err != nil {
		return nil, err
	}
	defer s.mu.Unlock()
	out := []store.Alarm{}
	for h, a := range s.alarms {
		if !now.Before(a.Until) {
			delete(s.alarms, h)
			continue
		}
		out = append(out, a)
	}
	return out, nil
}

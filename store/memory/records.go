package memory

import (
	"bytes"
	"context"
	"fmt"
	"time"

	"github.com/payguard/payguard/store"
)

func cloneHold(h *store.Hold) store.Hold {
	c := *h
	c.Decision = bytes.Clone(h.Decision)
	return c
}

// CreateHold implements store.Holds; a duplicate id is ErrConflict.
func (s *Store) CreateHold(ctx context.Context, h store.Hold) error {
	if err := store.CheckNewHold(&h); err != nil {
		return err
	}
	if err := s.lock(ctx); err != nil {
		return err
	}
	defer s.mu.Unlock()
	if _, dup := s.holds[h.ID]; dup {
		return fmt.Errorf("%w: hold %s already exists", store.ErrConflict, h.ID)
	}
	c := cloneHold(&h)
	c.CreatedAt, c.ExpiresAt, c.ResolvedAt = c.CreatedAt.UTC(), c.ExpiresAt.UTC(), c.ResolvedAt.UTC()
	s.holds[h.ID] = &c
	s.holdOrder = append(s.holdOrder, h.ID)
	return nil
}

// GetHold implements store.Holds.
func (s *Store) GetHold(ctx context.Context, id string) (store.Hold, error) {
	if err := s.lock(ctx); err != nil {
		return store.Hold{}, err
	}
	defer s.mu.Unlock()
	h := s.holds[id]
	if h == nil {
		return store.Hold{}, fmt.Errorf("%w: hold %q", store.ErrNotFound, id)
	}
	return cloneHold(h), nil
}

// FindHold implements store.Holds: the hold with that key and the latest CreatedAt; among equal times the
// one created last.
func (s *Store) FindHold(ctx context.Context, key string) (store.Hold, error) {
	if err := s.lock(ctx); err != nil {
		return store.Hold{}, err
	}
	defer s.mu.Unlock()
	var best *store.Hold
	for _, id := range s.holdOrder {
		if h := s.holds[id]; h.Key == key && (best == nil || !h.CreatedAt.Before(best.CreatedAt)) {
			best = h
		}
	}
	if best == nil {
		return store.Hold{}, fmt.Errorf("%w: no hold with key %q", store.ErrNotFound, key)
	}
	return cloneHold(best), nil
}

// ListHolds implements store.Holds, in creation order.
func (s *Store) ListHolds(ctx context.Context, status string) ([]store.Hold, error) {
	if err := store.CheckHoldStatus(status); err != nil {
		return nil, err
	}
	if err := s.lock(ctx); err != nil {
		return nil, err
	}
	defer s.mu.Unlock()
	out := []store.Hold{}
	for _, id := range s.holdOrder {
		if h := s.holds[id]; status == "" || h.Status == status {
			out = append(out, cloneHold(h))
		}
	}
	return out, nil
}

// ResolveHold implements store.Holds (see store.ApplyResolve).
func (s *Store) ResolveHold(ctx context.Context, id, status, by, note string, at time.Time) (store.Hold, error) {
	return s.updateHold(ctx, id, func(h store.Hold) (store.Hold, bool, error) {
		return store.ApplyResolve(h, status, by, note, at)
	})
}

// UseHold implements store.Holds (see store.ApplyUse); expiry is judged by the store's clock.
func (s *Store) UseHold(ctx context.Context, id string) (store.Hold, error) {
	return s.updateHold(ctx, id, func(h store.Hold) (store.Hold, bool, error) {
		return store.ApplyUse(h, s.now())
	})
}

func (s *Store) updateHold(ctx context.Context, id string, apply func(store.Hold) (store.Hold, bool, error)) (store.Hold, error) {
	if err := s.lock(ctx); err != nil {
		return store.Hold{}, err
	}
	defer s.mu.Unlock()
	h := s.holds[id]
	if h == nil {
		return store.Hold{}, fmt.Errorf("%w: hold %q", store.ErrNotFound, id)
	}
	next, changed, err := apply(cloneHold(h))
	if changed {
		*h = next
	}
	if err != nil {
		return store.Hold{}, err
	}
	return cloneHold(h), nil
}

// ReserveTicket implements store.Tickets: both under one lock, so no caller sees one without the other.
func (s *Store) ReserveTicket(ctx context.Context, budget, day string, amountMicros, capMicros int64, t store.Ticket) (store.Ticket, error) {
	if err := store.CheckReserve(budget, day, amountMicros, capMicros); err != nil {
		return store.Ticket{}, err
	}
	t.Budget, t.Day, t.AmountMicros = budget, day, amountMicros
	if err := store.CheckTicket(&t); err != nil {
		return store.Ticket{}, err
	}
	if err := s.lock(ctx); err != nil {
		return store.Ticket{}, err
	}
	defer s.mu.Unlock()
	s.purgeLocked()
	if s.ticketIDs[t.ID] {
		return store.Ticket{}, fmt.Errorf("%w: ticket %s already exists", store.ErrConflict, t.ID)
	}
	id, err := s.reserveLocked(budget, day, amountMicros, capMicros)
	if err != nil {
		return store.Ticket{}, err
	}
	t.ReservationID = id
	t.ExpiresAt = t.ExpiresAt.UTC()
	kept := t
	kept.Option = bytes.Clone(t.Option) // the caller's slice stays the caller's
	s.ticketIDs[t.ID] = true
	s.tickets[t.Key] = append(s.tickets[t.Key], &kept)
	if s.nextRelease.IsZero() || t.ExpiresAt.Before(s.nextRelease) {
		s.nextRelease = t.ExpiresAt
	}
	return t, nil
}

// TakeTicket implements store.Tickets: newest means stored last.
func (s *Store) TakeTicket(ctx context.Context, key string, now time.Time) (store.Ticket, error) {
	if err := s.lock(ctx); err != nil {
		return store.Ticket{}, err
	}
	defer s.mu.Unlock()
	list := s.tickets[key]
	for i := len(list) - 1; i >= 0; i-- {
		t := list[i]
		if t.Used || t.ExpiresAt.Before(now) {
			continue
		}
		t.Used = true
		out := *t
		out.Option = bytes.Clone(t.Option)
		return out, nil
	}
	return store.Ticket{}, fmt.Errorf("%w: no unused, unexpired ticket with key %q", store.ErrNotFound, key)
}

// ForgetPaymentSeen implements store.Tickets.
func (s *Store) ForgetPaymentSeen(ctx context.Context, digest string) error {
	if err := store.CheckName("payment digest", digest); err != nil {
		return err
	}
	if err := s.lock(ctx); err != nil {
		return err
	}
	defer s.mu.Unlock()
	delete(s.seen, digest)
	return nil
}

// MarkPaymentSeen implements store.Tickets.
func (s *Store) MarkPaymentSeen(ctx context.Context, digest string, ttl time.Duration) error {
	if err := store.CheckName("payment digest", digest); err != nil {
		return err
	}
	if ttl <= 0 {
		return fmt.Errorf("%w: payment digest ttl %v must be positive", store.ErrInvalid, ttl)
	}
	if err := s.lock(ctx); err != nil {
		return err
	}
	defer s.mu.Unlock()
	now := s.now()
	if exp, ok := s.seen[digest]; ok && !exp.Before(now) {
		return fmt.Errorf("%w: payment %s was seen before", store.ErrAlreadyUsed, digest)
	}
	s.seen[digest] = now.Add(ttl)
	return nil
}

// TakeTrial implements store.Trial. The entry expires retention after the day's first call.
func (s *Store) TakeTrial(ctx context.Context, client, day string, limit int, retention time.Duration) (bool, int, error) {
	if err := store.CheckTrial(client, day, retention); err != nil {
		return false, 0, err
	}
	if err := s.lock(ctx); err != nil {
		return false, 0, err
	}
	defer s.mu.Unlock()
	s.purgeLocked()
	now := s.now()
	k := trialKey{client, day}
	e := s.trials[k]
	if e == nil || e.expires.Before(now) {
		e = &trialEntry{expires: now.Add(retention)}
		s.trials[k] = e
	}
	if e.count >= limit {
		return false, e.count, nil
	}
	e.count++
	return true, e.count, nil
}

// purgeLocked drops expired trial counters, payment digests and tickets, and ledger days older than
// store.LedgerRetention, at most once per purgeEvery.
func (s *Store) purgeLocked() {
	now := s.now()
	if now.Sub(s.lastPurge) < purgeEvery {
		return
	}
	s.lastPurge = now
	s.releaseLocked(now) // before the tickets go: an expired ticket's reservation leaves with it
	cutoff := store.Day(now.Add(-store.LedgerRetention))
	for k := range s.budgets {
		if k.day < cutoff {
			delete(s.budgets, k)
		}
	}
	for k, e := range s.trials {
		if e.expires.Before(now) {
			delete(s.trials, k)
		}
	}
	for d, exp := range s.seen {
		if exp.Before(now) {
			delete(s.seen, d)
		}
	}
	for k, d := range s.deliveries {
		if d.expires.Before(now) {
			delete(s.deliveries, k)
		}
	}
	for key, list := range s.tickets {
		kept := list[:0]
		for _, t := range list {
			if t.Used || t.ExpiresAt.Add(store.TicketReleaseGrace).Before(now) {
				delete(s.ticketIDs, t.ID)
				continue
			}
			kept = append(kept, t)
		}
		if len(kept) == 0 {
			delete(s.tickets, key)
		} else {
			s.tickets[key] = kept
		}
	}
}

// PutObservation implements store.Endpoints.
func (s *Store) PutObservation(ctx context.Context, o store.Observation, keep store.Retention) error {
	if err := store.CheckObservation(o); err != nil {
		return err
	}
	if err := store.CheckRetention(keep); err != nil {
		return err
	}
	if err := s.lock(ctx); err != nil {
		return err
	}
	defer s.mu.Unlock()
	o.ObservedAt = o.ObservedAt.UTC()
	o.Challenge, o.Metadata = bytes.Clone(o.Challenge), bytes.Clone(o.Metadata)
	o.Offers = append([]store.Offer(nil), o.Offers...)
	if o.Paid != nil {
		p := *o.Paid
		o.Paid = &p
	}
	list := append(s.obs[o.URL], o)
	if keep.MaxAge > 0 {
		cutoff := o.ObservedAt.Add(-keep.MaxAge)
		kept := list[:0]
		for _, x := range list {
			if !x.ObservedAt.Before(cutoff) {
				kept = append(kept, x)
			}
		}
		list = kept
	}
	if keep.MaxPerURL > 0 && len(list) > keep.MaxPerURL {
		list = append([]store.Observation(nil), list[len(list)-keep.MaxPerURL:]...)
	}
	s.obs[o.URL] = list
	if o.ObservedAt.After(s.updatedAt) {
		s.updatedAt = o.ObservedAt
	}
	return nil
}

// Observations implements store.Endpoints: every method's observations of url, oldest first.
func (s *Store) Observations(ctx context.Context, url string) ([]store.Observation, error) {
	if err := s.lock(ctx); err != nil {
		return nil, err
	}
	defer s.mu.Unlock()
	out := sortedObservations(s.obs[url])
	for i := range out {
		out[i].Challenge, out[i].Metadata = bytes.Clone(out[i].Challenge), bytes.Clone(out[i].Metadata)
		out[i].Offers = append([]store.Offer(nil), out[i].Offers...)
		if p := out[i].Paid; p != nil {
			c := *p
			out[i].Paid = &c
		}
	}
	return out, nil
}

// IndexUpdatedAt implements store.Endpoints.
func (s *Store) IndexUpdatedAt(ctx context.Context) (time.Time, error) {
	if err := s.lock(ctx); err != nil {
		return time.Time{}, err
	}
	defer s.mu.Unlock()
	return s.updatedAt, nil
}

package storetest

import (
	"bytes"
	"testing"
	"time"

	"github.com/payguard/payguard/store"
)

func newHold(id, key string, created, expires time.Time) store.Hold {
	return store.Hold{
		ID: id, Key: key, Method: "GET", URL: "https://seller.example/" + key,
		Decision:     []byte(`{"decision":"hold","reasons":["hold: amount $0.50 above hold threshold $0.25"]}`),
		AmountMicros: 500_000, CreatedAt: created, ExpiresAt: expires, Description: "Weather report for <city>\n",
	}
}

func sameHold(t *testing.T, what string, got, want store.Hold) {
	t.Helper()
	if got.ID != want.ID || got.Status != want.Status || got.Key != want.Key || got.Method != want.Method ||
		got.URL != want.URL || !bytes.Equal(got.Decision, want.Decision) || got.AmountMicros != want.AmountMicros ||
		!got.CreatedAt.Equal(want.CreatedAt) || !got.ExpiresAt.Equal(want.ExpiresAt) ||
		got.ResolvedBy != want.ResolvedBy || got.Note != want.Note || !got.ResolvedAt.Equal(want.ResolvedAt) ||
		got.Description != want.Description {
		t.Fatalf("%s:\n got %+v\nwant %+v", what, got, want)
	}
}

func testHoldCreateGet(t *testing.T, s store.Store) {
	h := newHold("h1", "GET https://seller.example/a", base, base.Add(time.Hour))
	must(t, "CreateHold", s.CreateHold(ctx, h))
	h.Status = store.HoldPending // an empty status is created pending
	got, err := s.GetHold(ctx, "h1")
	must(t, "GetHold", err)
	sameHold(t, "GetHold", got, h)

	wantErr(t, "CreateHold with a duplicate id", s.CreateHold(ctx, newHold("h1", "k", base, base)), store.ErrConflict)
	wantErr(t, "CreateHold without an id", s.CreateHold(ctx, newHold("", "k", base, base)), store.ErrInvalid)
	approved := newHold("h2", "k", base, base)
	approved.Status = store.HoldApproved
	wantErr(t, "CreateHold already approved", s.CreateHold(ctx, approved), store.ErrInvalid)
	_, err = s.GetHold(ctx, "missing")
	wantErr(t, "GetHold of an unknown id", err, store.ErrNotFound)
	_, err = s.GetHold(ctx, "h2")
	wantErr(t, "GetHold of a rejected hold", err, store.ErrNotFound)
	// The returned Decision is a copy: changing it changes nothing stored.
	got.Decision[0] = 'X'
	again, err := s.GetHold(ctx, "h1")
	must(t, "GetHold", err)
	sameHold(t, "GetHold after mutating a copy", again, h)
}

func testHoldFindNewest(t *testing.T, s store.Store) {
	_, err := s.FindHold(ctx, "k")
	wantErr(t, "FindHold with no holds", err, store.ErrNotFound)
	must(t, "create old", s.CreateHold(ctx, newHold("old", "k", base, base.Add(time.Hour))))
	must(t, "create new", s.CreateHold(ctx, newHold("new", "k", base.Add(time.Minute), base.Add(time.Hour))))
	// Created last but older: "newest" is by CreatedAt.
	must(t, "create late", s.CreateHold(ctx, newHold("late", "k", base.Add(-time.Minute), base.Add(time.Hour))))
	must(t, "create other", s.CreateHold(ctx, newHold("other", "k2", base.Add(time.Hour), base.Add(2*time.Hour))))
	got, err := s.FindHold(ctx, "k")
	must(t, "FindHold", err)
	if got.ID != "new" {
		t.Fatalf("FindHold = %s, want new (latest CreatedAt)", got.ID)
	}
	// Equal CreatedAt: the one created last wins.
	must(t, "create tie", s.CreateHold(ctx, newHold("tie", "k", base.Add(time.Minute), base.Add(time.Hour))))
	got, err = s.FindHold(ctx, "k")
	must(t, "FindHold", err)
	if got.ID != "tie" {
		t.Fatalf("FindHold = %s, want tie (same CreatedAt, created last)", got.ID)
	}
	// Status changes do not hide a hold from FindHold: the caller reads its status.
	_, err = s.ResolveHold(ctx, "tie", store.HoldDenied, "ops", "", base.Add(2*time.Minute))
	must(t, "ResolveHold", err)
	got, err = s.FindHold(ctx, "k")
	must(t, "FindHold", err)
	if got.ID != "tie" || got.Status != store.HoldDenied {
		t.Fatalf("FindHold = %s/%s, want tie/denied", got.ID, got.Status)
	}
	_, err = s.FindHold(ctx, "k3")
	wantErr(t, "FindHold of an unknown key", err, store.ErrNotFound)
}

func ids(hs []store.Hold) map[string]string {
	m := map[string]string{}
	for _, h := range hs {
		m[h.ID] = h.Status
	}
	return m
}

func testHoldList(t *testing.T, s store.Store) {
	all, err := s.ListHolds(ctx, "")
	must(t, "ListHolds on an empty store", err)
	if len(all) != 0 {
		t.Fatalf("ListHolds on an empty store = %v", all)
	}
	far := base.Add(24 * 365 * time.Hour)
	for _, id := range []string{"a", "b", "c", "d"} {
		must(t, "CreateHold "+id, s.CreateHold(ctx, newHold(id, "k-"+id, base, far)))
	}
	_, err = s.ResolveHold(ctx, "b", store.HoldApproved, "ops", "", base)
	must(t, "approve b", err)
	_, err = s.ResolveHold(ctx, "c", store.HoldDenied, "ops", "", base)
	must(t, "deny c", err)
	_, err = s.ResolveHold(ctx, "d", store.HoldApproved, "ops", "", base)
	must(t, "approve d", err)
	_, err = s.UseHold(ctx, "d")
	must(t, "use d", err)

	for status, want := range map[string]map[string]string{
		"":                 {"a": "pending", "b": "approved", "c": "denied", "d": "used"},
		store.HoldPending:  {"a": "pending"},
		store.HoldApproved: {"b": "approved"},
		store.HoldDenied:   {"c": "denied"},
		store.HoldUsed:     {"d": "used"},
		store.HoldExpired:  {},
	} {
		got, err := s.ListHolds(ctx, status)
		must(t, "ListHolds "+status, err)
		if g := ids(got); len(g) != len(want) || len(got) != len(want) {
			t.Fatalf("ListHolds(%q) = %v, want %v", status, g, want)
		} else {
			for id, st := range want {
				if g[id] != st {
					t.Fatalf("ListHolds(%q) = %v, want %v", status, g, want)
				}
			}
		}
	}
	_, err = s.ListHolds(ctx, "bogus")
	wantErr(t, "ListHolds with an unknown status", err, store.ErrInvalid)
}

func testHoldResolve(t *testing.T, s store.Store) {
	h := newHold("h", "k", base, base.Add(time.Hour))
	must(t, "CreateHold", s.CreateHold(ctx, h))
	_, err := s.ResolveHold(ctx, "h", store.HoldUsed, "ops", "", base)
	wantErr(t, "ResolveHold to used", err, store.ErrInvalid)
	_, err = s.ResolveHold(ctx, "h", store.HoldPending, "ops", "", base)
	wantErr(t, "ResolveHold to pending", err, store.ErrInvalid)
	_, err = s.ResolveHold(ctx, "missing", store.HoldApproved, "ops", "", base)
	wantErr(t, "ResolveHold of an unknown id", err, store.ErrNotFound)

	at := base.Add(10 * time.Minute)
	got, err := s.ResolveHold(ctx, "h", store.HoldApproved, "alice", "known seller", at)
	must(t, "ResolveHold", err)
	h.Status, h.ResolvedBy, h.Note, h.ResolvedAt = store.HoldApproved, "alice", "known seller", at
	sameHold(t, "ResolveHold result", got, h)
	stored, err := s.GetHold(ctx, "h")
	must(t, "GetHold", err)
	sameHold(t, "GetHold after ResolveHold", stored, h)

	for _, st := range []string{store.HoldApproved, store.HoldDenied} {
		_, err = s.ResolveHold(ctx, "h", st, "bob", "", at.Add(time.Minute))
		wantErr(t, "second ResolveHold to "+st, err, store.ErrConflict)
	}
	stored, err = s.GetHold(ctx, "h")
	must(t, "GetHold", err)
	sameHold(t, "GetHold after a refused second resolve", stored, h)
}

// Decision: an expired pending hold cannot be resolved. The call fails with ErrConflict and the hold is
// stored as HoldExpired, so an approver sees why.
func testHoldResolveExpired(t *testing.T, s store.Store) {
	must(t, "CreateHold", s.CreateHold(ctx, newHold("h", "k", base, base.Add(time.Hour))))
	// Exactly at ExpiresAt is still in time.
	must(t, "CreateHold edge", s.CreateHold(ctx, newHold("edge", "k2", base, base.Add(time.Hour))))
	_, err := s.ResolveHold(ctx, "edge", store.HoldApproved, "ops", "", base.Add(time.Hour))
	must(t, "ResolveHold at ExpiresAt", err)

	late := base.Add(time.Hour + time.Nanosecond)
	_, err = s.ResolveHold(ctx, "h", store.HoldApproved, "ops", "", late)
	wantErr(t, "ResolveHold after expiry", err, store.ErrConflict)
	got, err := s.GetHold(ctx, "h")
	must(t, "GetHold", err)
	if got.Status != store.HoldExpired || !got.ResolvedAt.Equal(late) || got.ResolvedBy != "" {
		t.Fatalf("expired hold stored as %+v, want status expired, resolved at %v, by nobody", got, late)
	}
	_, err = s.ResolveHold(ctx, "h", store.HoldDenied, "ops", "", late)
	wantErr(t, "ResolveHold of an expired hold", err, store.ErrConflict)
	_, err = s.UseHold(ctx, "h")
	wantErr(t, "UseHold of an expired hold", err, store.ErrConflict)
	exp, err := s.ListHolds(ctx, store.HoldExpired)
	must(t, "ListHolds expired", err)
	if len(exp) != 1 || exp[0].ID != "h" {
		t.Fatalf("ListHolds(expired) = %v, want [h]", ids(exp))
	}
}

func testHoldUse(t *testing.T, s store.Store) {
	far := time.Now().Add(time.Hour) // UseHold judges expiry by the store's clock
	for _, id := range []string{"p", "a", "d"} {
		must(t, "CreateHold "+id, s.CreateHold(ctx, newHold(id, "k", base, far)))
	}
	_, err := s.UseHold(ctx, "p")
	wantErr(t, "UseHold of a pending hold", err, store.ErrConflict)
	_, err = s.ResolveHold(ctx, "d", store.HoldDenied, "ops", "", time.Now())
	must(t, "deny", err)
	_, err = s.UseHold(ctx, "d")
	wantErr(t, "UseHold of a denied hold", err, store.ErrConflict)
	_, err = s.UseHold(ctx, "missing")
	wantErr(t, "UseHold of an unknown hold", err, store.ErrNotFound)

	_, err = s.ResolveHold(ctx, "a", store.HoldApproved, "ops", "ok", time.Now())
	must(t, "approve", err)
	got, err := s.UseHold(ctx, "a")
	must(t, "UseHold", err)
	if got.Status != store.HoldUsed || got.ResolvedBy != "ops" || got.Note != "ok" {
		t.Fatalf("UseHold = %+v, want used and the approval kept", got)
	}
	_, err = s.UseHold(ctx, "a")
	wantErr(t, "second UseHold", err, store.ErrAlreadyUsed)
	_, err = s.ResolveHold(ctx, "a", store.HoldDenied, "ops", "", base)
	wantErr(t, "ResolveHold of a used hold", err, store.ErrConflict)
	for id, want := range map[string]string{"p": store.HoldPending, "a": store.HoldUsed, "d": store.HoldDenied} {
		h, err := s.GetHold(ctx, id)
		must(t, "GetHold", err)
		if h.Status != want {
			t.Fatalf("hold %s is %s, want %s", id, h.Status, want)
		}
	}
}

// Decision: an approved hold past its ExpiresAt (by the store's clock) cannot be used: ErrConflict, and it
// is stored as HoldExpired.
func testHoldUseExpired(t *testing.T, s store.Store) {
	past := time.Now().Add(-time.Minute)
	must(t, "CreateHold", s.CreateHold(ctx, newHold("h", "k", past.Add(-time.Hour), past)))
	_, err := s.ResolveHold(ctx, "h", store.HoldApproved, "ops", "", past.Add(-time.Second))
	must(t, "approve before expiry", err)
	_, err = s.UseHold(ctx, "h")
	wantErr(t, "UseHold after expiry", err, store.ErrConflict)
	h, err := s.GetHold(ctx, "h")
	must(t, "GetHold", err)
	if h.Status != store.HoldExpired {
		t.Fatalf("approved hold used after expiry is %s, want expired", h.Status)
	}
	_, err = s.UseHold(ctx, "h")
	wantErr(t, "UseHold again", err, store.ErrConflict)
}

package storetest

import (
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/payguard/payguard/store"
)

// testAlarms: a raised alarm is found until it expires, replaced by a newer one, listed while active,
// cleared once; bad alarms are refused; past store.MaxAlarms the oldest is forgotten first, never the new.
func testAlarms(t *testing.T, s store.Store) {
	now := time.Now().UTC().Truncate(time.Millisecond)
	a := store.Alarm{Host: "seller.example", What: "settled 9 above the authorized maximum 5", At: now, Until: now.Add(time.Hour)}
	_, err := s.Alarm(ctx, a.Host, now)
	wantErr(t, "Alarm before any", err, store.ErrNotFound)
	must(t, "RaiseAlarm", s.RaiseAlarm(ctx, a))
	got, err := s.Alarm(ctx, a.Host, now.Add(time.Minute))
	must(t, "Alarm", err)
	if got.Host != a.Host || got.What != a.What || !got.At.Equal(a.At) || !got.Until.Equal(a.Until) {
		t.Fatalf("Alarm = %+v, want %+v", got, a)
	}
	_, err = s.Alarm(ctx, "other.example", now)
	wantErr(t, "Alarm of another host", err, store.ErrNotFound)
	_, err = s.Alarm(ctx, a.Host, a.Until)
	wantErr(t, "Alarm once expired", err, store.ErrNotFound)

	b := a
	b.What, b.At = "settled on network eip155:1", now.Add(time.Second)
	must(t, "RaiseAlarm again", s.RaiseAlarm(ctx, b))
	if got, err := s.Alarm(ctx, a.Host, now.Add(2*time.Second)); err != nil || got.What != b.What {
		t.Fatalf("Alarm after a newer raise = %+v, %v", got, err)
	}
	c := store.Alarm{Host: "127.0.0.1", What: "x", At: now, Until: now.Add(time.Minute)}
	must(t, "RaiseAlarm c", s.RaiseAlarm(ctx, c))
	list, err := s.ListAlarms(ctx, now.Add(2*time.Second))
	must(t, "ListAlarms", err)
	if len(list) != 2 {
		t.Fatalf("ListAlarms = %+v, want 2", list)
	}
	if list, _ := s.ListAlarms(ctx, now.Add(30*time.Minute)); len(list) != 1 || list[0].Host != a.Host {
		t.Fatalf("ListAlarms after c expired = %+v", list)
	}
	must(t, "ClearAlarm", s.ClearAlarm(ctx, a.Host, now))
	wantErr(t, "ClearAlarm twice", s.ClearAlarm(ctx, a.Host, now), store.ErrNotFound)
	_, err = s.Alarm(ctx, a.Host, now)
	wantErr(t, "Alarm after clearing", err, store.ErrNotFound)

	wantErr(t, "RaiseAlarm without host", s.RaiseAlarm(ctx, store.Alarm{What: "x", At: now, Until: now.Add(time.Hour)}), store.ErrInvalid)
	wantErr(t, "RaiseAlarm expiring at once", s.RaiseAlarm(ctx, store.Alarm{Host: "h", At: now, Until: now}), store.ErrInvalid)
}

// testAlarmsBounded: at store.MaxAlarms, a new host's alarm replaces the oldest one.
func testAlarmsBounded(t *testing.T, s store.Store) {
	now := time.Now().UTC().Truncate(time.Millisecond)
	// Raised from several goroutines, so a store that groups concurrent writes (bolt) commits them together.
	var wg sync.WaitGroup
	errs := make(chan error, store.MaxAlarms)
	next := make(chan int)
	for range 32 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				at := now.Add(time.Duration(i) * time.Millisecond)
				errs <- s.RaiseAlarm(ctx, store.Alarm{Host: fmt.Sprintf("h%d.example", i), What: "x", At: at, Until: now.Add(time.Hour)})
			}
		}()
	}
	for i := range store.MaxAlarms {
		next <- i
	}
	close(next)
	wg.Wait()
	close(errs)
	for err := range errs {
		must(t, "RaiseAlarm", err)
	}
	late := now.Add(time.Minute)
	must(t, "RaiseAlarm past the bound", s.RaiseAlarm(ctx, store.Alarm{Host: "new.example", What: "x", At: late, Until: late.Add(time.Hour)}))
	if _, err := s.Alarm(ctx, "new.example", late); err != nil {
		t.Fatalf("the new alarm is not kept: %v", err)
	}
	_, err := s.Alarm(ctx, "h0.example", late)
	wantErr(t, "the oldest alarm", err, store.ErrNotFound)
	if _, err := s.Alarm(ctx, "h1.example", late); err != nil {
		t.Fatalf("the second oldest alarm is gone: %v", err)
	}
	list, err := s.ListAlarms(ctx, late)
	must(t, "ListAlarms", err)
	if len(list) != store.MaxAlarms {
		t.Fatalf("%d alarms kept, want %d", len(list), store.MaxAlarms)
	}
}

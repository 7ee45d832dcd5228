package redis_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	goredis "github.com/redis/go-redis/v9"

	"github.com/payguard/payguard/store"
	"github.com/payguard/payguard/store/redis"
)

func aheadTicket(id string, now time.Time) store.Ticket {
	return store.Ticket{ID: id, Key: "k", ExpiresAt: now.Add(5 * time.Minute), Option: []byte(`{"a":1}`)}
}

// ReserveTicketAhead reserves with the ticket as ReserveTicket does, and reports the day's figures before
// its own reservation (what the receipt of the decision made on an assumed spend must name).
func TestReserveTicketAheadReportsTheFiguresBefore(t *testing.T) {
	ctx := context.Background()
	s := openTest(t)
	defer s.Close()
	now := time.Now()
	day := now.UTC().Format("2006-01-02")
	if _, err := s.ReserveTicket(ctx, "b", day, 300, 1000, aheadTicket("tkt_first", now)); err != nil {
		t.Fatal(err)
	}
	got, err := s.ReserveTicketAhead(ctx, "b", day, "seller.example", 200, 1000, aheadTicket("tkt_second", now), now)
	if err != nil || !got.Reserved || got.State.Spent != 0 || got.State.Reserved != 300 {
		t.Fatalf("ReserveTicketAhead = %+v, %v; want reserved, the figures before: reserved 300", got, err)
	}
	if got.Ticket.ReservationID == "" || got.Ticket.Budget != "b" || got.Ticket.AmountMicros != 200 {
		t.Fatalf("ticket %+v: its reservation not filled in", got.Ticket)
	}
	if st, _ := s.State(ctx, "b", day); st.Reserved != 500 {
		t.Fatalf("State after = %+v, want reserved 500", st)
	}
	// The ticket is a ticket like any other: taken, its reservation committed.
	tk, err := s.TakeTicket(ctx, "k", now)
	if err != nil || tk.ID != "tkt_second" {
		t.Fatalf("TakeTicket = %+v, %v; want tkt_second", tk, err)
	}
	if err := s.Commit(ctx, "b", day, tk.ReservationID); err != nil {
		t.Fatal(err)
	}
	// Its id is held: a second ticket with it is refused before anything is reserved.
	if _, err := s.ReserveTicketAhead(ctx, "b", day, "seller.example", 1, 1000, aheadTicket("tkt_second", now), now); !errors.Is(err, store.ErrConflict) {
		t.Fatalf("a held id: %v, want ErrConflict", err)
	}
	if st, _ := s.State(ctx, "b", day); st.Spent != 200 || st.Reserved != 300 {
		t.Fatalf("State = %+v, want spent 200 reserved 300 (nothing reserved by the refused put)", st)
	}
}

// The seller's alarm is honoured: with an alarm stored for the host nothing is reserved and no ticket
// stored, and the alarm comes back with the figures, in force or not (the caller decides on them as usual).
func TestReserveTicketAheadReservesNothingUnderAnAlarm(t *testing.T) {
	ctx := context.Background()
	s := openTest(t)
	defer s.Close()
	now := time.Now()
	day := now.UTC().Format("2006-01-02")
	alarm := store.Alarm{Host: "seller.example", What: "settled to another payee", At: now, Until: now.Add(time.Hour)}
	if err := s.RaiseAlarm(ctx, alarm); err != nil {
		t.Fatal(err)
	}
	got, err := s.ReserveTicketAhead(ctx, "b", day, "seller.example", 200, 1000, aheadTicket("tkt_a", now), now)
	if err != nil || got.Reserved || got.AlarmErr != nil || got.Alarm.What != alarm.What {
		t.Fatalf("under an alarm: %+v, %v; want nothing reserved and the alarm", got, err)
	}
	// An alarm no longer in force reserves nothing either: the caller reads ErrNotFound and reserves itself.
	got, err = s.ReserveTicketAhead(ctx, "b", day, "seller.example", 200, 1000, aheadTicket("tkt_b", now), now.Add(2*time.Hour))
	if err != nil || got.Reserved || !errors.Is(got.AlarmErr, store.ErrNotFound) {
		t.Fatalf("an alarm past its end: %+v, %v; want nothing reserved, ErrNotFound", got, err)
	}
	if st, _ := s.State(ctx, "b", day); st.Reserved != 0 {
		t.Fatalf("State = %+v, want nothing reserved", st)
	}
	if _, err := s.TakeTicket(ctx, "k", now); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("a ticket was stored under the alarm: %v", err)
	}
	// Another seller is not held by it.
	if got, err := s.ReserveTicketAhead(ctx, "b", day, "other.example", 200, 1000, aheadTicket("tkt_c", now), now); err != nil || !got.Reserved {
		t.Fatalf("another host: %+v, %v; want reserved", got, err)
	}
}

// The cap holds across a fleet: 48 decisions at once through four replicas, room for 5: exactly 5 are
// reserved, each refusal is ErrBudgetExceeded with figures that leave no room, and the ledger ends at the cap.
func TestReserveTicketAheadCapAcrossReplicas(t *testing.T) {
	first := openTest(t)
	defer first.Close()
	replicas := []*redis.Store{first}
	for range 3 {
		r, err := redis.Open(context.Background(), testOptions(first.Prefix()))
		if err != nil {
			t.Fatal(err)
		}
		defer r.Close()
		replicas = append(replicas, r)
	}
	ctx := context.Background()
	now := time.Now()
	day := now.UTC().Format("2006-01-02")
	const amount, capMicros, callers = 200, 1000, 48
	var won atomic.Int64
	var wg sync.WaitGroup
	start := make(chan struct{})
	for i := range callers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			got, err := replicas[i%len(replicas)].ReserveTicketAhead(ctx, "fleet", day, "seller.example", amount, capMicros,
				aheadTicket(fmt.Sprint("tkt_", i), now), now)
			switch {
			case errors.Is(err, store.ErrBudgetExceeded):
				if got.State.Spent+got.State.Reserved+amount <= capMicros {
					t.Errorf("refused with room: %+v", got.State)
				}
			case err != nil:
				t.Error(err)
			case got.Reserved:
				if got.State.Spent+got.State.Reserved+amount > capMicros {
					t.Errorf("reserved over the cap from %+v", got.State)
				}
				won.Add(1)
			default:
				t.Errorf("neither reserved nor refused: %+v", got)
			}
		}()
	}
	close(start)
	wg.Wait()
	if won.Load() != capMicros/amount {
		t.Fatalf("%d reserved, want %d", won.Load(), capMicros/amount)
	}
	if st, _ := first.State(ctx, "fleet", day); st.Reserved != capMicros {
		t.Fatalf("State = %+v, want reserved at the cap", st)
	}
}

// A wiped Redis refuses: the script is guarded by the ledger epoch like every other.
func TestReserveTicketAheadRefusesAfterAWipe(t *testing.T) {
	ctx := context.Background()
	s := openTest(t)
	defer s.Close()
	ro, _ := goredis.ParseURL(redisURL())
	rdb := goredis.NewClient(ro)
	defer rdb.Close()
	if err := rdb.Del(ctx, s.Prefix()+"epoch").Err(); err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	_, err := s.ReserveTicketAhead(ctx, "b", now.UTC().Format("2006-01-02"), "seller.example", 1, 1000, aheadTicket("tkt_w", now), now)
	if !errors.Is(err, store.ErrLedgerLost) {
		t.Fatalf("after a wipe: %v, want ErrLedgerLost", err)
	}
}

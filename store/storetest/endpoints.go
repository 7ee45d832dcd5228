package storetest

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/payguard/payguard/store"
)

func testObservations(t *testing.T, s store.Store) {
	at, err := s.IndexUpdatedAt(ctx)
	must(t, "IndexUpdatedAt on an empty store", err)
	if !at.IsZero() {
		t.Fatalf("IndexUpdatedAt on an empty store = %v, want zero", at)
	}
	const u = "https://seller.example/api"
	obs := []store.Observation{
		{URL: u, Method: "GET", ObservedAt: base.Add(2 * time.Minute), Status: 402, Usable: true, Challenge: []byte(`{"x402Version":2}`)},
		{URL: u, Method: "POST", ObservedAt: base, Status: 500, Error: "upstream 500"},
		{URL: "https://other.example/", Method: "GET", ObservedAt: base.Add(time.Hour), Status: 402, Usable: true},
		{URL: u, Method: "GET", ObservedAt: base.Add(time.Minute), Status: 200},
	}
	for _, o := range obs {
		must(t, "PutObservation", s.PutObservation(ctx, o, store.Retention{}))
	}
	got, err := s.Observations(ctx, u)
	must(t, "Observations", err)
	want := []store.Observation{obs[1], obs[3], obs[0]} // oldest first, every method
	if len(got) != len(want) {
		t.Fatalf("Observations = %d entries, want %d: %+v", len(got), len(want), got)
	}
	for i := range want {
		g, w := got[i], want[i]
		if g.URL != w.URL || g.Method != w.Method || !g.ObservedAt.Equal(w.ObservedAt) || g.Status != w.Status ||
			g.Usable != w.Usable || !bytes.Equal(g.Challenge, w.Challenge) || g.Error != w.Error {
			t.Fatalf("Observations[%d] = %+v, want %+v", i, g, w)
		}
	}
	none, err := s.Observations(ctx, "https://never.example/")
	must(t, "Observations of an unknown URL", err)
	if none == nil || len(none) != 0 {
		t.Fatalf("Observations of an unknown URL = %#v, want an empty slice (it is JSON [], not null)", none)
	}
	at, err = s.IndexUpdatedAt(ctx)
	must(t, "IndexUpdatedAt", err)
	if !at.Equal(base.Add(time.Hour)) {
		t.Fatalf("IndexUpdatedAt = %v, want %v", at, base.Add(time.Hour))
	}
	// An older observation put later does not move the index time back.
	must(t, "PutObservation old", s.PutObservation(ctx, store.Observation{URL: u, Method: "GET", ObservedAt: base.Add(-time.Hour)}, store.Retention{}))
	at, err = s.IndexUpdatedAt(ctx)
	must(t, "IndexUpdatedAt", err)
	if !at.Equal(base.Add(time.Hour)) {
		t.Fatalf("IndexUpdatedAt after an older put = %v, want %v", at, base.Add(time.Hour))
	}
	got, err = s.Observations(ctx, u)
	must(t, "Observations", err)
	if len(got) != 4 || !got[0].ObservedAt.Equal(base.Add(-time.Hour)) {
		t.Fatalf("Observations after an older put: %+v", got)
	}
	wantErr(t, "PutObservation without URL", s.PutObservation(ctx, store.Observation{Method: "GET", ObservedAt: base}, store.Retention{}), store.ErrInvalid)
	long := store.Observation{URL: "https://seller.example/" + strings.Repeat("a", store.MaxNameBytes-23), Method: "GET", ObservedAt: base}
	must(t, "PutObservation with a URL of MaxNameBytes", s.PutObservation(ctx, long, store.Retention{}))
	if got, err := s.Observations(ctx, long.URL); err != nil || len(got) != 1 {
		t.Fatalf("Observations of a long URL = %d, %v", len(got), err)
	}
	wantErr(t, "PutObservation without time", s.PutObservation(ctx, store.Observation{URL: u, Method: "GET"}, store.Retention{}), store.ErrInvalid)
}

// testObservationRetention: the fields of an observation survive the store, and PutObservation keeps at most
// MaxPerURL per URL and none older than MaxAge before the one put (the bounds the Index's storage figure
// rests on). Batchers obey the same bounds.
func testObservationRetention(t *testing.T, s store.Store) {
	const u = "https://retention.example/api"
	keep := store.Retention{MaxPerURL: 3, MaxAge: 24 * time.Hour}
	paid := store.Offer{Scheme: "exact", Network: "eip155:8453", Asset: "0xA", Amount: "10000", PayTo: "0xP"}
	first := store.Observation{URL: u, Method: "GET", ObservedAt: base, Status: 402, Usable: true, Source: store.SourceChallenge,
		Offers: []store.Offer{paid}, Paid: &paid, Category: "weather", Metadata: []byte(`{"info":{}}`)}
	must(t, "PutObservation", s.PutObservation(ctx, first, keep))
	got, err := s.Observations(ctx, u)
	must(t, "Observations", err)
	if len(got) != 1 || got[0].Source != first.Source || len(got[0].Offers) != 1 || got[0].Offers[0] != paid ||
		got[0].Paid == nil || *got[0].Paid != paid || got[0].Category != "weather" || string(got[0].Metadata) != `{"info":{}}` {
		t.Fatalf("observation did not round-trip: %+v", got)
	}
	for i := 1; i <= 4; i++ {
		must(t, "PutObservation", s.PutObservation(ctx, store.Observation{URL: u, Method: "GET",
			ObservedAt: base.Add(time.Duration(i) * time.Minute), Status: 402}, keep))
	}
	got, err = s.Observations(ctx, u)
	must(t, "Observations", err)
	if len(got) != 3 || !got[0].ObservedAt.Equal(base.Add(2*time.Minute)) || !got[2].ObservedAt.Equal(base.Add(4*time.Minute)) {
		t.Fatalf("after 5 puts with MaxPerURL 3: %d kept %+v", len(got), got)
	}
	// A put two days later leaves nothing older than a day before it (the memory and bolt stores drop
	// them at once; Redis expires the whole list, and readers filter by age).
	late := base.Add(48 * time.Hour)
	must(t, "PutObservation late", s.PutObservation(ctx, store.Observation{URL: u, Method: "GET", ObservedAt: late, Status: 402}, keep))
	got, err = s.Observations(ctx, u)
	must(t, "Observations", err)
	n := 0
	for _, o := range got {
		if !o.ObservedAt.Before(late.Add(-keep.MaxAge)) {
			n++
		}
	}
	if n != 1 || len(got) > 3 {
		t.Fatalf("after a put past MaxAge: %+v", got)
	}
	wantErr(t, "negative retention", s.PutObservation(ctx, store.Observation{URL: u, Method: "GET", ObservedAt: late},
		store.Retention{MaxPerURL: -1}), store.ErrInvalid)
	wantErr(t, "too many offers", s.PutObservation(ctx, store.Observation{URL: u, Method: "GET", ObservedAt: late,
		Offers: make([]store.Offer, store.MaxObservedOffers+1)}, keep), store.ErrInvalid)
	// The largest observation the bounds allow is kept whole; one byte over any bound is refused.
	largest := LargestObservation(late)
	largest.URL = "https://retention.example/" + strings.Repeat("l", store.MaxNameBytes-len("https://retention.example/"))
	must(t, "PutObservation of the largest observation", s.PutObservation(ctx, largest, store.Retention{}))
	if got, err := s.Observations(ctx, largest.URL); err != nil || len(got) != 1 || len(got[0].Offers) != store.MaxObservedOffers ||
		got[0].Error != largest.Error || len(got[0].Metadata) != len(largest.Metadata) {
		t.Fatalf("the largest observation did not round-trip: %v", err)
	}
	over := func(edit func(*store.Observation)) store.Observation {
		o := LargestObservation(late)
		o.Offers = append([]store.Offer(nil), o.Offers...)
		edit(&o)
		return o
	}
	for name, o := range map[string]store.Observation{
		"an offer field":  over(func(o *store.Observation) { o.Offers[31].PayTo += "x" }),
		"the paid offer":  over(func(o *store.Observation) { p := *o.Paid; p.Amount += "1"; o.Paid = &p }),
		"the method":      over(func(o *store.Observation) { o.Method += "X" }),
		"the error":       over(func(o *store.Observation) { o.Error += "e" }),
		"the category":    over(func(o *store.Observation) { o.Category += "c" }),
		"the source":      over(func(o *store.Observation) { o.Source += "s" }),
		"challenge+meta":  over(func(o *store.Observation) { o.Metadata = append(o.Metadata, '}') }),
		"an empty method": over(func(o *store.Observation) { o.Method = "" }),
	} {
		wantErr(t, "PutObservation with "+name+" over its bound", s.PutObservation(ctx, o, keep), store.ErrInvalid)
	}
	if b, ok := s.(store.ObservationBatcher); ok {
		const v = "https://retention.example/batch"
		batch := make([]store.Observation, 5)
		for i := range batch {
			batch[i] = store.Observation{URL: v, Method: "GET", ObservedAt: base.Add(time.Duration(i) * time.Minute)}
		}
		must(t, "PutObservations", b.PutObservations(ctx, batch, keep))
		got, err = s.Observations(ctx, v)
		must(t, "Observations", err)
		if len(got) != 3 || !got[2].ObservedAt.Equal(base.Add(4*time.Minute)) {
			t.Fatalf("batch after 5 with MaxPerURL 3: %+v", got)
		}
	}
}

// LargestObservation is an observation at every bound store.CheckObservation sets (its URL is short: set
// one of store.MaxNameBytes to reach the largest stored size).
func LargestObservation(at time.Time) store.Observation {
	f := strings.Repeat("f", store.MaxObservedField)
	offer := store.Offer{Scheme: f, Network: f, Asset: f, Amount: f, PayTo: f}
	o := store.Observation{URL: "https://largest.example/", Method: strings.Repeat("M", store.MaxObservationMethod), ObservedAt: at,
		Status: 402, Usable: true, Source: strings.Repeat("s", store.MaxObservationCategory),
		Error: strings.Repeat("e", store.MaxObservationError), Category: strings.Repeat("c", store.MaxObservationCategory),
		Challenge: bytes.Repeat([]byte{'{'}, store.MaxObservationBlob/2), Metadata: bytes.Repeat([]byte{'{'}, store.MaxObservationBlob/2), Paid: &offer}
	for range store.MaxObservedOffers {
		o.Offers = append(o.Offers, offer)
	}
	return o
}

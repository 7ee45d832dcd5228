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
		must(t, "PutObservation", s.PutObservation(ctx, o))
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
	must(t, "PutObservation old", s.PutObservation(ctx, store.Observation{URL: u, Method: "GET", ObservedAt: base.Add(-time.Hour)}))
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
	wantErr(t, "PutObservation without URL", s.PutObservation(ctx, store.Observation{Method: "GET", ObservedAt: base}), store.ErrInvalid)
	long := store.Observation{URL: "https://seller.example/" + strings.Repeat("a", store.MaxNameBytes-23), Method: "GET", ObservedAt: base}
	must(t, "PutObservation with a URL of MaxNameBytes", s.PutObservation(ctx, long))
	if got, err := s.Observations(ctx, long.URL); err != nil || len(got) != 1 {
		t.Fatalf("Observations of a long URL = %d, %v", len(got), err)
	}
	wantErr(t, "PutObservation without time", s.PutObservation(ctx, store.Observation{URL: u, Method: "GET"}), store.ErrInvalid)
}

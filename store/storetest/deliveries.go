package storetest

import (
	"bytes"
	"testing"
	"time"

	"github.com/payguard/payguard/store"
)

// Deliveries: a value is kept for its ttl, replaced by a later put, bounded in size, and gone after its ttl.
func testDeliveries(t *testing.T, s store.Store) {
	_, err := s.GetDelivery(ctx, "pay:a")
	wantErr(t, "GetDelivery of nothing", err, store.ErrNotFound)
	must(t, "PutDelivery", s.PutDelivery(ctx, "pay:a", []byte(`{"state":"settling"}`), time.Hour))
	must(t, "PutDelivery over it", s.PutDelivery(ctx, "pay:a", []byte("{\"state\":\"settled\",\"b\":\"\x00\xff\"}"), time.Hour))
	got, err := s.GetDelivery(ctx, "pay:a")
	must(t, "GetDelivery", err)
	if !bytes.Equal(got, []byte("{\"state\":\"settled\",\"b\":\"\x00\xff\"}")) {
		t.Fatalf("GetDelivery = %q", got)
	}
	_, err = s.GetDelivery(ctx, "pay:b")
	wantErr(t, "GetDelivery of another key", err, store.ErrNotFound)
	wantErr(t, "PutDelivery over the size bound", s.PutDelivery(ctx, "pay:big", make([]byte, store.MaxDeliveryBytes+1), time.Hour), store.ErrInvalid)
	wantErr(t, "PutDelivery with no ttl", s.PutDelivery(ctx, "pay:c", []byte("x"), 0), store.ErrInvalid)
	wantErr(t, "PutDelivery with no key", s.PutDelivery(ctx, "", []byte("x"), time.Hour), store.ErrInvalid)
	must(t, "PutDelivery at the size bound", s.PutDelivery(ctx, "pay:max", make([]byte, store.MaxDeliveryBytes), time.Hour))

	// As for payment digests, only "gone after its ttl" is timed.
	must(t, "short-lived delivery", s.PutDelivery(ctx, "pay:short", []byte("x"), 20*time.Millisecond))
	time.Sleep(60 * time.Millisecond)
	_, err = s.GetDelivery(ctx, "pay:short")
	wantErr(t, "GetDelivery after its ttl", err, store.ErrNotFound)
}

package proxy

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/payguard/payguard/store"
	"github.com/payguard/payguard/store/memory"
	"github.com/payguard/payguard/x402"
)

// failingStore is a store whose ledger writes fail with err while it is set, as a bolt store's do when its
// journal cannot be written (a full disk) or a redis store's when its ledger was wiped; it reports the same
// error as its health, as those stores do.
type failingStore struct {
	*memory.Store
	err atomic.Pointer[error]
}

func (f *failingStore) failing() error {
	if e := f.err.Load(); e != nil {
		return *e
	}
	return nil
}

func (f *failingStore) Reserve(ctx context.Context, budget, day string, amount, capMicros int64) (string, error) {
	if err := f.failing(); err != nil {
		return "", err
	}
	return f.Store.Reserve(ctx, budget, day, amount, capMicros)
}

func (f *failingStore) ReserveTicket(ctx context.Context, budget, day string, amount, capMicros int64, t store.Ticket) (store.Ticket, error) {
	if err := f.failing(); err != nil {
		return store.Ticket{}, err
	}
	return f.Store.ReserveTicket(ctx, budget, day, amount, capMicros, t)
}

func (f *failingStore) Healthy(context.Context) error { return f.failing() }

// /readyz follows the store's real state: while ledger writes fail, every payment is refused and the proxy
// is not ready; when they work again it is. On the old code /readyz stayed 200 (it only read the budget).
// A wiped ledger's refusal names it (class ledger_lost).
func TestReadyzFollowsTheStore(t *testing.T) {
	st := &failingStore{Store: memory.New()}
	s := newSeller(t, x402.V2, false, offer(x402.V2, "eip155:84532", baseSepoliaUSDC, sellerPayTo, "10000"))
	h := newHarness(t, st, testRules())
	if code, body := h.api("GET", "/readyz", "", nil); code != 200 {
		t.Fatalf("/readyz before = %d %s", code, body)
	}
	for _, tc := range []struct {
		err    error
		reason string
	}{
		{errors.New("store/bolt: writing the journal: write /data/payguard.db-journal-0: no space left on device"), "no space left"},
		{fmt.Errorf("%w: the redis ledger under prefix \"payguard:\" was wiped", store.ErrLedgerLost), "ledger lost"},
	} {
		st.err.Store(&tc.err)
		resp, body := h.buyer().get(s.url("/weather"), nil)
		if resp.StatusCode != 403 || resp.Header.Get(HeaderDecision) != block || !strings.Contains(string(body), tc.reason) {
			t.Fatalf("402 while the store fails (%v): %d %s %s", tc.err, resp.StatusCode, resp.Header.Get(HeaderDecision), body)
		}
		code, rb := h.api("GET", "/readyz", "", nil)
		var r map[string]string
		json.Unmarshal(rb, &r)
		if code != 503 || !strings.Contains(r["error"], tc.reason) {
			t.Fatalf("/readyz while the store fails (%v) = %d %s, want 503 naming it", tc.err, code, rb)
		}
	}
	st.err.Store(nil)
	if code, body := h.api("GET", "/readyz", "", nil); code != 200 {
		t.Fatalf("/readyz after = %d %s", code, body)
	}
	resp, _ := h.buyer().get(s.url("/weather"), nil)
	if resp.StatusCode != 402 {
		t.Fatalf("402 after the store recovered: %d", resp.StatusCode)
	}
}

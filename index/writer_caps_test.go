package index

import (
	"context"
	"encoding/json"
	"fmt"
	"reflect"
	"sync"
	"testing"
	"time"

	"github.com/payguard/payguard/store"
	"github.com/payguard/payguard/store/memory"
	"github.com/payguard/payguard/x402"
)

// batchingStore is a store with store.ObservationBatcher: it counts batch and single writes.
type batchingStore struct {
	*memory.Store
	mu               sync.Mutex
	batches, singles int
}

func (b *batchingStore) PutObservation(ctx context.Context, o store.Observation, keep store.Retention) error {
	b.mu.Lock()
	b.singles++
	b.mu.Unlock()
	return b.Store.PutObservation(ctx, o, keep)
}

func (b *batchingStore) PutObservations(ctx context.Context, obs []store.Observation, keep store.Retention) error {
	b.mu.Lock()
	b.batches++
	b.mu.Unlock()
	for _, o := range obs {
		if err := b.Store.PutObservation(ctx, o, keep); err != nil {
			return err
		}
	}
	return nil
}

// endpointsOnly is a store with none of the Writer's optional capabilities: only store.Endpoints.
type endpointsOnly struct{ store.Endpoints }

// capsBatch is three priced, categorized 402s of three URLs of one site, written as one batch.
func capsBatch(t *testing.T) []store.Observation {
	t.Helper()
	var batch []store.Observation
	for i := range 3 {
		pr := &x402.PaymentRequired{X402Version: 2, Accepts: []x402.Requirement{{Scheme: "exact", Network: "eip155:8453",
			Amount: "10000", Asset: usdc, PayTo: payA}}, Extensions: map[string]json.RawMessage{"bazaar": json.RawMessage(`{"info":{"category":"weather"}}`)}}
		url, err := NormalizeURL(fmt.Sprintf("https://seller.example/api/%d", i))
		if err != nil {
			t.Fatal(err)
		}
		o := FromChallenge(url, "GET", pr, t0)
		batch = append(batch, o, FromPaid(url, "GET", o.Offers[0], 200, true, t0))
	}
	return batch
}

// The Writer's optional store capabilities (NewWriter's doc), with and without: a batcher gets the batch in
// one call; a store with only store.Endpoints gets every observation one by one, and no category or site
// payee write is attempted.
func TestWriterStoreCapabilities(t *testing.T) {
	ctx := context.Background()
	t.Run("with", func(t *testing.T) {
		st := &batchingStore{Store: memory.New()}
		w := NewWriter(st, WriterOptions{})
		batch := capsBatch(t)
		w.write(batch)
		w.Close()
		if st.batches != 1 || st.singles != 0 {
			t.Fatalf("batches %d, single writes %d; want the batch in one call", st.batches, st.singles)
		}
		obs, _ := st.Observations(ctx, batch[0].URL)
		cats, _ := st.CategoryPrices(ctx, "weather")
		payees, _ := st.SitePayees(ctx, SiteOf(batch[0].URL))
		if len(obs) != 2 || len(cats) == 0 || len(payees) == 0 {
			t.Fatalf("observations %d, category prices %d, site payees %d; want all written", len(obs), len(cats), len(payees))
		}
	})
	t.Run("without", func(t *testing.T) {
		mem := memory.New()
		w := NewWriter(endpointsOnly{mem}, WriterOptions{})
		if w.batch != nil || w.categories != nil || w.sitePayees != nil {
			t.Fatalf("capabilities found on a store with none: %T %T %T", w.batch, w.categories, w.sitePayees)
		}
		batch := capsBatch(t)
		w.write(batch)
		w.Close()
		for _, o := range batch[:1] {
			if obs, _ := mem.Observations(ctx, o.URL); len(obs) != 2 {
				t.Fatalf("%s: %d observations, want 2 written one by one", o.URL, len(obs))
			}
		}
		cats, _ := mem.CategoryPrices(ctx, "weather")
		payees, _ := mem.SitePayees(ctx, SiteOf(batch[0].URL))
		if len(cats) != 0 || len(payees) != 0 {
			t.Fatalf("category prices %d, site payees %d written through a store that does not offer them", len(cats), len(payees))
		}
	})
}

// countingPricer is a SitePricer that counts its derivations.
type countingPricer struct {
	CategoryReader
	calls int
}

func (c *countingPricer) SitePrices(ctx context.Context, category, network, asset string, now time.Time, maxAge time.Duration) (SitePrices, error) {
	c.calls++
	sample, err := c.CategoryPrices(ctx, category)
	return DeriveSitePrices(sample, network, asset, now, maxAge), err
}

// CategorySitePrices with and without the SitePricer capability: a pricer derives (Cache keeps the
// derivation), a plain CategoryReader is read and derived; the answer is the same.
func TestCategorySitePricesCapability(t *testing.T) {
	ctx := context.Background()
	st := memory.New()
	for i, a := range []string{"10000", "20000", "30000"} {
		url := fmt.Sprintf("https://s%d.example/api", i)
		if err := st.PutCategoryPrice(ctx, "weather", catPrice(url, a, t0), store.Retention{}); err != nil {
			t.Fatal(err)
		}
	}
	without, err := CategorySitePrices(ctx, st, "weather", "eip155:8453", usdc, t0, 0)
	if err != nil || len(without) != 3 {
		t.Fatalf("without: %v %v", without, err)
	}
	pricer := &countingPricer{CategoryReader: st}
	with, err := CategorySitePrices(ctx, pricer, "weather", "eip155:8453", usdc, t0, 0)
	if err != nil || pricer.calls != 1 || !reflect.DeepEqual(with, without) {
		t.Fatalf("with: %v %v (%d derivations), want %v through SitePrices", with, err, pricer.calls, without)
	}
	cached, err := CategorySitePrices(ctx, NewCache(st, time.Minute), "weather", "eip155:8453", usdc, t0, 0)
	if err != nil || !reflect.DeepEqual(cached, without) {
		t.Fatalf("cache: %v %v, want %v", cached, err, without)
	}
}

package index

import (
	"context"

	"github.com/payguard/payguard/store"
)

// Reader reads one URL's observations (store.Endpoints satisfies it).
type Reader interface {
	Observations(ctx context.Context, url string) ([]store.Observation, error)
}

type prefetchKey struct{}

type prefetched struct {
	url string
	obs []store.Observation
	err error
}

// Prefetch reads url's observations now and returns a context that carries them, so that a Prefetching
// reader answers from it later. The proxy reads before it takes the budget lock, so the store round trip
// (Redis) never serializes other decisions.
func Prefetch(ctx context.Context, r Reader, rawURL string) context.Context {
	u, err := NormalizeURL(rawURL)
	if err != nil || r == nil {
		return ctx
	}
	obs, err := r.Observations(ctx, u)
	return context.WithValue(ctx, prefetchKey{}, &prefetched{url: u, obs: obs, err: err})
}

// Prefetching answers Observations from a context made by Prefetch for the same URL, else from Reader.
type Prefetching struct{ Reader Reader }

// Observations implements Reader.
func (p Prefetching) Observations(ctx context.Context, url string) ([]store.Observation, error) {
	if pf, ok := ctx.Value(prefetchKey{}).(*prefetched); ok && pf.url == url {
		return pf.obs, pf.err
	}
	return p.Reader.Observations(ctx, url)
}

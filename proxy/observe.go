package proxy

import (
	"context"
	"net/http"
	"strings"

	"github.com/payguard/payguard/index"
	"github.com/payguard/payguard/store"
	"github.com/payguard/payguard/x402"
)

// Observer receives the Endpoint Index observations the proxy makes; *index.Writer implements it. Observe
// must not block: it is called on the request path.
type Observer interface {
	Observe(store.Observation)
}

// observeChallengeAt makes the observation of a decoded 402 (allowed, held or blocked alike) for the
// endpoint method url (an MCP tool's is mcpEndpoint's), as the seller sent it, and returns the function that
// records it: the caller defers that until after the decision, so a decision never judges the challenge
// against itself.
func (p *Proxy) observeChallengeAt(method, rawURL string, pr *x402.PaymentRequired) (record func()) {
	if p.opts.Observer == nil {
		return func() {}
	}
	url, err := index.NormalizeURL(rawURL)
	if err != nil {
		return func() {}
	}
	o := index.FromChallenge(url, method, pr, p.opts.Now())
	return func() { p.opts.Observer.Observe(o) }
}

// observePaid records the seller's answer to a payment the proxy released for opt: whether it carried a
// successful settlement (only then may it move the category's median: index.Costly), and the amount it
// settled when one was read (an upto option's amount is the maximum; its price history is what it settles).
func (p *Proxy) observePaid(req *http.Request, opt *x402.Requirement, status int, out settled) {
	p.observePaidAt(req.Method, req.URL.String(), opt, status, out)
}

// observePaidAt is observePaid for the endpoint method url.
func (p *Proxy) observePaidAt(method, rawURL string, opt *x402.Requirement, status int, out settled) {
	if p.opts.Observer == nil || opt == nil {
		return
	}
	url, err := index.NormalizeURL(rawURL)
	if err != nil {
		return
	}
	offer := index.OfferOf(opt)
	offer.Settled = out.atomic
	p.opts.Observer.Observe(index.FromPaid(url, method, offer, status, out.ok, p.opts.Now()))
}

// prefetchIndex reads and summarizes the endpoint's observations before the decision takes the budget
// lock, so that the store round trip (Redis) and the derivation never serialize other decisions: with
// Options.Index the same index.Cache as the engine's, the engine then finds the summary cached.
func (p *Proxy) prefetchIndex(ctx context.Context, method, url string) {
	if p.opts.Index == nil {
		return
	}
	if key, err := index.NormalizeURL(url); err == nil {
		index.Summarize(ctx, p.opts.Index, key, strings.ToUpper(method), p.opts.Now(), p.opts.IndexMaxAge)
		if sr, ok := p.opts.Index.(index.SitePayeeReader); ok && p.opts.Rules.HoldOnPayToChange {
			if site := index.SiteOf(key); site != "" {
				sr.SitePayees(ctx, site) // the site payee record, read and cached the same way
			}
		}
	}
}

// Package probe is the Endpoint Index's opt-in prober: unpaid GET requests to configured endpoints and to
// the resources a facilitator's discovery list (the x402 bazaar, GET /discovery/resources) publishes. Each
// probe becomes an observation: a decodable 402 is a usable one (its offers recorded like the proxy's), and
// anything else (no answer, a timeout, another status, an oversized body) a failed one, which the
// require_live rule counts.
//
// It never sends a payment. Its egress is guarded (Guard): only public unicast addresses unless allowed by
// prefix, checked on the address actually dialled (after DNS, on every redirect); at most three redirects,
// http(s) only; every request and body bounded in time and size; one request per host per PerHostInterval.
package probe

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/payguard/payguard/index"
	"github.com/payguard/payguard/store"
	"github.com/payguard/payguard/x402"
)

// maxRedirects bounds the redirects one probe follows.
const maxRedirects = 3

// Observer receives the probe observations (*index.Writer).
type Observer interface {
	Observe(store.Observation)
}

// Options configure a Prober.
type Options struct {
	Endpoints       []string
	DiscoveryURLs   []string
	Interval        time.Duration
	PerHostInterval time.Duration
	Timeout         time.Duration
	MaxBodyBytes    int64
	MaxEndpoints    int
	Guard           Guard
	Observer        Observer
	Registry        prometheus.Registerer
	Logger          *slog.Logger
	Now             func() time.Time
}

// Prober probes endpoints in rounds. Run it in one goroutine.
type Prober struct {
	o      Options
	client *http.Client
	last   map[string]time.Time // host → last request
	probes *prometheus.CounterVec
}

// New returns a prober.
func New(o Options) *Prober {
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	if o.Timeout <= 0 {
		o.Timeout = 5 * time.Second
	}
	if o.MaxBodyBytes <= 0 {
		o.MaxBodyBytes = 64 << 10
	}
	if o.MaxEndpoints <= 0 {
		o.MaxEndpoints = 500
	}
	tr := &http.Transport{
		Proxy:                 nil, // never through HTTP(S)_PROXY: the guard must see the real destination
		DialContext:           o.Guard.DialContext(o.Timeout),
		TLSHandshakeTimeout:   o.Timeout,
		ResponseHeaderTimeout: o.Timeout,
		MaxIdleConnsPerHost:   2,
		IdleConnTimeout:       30 * time.Second,
	}
	p := &Prober{o: o, last: map[string]time.Time{},
		client: &http.Client{Transport: tr, Timeout: o.Timeout, CheckRedirect: func(req *http.Request, via []*http.Request) error {
			if len(via) > maxRedirects {
				return fmt.Errorf("probe: more than %d redirects", maxRedirects)
			}
			if req.URL.Scheme != "http" && req.URL.Scheme != "https" {
				return fmt.Errorf("probe: redirect to a %s URL", req.URL.Scheme)
			}
			return nil // the dialer's guard checks the address the redirect leads to
		}},
		probes: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "payguard_index_probes_total",
			Help: "Unpaid endpoint probes, by result: usable (a decodable 402), failed, refused (egress guard)."}, []string{"result"}),
	}
	for _, r := range []string{"usable", "failed", "refused"} {
		p.probes.WithLabelValues(r)
	}
	if o.Registry != nil {
		o.Registry.MustRegister(p.probes)
	}
	return p
}

// Run probes a round every Interval until ctx ends.
func (p *Prober) Run(ctx context.Context) {
	for {
		p.Round(ctx)
		select {
		case <-ctx.Done():
			return
		case <-time.After(p.o.Interval):
		}
	}
}

// Round probes every configured and discovered endpoint once (at most MaxEndpoints) and returns the
// observations it made (each also sent to the Observer).
func (p *Prober) Round(ctx context.Context) []store.Observation {
	targets := p.targets(ctx)
	var out []store.Observation
	for _, t := range targets {
		if ctx.Err() != nil {
			break
		}
		o, ok := p.Probe(ctx, t.url)
		if !ok {
			continue
		}
		// A listing is the facilitator's word, not the seller's: a usable probe of a listed endpoint may
		// move its category's median (index.Costly); one of an endpoint only configured here describes it.
		o.Listed = t.listed
		out = append(out, o)
		if p.o.Observer != nil {
			p.o.Observer.Observe(o)
		}
	}
	return out
}

// target is one endpoint to probe; listed when a discovery list published it.
type target struct {
	url    string
	listed bool
}

// targets are the configured endpoints, then the discovered ones, normalized and deduplicated (a
// configured endpoint that a list also publishes counts as listed).
func (p *Prober) targets(ctx context.Context) []target {
	seen := map[string]int{}
	var out []target
	add := func(raw string, listed bool) {
		u, err := index.NormalizeURL(raw)
		if err != nil {
			return
		}
		if i, ok := seen[u]; ok {
			out[i].listed = out[i].listed || listed
			return
		}
		if len(out) >= p.o.MaxEndpoints {
			return
		}
		seen[u] = len(out)
		out = append(out, target{url: raw, listed: listed})
	}
	for _, e := range p.o.Endpoints {
		add(e, false)
	}
	for _, d := range p.o.DiscoveryURLs {
		items, err := p.discover(ctx, d)
		if err != nil {
			p.o.Logger.Warn("probe: discovery list unavailable", "url", d, "error", err.Error())
			continue
		}
		for _, it := range items {
			add(it, true)
		}
	}
	return out
}

// discoveryList is the official x402 discovery response: {x402Version, items: [{resource, type, x402Version,
// accepts, lastUpdated, metadata}], pagination}. Some facilitators name the resource "url".
type discoveryList struct {
	Items []struct {
		Resource string `json:"resource"`
		URL      string `json:"url"`
		Type     string `json:"type"`
	} `json:"items"`
}

func (p *Prober) discover(ctx context.Context, listURL string) ([]string, error) {
	body, status, _, err := p.get(ctx, listURL, 16*p.o.MaxBodyBytes)
	if err != nil {
		return nil, err
	}
	if status != http.StatusOK {
		return nil, fmt.Errorf("status %d", status)
	}
	var l discoveryList
	if err := json.Unmarshal(body, &l); err != nil {
		return nil, fmt.Errorf("not a discovery list: %w", err)
	}
	var out []string
	for _, it := range l.Items {
		if it.Type != "" && it.Type != "http" {
			continue // MCP tools and facilitators are not HTTP endpoints to probe
		}
		r := it.Resource
		if r == "" {
			r = it.URL
		}
		out = append(out, r)
	}
	return out, nil
}

// Probe sends one unpaid GET to target and returns its observation; ok is false when target is not an
// http(s) URL at all or the egress guard refused it: neither is evidence about the endpoint (SPEC counts
// usable failed probes only), so Round records neither.
func (p *Prober) Probe(ctx context.Context, target string) (o store.Observation, ok bool) {
	key, err := index.NormalizeURL(target)
	if err != nil || !strings.HasPrefix(key, "http") {
		return o, false // an MCP tool (mcp://host/tool/<name>) is observed by the proxy, never probed by GET
	}
	body, status, hdr, err := p.get(ctx, target, p.o.MaxBodyBytes)
	now := p.o.Now()
	o = store.Observation{URL: key, Method: http.MethodGet, ObservedAt: now.UTC(), Status: status, Source: store.SourceProbe}
	switch {
	case errors.Is(err, ErrForbiddenAddress):
		p.probes.WithLabelValues("refused").Inc()
		p.o.Logger.Warn("probe: refused by the egress guard", "url", target, "error", err.Error())
		o.Error = err.Error()
		return o, false
	case err != nil:
		p.probes.WithLabelValues("failed").Inc()
		o.Error = err.Error()
		return o, true
	case status != http.StatusPaymentRequired:
		p.probes.WithLabelValues("failed").Inc()
		o.Error = fmt.Sprintf("status %d, not a 402 challenge", status)
		return o, true
	}
	pr, err := challengeOf(hdr, body)
	if err != nil {
		p.probes.WithLabelValues("failed").Inc()
		o.Error = "402 without a readable x402 challenge: " + err.Error()
		return o, true
	}
	p.probes.WithLabelValues("usable").Inc()
	o = index.FromChallenge(key, http.MethodGet, pr, now)
	o.Source = store.SourceProbe
	return o, true
}

func challengeOf(hdr http.Header, body []byte) (*x402.PaymentRequired, error) {
	if h := hdr.Get(x402.HeaderPaymentRequired); h != "" {
		return x402.DecodePaymentRequiredHeader(h)
	}
	return x402.ParsePaymentRequired(body)
}

// get is one bounded GET: per-host pacing, the guard on every dial, the timeout on the whole exchange, and
// a body larger than limit an error.
func (p *Prober) get(ctx context.Context, raw string, limit int64) ([]byte, int, http.Header, error) {
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") {
		return nil, 0, nil, fmt.Errorf("probe: %q is not an http(s) URL", raw)
	}
	if err := p.pace(ctx, strings.ToLower(u.Hostname())); err != nil {
		return nil, 0, nil, err
	}
	ctx, cancel := context.WithTimeout(ctx, p.o.Timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, raw, nil)
	if err != nil {
		return nil, 0, nil, err
	}
	req.Header.Set("User-Agent", "payguard-prober (unpaid x402 liveness probe)")
	req.Header.Set("Accept", "application/json")
	resp, err := p.client.Do(req)
	if err != nil {
		var ue *url.Error
		if errors.As(err, &ue) && errors.Is(ue.Err, ErrForbiddenAddress) {
			return nil, 0, nil, ue.Err
		}
		if errors.Is(err, ErrForbiddenAddress) {
			return nil, 0, nil, err
		}
		return nil, 0, nil, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, limit+1))
	if err != nil {
		return nil, resp.StatusCode, resp.Header, fmt.Errorf("probe: reading the body: %w", err)
	}
	if int64(len(body)) > limit {
		return nil, resp.StatusCode, resp.Header, fmt.Errorf("probe: body larger than %d bytes", limit)
	}
	return body, resp.StatusCode, resp.Header, nil
}

// pace waits until host may be asked again.
func (p *Prober) pace(ctx context.Context, host string) error {
	if last, ok := p.last[host]; ok && p.o.PerHostInterval > 0 {
		if wait := p.o.PerHostInterval - p.o.Now().Sub(last); wait > 0 {
			select {
			case <-ctx.Done():
				return ctx.Err()
			case <-time.After(wait):
			}
		}
	}
	p.last[host] = p.o.Now()
	return nil
}

package fees

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptrace"
	"net/url"
	"strings"
	"sync/atomic"
	"time"

	"github.com/payguard/payguard/internal/egress"
	"github.com/payguard/payguard/x402"
)

// Errors of the facilitator client.
var (
	// ErrFacilitatorUnavailable: the facilitator could not be asked, or gave no usable answer, at a point
	// where nothing can have been settled (any /verify failure; a /settle request that was never sent).
	// The caller answers 503 facilitator_unavailable.
	ErrFacilitatorUnavailable = errors.New("fees: facilitator unavailable")
	// ErrSettlementUnknown: a /settle request was sent and no usable answer came back (timeout, connection
	// reset, 5xx, unparseable body). The transfer may have happened. Never retried.
	ErrSettlementUnknown = errors.New("fees: settlement outcome unknown")
)

// maxFacilitatorBody bounds a facilitator answer.
const maxFacilitatorBody = 1 << 20

// FacilitatorRequest is the body of POST /verify and POST /settle. The payment payload is forwarded as the
// client sent it; the requirements are this seller's own (v1 or v2 form, matching the payload's version).
type FacilitatorRequest struct {
	X402Version         int             `json:"x402Version"`
	PaymentPayload      json.RawMessage `json:"paymentPayload"`
	PaymentRequirements any             `json:"paymentRequirements"`
}

// Supported is the facilitator's GET /supported answer.
type Supported struct {
	Kinds []struct {
		X402Version int    `json:"x402Version"`
		Scheme      string `json:"scheme"`
		Network     string `json:"network"`
	} `json:"kinds"`
}

// Covers reports whether a (version, scheme, network) kind is supported.
func (s *Supported) Covers(version int, scheme, network string) bool {
	for _, k := range s.Kinds {
		if k.X402Version == version && k.Scheme == scheme && k.Network == network {
			return true
		}
	}
	return false
}

// FacilitatorAPI is what the seller needs from a facilitator; *Facilitator implements it over HTTP.
type FacilitatorAPI interface {
	Verify(ctx context.Context, req FacilitatorRequest) (*x402.VerifyResponse, error)
	Settle(ctx context.Context, req FacilitatorRequest) (*x402.SettleResponse, error)
}

// Facilitator is an HTTP client for an x402 facilitator.
type Facilitator struct {
	base          string
	client        *http.Client
	verifyTimeout time.Duration
	settleTimeout time.Duration
	// authName and authValue are the credentials header sent on every request (WithAuth); the value is
	// never returned by a method, logged or put in an error.
	authName, authValue string
}

// WithAuth makes every request to the facilitator carry the header name: value (its credentials, from
// server.fees.facilitator_auth_header_file or _env). Call it before use.
func (f *Facilitator) WithAuth(name, value string) *Facilitator {
	f.authName, f.authValue = name, value
	// A redirect that leaves the facilitator (another host or port, or https to http) never carries the
	// credentials: net/http drops only Authorization-like headers there and copies a custom one (an API key
	// header) to wherever the redirect points.
	c := *f.client
	prev := c.CheckRedirect
	c.CheckRedirect = func(req *http.Request, via []*http.Request) error {
		if req.URL.Host != via[0].URL.Host || req.URL.Scheme != via[0].URL.Scheme {
			req.Header.Del(name)
		}
		if prev != nil {
			return prev(req, via)
		}
		if len(via) >= 10 {
			return errors.New("stopped after 10 redirects")
		}
		return nil
	}
	f.client = &c
	return f
}

// setAuth adds the credentials header to req.
func (f *Facilitator) setAuth(req *http.Request) {
	if f.authName != "" {
		req.Header.Set(f.authName, f.authValue)
	}
}

// NewFacilitator returns a client for the facilitator at baseURL. client may be nil (a dedicated client with
// its own transport is made, so the service's other traffic never shares its pool).
func NewFacilitator(baseURL string, client *http.Client, verifyTimeout, settleTimeout time.Duration) *Facilitator {
	if client == nil {
		tr := egress.Transport() // never through payguard's own listener
		tr.MaxIdleConnsPerHost = 64
		client = &http.Client{Transport: tr}
	}
	return &Facilitator{base: strings.TrimRight(baseURL, "/"), client: client,
		verifyTimeout: verifyTimeout, settleTimeout: settleTimeout}
}

// URL is the facilitator's base URL as it may be shown (published, logged): without any user:password@
// (the configuration refuses one; credentials travel in the WithAuth header).
func (f *Facilitator) URL() string {
	u, err := url.Parse(f.base)
	if err != nil {
		return "(unparseable facilitator URL)"
	}
	u.User = nil
	return u.String()
}

// Verify asks POST /verify. Any failure to get a parseable answer is ErrFacilitatorUnavailable. A non-200
// answer whose body still parses with an isValid member counts as the facilitator's verdict (as the SDK does),
// except 5xx, which is an outage.
func (f *Facilitator) Verify(ctx context.Context, req FacilitatorRequest) (*x402.VerifyResponse, error) {
	ctx, cancel := context.WithTimeout(ctx, f.verifyTimeout)
	defer cancel()
	status, body, _, err := f.post(ctx, "/verify", req)
	if err != nil {
		return nil, fmt.Errorf("%w: verify: %v", ErrFacilitatorUnavailable, err)
	}
	if status >= 500 {
		return nil, fmt.Errorf("%w: verify answered HTTP %d", ErrFacilitatorUnavailable, status)
	}
	// Probe for the member first: a missing isValid must not read as false (x402 types may decode leniently).
	var probe struct {
		IsValid *bool `json:"isValid"`
	}
	var out x402.VerifyResponse
	if json.Unmarshal(body, &probe) != nil || probe.IsValid == nil || json.Unmarshal(body, &out) != nil {
		return nil, fmt.Errorf("%w: verify answered HTTP %d without an isValid verdict", ErrFacilitatorUnavailable, status)
	}
	out.IsValid = *probe.IsValid
	return &out, nil
}

// Settle asks POST /settle exactly once. A request that was never written (dial failure) is
// ErrFacilitatorUnavailable: nothing can have been settled. Once the request was written, a timeout, a
// reset, a 5xx or an unparseable answer is ErrSettlementUnknown. A parseable {success:false} is returned as
// a response, not an error.
func (f *Facilitator) Settle(ctx context.Context, req FacilitatorRequest) (*x402.SettleResponse, error) {
	ctx, cancel := context.WithTimeout(ctx, f.settleTimeout)
	defer cancel()
	status, body, wrote, err := f.post(ctx, "/settle", req)
	if err != nil {
		if !wrote {
			return nil, fmt.Errorf("%w: settle request not sent: %v", ErrFacilitatorUnavailable, err)
		}
		return nil, fmt.Errorf("%w: %v", ErrSettlementUnknown, err)
	}
	if status >= 500 {
		return nil, fmt.Errorf("%w: settle answered HTTP %d", ErrSettlementUnknown, status)
	}
	var probe struct {
		Success *bool `json:"success"`
	}
	var out x402.SettleResponse
	if json.Unmarshal(body, &probe) != nil || probe.Success == nil || json.Unmarshal(body, &out) != nil {
		return nil, fmt.Errorf("%w: settle answered HTTP %d without a success member", ErrSettlementUnknown, status)
	}
	if *probe.Success && status != http.StatusOK {
		return nil, fmt.Errorf("%w: settle answered HTTP %d with success:true", ErrSettlementUnknown, status)
	}
	out.Success = *probe.Success
	return &out, nil
}

// GetSupported asks GET /supported.
func (f *Facilitator) GetSupported(ctx context.Context) (*Supported, error) {
	ctx, cancel := context.WithTimeout(ctx, f.verifyTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, f.base+"/supported", nil)
	if err != nil {
		return nil, err
	}
	f.setAuth(req)
	resp, err := f.client.Do(req)
	if err != nil {
		return nil, fmt.Errorf("%w: supported: %v", ErrFacilitatorUnavailable, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxFacilitatorBody))
	if err != nil || resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("%w: supported answered HTTP %d", ErrFacilitatorUnavailable, resp.StatusCode)
	}
	var s Supported
	if err := json.Unmarshal(body, &s); err != nil {
		return nil, fmt.Errorf("%w: supported: %v", ErrFacilitatorUnavailable, err)
	}
	return &s, nil
}

// post sends one JSON POST and reports whether the request was completely written, which decides whether
// a failed /settle may have reached the facilitator.
func (f *Facilitator) post(ctx context.Context, path string, v any) (status int, body []byte, wrote bool, err error) {
	payload, err := json.Marshal(v)
	if err != nil {
		return 0, nil, false, err
	}
	var written atomic.Bool
	trace := &httptrace.ClientTrace{WroteRequest: func(info httptrace.WroteRequestInfo) {
		if info.Err == nil {
			written.Store(true)
		}
	}}
	req, err := http.NewRequestWithContext(httptrace.WithClientTrace(ctx, trace), http.MethodPost, f.base+path, bytes.NewReader(payload))
	if err != nil {
		return 0, nil, false, err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json")
	f.setAuth(req)
	resp, err := f.client.Do(req)
	if err != nil {
		return 0, nil, written.Load(), err
	}
	defer resp.Body.Close()
	body, err = io.ReadAll(io.LimitReader(resp.Body, maxFacilitatorBody))
	if err != nil {
		return resp.StatusCode, nil, true, fmt.Errorf("reading %s answer: %w", path, err)
	}
	return resp.StatusCode, body, true, nil
}

// Package view is the shapes in which the proxy's state is shown, defined once for every channel that shows
// it: a hold (the admin API's /v1/holds, `payguard holds`, the console and the webhooks all render Hold, built
// by HoldOf from the stored hold), today's budget, a decision row of the console, and the in-process guard's
// decision (POST /v1/decide). It sits below package proxy, its admin side (proxy/admin), the console and the
// notifier, so that the proxy core and the admin handlers speak through these types without importing each
// other.
package view

import (
	"encoding/json"
	"errors"
	"net/url"
	"time"

	"github.com/payguard/payguard/policy"
	"github.com/payguard/payguard/preflight"
	"github.com/payguard/payguard/store"
	"github.com/payguard/payguard/x402"
)

// Hold is a hold with what a person needs to decide it, read from the decision that held it.
type Hold struct {
	ID           string     `json:"id"`
	Status       string     `json:"status"` // a pending hold past its expiry is "expired"
	Method       string     `json:"method"`
	URL          string     `json:"url"`
	Host         string     `json:"host"`
	AmountUSD    string     `json:"amount_usd"`
	AmountMicros int64      `json:"amount_micros"`
	Agent        string     `json:"agent,omitempty"` // the agent the payment is for (proxy agents)
	AmountAtomic string     `json:"amount_atomic"`
	Scheme       string     `json:"scheme"`
	Network      string     `json:"network"`
	NetworkName  string     `json:"network_name,omitempty"` // "Base" for eip155:8453 (x402.NetworkName); "" when unknown
	Asset        string     `json:"asset"`
	AssetName    string     `json:"asset_name,omitempty"` // "USDC" for a known USDC contract; "" otherwise
	PayTo        string     `json:"pay_to"`
	Description  string     `json:"description,omitempty"` // the seller's: v2 resource.description, else the v1 option's
	Reasons      []string   `json:"reasons"`
	ReceiptID    string     `json:"receipt_id,omitempty"`
	DataAsOf     string     `json:"data_as_of,omitempty"`
	Screening    *Screening `json:"screening,omitempty"`
	CreatedAt    time.Time  `json:"created_at"`
	ExpiresAt    time.Time  `json:"expires_at"`
	ResolvedBy   string     `json:"resolved_by,omitempty"`
	Note         string     `json:"note,omitempty"`
	ResolvedAt   *time.Time `json:"resolved_at,omitempty"`
	// Decision is the held decision, the engine's result JSON with its signed receipt: only the admin API
	// fills it (WithDecision), for programs that verify the receipt.
	Decision json.RawMessage `json:"decision,omitempty"`
}

// Screening is the evidence the engine gathered: sanctions matches (score, listed name) and domain facts.
type Screening struct {
	MerchantDomain string                    `json:"merchant_domain"`
	Sanctions      preflight.PayeeSanctions  `json:"sanctions"`
	Domain         preflight.PayeeDomainInfo `json:"domain"`
}

// Budget is today's ledger for the proxy's budget.
type Budget struct {
	Name           string `json:"name"`
	Day            string `json:"day"`
	SpentUSD       string `json:"spent_usd"`
	ReservedUSD    string `json:"reserved_usd"`
	CapUSD         string `json:"cap_usd"`
	SpentMicros    int64  `json:"spent_micros"`
	ReservedMicros int64  `json:"reserved_micros"`
	CapMicros      int64  `json:"cap_micros"`
}

// NewBudget states a ledger reading.
func NewBudget(name, day string, st store.BudgetState, capMicros int64) Budget {
	return Budget{Name: name, Day: day, SpentUSD: policy.USD(st.Spent).String(), ReservedUSD: policy.USD(st.Reserved).String(),
		CapUSD: policy.USD(capMicros).String(), SpentMicros: st.Spent, ReservedMicros: st.Reserved, CapMicros: capMicros}
}

// HoldOf reads a stored hold. The held decision is the engine's result JSON; a hold whose decision cannot
// be read still shows its id, URL, amount and times.
func HoldOf(h store.Hold, now time.Time) Hold {
	v := holdOf(h, now)
	v.name()
	return v
}

// WithDecision is v with the held decision as stored (the engine's result JSON with its receipt), as the
// admin API shows a hold to programs; the console and the webhooks leave it out.
func (v Hold) WithDecision(h store.Hold) Hold {
	if json.Valid(h.Decision) {
		v.Decision = h.Decision
	}
	return v
}

func holdOf(h store.Hold, now time.Time) Hold {
	v := Hold{ID: h.ID, Status: h.Status, Method: h.Method, URL: h.URL, Host: hostOf(h.URL),
		AmountUSD: policy.USD(h.AmountMicros).String(), AmountMicros: h.AmountMicros,
		CreatedAt: h.CreatedAt, ExpiresAt: h.ExpiresAt, ResolvedBy: h.ResolvedBy, Note: h.Note, Reasons: []string{},
		Description: h.Description, Agent: h.Agent}
	if v.Status == "" {
		v.Status = store.HoldPending
	}
	if v.Status == store.HoldPending && !now.Before(h.ExpiresAt) {
		v.Status = store.HoldExpired
	}
	if !h.ResolvedAt.IsZero() {
		t := h.ResolvedAt
		v.ResolvedAt = &t
	}
	var res preflight.Result
	if json.Unmarshal(h.Decision, &res) != nil {
		return v
	}
	if res.Reasons != nil {
		v.Reasons = res.Reasons
	}
	v.ReceiptID, v.DataAsOf = res.Receipt.ID, res.DataAsOf
	if o := res.ChosenOption; o != nil {
		v.Scheme, v.Network, v.Asset, v.PayTo, v.AmountAtomic = o.Scheme, o.Network, o.Asset, o.PayTo, o.Amount
		if v.Description == "" {
			v.Description = o.Description // a hold recorded before holds kept the v2 description
		}
	}
	if p := res.Payee; p != nil {
		if v.PayTo == "" {
			v.PayTo, v.Network = p.PayTo, p.Network
		}
		v.Screening = &Screening{MerchantDomain: p.MerchantDomain, Sanctions: p.Sanctions, Domain: p.Domain}
	}
	return v
}

// name fills NetworkName and AssetName from the network and asset.
func (v *Hold) name() {
	v.NetworkName, _ = x402.NetworkName(v.Network)
	v.AssetName, _ = x402.AssetName(v.Network, v.Asset)
}

// Decision is one decision as the console lists it.
type Decision struct {
	At        time.Time `json:"at"`
	Stage     string    `json:"stage"`
	Agent     string    `json:"agent,omitempty"` // the agent decided for (proxy agents)
	Decision  string    `json:"decision"`
	Class     string    `json:"class,omitempty"` // the reason class the metrics count (hold_approved, daily_cap...)
	Reasons   []string  `json:"reasons"`
	Method    string    `json:"method"`
	Host      string    `json:"host"`
	Path      string    `json:"path"`
	AmountUSD string    `json:"amount_usd,omitempty"`
	// Scheme is the payment scheme of the option decided or paid (exact, upto); for a settlement row,
	// Authorized and Settled are its amounts in atomic units.
	Scheme     string `json:"scheme,omitempty"`
	Authorized string `json:"authorized,omitempty"`
	Settled    string `json:"settled,omitempty"`
	PayTo      string `json:"pay_to,omitempty"`
	HoldID     string `json:"hold_id,omitempty"`
	ReceiptID  string `json:"receipt_id,omitempty"`
}

func hostOf(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return ""
	}
	return u.Hostname()
}

// GuardDecision is POST /v1/decide's answer to an in-process guard: the decision, its reasons, the amount
// reserved (a hold: the amount a person approves), the hold to wait on and the signed result.
type GuardDecision struct {
	Decision     string            `json:"decision"`
	Reasons      []string          `json:"reasons"`
	AmountMicros int64             `json:"amount_micros"`
	HoldID       string            `json:"hold_id,omitempty"`
	ReceiptID    string            `json:"receipt_id,omitempty"`
	Result       *preflight.Result `json:"result,omitempty"` // the signed PreflightResult, when one was made
	// Shadow is "would_block" or "would_hold" when report mode let the payment go.
	Shadow string `json:"shadow,omitempty"`
}

// Errors the proxy core answers its admin side with, beside the store's (store.ErrNotFound, ErrConflict).
var (
	// ErrUnauthenticated: the agent's Proxy-Authorization names no agent of the active rule set.
	ErrUnauthenticated = errors.New("agent not authenticated")
	// ErrReloadUnavailable: the proxy was started without a configuration file to reload.
	ErrReloadUnavailable = errors.New("reload is not configured")
	// ErrHoldExpired: the hold is past its expiry and can no longer be approved or denied.
	ErrHoldExpired = errors.New("the hold has expired")
)

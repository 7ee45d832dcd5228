package admin

import (
	"context"
	"net/http"

	"github.com/payguard/payguard/proxy/view"
	"github.com/payguard/payguard/store"
	"github.com/payguard/payguard/x402"
)

// Core is what the admin listener needs of the running proxy (*proxy.Proxy implements it): the decisions
// and state changes only the proxy can make, and the state it keeps in its own memory. Its types are the
// shared views (proxy/view) and the store's, so neither package imports the other.
type Core interface {
	// Agent authenticates the agent a request's Proxy-Authorization names, as the proxy does its own
	// requests (and counts a refusal); view.ErrUnauthenticated: no such agent of the active rule set.
	Agent(h http.Header) (id string, err error)
	// DecideForGuard decides the challenge an in-process guard's client received, for agent, exactly as
	// the proxy decides an intercepted 402 (same rules, engine, sanctions and ledger; a hold waits for
	// a person up to hold_wait), and lists it among the last decisions. url is what the agent requested (""
	// when the guard cannot know it), never the seller's claim.
	DecideForGuard(ctx context.Context, agent, method, url string, pr *x402.PaymentRequired) view.GuardDecision
	// ResolveHold approves (store.HoldApproved) or denies (store.HoldDenied) a pending hold for the person
	// by, and wakes the request waiting on it. Errors: store.ErrNotFound, view.ErrHoldExpired,
	// store.ErrConflict (no longer pending), or the store's.
	ResolveHold(ctx context.Context, id, status, by, note string) (store.Hold, error)
	// Budget is today's ledger of the proxy's budget with its daily cap.
	Budget(ctx context.Context) (view.Budget, error)
	// StoreReady is nil when the store can be written and the ledger read (else the proxy refuses every
	// payment, so it is not ready).
	StoreReady(ctx context.Context) error
	// ModeStatus describes report mode for /readyz when it is on; nil otherwise.
	ModeStatus() any
	// Reload rereads the configuration into a new rule set and swaps it in; on error the old one stays.
	// view.ErrReloadUnavailable: started without a configuration file.
	ReloadNow() (configSHA256 string, err error)
	// Alarms are the settlement alarms in force; ClearAlarm lifts the one on host's seller site and returns
	// that site (store.ErrNotFound: none).
	Alarms(ctx context.Context) ([]store.Alarm, error)
	ClearAlarm(ctx context.Context, host string) (site string, err error)
	// RecentDecisions are this process's last decisions, newest first, for the console.
	RecentDecisions() []view.Decision
}

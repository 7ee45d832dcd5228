// Package store holds payguard's state behind small interfaces: the daily budget ledger, holds awaiting a
// person, payment tickets, the free-trial counter and endpoint observations. Implementations: memory (tests,
// single process), bolt (the embedded default, a file that survives restarts and kill -9) and redis (a fleet).
// All of them pass the conformance suite in store/storetest.
//
// Money is int64 micro-dollars (1 USD = 1_000_000). Days are UTC days formatted "2006-01-02".
//
// Arguments no implementation accepts (a negative amount, a malformed day, an empty id or key) fail with
// ErrInvalid before any state changes. Implementations are opened by store/open (Open, FromConfig).
package store

import (
	"context"
	"errors"
	"time"
)

var (
	ErrNotFound       = errors.New("store: not found")
	ErrBudgetExceeded = errors.New("store: daily cap would be exceeded")
	ErrAlreadyUsed    = errors.New("store: already used")
	ErrConflict       = errors.New("store: state conflict") // e.g. resolving a hold that is no longer pending
)

// BudgetState is one budget's figures for one UTC day.
type BudgetState struct {
	Day      string `json:"day"`
	Spent    int64  `json:"spent_micros"`    // committed (settled or released to the seller)
	Reserved int64  `json:"reserved_micros"` // reserved and not yet committed; kept when a payment fails or is abandoned
}

// Ledger is the daily budget. Reserve is atomic per budget: spent+reserved+amount must stay <= capMicros,
// whatever the interleaving of callers and processes.
type Ledger interface {
	Reserve(ctx context.Context, budget, day string, amountMicros, capMicros int64) (reservationID string, err error)
	// Commit moves a reservation's amount from reserved to spent (idempotent). A reservation unknown under
	// that budget and day is ErrNotFound. There is no release: a reservation whose payment failed or was
	// abandoned keeps counting until the day ends (SPEC §11.4).
	Commit(ctx context.Context, budget, day, reservationID string) error
	// State is zero for a budget or day never reserved against.
	State(ctx context.Context, budget, day string) (BudgetState, error)
}

// HoldStatus values.
const (
	HoldPending  = "pending"
	HoldApproved = "approved"
	HoldDenied   = "denied"
	HoldUsed     = "used" // an approved hold that released its payment once
	HoldExpired  = "expired"
)

// Hold is a payment waiting for a person.
type Hold struct {
	ID           string    `json:"id"`
	Status       string    `json:"status"`
	Key          string    `json:"key"` // identifies the request (method + URL + chosen option) so the retry finds it
	Method       string    `json:"method"`
	URL          string    `json:"url"`
	Decision     []byte    `json:"decision"` // the PreflightResult JSON that held it
	AmountMicros int64     `json:"amount_micros"`
	CreatedAt    time.Time `json:"created_at"`
	ExpiresAt    time.Time `json:"expires_at"`
	ResolvedBy   string    `json:"resolved_by,omitempty"`
	Note         string    `json:"note,omitempty"`
	ResolvedAt   time.Time `json:"resolved_at,omitempty"`
}

// Holds stores holds. Resolve moves pending → approved|denied (ErrConflict otherwise); Use moves
// approved → used exactly once (ErrAlreadyUsed on a second call).
//
// A hold is created pending (an empty Status means pending); a duplicate ID is ErrConflict. FindHold's
// newest is the latest CreatedAt, and among equal times the one created last. Expiry: resolving a pending
// hold after its ExpiresAt (at > ExpiresAt), or using an approved hold after it by the store's own clock,
// fails with ErrConflict and stores the hold as HoldExpired, so a person sees why. ListHolds is in
// creation order.
type Holds interface {
	CreateHold(ctx context.Context, h Hold) error
	GetHold(ctx context.Context, id string) (Hold, error)
	FindHold(ctx context.Context, key string) (Hold, error)       // newest hold with that key
	ListHolds(ctx context.Context, status string) ([]Hold, error) // "" = all
	ResolveHold(ctx context.Context, id, status, by, note string, at time.Time) (Hold, error)
	UseHold(ctx context.Context, id string) (Hold, error)
}

// Ticket is an allowed payment the proxy may release once.
type Ticket struct {
	ID            string `json:"id"`
	Key           string `json:"key"`    // method + URL + network + asset + payTo + amount, canonical
	Option        []byte `json:"option"` // the chosen requirement JSON, for v2 `accepted` comparison
	ReservationID string `json:"reservation_id"`
	// ReceiptID is the receipt of the decision that allowed the payment; the proxy returns it with the
	// paid response (X-Payguard-Receipt). Empty in tickets written before it existed.
	ReceiptID string `json:"receipt_id,omitempty"`
	// HoldID is the approved hold this ticket's payment spends (UseHold when the payment is taken), so an
	// approval is used by the payment that goes through, not by a 402 its agent may never read.
	HoldID       string    `json:"hold_id,omitempty"`
	Budget       string    `json:"budget"`
	Day          string    `json:"day"`
	AmountMicros int64     `json:"amount_micros"`
	ExpiresAt    time.Time `json:"expires_at"`
	Used         bool      `json:"used"`
}

// Tickets stores tickets. TakeTicket atomically marks the newest unused, unexpired ticket with that key as
// used and returns it; ErrNotFound when there is none.
//
// Newest means stored last. A ticket is unexpired while now <= ExpiresAt. ReserveTicket gives a ticket
// without an ID a random one; a duplicate ID is ErrConflict; a ticket needs a Key and an ExpiresAt.
type Tickets interface {
	TakeTicket(ctx context.Context, key string, now time.Time) (Ticket, error)
	// MarkPaymentSeen records a payment header digest; ErrAlreadyUsed if it was seen before (replay).
	MarkPaymentSeen(ctx context.Context, digest string, ttl time.Duration) error
	// ReserveTicket reserves amountMicros as Ledger.Reserve does and records t bound to that reservation
	// (its ReservationID, Budget, Day and AmountMicros are set from the arguments) in the same step. The
	// reservation counts against the cap as soon as it returns; a store may make it durable later (bolt:
	// journaled at once, committed in the next group commit) but before TakeTicket can take the ticket, so
	// its payment is never released first. Over the cap it is ErrBudgetExceeded and nothing is written. A ticket never exists without its reservation; a store that
	// cannot make the two one atomic write (redis: keys in different slots) reserves first, and when the
	// ticket then fails the reservation stays, counted like any abandoned one. It returns the stored ticket.
	ReserveTicket(ctx context.Context, budget, day string, amountMicros, capMicros int64, t Ticket) (Ticket, error)
}

// Trial counts free-trial calls per client per UTC day; entries expire after retention (48 h), counted from
// the day's first call. Refused calls do not count; a limit <= 0 refuses every call.
type Trial interface {
	// TakeTrial increments the counter if it is below limit and reports whether the call may proceed and the
	// count after the call.
	TakeTrial(ctx context.Context, client, day string, limit int, retention time.Duration) (ok bool, used int, err error)
}

// Observation is one cached unpaid probe of a public x402 endpoint.
type Observation struct {
	URL        string    `json:"url"`
	Method     string    `json:"method"`
	ObservedAt time.Time `json:"observed_at"`
	Status     int       `json:"status"`
	Usable     bool      `json:"usable"`
	Challenge  []byte    `json:"challenge,omitempty"` // the PaymentRequired JSON seen, if any
	Error      string    `json:"error,omitempty"`
}

// Endpoints stores endpoint observations, newest last, per URL and method. Observations returns every
// method's observations of a URL ordered by ObservedAt, oldest first (an empty slice for an unknown URL);
// IndexUpdatedAt is the newest ObservedAt ever put.
type Endpoints interface {
	PutObservation(ctx context.Context, o Observation) error
	Observations(ctx context.Context, url string) ([]Observation, error) // all methods
	IndexUpdatedAt(ctx context.Context) (time.Time, error)               // zero when the index was never filled
}

// Store bundles every part; Close releases files and connections.
type Store interface {
	Ledger
	Holds
	Tickets
	Trial
	Endpoints
	Close() error
}

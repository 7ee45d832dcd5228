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
	"fmt"
	"time"
)

var (
	ErrNotFound       = errors.New("store: not found")
	ErrBudgetExceeded = errors.New("store: daily cap would be exceeded")
	ErrAlreadyUsed    = errors.New("store: already used")
	ErrConflict       = errors.New("store: state conflict") // e.g. resolving a hold that is no longer pending
	// ErrLedgerLost: the store found that state it recorded is gone (a wiped Redis, a bolt file that
	// went back in time). Every payment is refused until an operator acts; the message names the command.
	ErrLedgerLost = errors.New("store: ledger lost")
)

// Health is implemented by stores that can lose the ability to record payments while running (a journal
// whose writes fail, a Redis that was wiped): Healthy is nil while they can, and readiness follows it.
type Health interface {
	Healthy(ctx context.Context) error
}

// Healthy is s's health when it reports one, nil for a store that cannot fail that way (memory).
func Healthy(ctx context.Context, s any) error {
	if h, ok := s.(Health); ok {
		return h.Healthy(ctx)
	}
	return nil
}

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
	// that budget and day, or released with its unused ticket (Tickets), is ErrNotFound. Reserve's own
	// reservations are never released: a payment forwarded whose outcome is unknown keeps counting until the
	// day ends (SPEC §11.4).
	Commit(ctx context.Context, budget, day, reservationID string) error
	// Settle commits a reservation for what was actually spent: settledMicros, at most the reservation's
	// amount, becomes spent and the rest of the reservation is released (an `upto` payment settles its
	// usage, up to the maximum reserved). Commit is Settle with the whole amount. Idempotent as Commit is:
	// a reservation already committed or settled stays as it was (nil). Unknown reservations are
	// ErrNotFound, as for Commit; a negative settledMicros or one above the reservation is ErrInvalid, and
	// nothing changes.
	Settle(ctx context.Context, budget, day, reservationID string, settledMicros int64) error
	// State is zero for a budget or day never reserved against. It counts no reservation whose ticket
	// expired unused more than TicketReleaseGrace ago by the store's clock (see Tickets).
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
	ID       string `json:"id"`
	Status   string `json:"status"`
	Key      string `json:"key"` // identifies the request (method + URL + chosen option) so the retry finds it
	Method   string `json:"method"`
	URL      string `json:"url"`
	Decision []byte `json:"decision"` // the PreflightResult JSON that held it
	// Description is what the seller says the payment is for, as the approver is shown it: the v2
	// challenge's resource.description, else the held option's v1 description (bounded by the proxy).
	Description  string    `json:"description,omitempty"`
	AmountMicros int64     `json:"amount_micros"`
	CreatedAt    time.Time `json:"created_at"`
	ExpiresAt    time.Time `json:"expires_at"`
	ResolvedBy   string    `json:"resolved_by,omitempty"`
	Note         string    `json:"note,omitempty"`
	ResolvedAt   time.Time `json:"resolved_at,omitempty"`
	// Agent is the agent the held payment is for (the proxy's agents; "" in holds made before agents).
	Agent string `json:"agent,omitempty"`
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

// TicketReleaseGrace is how long after its ticket's ExpiresAt an untaken ticket's reservation is released.
// Safety does not rest on it (a release and a TakeTicket of the same ticket are atomic against each other,
// so a ticket is either taken, and its reservation kept, or released, and never taken); it keeps a replica
// whose clock runs ahead from releasing a ticket another replica can still match, which would send that
// payment to a fresh decision instead.
const TicketReleaseGrace = time.Minute

// Tickets stores tickets. TakeTicket atomically marks the newest unused, unexpired ticket with that key as
// used and returns it; ErrNotFound when there is none.
//
// A reservation made by ReserveTicket is a lease: it counts against the cap from the start, and it is
// released (the amount leaves reserved, and Commit no longer knows it) once the store's clock passes its
// ticket's ExpiresAt + TicketReleaseGrace with the ticket not taken, because a 402 the agent never paid must
// not spend its budget. TakeTicket pins the reservation: from then on it counts until it is committed or
// the day ends, whatever happens to the payment (SPEC: a payment forwarded with an unknown outcome keeps
// its reservation). The release happens, at the latest, when State reads the budget or a reservation
// would otherwise not fit under the cap, so neither ever counts a released lease.
//
// Newest means stored last. A ticket is unexpired while now <= ExpiresAt. ReserveTicket gives a ticket
// without an ID a random one; a duplicate ID is ErrConflict; a ticket needs a Key and an ExpiresAt.
type Tickets interface {
	TakeTicket(ctx context.Context, key string, now time.Time) (Ticket, error)
	// MarkPaymentSeen records a payment header digest; ErrAlreadyUsed if it was seen before (replay).
	MarkPaymentSeen(ctx context.Context, digest string, ttl time.Duration) error
	// ForgetPaymentSeen removes a digest's mark (nil when there is none): for a payment claimed before it
	// was verified whose payment was then never presented for settlement, so its payer may present it again.
	ForgetPaymentSeen(ctx context.Context, digest string) error
	// ReserveTicket reserves amountMicros as Ledger.Reserve does and records t bound to that reservation
	// (its ReservationID, Budget, Day and AmountMicros are set from the arguments) in the same step. The
	// reservation counts against the cap as soon as it returns; a store may make it durable later (bolt:
	// journaled at once, committed in the next group commit) but before TakeTicket can take the ticket, so
	// its payment is never released first. Over the cap it is ErrBudgetExceeded and nothing is written. Every
	// store makes the reservation and the ticket one atomic write (redis: one script). It returns the stored ticket.
	ReserveTicket(ctx context.Context, budget, day string, amountMicros, capMicros int64, t Ticket) (Ticket, error)
}

// StateAndAlarm is a store that reads a budget's state and a seller's settlement alarm (store.Alarms) in one
// round trip (redis: one script, issue 36); the proxy reads both this way before each decision when its store
// has it. State failing is the error; the alarm's outcome is AlarmErr: nil (Alarm is the seller's, in force
// at now), ErrNotFound (none in force), or why it could not be read.
type StateAndAlarm interface {
	StateAndAlarm(ctx context.Context, budget, day, host string, now time.Time) (st BudgetState, a Alarm, alarmErr, err error)
}

// Trial counts free-trial calls per client per UTC day; entries expire after retention (48 h), counted from
// the day's first call. Refused calls do not count; a limit <= 0 refuses every call.
type Trial interface {
	// TakeTrial increments the counter if it is below limit and reports whether the call may proceed and the
	// count after the call.
	TakeTrial(ctx context.Context, client, day string, limit int, retention time.Duration) (ok bool, used int, err error)
}

// Observation is one sighting of a public x402 endpoint: a 402 the proxy decoded, a paid response it
// forwarded, or an unpaid probe. URL is the normalized endpoint URL (index.NormalizeURL).
type Observation struct {
	URL        string    `json:"url"`
	Method     string    `json:"method"`
	ObservedAt time.Time `json:"observed_at"`
	Status     int       `json:"status"`
	// Usable is true when the endpoint answered as a live x402 endpoint (a decodable 402, or a paid 2xx).
	Usable    bool   `json:"usable"`
	Challenge []byte `json:"challenge,omitempty"` // the PaymentRequired JSON seen, if any (probes may keep it)
	Error     string `json:"error,omitempty"`
	// Source says who saw it: SourceChallenge, SourcePaid or SourceProbe ("" in observations written
	// before sources existed).
	Source string `json:"source,omitempty"`
	// Offers are the payment options the endpoint offered (a 402), in its order.
	Offers []Offer `json:"offers,omitempty"`
	// Paid is the option a payment was released for (SourcePaid).
	Paid *Offer `json:"paid,omitempty"`
	// Settled is true when the seller's answer to that payment carried a successful settlement (SourcePaid):
	// the payment cost the payer something, so the endpoint's price may move its category's median.
	Settled bool `json:"settled,omitempty"`
	// Listed is true when the prober found the endpoint in a facilitator's discovery list (SourceProbe).
	Listed bool `json:"listed,omitempty"`
	// Category is the seller's own category from its bazaar/discovery metadata, "" when it names none.
	Category string `json:"category,omitempty"`
	// Metadata is the seller's bazaar/discovery metadata as sent (bounded by the writer), if any.
	Metadata []byte `json:"metadata,omitempty"`
}

// Observation sources.
const (
	SourceChallenge = "proxy_402"  // a 402 challenge the proxy decoded (allowed, held or blocked)
	SourcePaid      = "proxy_paid" // the seller's response to a payment the proxy released
	SourceProbe     = "probe"      // an unpaid request from the prober
)

// Offer is one payment option as the Index keeps it: network as CAIP-2 when known, asset and payTo as sent,
// amount in atomic units as a decimal string.
type Offer struct {
	Scheme  string `json:"scheme"`
	Network string `json:"network"`
	Asset   string `json:"asset"`
	Amount  string `json:"amount"`
	PayTo   string `json:"pay_to"`
	// Settled is what the seller settled for a paid observation, in atomic units, when the proxy read it
	// (for an upto option Amount is the authorized maximum and Settled the usage charged).
	Settled string `json:"settled,omitempty"`
}

// Retention bounds the observations kept per URL: at most MaxPerURL (the oldest go first), none older than
// MaxAge before the newest put. Zero fields are no bound. PutObservation enforces it on the URL it writes;
// readers also drop entries older than MaxAge (index.Derive), so an endpoint never observed again does not
// keep stale evidence alive (Redis also expires the whole list MaxAge after its last put).
type Retention struct {
	MaxPerURL int
	MaxAge    time.Duration
}

// Endpoints stores endpoint observations, newest last, per URL and method. Observations returns every
// method's observations of a URL ordered by ObservedAt, oldest first (an empty slice for an unknown URL);
// IndexUpdatedAt is the newest ObservedAt ever put. PutObservation applies keep to o.URL's list.
type Endpoints interface {
	PutObservation(ctx context.Context, o Observation, keep Retention) error
	Observations(ctx context.Context, url string) ([]Observation, error) // all methods
	IndexUpdatedAt(ctx context.Context) (time.Time, error)               // zero when the index was never filled
}

// MaxSellerHosts bounds the hosts a Sellers store remembers. Past it the store is full: every host counts
// as a seller (fail closed: upgrades are refused everywhere under refuse_after_402) rather than a seller
// being forgotten.
const MaxSellerHosts = 1 << 16

// Sellers remembers the hosts that have answered 402 through the proxy, for proxy.upgrades'
// refuse_after_402 (a protocol upgrade to such a host is refused: payments inside an upgraded stream
// cannot be read). A store that keeps it across restarts and shares it between replicas (bolt, redis) makes
// "a host that has answered 402" mean ever, not since this process started. Hosts are names as the proxy
// keys them (lower case, no port). IsSeller is true for every host once MaxSellerHosts are remembered.
type Sellers interface {
	MarkSeller(ctx context.Context, host string) error
	IsSeller(ctx context.Context, host string) (bool, error)
}

// MaxAlarms bounds the settlement alarms a store keeps; past it, raising one forgets the oldest first.
const MaxAlarms = 4096

// Alarm is a settlement alarm on a seller: it reported a settlement its authorization does not allow (an
// upto settlement above the authorized maximum, ...), so its payments are held for a person until Until.
// Host is the seller's canonical merchant domain.
type Alarm struct {
	Host  string    `json:"host"`
	What  string    `json:"what"`
	At    time.Time `json:"at"`
	Until time.Time `json:"until"`
}

// Alarms keeps settlement alarms, shared by every replica of a store and kept across restarts (bolt, redis),
// so a seller caught by one proxy is held by all. RaiseAlarm replaces the host's alarm; Alarm returns the
// host's alarm while now < Until, else ErrNotFound; ClearAlarm removes it (ErrNotFound when there is none
// active); ListAlarms returns the alarms active at now, in no particular order.
type Alarms interface {
	RaiseAlarm(ctx context.Context, a Alarm) error
	Alarm(ctx context.Context, host string, now time.Time) (Alarm, error)
	ClearAlarm(ctx context.Context, host string, now time.Time) error
	ListAlarms(ctx context.Context, now time.Time) ([]Alarm, error)
}

// CheckAlarm validates an alarm before it is stored: a host name, bounded text, an expiry after its time.
func CheckAlarm(a Alarm) error {
	if err := CheckName("alarm host", a.Host); err != nil {
		return err
	}
	if len(a.What) > 1024 {
		return fmt.Errorf("%w: alarm text of %d bytes (at most 1024)", ErrInvalid, len(a.What))
	}
	if !a.Until.After(a.At) {
		return fmt.Errorf("%w: alarm expires before it is raised", ErrInvalid)
	}
	return nil
}

// ObservationBatcher is implemented by stores that write several observations at once more cheaply than
// one by one (bolt: one transaction and fsync). It behaves as PutObservation for each, all or nothing.
type ObservationBatcher interface {
	PutObservations(ctx context.Context, obs []Observation, keep Retention) error
}

// Warner is implemented by stores that have something to tell an operator at start (redis: persistence
// that is off or unknown). The commands that open a store log each warning; a store without any need not
// implement it.
type Warner interface {
	Warnings() []string
}

// Store bundles every part; Close releases files and connections.
type Store interface {
	Ledger
	Holds
	Tickets
	Trial
	Endpoints
	Deliveries
	Alarms
	Sellers
	Close() error
}

// MaxDeliveryBytes bounds one delivery record (PutDelivery refuses a larger value with ErrInvalid).
const MaxDeliveryBytes = 256 << 10

// Deliveries keeps, for a bounded window, what `payguard serve` owes or delivered for a payment (its state
// and the result the payer paid for), so that a payer who lost the answer gets it by presenting the same
// payment again, on any replica sharing the store. Values are opaque to the store.
type Deliveries interface {
	// PutDelivery stores value (at most MaxDeliveryBytes) under key for ttl, replacing what was there.
	PutDelivery(ctx context.Context, key string, value []byte, ttl time.Duration) error
	// GetDelivery returns the value stored under key; ErrNotFound when there is none or it expired.
	GetDelivery(ctx context.Context, key string) ([]byte, error)
}

// CheckDelivery checks PutDelivery's arguments.
func CheckDelivery(key string, value []byte, ttl time.Duration) error {
	if err := CheckName("delivery key", key); err != nil {
		return err
	}
	if len(value) > MaxDeliveryBytes {
		return fmt.Errorf("%w: delivery is %d bytes (max %d)", ErrInvalid, len(value), MaxDeliveryBytes)
	}
	if ttl <= 0 {
		return fmt.Errorf("%w: delivery ttl %v must be positive", ErrInvalid, ttl)
	}
	return nil
}

package store

import (
	"crypto/rand"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"math"
	"time"
	"unicode/utf8"
)

// ErrInvalid reports an argument no implementation accepts (a negative amount, a malformed day, an empty
// id). It never means a state was changed.
var ErrInvalid = errors.New("store: invalid argument")

// LedgerRetention is how long a budget's day stays readable: bolt and memory drop days whose start is
// more than this long ago; redis expires a day this long after its last reservation, and at most an hour more
// (its expiry is set once an hour, store/redis reserveLua). A Commit that arrives
// later finds nothing (ErrNotFound), which no payment flow comes near.
const LedgerRetention = 35 * 24 * time.Hour

// DayLayout is the format of every day argument: a UTC calendar day.
const DayLayout = "2006-01-02"

// MaxNameBytes bounds budget names, client names, keys, ids and URLs (8 KiB, the usual limit on a request
// line), so that one caller cannot make a store keep unbounded keys; bbolt's own key limit is 32 KiB.
const MaxNameBytes = 8192

// Day returns t's UTC day in DayLayout.
func Day(t time.Time) string { return t.UTC().Format(DayLayout) }

// NewID returns a 128-bit identifier in hex, unique across processes without coordination: the creation
// time in nanoseconds, then 64 random bits. Time first makes ids that are stored as B+tree keys (the bolt
// store's reservations and tickets) arrive in order, so an insert touches the tree's last pages instead of a
// random leaf (the commit-time difference measured is in docs/benchmarks/store.md, "Time-ordered ids").
func NewID() string {
	var buf [32]byte
	return string(AppendNewID(buf[:0]))
}

// AppendNewID appends a NewID to dst: a caller that prefixes it builds the id in one allocation.
func AppendNewID(dst []byte) []byte {
	var b [16]byte
	binary.BigEndian.PutUint64(b[:8], uint64(time.Now().UnixNano()))
	if _, err := rand.Read(b[8:]); err != nil {
		// crypto/rand does not fail on supported platforms; if it ever does, nothing safe can continue.
		panic("store: crypto/rand failed: " + err.Error())
	}
	return hex.AppendEncode(dst, b[:])
}

// CheckDay rejects a day that is not a valid "2006-01-02" date.
func CheckDay(day string) error {
	if !isDay(day) {
		return fmt.Errorf("%w: day %q is not a UTC day in the form 2006-01-02", ErrInvalid, day)
	}
	return nil
}

// isDay reports whether day is a calendar day in DayLayout: what time.Parse then Format giving it back
// accepts, without their allocations (every reservation checks its day: issue 36, store402).
func isDay(day string) bool {
	if len(day) != 10 || day[4] != '-' || day[7] != '-' {
		return false
	}
	num := func(s string) int {
		n := 0
		for i := 0; i < len(s); i++ {
			if s[i] < '0' || s[i] > '9' {
				return -1
			}
			n = n*10 + int(s[i]-'0')
		}
		return n
	}
	y, m, d := num(day[:4]), num(day[5:7]), num(day[8:])
	if y < 0 || m < 1 || m > 12 || d < 1 {
		return false
	}
	t := time.Date(y, time.Month(m), d, 0, 0, 0, 0, time.UTC)
	return t.Day() == d && t.Month() == time.Month(m) // not past the month's end
}

// CheckName rejects an empty, oversized, NUL-containing or invalid UTF-8 name; what says which argument.
func CheckName(what, name string) error {
	switch {
	case name == "":
		return fmt.Errorf("%w: empty %s", ErrInvalid, what)
	case len(name) > MaxNameBytes:
		return fmt.Errorf("%w: %s is %d bytes (max %d)", ErrInvalid, what, len(name), MaxNameBytes)
	case !utf8.ValidString(name):
		return fmt.Errorf("%w: %s is not valid UTF-8", ErrInvalid, what)
	}
	for i := 0; i < len(name); i++ {
		if name[i] == 0 {
			return fmt.Errorf("%w: %s contains a NUL byte", ErrInvalid, what)
		}
	}
	return nil
}

// NoReservation is Commit's ErrNotFound for a reservation unknown under that budget and day.
func NoReservation(budget, day, id string) error {
	return fmt.Errorf("%w: reservation %q in budget %s on %s", ErrNotFound, id, budget, day)
}

// CheckCommit validates Commit's day: a malformed one could name another budget's key in a store's layout,
// so it is an unknown reservation (NoReservation), as in every store.
// CheckSettle validates Settle's arguments: CheckCommit's, and a settled amount that is not negative.
func CheckSettle(budget, day, id string, settledMicros int64) error {
	if settledMicros < 0 {
		return fmt.Errorf("%w: negative settled amount %d", ErrInvalid, settledMicros)
	}
	return CheckCommit(budget, day, id)
}

// SettledAbove is Settle's error for a settled amount above its reservation.
func SettledAbove(id string, settled, reserved int64) error {
	return fmt.Errorf("%w: settled %d exceeds reservation %s of %d", ErrInvalid, settled, id, reserved)
}

func CheckCommit(budget, day, id string) error {
	if CheckDay(day) != nil {
		return NoReservation(budget, day, id)
	}
	return nil
}

// CheckReserve validates Reserve's arguments: every implementation calls it before touching state.
func CheckReserve(budget, day string, amountMicros, capMicros int64) error {
	if err := CheckName("budget", budget); err != nil {
		return err
	}
	if err := CheckDay(day); err != nil {
		return err
	}
	if amountMicros < 0 {
		return fmt.Errorf("%w: negative amount %d", ErrInvalid, amountMicros)
	}
	if capMicros < 0 {
		return fmt.Errorf("%w: negative cap %d", ErrInvalid, capMicros)
	}
	return nil
}

// Fits reports whether spent+reserved+amount <= capMicros without overflowing; all four are non-negative.
func Fits(spent, reserved, amount, capMicros int64) bool {
	if spent > math.MaxInt64-reserved {
		return false
	}
	used := spent + reserved
	if used > math.MaxInt64-amount {
		return false
	}
	return used+amount <= capMicros
}

// CheckNewHold validates a hold before it is created; an empty status means pending.
func CheckNewHold(h *Hold) error {
	if err := CheckName("hold id", h.ID); err != nil {
		return err
	}
	if err := CheckName("hold key", h.Key); err != nil {
		return err
	}
	if h.Status == "" {
		h.Status = HoldPending
	}
	if h.Status != HoldPending {
		return fmt.Errorf("%w: a new hold must be pending, not %q", ErrInvalid, h.Status)
	}
	if h.AmountMicros < 0 {
		return fmt.Errorf("%w: negative hold amount %d", ErrInvalid, h.AmountMicros)
	}
	return nil
}

// CheckHoldStatus validates ListHolds' filter ("" = all).
func CheckHoldStatus(status string) error {
	switch status {
	case "", HoldPending, HoldApproved, HoldDenied, HoldUsed, HoldExpired:
		return nil
	}
	return fmt.Errorf("%w: unknown hold status %q", ErrInvalid, status)
}

// ApplyResolve is the one place the pending → approved|denied rule lives; implementations call it on the
// stored hold inside their atomic section and persist the result whether or not err is nil when changed is
// true (an expired pending hold is stored as HoldExpired and the call fails with ErrConflict).
func ApplyResolve(h Hold, status, by, note string, at time.Time) (out Hold, changed bool, err error) {
	if status != HoldApproved && status != HoldDenied {
		return Hold{}, false, fmt.Errorf("%w: a hold resolves to approved or denied, not %q", ErrInvalid, status)
	}
	if h.Status != HoldPending {
		return Hold{}, false, fmt.Errorf("%w: hold %s is %s, not pending", ErrConflict, h.ID, h.Status)
	}
	if !h.ExpiresAt.IsZero() && h.ExpiresAt.Before(at) {
		h.Status, h.ResolvedAt = HoldExpired, at.UTC()
		return h, true, fmt.Errorf("%w: hold %s expired at %s", ErrConflict, h.ID, h.ExpiresAt.UTC().Format(time.RFC3339))
	}
	h.Status, h.ResolvedBy, h.Note, h.ResolvedAt = status, by, note, at.UTC()
	return h, true, nil
}

// ApplyUse is the one place the approved → used rule lives (see ApplyResolve for changed and err).
func ApplyUse(h Hold, now time.Time) (out Hold, changed bool, err error) {
	switch h.Status {
	case HoldUsed:
		return Hold{}, false, fmt.Errorf("%w: hold %s was already used", ErrAlreadyUsed, h.ID)
	case HoldApproved:
	default:
		return Hold{}, false, fmt.Errorf("%w: hold %s is %s, not approved", ErrConflict, h.ID, h.Status)
	}
	if !h.ExpiresAt.IsZero() && h.ExpiresAt.Before(now) {
		h.Status = HoldExpired
		return h, true, fmt.Errorf("%w: approved hold %s expired at %s", ErrConflict, h.ID, h.ExpiresAt.UTC().Format(time.RFC3339))
	}
	h.Status = HoldUsed
	return h, true, nil
}

// CheckTicket validates a ticket before it is stored and gives it an id when it has none.
func CheckTicket(t *Ticket) error {
	if t.ID == "" {
		t.ID = NewID()
	}
	if err := CheckName("ticket id", t.ID); err != nil {
		return err
	}
	if err := CheckName("ticket key", t.Key); err != nil {
		return err
	}
	if t.ExpiresAt.IsZero() {
		return fmt.Errorf("%w: ticket %s has no expiry", ErrInvalid, t.ID)
	}
	if t.AmountMicros < 0 {
		return fmt.Errorf("%w: negative ticket amount %d", ErrInvalid, t.AmountMicros)
	}
	if t.Used {
		return fmt.Errorf("%w: ticket %s is stored already used", ErrInvalid, t.ID)
	}
	return nil
}

// CheckTrial validates TakeTrial's arguments.
func CheckTrial(client, day string, retention time.Duration) error {
	if err := CheckName("trial client", client); err != nil {
		return err
	}
	if err := CheckDay(day); err != nil {
		return err
	}
	if retention <= 0 {
		return fmt.Errorf("%w: trial retention %v must be positive", ErrInvalid, retention)
	}
	return nil
}

// CheckObservation validates an endpoint observation.
func CheckObservation(o Observation) error {
	if err := CheckName("observation url", o.URL); err != nil {
		return err
	}
	if o.Method == "" || len(o.Method) > MaxObservationMethod {
		return fmt.Errorf("%w: observation method of %d bytes (1 to %d)", ErrInvalid, len(o.Method), MaxObservationMethod)
	}
	if o.ObservedAt.IsZero() {
		return fmt.Errorf("%w: observation of %s has no time", ErrInvalid, o.URL)
	}
	if len(o.Offers) > MaxObservedOffers {
		return fmt.Errorf("%w: observation of %s has %d offers (at most %d)", ErrInvalid, o.URL, len(o.Offers), MaxObservedOffers)
	}
	for i := range o.Offers {
		if err := CheckOffer(o.Offers[i]); err != nil {
			return err
		}
	}
	if o.Paid != nil {
		if err := CheckOffer(*o.Paid); err != nil {
			return err
		}
	}
	if len(o.Error) > MaxObservationError || len(o.Category) > MaxObservationCategory || len(o.Source) > MaxObservationCategory {
		return fmt.Errorf("%w: observation of %s: error, category or source too long (%d, %d, %d bytes; at most %d, %d, %d)", ErrInvalid,
			o.URL, len(o.Error), len(o.Category), len(o.Source), MaxObservationError, MaxObservationCategory, MaxObservationCategory)
	}
	if len(o.Challenge)+len(o.Metadata) > MaxObservationBlob {
		return fmt.Errorf("%w: observation of %s carries %d bytes of challenge and metadata (at most %d)", ErrInvalid, o.URL,
			len(o.Challenge)+len(o.Metadata), MaxObservationBlob)
	}
	return nil
}

// CheckOffer validates one observed payment option: every field at most MaxObservedField bytes.
func CheckOffer(f Offer) error {
	for _, v := range []string{f.Scheme, f.Network, f.Asset, f.Amount, f.PayTo} {
		if len(v) > MaxObservedField {
			return fmt.Errorf("%w: an observed offer field of %d bytes (at most %d)", ErrInvalid, len(v), MaxObservedField)
		}
	}
	return nil
}

// Bounds on one observation, so that the storage per endpoint is bounded by Retention.MaxPerURL times a
// known size (docs/index.md states it): with the URL at most MaxNameBytes, one observation is at most
// 43,640 bytes of JSON (index's BenchmarkObservationBytes).
const (
	MaxObservedOffers      = 32      // SPEC's payment options per request
	MaxObservationBlob     = 8 << 10 // challenge and metadata bytes together
	MaxObservedField       = 128     // each offer field: CAIP-2 ids, addresses and atomic amounts are far shorter
	MaxObservationMethod   = 32      // an HTTP method
	MaxObservationError    = 1 << 10 // a failure's description (the writer shortens longer ones)
	MaxObservationCategory = 64      // the seller's category, and the source
)

// CheckRetention validates a retention bound.
func CheckRetention(r Retention) error {
	if r.MaxPerURL < 0 || r.MaxAge < 0 {
		return fmt.Errorf("%w: retention %+v must not be negative", ErrInvalid, r)
	}
	return nil
}

package store

// The compact stored form of a Ticket (issue 36: an unpaid 402 must cost little in the store). A runaway
// agent loop or a seller answering 402 to everything leaves one ticket per 402 until its TTL passes, so each
// byte here is multiplied by the outstanding tickets. The JSON form took 662 bytes, a third of it the chosen
// option in base64 and the rest field names, the ticket key (which the stores already keep as the name of
// the ticket's bucket or keys) and a Used flag that is always false while stored.
//
// Form: a byte saying where the option is, then ID, ReservationID, ReceiptID, HoldID, Budget and Day as
// uvarint length + bytes, AmountMicros as a varint, ExpiresAt as a varint of unix seconds and a uvarint of
// nanoseconds, then:
//
//	TicketInline (1): the option JSON's bytes follow, to the end;
//	TicketShared (2): nothing follows; the option is one the store keeps once for all tickets of the key.
//
// Tickets with one key name the same payment (method, URL, scheme, network, payee, amount), so their options
// are almost always byte-for-byte the same: a store keeps the first ticket's option once per key and later
// tickets with the same option refer to it. Values that start with '{' are the JSON form a store wrote
// before; DecodeTicket reads both.

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"time"
)

// The first byte of a compact ticket.
const (
	TicketInline = 1
	TicketShared = 2
)

// ErrTicketForm is a stored value that is not a ticket in either form.
var ErrTicketForm = errors.New("not a stored ticket")

// TicketSizeMax bounds the length of t's compact form (with its option).
func TicketSizeMax(t *Ticket) int {
	return 48 + len(t.ID) + len(t.ReservationID) + len(t.ReceiptID) + len(t.HoldID) + len(t.Budget) + len(t.Day) + len(t.Option)
}

// AppendTicket appends t's compact form to b; shared leaves the option out (the store keeps it for the key).
// Appending lets the bolt store's journal record carry it without a buffer of its own.
func AppendTicket(b []byte, t *Ticket, shared bool) []byte {
	if shared {
		b = append(b, TicketShared)
	} else {
		b = append(b, TicketInline)
	}
	for _, s := range [...]string{t.ID, t.ReservationID, t.ReceiptID, t.HoldID, t.Budget, t.Day} {
		b = binary.AppendUvarint(b, uint64(len(s)))
		b = append(b, s...)
	}
	b = binary.AppendVarint(b, t.AmountMicros)
	b = binary.AppendVarint(b, t.ExpiresAt.Unix())
	b = binary.AppendUvarint(b, uint64(t.ExpiresAt.Nanosecond()))
	if !shared {
		b = append(b, t.Option...)
	}
	return b
}

// DecodeTicket reads a stored ticket of key in either form; shared, when not nil, gives the key's shared
// option (nil when there is none). The ticket's Option is a copy of the stored bytes.
func DecodeTicket(key string, v []byte, shared func() []byte) (Ticket, error) {
	var t Ticket
	if len(v) == 0 {
		return t, ErrTicketForm
	}
	if v[0] == '{' {
		err := json.Unmarshal(v, &t)
		return t, err
	}
	if v[0] != TicketInline && v[0] != TicketShared {
		return t, fmt.Errorf("%w: form %d", ErrTicketForm, v[0])
	}
	r := v[1:]
	var fields [6]string
	for i := range fields {
		n, w := binary.Uvarint(r)
		if w <= 0 || uint64(len(r)-w) < n {
			return t, ErrTicketForm
		}
		fields[i] = string(r[w : w+int(n)])
		r = r[w+int(n):]
	}
	var nums [2]int64
	for i := range nums {
		n, w := binary.Varint(r)
		if w <= 0 {
			return t, ErrTicketForm
		}
		nums[i], r = n, r[w:]
	}
	nsec, w := binary.Uvarint(r)
	if w <= 0 || nsec >= 1e9 {
		return t, ErrTicketForm
	}
	r = r[w:]
	t.ID, t.ReservationID, t.ReceiptID, t.HoldID, t.Budget, t.Day = fields[0], fields[1], fields[2], fields[3], fields[4], fields[5]
	t.Key, t.AmountMicros = key, nums[0]
	t.ExpiresAt = time.Unix(nums[1], int64(nsec)).UTC()
	switch {
	case v[0] == TicketInline:
		t.Option = bytes.Clone(r)
	case len(r) != 0:
		return t, ErrTicketForm
	default:
		var opt []byte
		if shared != nil {
			opt = shared()
		}
		if opt == nil {
			return t, fmt.Errorf("%w: its key's shared option is missing", ErrTicketForm)
		}
		t.Option = bytes.Clone(opt)
	}
	return t, nil
}

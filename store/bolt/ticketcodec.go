package bolt

// The stored form of a ticket (issue 36: an unpaid 402 must cost little on disk). A runaway agent loop or
// a seller answering 402 to everything leaves one ticket per 402 until its TTL passes, so each byte here is
// multiplied by the outstanding tickets. The JSON form of store.Ticket took 662 bytes, a third of it the
// chosen option in base64 and the rest field names, the ticket key (which is already the name of the
// ticket's bucket) and a Used flag that is always false while stored.
//
// Compact form: a version byte, then ID, ReservationID, ReceiptID, HoldID, Budget and Day as uvarint
// length + bytes, AmountMicros as a varint, ExpiresAt as a varint of unix seconds and a uvarint of nanoseconds, then the
// option:
//
//	ticketInline (1): the option JSON's bytes follow, to the end;
//	ticketShared (2): nothing follows; the option is the per-key bucket's shared one (optionKey).
//
// Tickets with one key name the same payment (method, URL, scheme, network, payee, amount), so their
// options are almost always byte-for-byte the same: the first ticket of a key stores it once under
// optionKey, and every later ticket with the same option refers to it. A ticket whose option differs keeps
// its own. Values that start with '{' are the JSON form of files written before; both are read.

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"go.etcd.io/bbolt"

	"github.com/payguard/payguard/store"
)

const (
	ticketInline = 1
	ticketShared = 2
)

// optionKey is where a per-key bucket keeps its shared option. Ticket entries are 8-byte sequences from 1;
// this 9-byte key of zeros sorts before every one of them, and is never read as a ticket.
var optionKey = make([]byte, 9)

// isTicketEntry reports whether k, a key in a per-key ticket bucket, holds a ticket.
func isTicketEntry(k []byte) bool { return len(k) == 8 }

// encodeTicket is t's compact form; shared says the option is the bucket's (and is left out).
func encodeTicket(t *store.Ticket, shared bool) []byte {
	b := make([]byte, 0, 64+len(t.ID)+len(t.ReservationID)+len(t.ReceiptID)+len(t.HoldID)+len(t.Budget)+len(t.Option))
	if shared {
		b = append(b, ticketShared)
	} else {
		b = append(b, ticketInline)
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

var errTicketForm = errors.New("not a stored ticket")

// decodeTicket reads a stored ticket of key (either form); perKey, when not nil, is its bucket (for a
// shared option). The ticket's Option is a copy: it outlives the transaction.
func decodeTicket(key string, v []byte, perKey *bbolt.Bucket) (store.Ticket, error) {
	var t store.Ticket
	if len(v) == 0 {
		return t, errTicketForm
	}
	if v[0] == '{' {
		err := json.Unmarshal(v, &t)
		return t, err
	}
	if v[0] != ticketInline && v[0] != ticketShared {
		return t, fmt.Errorf("%w: form %d", errTicketForm, v[0])
	}
	r := v[1:]
	var fields [6]string
	for i := range fields {
		n, w := binary.Uvarint(r)
		if w <= 0 || uint64(len(r)-w) < n {
			return t, errTicketForm
		}
		fields[i] = string(r[w : w+int(n)])
		r = r[w+int(n):]
	}
	amount, w := binary.Varint(r)
	if w <= 0 {
		return t, errTicketForm
	}
	r = r[w:]
	sec, w := binary.Varint(r)
	if w <= 0 {
		return t, errTicketForm
	}
	r = r[w:]
	nsec, w := binary.Uvarint(r)
	if w <= 0 || nsec >= 1e9 {
		return t, errTicketForm
	}
	r = r[w:]
	t.ID, t.ReservationID, t.ReceiptID, t.HoldID, t.Budget, t.Day = fields[0], fields[1], fields[2], fields[3], fields[4], fields[5]
	t.Key, t.AmountMicros = key, amount
	t.ExpiresAt = time.Unix(sec, int64(nsec)).UTC()
	switch {
	case v[0] == ticketInline:
		t.Option = bytes.Clone(r)
	case len(r) != 0:
		return t, errTicketForm
	case perKey == nil:
		return t, fmt.Errorf("%w: shared option without its bucket", errTicketForm)
	default:
		opt := perKey.Get(optionKey)
		if opt == nil {
			return t, fmt.Errorf("%w: shared option missing", errTicketForm)
		}
		t.Option = bytes.Clone(opt)
	}
	return t, nil
}

// decodeJournalTicket reads a journaled ticket (ledgerlog.go): the journal is JSON, and keeps a ticket in
// its JSON form (with its key), which lives only until the next group commit.
func decodeJournalTicket(v []byte) (store.Ticket, error) {
	var t store.Ticket
	err := json.Unmarshal(v, &t)
	return t, err
}

// putTicketEntry stores t as the next entry of perKey: with the bucket's shared option when t's is the
// same (the first ticket of the bucket sets it), else with its own.
func putTicketEntry(perKey *bbolt.Bucket, t *store.Ticket) (seq uint64, err error) {
	shared := false
	switch opt := perKey.Get(optionKey); {
	case opt == nil:
		if err := perKey.Put(optionKey, t.Option); err != nil {
			return 0, err
		}
		shared = true
	case bytes.Equal(opt, t.Option):
		shared = true
	}
	if seq, err = perKey.NextSequence(); err != nil {
		return 0, err
	}
	perKey.FillPercent = appendFill
	return seq, perKey.Put(u64(seq), encodeTicket(t, shared))
}

// appendFill is the fill of pages in buckets whose keys only grow (sequences, time-ordered ids, expiries):
// bbolt's default of one half, meant for random inserts, leaves half of each such page empty for good.
const appendFill = 0.95

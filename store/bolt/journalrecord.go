package bolt

// The journal's records (ledgerlog.go). A record is the payload's length and CRC-32C (both big-endian
// uint32), then the payload, in one of two forms:
//
//   - binary (since issue 36, store402): recordBinary, the operation's kind as one byte, the sequence as a
//     uvarint, Budget, Day and ID as uvarint length + bytes, Amount and Expires as varints, then 0 (no ticket)
//     or 1 followed by the ticket's key (uvarint length + bytes) and its compact form (store.AppendTicket,
//     option inline) to the end of the payload;
//   - JSON (journals written before): the operation's fields, the ticket as its JSON; it starts with '{'.
//
// The JSON record, with the ticket marshalled for it, was about a third of the CPU a reservation took on the
// proxy's goroutine (docs/benchmarks/store.md, "store402"); the binary one is built with appends into a
// buffer the encoder keeps. The replay reads both, so a journal left by an older payguard (killed, then
// upgraded) is applied as before.

import (
	"encoding/binary"
	"encoding/json"
	"fmt"
	"hash/crc32"

	"github.com/payguard/payguard/store"
)

// recordBinary is the first byte of a binary record's payload. A JSON payload starts with '{'.
const recordBinary = 0x01

// The operation kinds' codes in a binary record.
var kindCodes = map[string]byte{opReserve: 1, opCommit: 2, opSettle: 3, opTrial: 4}

// kindOfCode is kindCodes reversed.
var kindOfCode = [...]string{1: opReserve, 2: opCommit, 3: opSettle, 4: opTrial}

// maxJournalRecord bounds one record; a longer length field means a torn or foreign file.
const maxJournalRecord = 1 << 20

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// recordEncoder builds journal records in a buffer it keeps, so that a ledger operation allocates nothing
// for its record. It is not safe for concurrent use (the ledger's mu guards it).
type recordEncoder struct {
	rec []byte // the last record
}

// maxKeptRecord bounds the record buffer kept for the next operation, so one large ticket does not pin
// its memory.
const maxKeptRecord = 64 << 10

// record returns op's journal record (binary), valid until the next call.
func (e *recordEncoder) record(op *ledgerOp) ([]byte, error) {
	code, ok := kindCodes[op.Kind]
	if !ok {
		return nil, fmt.Errorf("store/bolt: journal: unknown operation %q", op.Kind)
	}
	rec := append(e.rec[:0], 0, 0, 0, 0, 0, 0, 0, 0, recordBinary, code)
	rec = binary.AppendUvarint(rec, op.Seq)
	rec = appendString(rec, op.Budget)
	rec = appendString(rec, op.Day)
	rec = appendString(rec, op.ID)
	rec = binary.AppendVarint(rec, op.Amount)
	rec = binary.AppendVarint(rec, op.Expires)
	if t := op.ticket; t == nil {
		rec = append(rec, 0)
	} else {
		rec = append(rec, 1)
		rec = appendString(rec, t.Key)
		rec = store.AppendTicket(rec, t, false)
	}
	payload := rec[8:]
	if len(payload) > maxJournalRecord {
		// The replay would take it for a torn record and stop there: refuse it before anything is written.
		return nil, fmt.Errorf("%w: ledger record of %d bytes (most %d)", store.ErrInvalid, len(payload), maxJournalRecord)
	}
	binary.BigEndian.PutUint32(rec, uint32(len(payload)))
	binary.BigEndian.PutUint32(rec[4:], crc32.Checksum(payload, castagnoli))
	if cap(rec) <= maxKeptRecord {
		e.rec = rec
	} else {
		e.rec = nil
	}
	return rec, nil
}

func appendString(b []byte, s string) []byte {
	b = binary.AppendUvarint(b, uint64(len(s)))
	return append(b, s...)
}

// readJournal returns the operations of the whole records at the start of data. It stops at the first
// incomplete or damaged record: a torn tail, whose operations were never applied, so no payment was released
// for them. An empty record (length 0, and CRC 0, the CRC-32C of nothing) is a torn tail too: no payguard
// writes one, but a crash while the file grew can leave its tail as zeros, which read as such records. A
// whole record this version cannot read (a newer form, an unknown operation, fields it cannot parse: its CRC
// says some payguard wrote it whole) is returned as an operation that fails to apply, so Open stops with an
// error instead of dropping it and every record after it.
func readJournal(data []byte) []*ledgerOp {
	var ops []*ledgerOp
	for len(data) >= 8 {
		n := binary.BigEndian.Uint32(data)
		if n > maxJournalRecord || int(n) > len(data)-8 {
			break
		}
		payload := data[8 : 8+n]
		if crc32.Checksum(payload, castagnoli) != binary.BigEndian.Uint32(data[4:]) {
			break
		}
		if n == 0 {
			break // zeros: a torn tail (see above)
		}
		var op *ledgerOp
		switch payload[0] {
		case recordBinary:
			op = readBinaryRecord(payload[1:])
		case '{':
			op = readJSONRecord(payload)
		default:
			op = &ledgerOp{bad: fmt.Errorf("a journal record of a form this version does not know (written by a newer payguard?)")}
		}
		if op == nil {
			op = &ledgerOp{bad: fmt.Errorf("a whole journal record (its CRC holds) of %d bytes this version cannot read (written by a newer payguard?)", n)}
		}
		ops = append(ops, op)
		data = data[8+n:]
	}
	return ops
}

// readBinaryRecord reads a binary payload after its first byte; nil if it is malformed.
func readBinaryRecord(p []byte) *ledgerOp {
	if len(p) == 0 {
		return nil
	}
	op := &ledgerOp{}
	if int(p[0]) < len(kindOfCode) && kindOfCode[p[0]] != "" {
		op.Kind = kindOfCode[p[0]]
	} else {
		op.Kind = fmt.Sprintf("code %d", p[0])
	}
	r := reader{b: p[1:]}
	op.Seq = r.uvarint()
	op.Budget, op.Day, op.ID = r.str(), r.str(), r.str()
	op.Amount, op.Expires = r.varint(), r.varint()
	withTicket := r.byte1()
	if r.bad {
		return nil
	}
	switch withTicket {
	case 0:
		if len(r.b) != 0 {
			return nil
		}
	case 1:
		key := r.str()
		if r.bad {
			return nil
		}
		t, err := store.DecodeTicket(key, r.b, nil)
		if err != nil {
			op.bad = fmt.Errorf("journal record %d: ticket: %w", op.Seq, err)
		} else {
			op.ticket = &t
		}
	default:
		return nil
	}
	return op
}

// reader reads a binary record's fields; bad is set once one is cut short.
type reader struct {
	b   []byte
	bad bool
}

func (r *reader) uvarint() uint64 {
	v, n := binary.Uvarint(r.b)
	r.skip(n)
	return v // 0 when n <= 0 (binary.Uvarint's error)
}

func (r *reader) varint() int64 {
	v, n := binary.Varint(r.b)
	r.skip(n)
	return v // 0 when n <= 0 (binary.Varint's error)
}

// skip drops the n bytes a varint took, or marks the record bad when n <= 0 (cut short or overflowing).
func (r *reader) skip(n int) {
	if n <= 0 {
		r.bad = true
		return
	}
	r.b = r.b[n:]
}

func (r *reader) str() string {
	n := r.uvarint()
	if r.bad || n > uint64(len(r.b)) {
		r.bad = true
		return ""
	}
	s := string(r.b[:n])
	r.b = r.b[n:]
	return s
}

func (r *reader) byte1() byte {
	if len(r.b) == 0 {
		r.bad = true
		return 0
	}
	c := r.b[0]
	r.b = r.b[1:]
	return c
}

// jsonRecord is the JSON record journals held before the binary one (and the form a test writes to stand
// for a journal left by an older payguard).
type jsonRecord struct {
	Seq     uint64          `json:"seq"`
	Kind    string          `json:"kind"`
	Budget  string          `json:"budget"`
	Day     string          `json:"day"`
	ID      string          `json:"id"`
	Amount  int64           `json:"amount,omitempty"`
	Ticket  json.RawMessage `json:"ticket,omitempty"`
	Expires int64           `json:"expires,omitempty"`
}

// readJSONRecord reads a JSON payload; nil if it is not one.
func readJSONRecord(payload []byte) *ledgerOp {
	var j jsonRecord
	if json.Unmarshal(payload, &j) != nil {
		return nil
	}
	op := &ledgerOp{Seq: j.Seq, Kind: j.Kind, Budget: j.Budget, Day: j.Day, ID: j.ID, Amount: j.Amount, Expires: j.Expires}
	if len(j.Ticket) > 0 {
		var t store.Ticket
		if err := json.Unmarshal(j.Ticket, &t); err != nil {
			op.bad = fmt.Errorf("journal record %d: ticket: %w", op.Seq, err)
		} else {
			op.ticket = &t
		}
	}
	return op
}

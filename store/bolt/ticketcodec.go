package bolt

// Tickets in the file (issue 36): the compact form of store.AppendTicket, the option kept once per ticket key
// under optionKey of the key's bucket. Files written before hold JSON tickets; store.DecodeTicket reads both.

import (
	"bytes"
	"encoding/binary"

	"go.etcd.io/bbolt"

	"github.com/payguard/payguard/store"
)

// optionKey is where a per-key bucket keeps its shared option. Ticket entries are 8-byte sequences from 1;
// this 9-byte key of zeros sorts before every one of them, and is never read as a ticket.
var optionKey = make([]byte, 9)

// isTicketEntry reports whether k, a key in a per-key ticket bucket, holds a ticket.
func isTicketEntry(k []byte) bool { return len(k) == 8 }

// decodeTicket reads a stored ticket of key; perKey, when not nil, is its bucket (for a shared option).
func decodeTicket(key string, v []byte, perKey *bbolt.Bucket) (store.Ticket, error) {
	var shared func() []byte
	if perKey != nil {
		shared = func() []byte { return perKey.Get(optionKey) }
	}
	return store.DecodeTicket(key, v, shared)
}

// putTicketEntry stores t as the next entry of k's bucket: with the bucket's shared option when t's is the
// same (the first ticket of the bucket sets it), else with its own.
func (w *batchWrites) putTicketEntry(k *keyBucket, t *store.Ticket) (seq uint64, err error) {
	shared := false
	switch {
	case len(t.Option) == 0:
		// Inline: bbolt may read an empty value back as nil, which the cache above and DecodeTicket would
		// both take for no option at all.
	case k.option == nil:
		if err := k.b.Put(optionKey, t.Option); err != nil {
			return 0, err
		}
		k.option, shared = t.Option, true
	case bytes.Equal(k.option, t.Option):
		shared = true
	}
	if seq, err = k.b.NextSequence(); err != nil {
		return 0, err
	}
	w.buf = store.AppendTicket(w.buf[:0], t, shared) // w.buf keeps what it grew to, for the next ticket
	entry := w.keep(w.buf)
	w.buf = binary.BigEndian.AppendUint64(w.buf[:0], seq)
	return seq, k.b.Put(w.buf, entry)
}

// appendFill is the fill of pages in buckets whose keys only grow (sequences, time-ordered ids, expiries):
// bbolt's default of one half, meant for random inserts, leaves half of each such page empty for good.
const appendFill = 0.95

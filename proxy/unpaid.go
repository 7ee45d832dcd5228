package proxy

import (
	"crypto/sha256"
	"encoding/hex"
	"strings"
	"sync"
	"time"

	"github.com/payguard/payguard/index"
	"github.com/payguard/payguard/store"
)

// Why Options.MaxUnpaidPerSite (issue 36; its default is config's proxy.max_unpaid_per_site, 1,000): an
// allowed 402 leaves a ticket and a reservation in the store until its agent pays or the ticket's TTL (at
// most proxy.ticket_ttl_max) and store.TicketReleaseGrace pass. A seller that answers 402 to everything, or
// an agent loop that asks again and again without paying, would otherwise fill the disk (and the budget's
// reserved amount) at the rate of its requests. At about 500 bytes a ticket, 1,000 keep one site under half
// a megabyte.

// unpaidTickets counts the tickets this proxy made that are outstanding (not taken, not yet released by the
// store), per seller site: the registrable domain of the URL (index.SiteOf), so that a seller's subdomains
// share one bound. Past the bound an allow becomes a block (unpaidBlock) before anything is reserved: never
// an allow without its ticket. The count is this process's: each replica of a fleet bounds its own.
//
// Memory (issue 36: the proxy's RSS after 100,000 decisions): an outstanding ticket is one map entry of a
// 16-byte id with its site and release time, and its id again in its site's queue, about 60 bytes in all where a map of
// id strings per site and a second map back to the site took about 195. A ticket taken leaves its queue
// entry behind until the queue is pruned (the entry no longer names a counted ticket).
type unpaidTickets struct {
	mu    sync.Mutex
	max   int
	sites map[string]*unpaidSite
	ids   map[unpaidID]unpaidRef // the tickets counted
	adds  int                    // since the last sweep
}

// unpaidSite is one site's count and its tickets' ids in the order they were made.
type unpaidSite struct {
	n     int
	queue []unpaidID
	// claimed counts the places claimed by decisions whose reservation is under way (claim): they count
	// toward the bound, so that decisions side by side never pass it together.
	claimed int
}

// unpaidRef is a counted ticket's site and the time (unix ns) the store releases it.
type unpaidRef struct {
	site *unpaidSite
	gone int64
}

// unpaidID is a ticket id in 16 bytes: newID's 128 bits, or a digest of an id of another form.
type unpaidID [16]byte

func idOf(id string) unpaidID {
	var k unpaidID
	if h, ok := strings.CutPrefix(id, "tkt_"); ok && len(h) == 32 {
		if _, err := hex.Decode(k[:], []byte(h)); err == nil {
			return k
		}
	}
	sum := sha256.Sum256([]byte(id))
	copy(k[:], sum[:])
	return k
}

// sweepEvery is how many tickets are counted between two sweeps of every site's released tickets, so that
// sites below their bound (never pruned by full) do not keep their released tickets in memory for good.
const sweepEvery = 1024

func newUnpaidTickets(max int) *unpaidTickets {
	return &unpaidTickets{max: max, sites: map[string]*unpaidSite{}, ids: map[unpaidID]unpaidRef{}}
}

// siteOfTicket is the site whose bound a ticket for url counts against.
func siteOfTicket(url string) string {
	if s := index.SiteOf(url); s != "" {
		return s
	}
	return url // no host: a bound of its own, still a bound
}

// prune forgets site's released tickets at now (unix ns) and drops the queue's entries of tickets no longer
// counted: from the queue's head only, unless all is set (a site at its bound: every entry is looked at,
// since tickets with a shorter TTL may be released before older ones).
func (u *unpaidTickets) prune(st *unpaidSite, now int64, all bool) {
	// counted reports whether id still counts for st, forgetting it first when it is released.
	counted := func(id unpaidID) bool {
		ref, ok := u.ids[id]
		if !ok || ref.site != st {
			return false
		}
		if now >= ref.gone {
			delete(u.ids, id)
			st.n--
			return false
		}
		return true
	}
	if !all {
		i := 0
		for i < len(st.queue) && !counted(st.queue[i]) {
			i++
		}
		if st.queue = st.queue[i:]; len(st.queue) == 0 {
			st.queue = nil
		}
		return
	}
	keep := st.queue[:0]
	for _, id := range st.queue {
		if counted(id) {
			keep = append(keep, id)
		}
	}
	clear(st.queue[len(keep):])
	st.queue = keep
	if cap(st.queue) > 64 && len(st.queue) < cap(st.queue)/4 { // a burst's backing array is given back
		st.queue = append([]unpaidID(nil), st.queue...)
	}
}

// claim takes a place for one more ticket of site at now, unless site has max outstanding tickets and
// claimed places (released tickets are forgotten first); n is how many it has. A claim ends with add (the
// ticket was made) or unclaim (it was not).
func (u *unpaidTickets) claim(site string, now time.Time) (ok bool, n int) {
	u.mu.Lock()
	defer u.mu.Unlock()
	st := u.sites[site]
	if st == nil {
		if u.max <= 0 {
			return false, 0
		}
		st = &unpaidSite{}
		u.sites[site] = st
	}
	if st.n+st.claimed >= u.max {
		u.prune(st, now.UnixNano(), true)
	}
	if n = st.n + st.claimed; n >= u.max {
		return false, n
	}
	st.claimed++
	return true, n
}

// unclaim gives back a place claimed for site whose ticket was not made.
func (u *unpaidTickets) unclaim(site string) {
	u.mu.Lock()
	defer u.mu.Unlock()
	if st := u.sites[site]; st != nil && st.claimed > 0 {
		st.claimed--
	}
}

// add counts ticket t for site in the place claimed for it; now, every sweepEvery tickets, forgets every
// site's released ones.
func (u *unpaidTickets) add(site string, t store.Ticket, now time.Time) {
	u.mu.Lock()
	defer u.mu.Unlock()
	if st := u.sites[site]; st != nil && st.claimed > 0 {
		st.claimed--
	}
	if u.adds++; u.adds >= sweepEvery {
		u.adds = 0
		ns := now.UnixNano()
		for s, st := range u.sites {
			// The head first; the whole queue when taken tickets have left it twice its count long.
			u.prune(st, ns, len(st.queue) > 2*st.n+16)
			if st.n == 0 && st.claimed == 0 {
				delete(u.sites, s)
			}
		}
	}
	st := u.sites[site]
	if st == nil {
		st = &unpaidSite{}
		u.sites[site] = st
	}
	id := idOf(t.ID)
	if old, ok := u.ids[id]; ok { // the same id again: counted once, under its latest site and release
		old.site.n--
	}
	u.ids[id] = unpaidRef{site: st, gone: t.ExpiresAt.Add(store.TicketReleaseGrace).UnixNano()}
	st.n++
	st.queue = append(st.queue, id)
}

// taken stops counting the ticket with that id (its payment took it).
func (u *unpaidTickets) taken(id string) {
	u.mu.Lock()
	defer u.mu.Unlock()
	k := idOf(id)
	if ref, ok := u.ids[k]; ok {
		delete(u.ids, k)
		ref.site.n--
	}
}

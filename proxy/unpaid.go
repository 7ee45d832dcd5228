package proxy

import (
	"sync"
	"time"

	"github.com/payguard/payguard/index"
	"github.com/payguard/payguard/store"
)

// DefaultMaxUnpaidPerSite is Options.MaxUnpaidPerSite's default (issue 36). An allowed 402 leaves a ticket
// and a reservation in the store until its agent pays or the ticket's TTL (at most proxy.ticket_ttl_max)
// and store.TicketReleaseGrace pass. A seller that answers 402 to everything, or an agent loop that asks
// again and again without paying, would otherwise fill the disk (and the budget's reserved amount) at the
// rate of its requests. At about 500 bytes a ticket, 1,000 keep one site under half a megabyte.
const DefaultMaxUnpaidPerSite = 1000

// unpaidTickets counts the tickets this proxy made that are outstanding (not taken, not yet released by the
// store), per seller site: the registrable domain of the URL (index.SiteOf), so that a seller's subdomains
// share one bound. Past the bound an allow becomes a block (unpaidBlock) before anything is reserved: never
// an allow without its ticket. The count is this process's: each replica of a fleet bounds its own.
type unpaidTickets struct {
	mu    sync.Mutex
	max   int
	sites map[string]map[string]time.Time // site → ticket id → when the store releases it
	where map[string]string               // ticket id → site
	// claimed counts, per site, the places claimed by decisions whose reservation is under way: they count
	// toward the bound, so that decisions side by side never pass it together.
	claimed map[string]int
	adds    int // since the last sweep
}

// sweepEvery is how many tickets are counted between two sweeps of every site's released tickets, so that
// sites below their bound (never pruned by full) do not keep their released tickets in memory for good.
const sweepEvery = 1024

func newUnpaidTickets(max int) *unpaidTickets {
	return &unpaidTickets{max: max, sites: map[string]map[string]time.Time{}, where: map[string]string{},
		claimed: map[string]int{}}
}

// siteOfTicket is the site whose bound a ticket for url counts against.
func siteOfTicket(url string) string {
	if s := index.SiteOf(url); s != "" {
		return s
	}
	return url // no host: a bound of its own, still a bound
}

// claim takes a place for one more ticket of site at now, unless site has max outstanding tickets and
// claimed places (released tickets are forgotten first); n is how many it has. A claim ends with add (the
// ticket was made) or unclaim (it was not).
func (u *unpaidTickets) claim(site string, now time.Time) (ok bool, n int) {
	u.mu.Lock()
	defer u.mu.Unlock()
	tickets := u.sites[site]
	if len(tickets)+u.claimed[site] >= u.max {
		for id, gone := range tickets {
			if !now.Before(gone) {
				delete(tickets, id)
				delete(u.where, id)
			}
		}
	}
	if n = len(tickets) + u.claimed[site]; n >= u.max {
		return false, n
	}
	u.claimed[site]++
	return true, n
}

// unclaim gives back a place claimed for site whose ticket was not made.
func (u *unpaidTickets) unclaim(site string) {
	u.mu.Lock()
	defer u.mu.Unlock()
	u.unclaimLocked(site)
}

func (u *unpaidTickets) unclaimLocked(site string) {
	if u.claimed[site]--; u.claimed[site] <= 0 {
		delete(u.claimed, site)
	}
}

// add counts ticket t for site in the place claimed for it; now, every sweepEvery tickets, forgets every
// site's released ones.
func (u *unpaidTickets) add(site string, t store.Ticket, now time.Time) {
	u.mu.Lock()
	defer u.mu.Unlock()
	u.unclaimLocked(site)
	if u.adds++; u.adds >= sweepEvery {
		u.adds = 0
		for s, tickets := range u.sites {
			for id, gone := range tickets {
				if !now.Before(gone) {
					delete(tickets, id)
					delete(u.where, id)
				}
			}
			if len(tickets) == 0 {
				delete(u.sites, s)
			}
		}
	}
	tickets := u.sites[site]
	if tickets == nil {
		tickets = map[string]time.Time{}
		u.sites[site] = tickets
	}
	tickets[t.ID] = t.ExpiresAt.Add(store.TicketReleaseGrace)
	u.where[t.ID] = site
}

// taken stops counting the ticket with that id (its payment took it).
func (u *unpaidTickets) taken(id string) {
	u.mu.Lock()
	defer u.mu.Unlock()
	site, ok := u.where[id]
	if !ok {
		return
	}
	delete(u.where, id)
	delete(u.sites[site], id)
	if len(u.sites[site]) == 0 {
		delete(u.sites, site)
	}
}

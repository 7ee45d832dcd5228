package proxy

import (
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
type unpaidTickets struct {
	mu    sync.Mutex
	max   int
	sites map[string]map[string]time.Time // site → ticket id → when the store releases it
	where map[string]string               // ticket id → site
	adds  int                             // since the last sweep
}

// sweepEvery is how many tickets are counted between two sweeps of every site's released tickets, so that
// sites below their bound (never pruned by full) do not keep their released tickets in memory for good.
const sweepEvery = 1024

func newUnpaidTickets(max int) *unpaidTickets {
	return &unpaidTickets{max: max, sites: map[string]map[string]time.Time{}, where: map[string]string{}}
}

// siteOfTicket is the site whose bound a ticket for url counts against.
func siteOfTicket(url string) string {
	if s := index.SiteOf(url); s != "" {
		return s
	}
	return url // no host: a bound of its own, still a bound
}

// full reports whether site has max outstanding tickets at now (released ones are forgotten first), and how
// many it has.
func (u *unpaidTickets) full(site string, now time.Time) (bool, int) {
	u.mu.Lock()
	defer u.mu.Unlock()
	tickets := u.sites[site]
	if len(tickets) >= u.max {
		for id, gone := range tickets {
			if !now.Before(gone) {
				delete(tickets, id)
				delete(u.where, id)
			}
		}
	}
	return len(tickets) >= u.max, len(tickets)
}

// add counts ticket t for site; now, every sweepEvery tickets, forgets every site's released ones.
func (u *unpaidTickets) add(site string, t store.Ticket, now time.Time) {
	u.mu.Lock()
	defer u.mu.Unlock()
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

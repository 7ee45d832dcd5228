package console

import (
	"net"
	"net/netip"
	"sync"
	"time"
)

// Sign-in throttling is per client address, with backoff: an address may fail freeFailures times, then
// each further failure makes it wait twice as long as the last (baseBackoff, doubling, at most maxBackoff)
// before its next try; a success forgets it. A flood of wrong tokens from one address therefore slows that
// address alone, and never locks out an approver signing in from another (the one global counter it
// replaces did: ten wrong sign-ins a minute from anywhere locked everyone out). The bearer API and the CLI
// never pass through it.
//
// The address is the TCP peer (the admin listener trusts no forwarding header); an IPv6 peer counts as its
// /64, which one client is routed whole. Approvers behind one NAT or one reverse proxy share an address,
// and so share its backoff: docs/approvals.md says so.
const (
	freeFailures  = 5
	baseBackoff   = time.Second
	maxBackoff    = 15 * time.Minute
	maxThrottled  = 10_000 // addresses remembered; past it the least recently failed is forgotten
	forgetFailure = time.Hour
)

type tries struct {
	fails int
	until time.Time // no try before this
	last  time.Time // the last failure
}

type throttle struct {
	mu     sync.Mutex
	now    func() time.Time
	byAddr map[string]*tries
}

func newThrottle(now func() time.Time) *throttle {
	return &throttle{now: now, byAddr: map[string]*tries{}}
}

// clientKey is the throttled unit of a request's RemoteAddr: the IP, an IPv6 one as its /64.
func clientKey(remote string) string {
	host, _, err := net.SplitHostPort(remote)
	if err != nil {
		host = remote
	}
	a, err := netip.ParseAddr(host)
	if err != nil {
		return host
	}
	a = a.Unmap().WithZone("")
	if a.Is6() {
		return netip.PrefixFrom(a, 64).Masked().String()
	}
	return a.String()
}

// mayTry reports whether the client may try a sign-in now, and otherwise how long it must wait.
func (t *throttle) mayTry(client string) (bool, time.Duration) {
	t.mu.Lock()
	defer t.mu.Unlock()
	tr := t.byAddr[client]
	if tr == nil {
		return true, 0
	}
	if wait := tr.until.Sub(t.now()); wait > 0 {
		return false, wait
	}
	return true, 0
}

// failed counts a wrong token from client and sets its backoff.
func (t *throttle) failed(client string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	now := t.now()
	tr := t.byAddr[client]
	if tr != nil && now.Sub(tr.last) > forgetFailure {
		tr = nil // an hour without a failure starts the count again
	}
	if tr == nil {
		if len(t.byAddr) >= maxThrottled {
			t.evict(now)
		}
		tr = &tries{}
		t.byAddr[client] = tr
	}
	tr.fails++
	tr.last = now
	if over := tr.fails - freeFailures; over > 0 {
		wait := maxBackoff
		if over < 20 {
			wait = min(maxBackoff, baseBackoff<<(over-1))
		}
		tr.until = now.Add(wait)
	}
}

// succeeded forgets client's failures.
func (t *throttle) succeeded(client string) {
	t.mu.Lock()
	delete(t.byAddr, client)
	t.mu.Unlock()
}

// evict makes room: addresses whose last failure is older than forgetFailure go, else the least recently
// failed one.
func (t *throttle) evict(now time.Time) {
	var oldest string
	var at time.Time
	for k, v := range t.byAddr {
		if now.Sub(v.last) > forgetFailure {
			delete(t.byAddr, k)
			continue
		}
		if oldest == "" || v.last.Before(at) {
			oldest, at = k, v.last
		}
	}
	if len(t.byAddr) >= maxThrottled {
		delete(t.byAddr, oldest)
	}
}

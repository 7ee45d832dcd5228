package proxy

import (
	"net/http"
	"sync"
	"time"

	"github.com/payguard/payguard/policy"
	"github.com/payguard/payguard/preflight"
)

// A settlement alarm: a seller reported a settlement its authorization does not allow (an upto settlement
// above the authorized maximum, on another network, for another payer or to another recipient). That
// seller's next payments are held for a person (policy.SettlementAlarmReason) until the alarm expires or
// an operator clears it (DELETE /v1/alarms/{host} on the admin API). Alarms are kept per process: a
// replica that did not see the settlement does not hold (docs/proxy.md says so).

// alarmTTL is how long an alarm holds its seller's payments.
const alarmTTL = 24 * time.Hour

// maxAlarms bounds the sellers remembered; past it the oldest alarm is forgotten first.
const maxAlarms = 4096

type sellerAlarm struct {
	Host  string    `json:"host"`
	What  string    `json:"what"`
	At    time.Time `json:"at"`
	Until time.Time `json:"until"`
}

type sellerAlarms struct {
	mu sync.Mutex
	m  map[string]sellerAlarm
}

func newSellerAlarms() *sellerAlarms { return &sellerAlarms{m: map[string]sellerAlarm{}} }

// raise records an alarm on host (a canonical merchant domain) at now; a newer alarm replaces an older one.
func (a *sellerAlarms) raise(host, what string, now time.Time) {
	if host == "" {
		return
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	if _, ok := a.m[host]; !ok && len(a.m) >= maxAlarms {
		oldest := ""
		for h, x := range a.m {
			if oldest == "" || x.At.Before(a.m[oldest].At) {
				oldest = h
			}
		}
		delete(a.m, oldest)
	}
	a.m[host] = sellerAlarm{Host: host, What: what, At: now, Until: now.Add(alarmTTL)}
}

// active is host's alarm, if one holds at now.
func (a *sellerAlarms) active(host string, now time.Time) (sellerAlarm, bool) {
	a.mu.Lock()
	defer a.mu.Unlock()
	x, ok := a.m[host]
	if ok && !now.Before(x.Until) {
		delete(a.m, host)
		return sellerAlarm{}, false
	}
	return x, ok
}

// clear removes host's alarm; it reports whether there was one.
func (a *sellerAlarms) clear(host string) bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	_, ok := a.m[host]
	delete(a.m, host)
	return ok
}

// list is every active alarm at now.
func (a *sellerAlarms) list(now time.Time) []sellerAlarm {
	a.mu.Lock()
	defer a.mu.Unlock()
	out := []sellerAlarm{}
	for h, x := range a.m {
		if !now.Before(x.Until) {
			delete(a.m, h)
			continue
		}
		out = append(out, x)
	}
	return out
}

// holdForAlarm turns an engine result for a seller under an alarm into a hold that says why: an allow
// becomes a hold with the alarm's reason alone, a hold gains it; a block stays as it is. The result is
// unsigned (the caller signs what it shows), so the receipt carries the hold.
func (p *Proxy) holdForAlarm(res *preflight.Result, url string) {
	if res.Decision != allow && res.Decision != hold {
		return
	}
	host := policy.MerchantDomain(url)
	x, ok := p.alarms.active(host, p.opts.Now())
	if !ok {
		return
	}
	r := policy.SettlementAlarmReason(host, x.What)
	if res.Decision == allow {
		res.Decision, res.Reasons, res.ReasonCodes = hold, nil, nil
		res.Receipt.Decision = hold
	}
	res.Reasons = append(res.Reasons, r.String())
	res.ReasonCodes = append(res.ReasonCodes, r.Code)
}

// sellerHost is the alarm key of a request's seller: the canonical merchant domain the engine judges.
func sellerHost(req *http.Request) string { return policy.MerchantDomain(req.URL.String()) }

// listAlarms answers GET /v1/alarms: the sellers whose payments are held by a settlement alarm.
func (p *Proxy) listAlarms(w http.ResponseWriter, _ *http.Request) {
	writeJSON(w, http.StatusOK, map[string]any{"alarms": p.alarms.list(p.opts.Now())})
}

// clearAlarm answers DELETE /v1/alarms/{host}: an operator who has looked into the seller lets its payments
// be decided by the rules again. The host is read as the engine reads a merchant domain.
func (p *Proxy) clearAlarm(w http.ResponseWriter, r *http.Request) {
	host := policy.MerchantDomain(r.PathValue("host"))
	if host == "" || !p.alarms.clear(host) {
		writeJSON(w, http.StatusNotFound, apiError{"not_found", "no settlement alarm on that host"})
		return
	}
	p.log.Info("settlement alarm cleared", "host", host)
	writeJSON(w, http.StatusOK, map[string]string{"cleared": host})
}

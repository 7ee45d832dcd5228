package redis

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/payguard/payguard/store"
)

// A site's payee record is one hash, "network|asset|payTo" → "firstMs|lastMs|costly|url", expiring MaxAge
// after its last put. The merge (earliest first sighting, latest last one, costly once true) runs in the
// script, so two replicas putting the same payee at once lose neither; the bounds are applied to the record
// as read just before (two puts at once can leave it an entry or two over until the next put). Both scripts
// run under the ledger epoch guard, like the category sample.

// putSitePayeeScript: KEYS hash; ARGV field, firstMs, lastMs, costly (0/1), url, ttl ms (0 = none), then
// the fields to remove (the epoch guard's value is the last ARGV).
var putSitePayeeScript = guarded(`
for i = 7, #ARGV - 1 do redis.call('HDEL', KEYS[1], ARGV[i]) end
local first, last, costly, url = ARGV[2], ARGV[3], ARGV[4], ARGV[5]
local old = redis.call('HGET', KEYS[1], ARGV[1])
if old then
  local of, ol, oc, ou = string.match(old, '^(%d+)|(%d+)|([01])|(.*)$')
  if of then
    if tonumber(of) < tonumber(first) then first, url = of, ou end
    if tonumber(ol) > tonumber(last) then last = ol end
    if oc == '1' then costly = '1' end
  end
end
redis.call('HSET', KEYS[1], ARGV[1], first .. '|' .. last .. '|' .. costly .. '|' .. url)
if tonumber(ARGV[6]) > 0 then redis.call('PEXPIRE', KEYS[1], ARGV[6]) end
return 1
`)

// readSitePayeesScript: KEYS hash. Field, value, field, value...
var readSitePayeesScript = guarded(`
return redis.call('HGETALL', KEYS[1])
`)

// PutSitePayee implements store.SitePayees.
func (s *Store) PutSitePayee(ctx context.Context, site string, p store.SitePayee, keep store.Retention) error {
	if err := store.CheckSitePayee(site, p); err != nil {
		return err
	}
	if err := store.CheckRetention(keep); err != nil {
		return err
	}
	list, err := s.SitePayees(ctx, site)
	if err != nil {
		return err
	}
	_, removed := store.TrimSitePayees(list, p, keep)
	ttl := int64(0)
	if keep.MaxAge > 0 {
		ttl = millis(keep.MaxAge)
	}
	costly := "0"
	if p.Costly {
		costly = "1"
	}
	args := []any{p.Key(), p.FirstAt.UnixMilli(), p.LastAt.UnixMilli(), costly, p.URL, ttl}
	for _, k := range removed {
		args = append(args, k)
	}
	if err := s.run(ctx, putSitePayeeScript, []string{s.key("sitepayees:", site)}, args...).Err(); err != nil {
		return fmt.Errorf("store/redis: put site payee of %s: %w", site, s.lost(err))
	}
	return nil
}

// SitePayees implements store.SitePayees.
func (s *Store) SitePayees(ctx context.Context, site string) ([]store.SitePayee, error) {
	kv, err := s.run(ctx, readSitePayeesScript, []string{s.key("sitepayees:", site)}).StringSlice()
	if err != nil {
		return nil, fmt.Errorf("store/redis: site payees of %q: %w", site, s.lost(err))
	}
	out := make([]store.SitePayee, 0, len(kv)/2)
	for i := 0; i+1 < len(kv); i += 2 {
		p, ok := parseSitePayee(kv[i], kv[i+1])
		if !ok {
			return nil, fmt.Errorf("store/redis: site payee %q of %q is corrupt", kv[i], site)
		}
		out = append(out, p)
	}
	return out, nil
}

func parseSitePayee(field, value string) (store.SitePayee, bool) {
	k := strings.SplitN(field, "|", 3)
	v := strings.SplitN(value, "|", 4)
	if len(k) != 3 || len(v) != 4 {
		return store.SitePayee{}, false
	}
	first, err1 := strconv.ParseInt(v[0], 10, 64)
	last, err2 := strconv.ParseInt(v[1], 10, 64)
	if err1 != nil || err2 != nil {
		return store.SitePayee{}, false
	}
	return store.SitePayee{Network: k[0], Asset: k[1], PayTo: k[2], FirstAt: time.UnixMilli(first).UTC(),
		LastAt: time.UnixMilli(last).UTC(), Costly: v[2] == "1", URL: v[3]}, true
}

var _ store.SitePayees = (*Store)(nil)

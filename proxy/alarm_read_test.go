package proxy

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	goredis "github.com/redis/go-redis/v9"

	"github.com/payguard/payguard/internal/testredis"
	"github.com/payguard/payguard/store"
	"github.com/payguard/payguard/store/redis"
)

// On the redis store the seller's settlement alarm is read with the ledger's state, in one script (issue 36):
// a seller under an alarm is still held, an alarm past its time no longer holds, and an alarm that cannot
// be read holds (fail closed), exactly as when the alarm was read on its own.
func TestAlarmReadWithTheLedgerState(t *testing.T) {
	ctx := context.Background()
	url := testredis.URL(t)
	prefix := fmt.Sprintf("pgtest-alarmread-%d:", time.Now().UnixNano())
	st, err := redis.Open(ctx, redis.Options{URL: url, Prefix: prefix, AllowVolatile: true, InitIfEmpty: true})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	ro, _ := goredis.ParseURL(url)
	rdb := goredis.NewClient(ro)
	defer rdb.Close()
	t.Cleanup(func() {
		keys, _ := rdb.Keys(ctx, prefix+"*").Result()
		if len(keys) > 0 {
			rdb.Del(ctx, keys...)
		}
	})
	p, _, _ := newTestProxy(t, st, footprintRules())
	defer p.Close()
	if _, _, err := p.readState(ctx, p.day(), targetOf("https://alarmed.example/x").alarmSite); err != nil {
		t.Fatal(err)
	}
	for _, u := range []string{"https://alarmed.example/x", "https://api.Alarmed.example./x", "https://[2001:db8::1]/x"} {
		if _, a, _ := p.readState(ctx, p.day(), targetOf(u).alarmSite); a == nil || a.host != alarmSite(u) {
			t.Fatalf("%s: the alarm read with the state (%+v) is not the one holdForAlarm judges (%s)", u, a, alarmSite(u))
		}
	}
	now := time.Now()
	if err := st.RaiseAlarm(ctx, store.Alarm{Host: "alarmed.example", What: "settled 2x", At: now, Until: now.Add(time.Hour)}); err != nil {
		t.Fatal(err)
	}
	if err := st.RaiseAlarm(ctx, store.Alarm{Host: "past.example", What: "old", At: now.Add(-2 * time.Hour), Until: now.Add(-time.Hour)}); err != nil {
		t.Fatal(err)
	}
	bad, _ := json.Marshal("not an alarm")
	rdb.HSet(ctx, prefix+"alarms", "broken.example", bad)
	for _, tc := range []struct{ url, decision, reason string }{
		{"https://alarmed.example/x", hold, "seller alarmed.example reported a settlement outside its authorization (settled 2x)"},
		{"https://past.example/x", allow, ""},
		{"https://broken.example/x", hold, "settlement alarms unavailable"},
		{"https://quiet.example/x", allow, ""},
	} {
		out, body := guard402Body(p, tc.url)
		if got := out.Header.Get(HeaderDecision); got != tc.decision || !strings.Contains(string(body), tc.reason) {
			t.Errorf("%s: decision %q (%d) %s; want %s with %q", tc.url, got, out.StatusCode, body, tc.decision, tc.reason)
		}
		if tc.decision == allow && out.StatusCode != http.StatusPaymentRequired {
			t.Errorf("%s: status %d", tc.url, out.StatusCode)
		}
	}
}

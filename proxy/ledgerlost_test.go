package proxy

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"os/exec"
	"strings"
	"testing"
	"time"

	goredis "github.com/redis/go-redis/v9"

	"github.com/payguard/payguard/store/redis"
	"github.com/payguard/payguard/x402"
)

// testRedisServer is a redis-server of this test's own (never the shared one): it is restarted empty.
type testRedisServer struct {
	t    *testing.T
	port int
	cmd  *exec.Cmd
}

func startTestRedis(t *testing.T) *testRedisServer {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	r := &testRedisServer{t: t, port: ln.Addr().(*net.TCPAddr).Port}
	ln.Close()
	r.start()
	t.Cleanup(r.stop)
	return r
}

func (r *testRedisServer) start() {
	r.t.Helper()
	r.cmd = exec.Command("redis-server", "--port", fmt.Sprint(r.port), "--bind", "127.0.0.1", "--save", "",
		"--appendonly", "no", "--dir", r.t.TempDir())
	if err := r.cmd.Start(); err != nil {
		r.t.Fatalf("this test starts its own redis-server (apt-get install redis-server): %v", err)
	}
	rdb := goredis.NewClient(&goredis.Options{Addr: fmt.Sprintf("127.0.0.1:%d", r.port)})
	defer rdb.Close()
	for i := 0; rdb.Ping(context.Background()).Err() != nil; i++ {
		if i == 500 {
			r.t.Fatal("redis-server did not answer")
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func (r *testRedisServer) stop() {
	if r.cmd != nil {
		r.cmd.Process.Kill()
		r.cmd.Wait()
		r.cmd = nil
	}
}

// The attack, end to end: with a $0.50 cap, 50 payments of $0.01 go through a proxy on a Redis
// ledger; Redis restarts without persistence; the next payment must be refused with a reason that names the
// lost ledger, and /readyz must say not ready. On the old code the day started again from zero and 50 more
// payments went through ($1.00 in a day).
func TestRedisRestartDoesNotResetTheDay(t *testing.T) {
	r := startTestRedis(t)
	st, err := redis.Open(context.Background(), redis.Options{URL: fmt.Sprintf("redis://127.0.0.1:%d/0", r.port),
		AllowVolatile: true, InitIfEmpty: true})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	s := newSeller(t, x402.V2, false, offer(x402.V2, "eip155:84532", baseSepoliaUSDC, sellerPayTo, cent))
	rules := testRules()
	rules.DailyCapUSD = 500_000
	h := newHarness(t, st, rules)
	for i := range 50 {
		if ex := h.buyer().pay(s.url("/weather"), nil); ex.paid == nil || ex.paid.StatusCode != http.StatusOK {
			t.Fatalf("payment %d before the restart was not paid", i)
		}
	}
	if ex := h.buyer().pay(s.url("/weather"), nil); ex.first.StatusCode != http.StatusForbidden {
		t.Fatalf("the 51st payment: %d, want the daily cap's 403", ex.first.StatusCode)
	}
	r.stop()
	r.start()
	ex := h.buyer().pay(s.url("/weather"), nil)
	if ex.first.StatusCode != http.StatusForbidden || ex.first.Header.Get(HeaderDecision) != block ||
		!strings.Contains(string(ex.firstBody), "ledger lost") || ex.paid != nil {
		t.Fatalf("payment after the restart: %d %s", ex.first.StatusCode, ex.firstBody)
	}
	if s.paid.Load() != 50 {
		t.Fatalf("the seller was paid %d times, want 50", s.paid.Load())
	}
	if code, body := h.api("GET", "/readyz", "", nil); code != http.StatusServiceUnavailable || !strings.Contains(string(body), "reinit") {
		t.Fatalf("/readyz after the restart = %d %s", code, body)
	}
}

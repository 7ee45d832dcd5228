package main

import (
	"bufio"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/payguard/payguard/internal/testredis"
	"github.com/payguard/payguard/store"
	"github.com/payguard/payguard/store/redis"
	"github.com/payguard/payguard/x402"
)

// The fleet: two `payguard proxy` processes (the real binary) share one daily budget through one real Redis.
// 50 concurrent agents, split across both, each try to pay $0.01 against a $0.05 cap: exactly 5 payments
// settle at the seller. Then the same burst again, with one proxy killed by SIGKILL while both proxies have
// payments in flight: nothing it reserved is lost, the agents fail over to the survivor, and still exactly 5
// payments settle (SPEC: the cap holds for any interleaving, across replicas; a payment forwarded whose
// outcome is unknown keeps its reservation until the day ends).

const (
	fleetPayTo = "0xf54127927F219FB78C8D1A1fF3D7dc6D7f70C98E"
	fleetAsset = "0x036CbD53842c5426634e7929541eC2318f3dCF7e" // USDC on Base Sepolia
	fleetBuyer = "0xf9A721373C534a2d7dbAad7b5bDF25BED26B51c1"
	fleetCent  = "10000" // $0.01 in USDC's atomic units
)

// fleetRedisURL is the Redis the fleet shares (internal/testredis: PAYGUARD_TEST_REDIS_URL, the Redis at
// 127.0.0.1:6379, redis-server from PATH, else the embedded server). Under CI (CI=true, .ci/run) it must be a
// real Redis: the fleet's guarantee is about Redis's scripts, not the embedded server's imitation of them.
func fleetRedisURL(t *testing.T) string {
	t.Helper()
	srv, err := testredis.Get()
	if err != nil {
		t.Fatalf("no Redis for the fleet test: %v", err)
	}
	if srv.Kind == testredis.KindEmbedded && os.Getenv("CI") == "true" {
		t.Fatalf("the fleet test runs against a real Redis under CI; got the embedded server (%s)", srv.Notice)
	}
	return srv.URL
}

// fleetSeller speaks x402 v2 like the SDK sellers and counts the payments it settled (distinct nonces).
// Requests are counted by class: "paid " or "unpaid " and the path without its last segment ("/pay/v/3" is
// "paid /pay/v"), which the tests use to name the agent's kind and the proxy it went through.
type fleetSeller struct {
	srv     *httptest.Server
	mu      sync.Mutex
	nonces  map[string]bool
	arrived map[string]int // requests that reached the seller, by class
	settled map[string]int // payments settled, by path class
	dupes   int            // payments presented again with a nonce already settled
	// gate, when set, holds every paid request, and every unpaid one holdUnpaid names, until it is closed
	// (the kill happens while payments are in flight between proxy and seller).
	gate       chan struct{}
	holdUnpaid func(path string) bool
}

func newFleetSeller(t *testing.T) *fleetSeller {
	s := &fleetSeller{nonces: map[string]bool{}, arrived: map[string]int{}, settled: map[string]int{}}
	s.srv = httptest.NewServer(s)
	t.Cleanup(s.srv.Close)
	return s
}

func pathClass(path string) string { return path[:strings.LastIndex(path, "/")] }

// count is the number of requests of class that arrived.
func (s *fleetSeller) count(class string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.arrived[class]
}

// settledTotal is every payment settled, and settledBy those of one path class.
func (s *fleetSeller) settledTotal() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := 0
	for _, c := range s.settled {
		n += c
	}
	return n
}

func (s *fleetSeller) settledBy(class string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.settled[class]
}

func (s *fleetSeller) requirement() x402.Requirement {
	return x402.Requirement{Version: x402.V2, Scheme: "exact", Network: "eip155:84532", Amount: fleetCent,
		Asset: fleetAsset, PayTo: fleetPayTo, MaxTimeoutSeconds: 60, Extra: json.RawMessage(`{"name":"USDC","version":"2"}`)}
}

func (s *fleetSeller) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	value := r.Header.Get(x402.HeaderPaymentSignature)
	kind := "paid "
	if value == "" {
		kind = "unpaid "
	}
	s.mu.Lock()
	s.arrived[kind+pathClass(r.URL.Path)]++
	s.mu.Unlock()
	if s.gate != nil && (value != "" || s.holdUnpaid != nil && s.holdUnpaid(r.URL.Path)) {
		<-s.gate
	}
	if value == "" {
		pr := &x402.PaymentRequired{X402Version: x402.V2, Accepts: []x402.Requirement{s.requirement()},
			Resource: &x402.ResourceInfo{URL: "http://" + r.Host + r.URL.RequestURI()}}
		h, _ := x402.EncodeHeaderJSON(pr)
		w.Header().Set(x402.HeaderPaymentRequired, h)
		w.WriteHeader(http.StatusPaymentRequired)
		fmt.Fprint(w, "{}")
		return
	}
	pl, err := x402.DecodePaymentPayloadHeader(value)
	if err != nil {
		http.Error(w, "bad payment", http.StatusBadRequest)
		return
	}
	ev, err := pl.ExactEVM()
	if err != nil || ev.Authorization == nil || ev.Authorization.Value != fleetCent {
		http.Error(w, "bad payment", http.StatusBadRequest)
		return
	}
	s.mu.Lock()
	used := s.nonces[ev.Authorization.Nonce]
	s.nonces[ev.Authorization.Nonce] = true
	if used {
		s.dupes++
	} else {
		s.settled[pathClass(r.URL.Path)]++
	}
	s.mu.Unlock()
	if used {
		http.Error(w, "nonce reused", http.StatusPaymentRequired)
		return
	}
	h, _ := x402.EncodeHeaderJSON(x402.SettleResponse{Success: true, Payer: fleetBuyer, Network: "eip155:84532",
		Transaction: "0x" + strings.Repeat("ab", 32)})
	w.Header().Set(x402.HeaderPaymentResponse, h)
	fmt.Fprint(w, `{"ok":true}`)
}

// fleetProxy is one `payguard proxy` process.
type fleetProxy struct {
	cmd    *exec.Cmd
	client *http.Client
	admin  string
	done   chan struct{}
}

func freeAddr(t *testing.T) string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}

func startFleetProxy(t *testing.T, bin, prefix string) *fleetProxy {
	t.Helper()
	dir := t.TempDir()
	proxyAddr, adminAddr := freeAddr(t), freeAddr(t)
	cfg := fmt.Sprintf(`proxy:
  listen: %q
  data_dir: %q
  ca_cert_file: ""
  ca_key_file: ""
  budget: fleet
admin:
  listen: %q
store:
  driver: redis
  redis:
    url: %q
    prefix: %q
    allow_volatile: true   # CI's and the embedded test Redis keep nothing across a restart
screening:
  sanctions: {enabled: false}
  domain: {enabled: false}
keys:
  receipt_key_file: %q
rules:
  max_per_payment_usd: 1
  hold_above_usd: 1
  daily_cap_usd: 0.05
  allowed_networks: ["eip155:84532"]
  screen_sanctions: false
  require_live: false
  max_price_multiple: null
  new_domain_days: 0
`, proxyAddr, dir, adminAddr, fleetRedisURL(t), prefix, filepath.Join(dir, "keys.json"))
	path := filepath.Join(dir, "payguard.yaml")
	if err := os.WriteFile(path, []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, "proxy", "--config", path, "--offline")
	cmd.Env = append(os.Environ(), "PAYGUARD_ADMIN_TOKEN=fleet-test-token-0123456789")
	stderr, _ := cmd.StderrPipe()
	cmd.Stdout = io.Discard
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	p := &fleetProxy{cmd: cmd, admin: adminAddr, done: make(chan struct{})}
	var logMu sync.Mutex
	var logTail []string
	go func() {
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			logMu.Lock()
			logTail = append(logTail, sc.Text())
			logMu.Unlock()
		}
	}()
	go func() { cmd.Wait(); close(p.done) }()
	t.Cleanup(func() {
		cmd.Process.Kill()
		<-p.done
		if t.Failed() {
			logMu.Lock()
			t.Logf("proxy %s log:\n%s", proxyAddr, strings.Join(logTail, "\n"))
			logMu.Unlock()
		}
	})
	proxyURL, _ := url.Parse("http://" + proxyAddr)
	p.client = &http.Client{Transport: &http.Transport{Proxy: http.ProxyURL(proxyURL), MaxIdleConnsPerHost: 64},
		Timeout: 30 * time.Second}
	for range 300 {
		if resp, err := http.Get("http://" + adminAddr + "/healthz"); err == nil {
			resp.Body.Close()
			if resp.StatusCode == 200 {
				return p
			}
		}
		select {
		case <-p.done:
			t.Fatalf("proxy exited at start")
		case <-time.After(50 * time.Millisecond):
		}
	}
	t.Fatalf("proxy on %s did not become healthy", proxyAddr)
	return nil
}

// exchange is one agent's payment: the unpaid request, then the signed retry of the option it was shown.
// proxies are the replicas the agent may use, in order (a Service's endpoints as one agent meets them): a
// request whose connection fails goes again, unchanged, through the next one. The signed retry goes too,
// since the agent cannot tell whether the dead proxy forwarded it (payguard's replay guard, shared in the
// store, keeps it from being paid twice). It returns the final status (0: no proxy answered, -1: an
// unreadable challenge), how many times the agent failed over, and a refusal's reason_class.
func exchange(target string, proxies ...*fleetProxy) (status, failovers int, reason string) {
	// send sends the request newReq makes through proxies[from:] until one answers; it returns the answer
	// and the index of the proxy that gave it.
	send := func(from int, newReq func() *http.Request) (*http.Response, int) {
		for i := from; i < len(proxies); i++ {
			resp, err := proxies[i].client.Do(newReq())
			if err == nil {
				var refusal struct {
					ReasonClass string `json:"reason_class"`
				}
				body, _ := io.ReadAll(resp.Body)
				resp.Body.Close()
				if json.Unmarshal(body, &refusal) == nil {
					reason = refusal.ReasonClass
				}
				return resp, i
			}
			failovers++
		}
		return nil, len(proxies)
	}
	resp, via := send(0, func() *http.Request { r, _ := http.NewRequest(http.MethodGet, target, nil); return r })
	if resp == nil {
		return 0, failovers, ""
	}
	if resp.StatusCode != http.StatusPaymentRequired {
		return resp.StatusCode, failovers, reason
	}
	pr, err := x402.DecodePaymentRequiredHeader(resp.Header.Get(x402.HeaderPaymentRequired))
	if err != nil || len(pr.Accepts) != 1 {
		return -1, failovers, ""
	}
	opt := pr.Accepts[0]
	var nonce [32]byte
	rand.Read(nonce[:])
	auth := x402.EIP3009Authorization{From: fleetBuyer, To: opt.PayTo, Value: opt.Amount, ValidAfter: "0",
		ValidBefore: strconv.FormatInt(time.Now().Add(time.Minute).Unix(), 10), Nonce: "0x" + hex.EncodeToString(nonce[:])}
	raw, _ := json.Marshal(map[string]any{"signature": "0x" + hex.EncodeToString(make([]byte, 65)), "authorization": auth})
	pl := &x402.PaymentPayload{X402Version: x402.V2, Resource: pr.Resource, Accepted: &opt, Payload: raw}
	value, _ := x402.EncodeHeaderJSON(pl)
	resp, _ = send(via, func() *http.Request {
		r, _ := http.NewRequest(http.MethodGet, target, nil)
		r.Header.Set(x402.HeaderPaymentSignature, value)
		return r
	})
	if resp == nil {
		return 0, failovers, ""
	}
	return resp.StatusCode, failovers, reason
}

func fleetSetup(t *testing.T) (bin, prefix string, ledger *redis.Store) {
	t.Helper()
	if testing.Short() {
		t.Skip("builds the binary and starts processes")
	}
	prefix = "payguard-test:fleet:" + store.NewID()[:12] + ":"
	ledger, err := redis.Open(context.Background(), redis.Options{URL: fleetRedisURL(t), Prefix: prefix, AllowVolatile: true, InitIfEmpty: true})
	if err != nil {
		t.Fatalf("the fleet test's Redis at %s: %v", fleetRedisURL(t), err)
	}
	t.Cleanup(func() { ledger.Close() })
	t.Cleanup(func() { cleanRedisPrefix(t, prefix) })
	bin = filepath.Join(t.TempDir(), "payguard")
	if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	return bin, prefix, ledger
}

// cleanRedisPrefix deletes this test's keys (and only those: the Redis is shared).
func cleanRedisPrefix(t *testing.T, prefix string) {
	s, err := redis.Open(context.Background(), redis.Options{URL: fleetRedisURL(t), Prefix: prefix, AllowVolatile: true, InitIfEmpty: true})
	if err != nil {
		t.Errorf("cleaning up %s: %v", prefix, err)
		return
	}
	defer s.Close()
	ctx := context.Background()
	var keys []string
	iter := s.Client().Scan(ctx, 0, prefix+"*", 1000).Iterator()
	for iter.Next(ctx) {
		keys = append(keys, iter.Val())
	}
	if len(keys) > 0 {
		if err := s.Client().Del(ctx, keys...).Err(); err != nil {
			t.Errorf("cleaning up %s: %v", prefix, err)
		}
	}
}

func spentAndReserved(t *testing.T, ledger *redis.Store) (spent, reserved int64) {
	t.Helper()
	st, err := ledger.State(context.Background(), "fleet", time.Now().UTC().Format(time.DateOnly))
	if err != nil {
		t.Fatal(err)
	}
	return st.Spent, st.Reserved
}

func TestFleetTwoProxiesShareOneCap(t *testing.T) {
	bin, prefix, ledger := fleetSetup(t)
	seller := newFleetSeller(t)
	proxies := []*fleetProxy{startFleetProxy(t, bin, prefix), startFleetProxy(t, bin, prefix)}

	const agents = 50
	codes := make([]int, agents)
	var wg sync.WaitGroup
	start := make(chan struct{})
	for i := range agents {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			codes[i], _, _ = exchange(seller.srv.URL+"/report/"+strconv.Itoa(i), proxies[i%2])
		}()
	}
	close(start)
	wg.Wait()
	ok, refused := 0, 0
	for _, c := range codes {
		switch c {
		case http.StatusOK:
			ok++
		case http.StatusForbidden:
			refused++
		default:
			t.Errorf("an agent got status %d", c)
		}
	}
	if got := seller.settledTotal(); got != 5 || ok != 5 || refused != agents-5 {
		t.Fatalf("settled %d at the seller, %d agents got 200, %d got 403; want exactly 5, 5, %d", got, ok, refused, agents-5)
	}
	if spent, reserved := spentAndReserved(t, ledger); spent+reserved != 50_000 {
		t.Fatalf("ledger holds spent %d + reserved %d micro-dollars; want $0.05 in all", spent, reserved)
	}
}

// waitFor polls cond until it holds; it fails the test after 30 s or if the proxy p exits.
func waitFor(t *testing.T, p *fleetProxy, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting until %s", what)
		}
		select {
		case <-p.done:
			t.Fatalf("a proxy exited while waiting until %s", what)
		case <-time.After(5 * time.Millisecond):
		}
	}
}

// The kill: 50 agents at once, half homed on each proxy, and the victim killed with SIGKILL when every one
// of the 50 payments is in flight, on both proxies: five payers (three through the victim, two through the
// survivor) have their signed payments forwarded and held at the seller's door, and 45 late agents have their
// first request held there before any challenge. The seller answers the late agents only after the kill, so
// the payers are the ones that take the cap's five slots: which agents win the race is
// TestFleetTwoProxiesShareOneCap's subject; this test's is that the kill loses nothing.
//
// After the kill every agent homed on the victim fails over to the survivor (its connection died mid-request),
// sending the same request again. Nothing is lost: the victim's three forwarded payments settle at the seller
// (the agents paid, whatever the dead proxy knew) and their reservations still count in Redis, pinned, not
// as leases that would lapse with their tickets; the payers' signed retries sent again through the survivor
// are refused as replays, not paid twice; the late agents are refused by the survivor (the cap is full); and
// exactly 5 payments settle, none after.
func TestFleetKill9MidBurstLosesNothing(t *testing.T) {
	bin, prefix, ledger := fleetSetup(t)
	seller := newFleetSeller(t)
	seller.gate = make(chan struct{})
	seller.holdUnpaid = func(path string) bool { return strings.HasPrefix(path, "/late/") }
	victim, survivor := startFleetProxy(t, bin, prefix), startFleetProxy(t, bin, prefix)
	route := map[string][]*fleetProxy{"v": {victim, survivor}, "s": {survivor, victim}}

	const agents, payers = 50, 5
	codes, failovers, reasons := make([]int, agents), make([]int, agents), make([]string, agents)
	homes := make([]string, agents)
	var wg sync.WaitGroup
	start := make(chan struct{})
	for i := range agents {
		homes[i] = map[bool]string{true: "v", false: "s"}[i%2 == 0]
		kind := map[bool]string{true: "pay", false: "late"}[i < payers]
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			codes[i], failovers[i], reasons[i] = exchange(seller.srv.URL+"/"+kind+"/"+homes[i]+"/"+strconv.Itoa(i), route[homes[i]]...)
		}()
	}
	close(start)
	waitFor(t, victim, "all 50 payments are in flight on both proxies", func() bool {
		return seller.count("paid /pay/v") == 3 && seller.count("paid /pay/s") == 2 &&
			seller.count("unpaid /late/v") == 22 && seller.count("unpaid /late/s") == 23
	})
	if spent, reserved := spentAndReserved(t, ledger); spent != 0 || reserved != 50_000 {
		t.Fatalf("before the kill the ledger holds spent %d, reserved %d; want 0 and the whole $0.05 reserved", spent, reserved)
	}
	if err := victim.cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	<-victim.done
	close(seller.gate) // the seller settles what reached it and answers the late agents
	wg.Wait()

	for i := range agents {
		// A late agent is refused by the cap; a payer on the survivor is settled and committed; a payer on
		// the victim sent its signed retry again through the survivor, which refuses it as a replay.
		want, wantFailovers, wantReason := http.StatusForbidden, 0, "daily_cap"
		if homes[i] == "v" {
			wantFailovers = 1 // its connection to the victim died mid-request
		}
		switch {
		case i < payers && homes[i] == "s":
			want, wantReason = http.StatusOK, ""
		case i < payers:
			wantReason = "payment_replay"
		}
		if codes[i] != want || failovers[i] != wantFailovers || reasons[i] != wantReason {
			t.Errorf("agent %d (home %s) got status %d (%q) after %d failovers; want %d (%q) after %d",
				i, homes[i], codes[i], reasons[i], failovers[i], want, wantReason, wantFailovers)
		}
	}
	seller.mu.Lock()
	dupes := seller.dupes
	seller.mu.Unlock()
	if got, v, s := seller.settledTotal(), seller.settledBy("/pay/v"), seller.settledBy("/pay/s"); got != 5 || v != 3 || s != 2 || dupes != 0 {
		t.Fatalf("settled %d (%d forwarded by the victim, %d by the survivor), %d presented twice; want exactly 5 (3, 2), 0", got, v, s, dupes)
	}
	// The survivor committed its two; the victim's three were forwarded with an outcome payguard never
	// learned, so they stay reserved until the day ends.
	if spent, reserved := spentAndReserved(t, ledger); spent != 20_000 || reserved != 30_000 {
		t.Fatalf("after the kill the ledger holds spent %d, reserved %d; want 20000 and 30000", spent, reserved)
	}
	// Pinned, not leased: a reservation still a lease would be released when its ticket expires (minutes
	// from now), and the cap would then let more payments through than the seller was paid for.
	day := time.Now().UTC().Format(time.DateOnly)
	if n, err := ledger.Client().ZCard(context.Background(), prefix+"lease:"+day+":fleet").Result(); err != nil || n != 0 {
		t.Fatalf("%d reservations are still leases (%v); want every one pinned by its taken ticket", n, err)
	}

	// The survivor keeps refusing: nothing the victim held was given back.
	for i := range 10 {
		if code, _, reason := exchange(seller.srv.URL+"/after/"+strconv.Itoa(i), survivor); code != http.StatusForbidden || reason != "daily_cap" {
			t.Errorf("a payment after the kill got %d (%q); want 403 (the cap is spent)", code, reason)
		}
	}
	if got := seller.settledTotal(); got != 5 {
		t.Fatalf("settled %d after the kill; want still 5", got)
	}
}

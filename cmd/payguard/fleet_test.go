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
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/payguard/payguard/store"
	"github.com/payguard/payguard/store/redis"
	"github.com/payguard/payguard/x402"
)

// The fleet: two `payguard proxy` processes (the real binary) share one daily budget through one real Redis.
// 50 concurrent agents, split across both, each try to pay $0.01 against a $0.05 cap: exactly 5 payments
// settle at the seller. Then a proxy is killed with SIGKILL in the middle of a burst: nothing it reserved or
// released is lost, so the survivor still refuses every payment beyond the cap (SPEC: the cap holds for any
// interleaving, across replicas).

const (
	fleetPayTo = "0xf54127927F219FB78C8D1A1fF3D7dc6D7f70C98E"
	fleetAsset = "0x036CbD53842c5426634e7929541eC2318f3dCF7e" // USDC on Base Sepolia
	fleetBuyer = "0xf9A721373C534a2d7dbAad7b5bDF25BED26B51c1"
	fleetCent  = "10000" // $0.01 in USDC's atomic units
)

func fleetRedisURL() string {
	if u := os.Getenv("PAYGUARD_TEST_REDIS_URL"); u != "" {
		return u
	}
	return "redis://127.0.0.1:6379/0"
}

// fleetSeller speaks x402 v2 like the SDK sellers and counts the payments it settled (distinct nonces).
type fleetSeller struct {
	srv     *httptest.Server
	mu      sync.Mutex
	nonces  map[string]bool
	settled atomic.Int64
	// gate, when set, holds every paid request until it is closed (the kill happens while payments are in
	// flight between proxy and seller).
	gate    chan struct{}
	arrived atomic.Int64
}

func newFleetSeller(t *testing.T) *fleetSeller {
	s := &fleetSeller{nonces: map[string]bool{}}
	s.srv = httptest.NewServer(s)
	t.Cleanup(s.srv.Close)
	return s
}

func (s *fleetSeller) requirement() x402.Requirement {
	return x402.Requirement{Version: x402.V2, Scheme: "exact", Network: "eip155:84532", Amount: fleetCent,
		Asset: fleetAsset, PayTo: fleetPayTo, MaxTimeoutSeconds: 60, Extra: json.RawMessage(`{"name":"USDC","version":"2"}`)}
}

func (s *fleetSeller) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	value := r.Header.Get(x402.HeaderPaymentSignature)
	if value == "" {
		pr := &x402.PaymentRequired{X402Version: x402.V2, Accepts: []x402.Requirement{s.requirement()},
			Resource: &x402.ResourceInfo{URL: "http://" + r.Host + r.URL.RequestURI()}}
		h, _ := x402.EncodeHeaderJSON(pr)
		w.Header().Set(x402.HeaderPaymentRequired, h)
		w.WriteHeader(http.StatusPaymentRequired)
		fmt.Fprint(w, "{}")
		return
	}
	s.arrived.Add(1)
	if s.gate != nil {
		<-s.gate
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
	s.mu.Unlock()
	if used {
		http.Error(w, "nonce reused", http.StatusPaymentRequired)
		return
	}
	s.settled.Add(1)
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
`, proxyAddr, dir, adminAddr, fleetRedisURL(), prefix, filepath.Join(dir, "keys.json"))
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

// pay is one agent's exchange through p: the unpaid request, then the signed retry of the option it was shown.
// It returns the final status (0 when the connection failed, e.g. the proxy was killed).
func (p *fleetProxy) pay(target string) int {
	resp, err := p.client.Get(target)
	if err != nil {
		return 0
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusPaymentRequired {
		return resp.StatusCode
	}
	pr, err := x402.DecodePaymentRequiredHeader(resp.Header.Get(x402.HeaderPaymentRequired))
	if err != nil || len(pr.Accepts) != 1 {
		return -1
	}
	opt := pr.Accepts[0]
	var nonce [32]byte
	rand.Read(nonce[:])
	auth := x402.EIP3009Authorization{From: fleetBuyer, To: opt.PayTo, Value: opt.Amount, ValidAfter: "0",
		ValidBefore: strconv.FormatInt(time.Now().Add(time.Minute).Unix(), 10), Nonce: "0x" + hex.EncodeToString(nonce[:])}
	raw, _ := json.Marshal(map[string]any{"signature": "0x" + hex.EncodeToString(make([]byte, 65)), "authorization": auth})
	pl := &x402.PaymentPayload{X402Version: x402.V2, Resource: pr.Resource, Accepted: &opt, Payload: raw}
	value, _ := x402.EncodeHeaderJSON(pl)
	req, _ := http.NewRequest(http.MethodGet, target, nil)
	req.Header.Set(x402.HeaderPaymentSignature, value)
	resp, err = p.client.Do(req)
	if err != nil {
		return 0
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return resp.StatusCode
}

func fleetSetup(t *testing.T) (bin, prefix string, ledger *redis.Store) {
	t.Helper()
	if testing.Short() {
		t.Skip("builds the binary and starts processes")
	}
	prefix = "payguard-test:fleet:" + store.NewID()[:12] + ":"
	ledger, err := redis.Open(context.Background(), redis.Options{URL: fleetRedisURL(), Prefix: prefix, AllowVolatile: true, InitIfEmpty: true})
	if err != nil {
		t.Fatalf("the fleet test needs a real Redis at %s (set PAYGUARD_TEST_REDIS_URL to use another): %v", fleetRedisURL(), err)
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
	s, err := redis.Open(context.Background(), redis.Options{URL: fleetRedisURL(), Prefix: prefix, AllowVolatile: true, InitIfEmpty: true})
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
			codes[i] = proxies[i%2].pay(seller.srv.URL + "/report/" + strconv.Itoa(i))
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
	if got := seller.settled.Load(); got != 5 || ok != 5 || refused != agents-5 {
		t.Fatalf("settled %d at the seller, %d agents got 200, %d got 403; want exactly 5, 5, %d", got, ok, refused, agents-5)
	}
	if spent, reserved := spentAndReserved(t, ledger); spent+reserved != 50_000 {
		t.Fatalf("ledger holds spent %d + reserved %d micro-dollars; want $0.05 in all", spent, reserved)
	}
}

func TestFleetKill9MidBurstLosesNothing(t *testing.T) {
	bin, prefix, ledger := fleetSetup(t)
	seller := newFleetSeller(t)
	seller.gate = make(chan struct{})
	victim, survivor := startFleetProxy(t, bin, prefix), startFleetProxy(t, bin, prefix)

	// The first burst goes through the victim; its payments are held at the seller's door, so the victim
	// dies with reservations taken and payments forwarded whose outcome it never learns.
	const first = 3
	var wg sync.WaitGroup
	for i := range first {
		wg.Add(1)
		go func() { defer wg.Done(); victim.pay(seller.srv.URL + "/a/" + strconv.Itoa(i)) }()
	}
	for seller.arrived.Load() < first {
		time.Sleep(10 * time.Millisecond)
	}
	if err := victim.cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	<-victim.done
	close(seller.gate) // the seller settles what reached it: the agents paid, whatever the proxy knew
	wg.Wait()

	// The second burst, all through the survivor: only the rest of the cap is left.
	const second = 47
	codes := make([]int, second)
	for i := range second {
		wg.Add(1)
		go func() { defer wg.Done(); codes[i] = survivor.pay(seller.srv.URL + "/b/" + strconv.Itoa(i)) }()
	}
	wg.Wait()
	ok := 0
	for _, c := range codes {
		if c == http.StatusOK {
			ok++
		} else if c != http.StatusForbidden {
			t.Errorf("an agent got status %d from the survivor", c)
		}
	}
	if got := seller.settled.Load(); got != 5 || ok != 5-first {
		t.Fatalf("settled %d in all (%d through the survivor); want exactly 5 (%d)", got, ok, 5-first)
	}
	if spent, reserved := spentAndReserved(t, ledger); spent+reserved != 50_000 {
		t.Fatalf("ledger holds spent %d + reserved %d micro-dollars; want $0.05 in all", spent, reserved)
	}
}

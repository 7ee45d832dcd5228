package proxy

import (
	"bufio"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/payguard/payguard/store/bolt"
	"github.com/payguard/payguard/store/memory"
	"github.com/payguard/payguard/x402"
)

// upgradeSeller answers 402 on /pay, and on /ws switches protocols (101 to the protocol asked, websocket
// when none was, then echoes raw bytes) for any request, asked or not. It records every payment header it received, in any spelling, and every byte
// that reached it after a 101.
type upgradeSeller struct {
	srv      *httptest.Server
	switched atomic.Int64
	mu       sync.Mutex
	payments []string
	raw      strings.Builder
	ended    chan error // each upgraded stream's end, as the seller saw it (io.EOF: the proxy closed it)
}

func newUpgradeSeller(t *testing.T, useTLS bool) *upgradeSeller {
	s := &upgradeSeller{ended: make(chan error, 16)}
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.mu.Lock()
		for k := range r.Header {
			if k := strings.TrimRight(wsgiKey(k), "_"); k == "HTTP_X_PAYMENT" || k == "HTTP_PAYMENT_SIGNATURE" {
				s.payments = append(s.payments, k)
			}
		}
		s.mu.Unlock()
		if r.URL.Path == "/pay" {
			w.WriteHeader(http.StatusPaymentRequired)
			fmt.Fprint(w, "payment required")
			return
		}
		conn, rw, err := w.(http.Hijacker).Hijack()
		if err != nil {
			return
		}
		defer conn.Close()
		s.switched.Add(1)
		proto := r.Header.Get("Upgrade")
		if proto == "" {
			proto = "websocket"
		}
		rw.WriteString("HTTP/1.1 101 Switching Protocols\r\nUpgrade: " + proto + "\r\nConnection: Upgrade\r\n\r\n")
		rw.Flush()
		conn.SetDeadline(time.Now().Add(time.Minute))
		buf := make([]byte, 4096)
		for {
			n, err := rw.Read(buf)
			s.mu.Lock()
			s.raw.Write(buf[:n])
			s.mu.Unlock()
			if err != nil {
				s.ended <- err
				return
			}
			if _, err := conn.Write(buf[:n]); err != nil {
				s.ended <- err
				return
			}
		}
	})
	if useTLS {
		s.srv = httptest.NewTLSServer(h)
	} else {
		s.srv = httptest.NewServer(h)
	}
	t.Cleanup(s.srv.Close)
	return s
}

func (s *upgradeSeller) seen() (payments []string, raw string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.payments...), s.raw.String()
}

// agentConn is a raw connection to the seller through the proxy: plain HTTP (absolute-form targets) or
// CONNECT and TLS with payguard's CA (origin-form targets).
type agentConn struct {
	net.Conn
	br     *bufio.Reader
	target func(path string) string
	host   string
}

func dialThrough(t *testing.T, h *harness, s *httptest.Server) *agentConn {
	t.Helper()
	c, err := net.Dial("tcp", strings.TrimPrefix(h.srv.URL, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	c.SetDeadline(time.Now().Add(30 * time.Second))
	host := strings.TrimPrefix(strings.TrimPrefix(s.URL, "http://"), "https://")
	if s.TLS == nil {
		return &agentConn{Conn: c, br: bufio.NewReader(c), host: host,
			target: func(p string) string { return s.URL + p }}
	}
	fmt.Fprintf(c, "CONNECT %s HTTP/1.1\r\nHost: %s\r\n\r\n", host, host)
	br := bufio.NewReader(c)
	resp, err := http.ReadResponse(br, nil)
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("CONNECT: %v %v", resp, err)
	}
	tc := tls.Client(c, &tls.Config{RootCAs: h.caPool, ServerName: "127.0.0.1"})
	tc.SetDeadline(time.Now().Add(30 * time.Second))
	return &agentConn{Conn: tc, br: bufio.NewReader(tc), host: host, target: func(p string) string { return p }}
}

func (c *agentConn) request(method, path string, hdr ...string) string {
	return fmt.Sprintf("%s %s HTTP/1.1\r\nHost: %s\r\n%s\r\n", method, c.target(path), c.host, strings.Join(hdr, ""))
}

func (c *agentConn) read(t *testing.T) (*http.Response, string) {
	t.Helper()
	resp, err := http.ReadResponse(c.br, nil)
	if err != nil {
		t.Fatalf("read response: %v", err)
	}
	if resp.StatusCode == http.StatusSwitchingProtocols {
		return resp, ""
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	return resp, string(b)
}

const wsHeaders = "Upgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n"

// blockedPayment is a $900 v2 payment to a blocklisted payee for url.
func blockedPayment(t *testing.T, h *harness, url string) string {
	pr := &x402.PaymentRequired{X402Version: x402.V2, Resource: &x402.ResourceInfo{URL: url},
		Accepts: []x402.Requirement{offer(x402.V2, "eip155:84532", baseSepoliaUSDC, otherPayTo, "900000000")}}
	_, v := h.buyer().sign(pr, 0, nil)
	return v
}

// An upgrade request carrying a payment (any spelling) is decided like any other request: the $900
// payment to a blocklisted payee is refused and neither it nor the upgrade reaches the seller. The host
// never answered 402, so the default policy lets upgrades to it go on.
func TestUpgradeRequestPaymentIsDecided(t *testing.T) {
	for _, useTLS := range []bool{false, true} {
		s := newUpgradeSeller(t, useTLS)
		rules := testRules()
		rules.PayToBlocklist = []string{otherPayTo}
		h := newHarness(t, memory.New(), rules, trustServer(s.srv))
		pay := blockedPayment(t, h, s.srv.URL+"/ws")
		for _, name := range []string{"PAYMENT-SIGNATURE", "PAYMENT_SIGNATURE", "Payment-Signature-"} {
			c := dialThrough(t, h, s.srv)
			fmt.Fprint(c, c.request("GET", "/ws", wsHeaders, name+": "+pay+"\r\n"))
			resp, body := c.read(t)
			if r := decodeRefusal(t, resp, []byte(body)); r.Decision != block {
				t.Errorf("tls=%v %s: %s", useTLS, name, body)
			}
		}
		if payments, _ := s.seen(); len(payments) > 0 || s.switched.Load() != 0 {
			t.Errorf("tls=%v: seller saw payments %v and %d upgrades", useTLS, payments, s.switched.Load())
		}
		// Without a payment the upgrade goes on and the stream works.
		c := dialThrough(t, h, s.srv)
		fmt.Fprint(c, c.request("GET", "/ws", wsHeaders))
		if resp, _ := c.read(t); resp.StatusCode != http.StatusSwitchingProtocols {
			t.Fatalf("tls=%v: plain upgrade = %d", useTLS, resp.StatusCode)
		}
		fmt.Fprint(c, "ping")
		buf := make([]byte, 4)
		if _, err := io.ReadFull(c.br, buf); err != nil || string(buf) != "ping" {
			t.Errorf("tls=%v: echo through the upgraded stream = %q %v", useTLS, buf, err)
		}
	}
}

// The default (refuse_after_402): once a host has answered 402, upgrades to it are refused, so bytes
// after a 101 (here an HTTP request with a payment pipelined behind the upgrade, which a splice would pass
// on raw) cannot carry a payment past the guard. The pipelined request is then read and decided as a
// request of its own.
func TestUpgradeRefusedToHostThatAnswered402(t *testing.T) {
	for _, useTLS := range []bool{false, true} {
		s := newUpgradeSeller(t, useTLS)
		rules := testRules()
		rules.PayToBlocklist = []string{otherPayTo}
		h := newHarness(t, memory.New(), rules, trustServer(s.srv))
		pay := blockedPayment(t, h, s.srv.URL+"/ws")
		c := dialThrough(t, h, s.srv)
		fmt.Fprint(c, c.request("GET", "/pay"))
		if resp, _ := c.read(t); resp.StatusCode != http.StatusPaymentRequired {
			t.Fatalf("tls=%v: /pay = %d", useTLS, resp.StatusCode)
		}
		fmt.Fprint(c, c.request("GET", "/ws", wsHeaders)+c.request("GET", "/ws", "X-PAYMENT: "+pay+"\r\n"))
		resp, body := c.read(t)
		r := decodeRefusal(t, resp, []byte(body))
		if r.Decision != block || !strings.Contains(strings.Join(r.Reasons, " "), "answered 402") {
			t.Errorf("tls=%v: upgrade after 402: %s", useTLS, body)
		}
		resp, body = c.read(t)
		if r := decodeRefusal(t, resp, []byte(body)); r.Decision != block {
			t.Errorf("tls=%v: pipelined payment: %s", useTLS, body)
		}
		payments, raw := s.seen()
		if s.switched.Load() != 0 || len(payments) > 0 || strings.Contains(raw, "X-PAYMENT") {
			t.Errorf("tls=%v: seller switched %d times, saw payments %v, raw bytes %q", useTLS, s.switched.Load(), payments, raw)
		}
	}
}

// A seller that answers 101 to a request that did not ask to switch protocols is not spliced.
func TestUnaskedProtocolSwitchRefused(t *testing.T) {
	for _, useTLS := range []bool{false, true} {
		s := newUpgradeSeller(t, useTLS)
		h := newHarness(t, memory.New(), testRules(), trustServer(s.srv))
		c := dialThrough(t, h, s.srv)
		fmt.Fprint(c, c.request("GET", "/ws"))
		resp, body := c.read(t)
		if resp.StatusCode == http.StatusSwitchingProtocols {
			t.Fatalf("tls=%v: an unasked 101 was passed on", useTLS)
		}
		if r := decodeRefusal(t, resp, []byte(body)); !strings.Contains(strings.Join(r.Reasons, " "), "did not ask") {
			t.Errorf("tls=%v: %s", useTLS, body)
		}
	}
}

// proxy.upgrades: refuse refuses every upgrade; allow lets one through even to a host that answered 402.
func TestUpgradePolicies(t *testing.T) {
	if _, err := ParseUpgradePolicy("sometimes"); err == nil {
		t.Error("an unknown proxy.upgrades value was accepted")
	}
	for _, tc := range []struct {
		policy UpgradePolicy
		status int
	}{{UpgradesRefuse, http.StatusForbidden}, {UpgradesAllow, http.StatusSwitchingProtocols}} {
		s := newUpgradeSeller(t, false)
		h := newHarness(t, memory.New(), testRules(), func(o *setup) { o.Upgrades = tc.policy })
		c := dialThrough(t, h, s.srv)
		fmt.Fprint(c, c.request("GET", "/pay"))
		c.read(t)
		fmt.Fprint(c, c.request("GET", "/ws", wsHeaders))
		if resp, body := c.read(t); resp.StatusCode != tc.status {
			t.Errorf("%s: upgrade = %d %s", tc.policy, resp.StatusCode, body)
		}
	}
}

// An upgrade allowed to a host that had not answered 402 yet is closed when that host answers its first
// 402 (refuse_after_402): nothing the agent sends on it afterwards reaches the seller.
func TestOpenUpgradeClosedWhenHostAnswers402(t *testing.T) {
	for _, useTLS := range []bool{false, true} {
		s := newUpgradeSeller(t, useTLS)
		h := newHarness(t, memory.New(), testRules(), trustServer(s.srv))
		ws := dialThrough(t, h, s.srv)
		fmt.Fprint(ws, ws.request("GET", "/ws", wsHeaders))
		if resp, _ := ws.read(t); resp.StatusCode != http.StatusSwitchingProtocols {
			t.Fatalf("tls=%v: upgrade = %d", useTLS, resp.StatusCode)
		}
		fmt.Fprint(ws, "before")
		buf := make([]byte, 6)
		if _, err := io.ReadFull(ws.br, buf); err != nil || string(buf) != "before" {
			t.Fatalf("tls=%v: echo = %q %v", useTLS, buf, err)
		}
		c := dialThrough(t, h, s.srv)
		fmt.Fprint(c, c.request("GET", "/pay"))
		if resp, _ := c.read(t); resp.StatusCode != http.StatusPaymentRequired {
			t.Fatalf("tls=%v: /pay = %d", useTLS, resp.StatusCode)
		}
		// The splice was closed before the 402 reached the agent: the seller sees its stream end (EOF, not
		// its own deadline), so nothing the agent writes now can reach it.
		select {
		case err := <-s.ended:
			if err != io.EOF {
				t.Errorf("tls=%v: the seller's stream ended with %v, want EOF from the proxy", useTLS, err)
			}
		case <-time.After(time.Minute): // a deadlock guard, not a timing assertion
			t.Fatalf("tls=%v: the upgraded stream was still open a minute after the host's 402", useTLS)
		}
		fmt.Fprint(ws, "X-PAYMENT: after")
		if _, raw := s.seen(); strings.Contains(raw, "after") {
			t.Errorf("tls=%v: the seller received %q after its 402", useTLS, raw)
		}
	}
}

// An upgrade to a protocol other than WebSocket (h2c here, whose HTTP/2 requests after the 101 would carry
// payment headers payguard cannot read) is not relayed: the seller's 101 is refused, so no byte the agent
// sends after it reaches the seller raw, and a request pipelined behind it, carrying a blocked payment, is
// read as HTTP and decided. (Before, the proxy passed a 101 it could not relay and the connection hung
// on the seller's raw stream over plain HTTP.)
func TestNonWebSocketUpgradeIsNeverSpliced(t *testing.T) {
	for _, useTLS := range []bool{false, true} {
		s := newUpgradeSeller(t, useTLS)
		rules := testRules()
		rules.PayToBlocklist = []string{otherPayTo}
		h := newHarness(t, memory.New(), rules, trustServer(s.srv))
		pay := blockedPayment(t, h, s.srv.URL+"/ws")
		c := dialThrough(t, h, s.srv)
		h2c := "Upgrade: h2c\r\nConnection: Upgrade, HTTP2-Settings\r\nHTTP2-Settings: AAMAAABkAAQAAP__\r\n"
		fmt.Fprint(c, c.request("GET", "/ws", h2c)+c.request("GET", "/ws", "X-PAYMENT: "+pay+"\r\n"))
		resp, body := c.read(t)
		if r := decodeRefusal(t, resp, []byte(body)); !strings.Contains(strings.Join(r.Reasons, " "), "relays only WebSocket") {
			t.Errorf("tls=%v: h2c upgrade answered %d %s", useTLS, resp.StatusCode, body)
		}
		resp, body = c.read(t)
		if r := decodeRefusal(t, resp, []byte(body)); r.Decision != block {
			t.Errorf("tls=%v: pipelined payment: %d %s", useTLS, resp.StatusCode, body)
		}
		payments, raw := s.seen()
		if len(payments) > 0 || strings.Contains(raw, "X-PAYMENT") {
			t.Errorf("tls=%v: seller saw payments %v, raw bytes %q", useTLS, payments, raw)
		}
	}
}

// "A host that has answered 402" is kept by the store, not only by the process that saw the 402: a
// proxy restarted on the same bolt file, and another replica on the same store, refuse the upgrade too.
// (Before, the memory was per process: both let the upgrade through.)
func TestUpgradeRefusedAfterRestartAndOnOtherReplicas(t *testing.T) {
	s := newUpgradeSeller(t, false)
	path := filepath.Join(t.TempDir(), "payguard.db")
	st, err := bolt.Open(path, bolt.Options{})
	if err != nil {
		t.Fatal(err)
	}
	h := newHarness(t, st, testRules(), trustServer(s.srv))
	c := dialThrough(t, h, s.srv)
	fmt.Fprint(c, c.request("GET", "/pay"))
	if resp, _ := c.read(t); resp.StatusCode != http.StatusPaymentRequired {
		t.Fatalf("/pay = %d", resp.StatusCode)
	}
	h.srv.Close()
	h.admin.Close()
	if err := st.Close(); err != nil {
		t.Fatal(err)
	}
	st2, err := bolt.Open(path, bolt.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st2.Close() })
	restarted := newHarness(t, st2, testRules(), trustServer(s.srv))
	replica := newHarness(t, st2, testRules(), trustServer(s.srv))
	for name, h := range map[string]*harness{"restarted": restarted, "replica": replica} {
		c := dialThrough(t, h, s.srv)
		fmt.Fprint(c, c.request("GET", "/ws", wsHeaders))
		resp, body := c.read(t)
		if r := decodeRefusal(t, resp, []byte(body)); !strings.Contains(strings.Join(r.Reasons, " "), "answered 402") {
			t.Errorf("%s: upgrade to a host that answered 402 before: %d %s", name, resp.StatusCode, body)
		}
	}
	if n := s.switched.Load(); n != 0 {
		t.Errorf("the seller switched protocols %d times", n)
	}
}

// sellersFailing is a store whose memory of sellers cannot be read.
type sellersFailing struct{ *memory.Store }

func (sellersFailing) IsSeller(context.Context, string) (bool, error) {
	return false, errors.New("store unreachable")
}

// A store that cannot say whether a host has answered 402 refuses the upgrade (fail closed).
func TestUpgradeRefusedWhenStoreCannotTell(t *testing.T) {
	s := newUpgradeSeller(t, false)
	h := newHarness(t, sellersFailing{memory.New()}, testRules(), trustServer(s.srv))
	c := dialThrough(t, h, s.srv)
	fmt.Fprint(c, c.request("GET", "/ws", wsHeaders))
	resp, body := c.read(t)
	if r := decodeRefusal(t, resp, []byte(body)); !strings.Contains(strings.Join(r.Reasons, " "), "store unreachable") {
		t.Errorf("upgrade with an unreadable store: %d %s", resp.StatusCode, body)
	}
	if n := s.switched.Load(); n != 0 {
		t.Errorf("the seller switched protocols %d times", n)
	}
}

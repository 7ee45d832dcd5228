package proxy

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"crypto/tls"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/payguard/payguard/store/memory"
	"github.com/payguard/payguard/x402"
)

// TestHeldBodyFramingAgainstLyingSellers attacks heldBody (a 402's body rewritten in place so goproxy keeps
// its Content-Length): a seller writes raw 402s whose framing lies or is unusual (Content-Length shorter or
// longer than the body, chunked with forged trailers, gzip, over 64 KiB, HEAD), over plain HTTP and MITM'd
// HTTPS. The agent reads each answer off a raw connection and then sends a second request on the same
// connection: a body longer than its stated length would corrupt the second answer, a shorter one would
// stall or fail the first read. An answer that carries a challenge must offer only the $0.01 option, and
// no forged x402/payguard trailer reaches the agent.
func TestHeldBodyFramingAgainstLyingSellers(t *testing.T) {
	v2 := []x402.Requirement{
		offer(x402.V2, "eip155:84532", baseSepoliaUSDC, sellerPayTo, fiveDollar),
		offer(x402.V2, "eip155:84532", baseSepoliaUSDC, sellerPayTo, cent),
	}
	v1 := []x402.Requirement{
		offer(x402.V1, "base-sepolia", baseSepoliaUSDC, sellerPayTo, fiveDollar),
		offer(x402.V1, "base-sepolia", baseSepoliaUSDC, sellerPayTo, cent),
	}
	v1body, _ := json.Marshal(&x402.PaymentRequired{X402Version: 1, Error: strings.Repeat("e", 3000), Accepts: v1})
	v2hdr, _ := x402.EncodeHeaderJSON(&x402.PaymentRequired{X402Version: 2, Accepts: v2})
	var gz bytes.Buffer
	zw := gzip.NewWriter(&gz)
	zw.Write(v1body)
	zw.Close()
	big := bytes.Repeat([]byte("<p>not a challenge</p>\n"), 5000) // > 64 KiB, passed on as it is
	chunk := func(b []byte) string { return fmt.Sprintf("%x\r\n%s\r\n", len(b), b) }

	scenarios := map[string]string{
		"/honest": "HTTP/1.1 402 Payment Required\r\nContent-Type: application/json\r\nContent-Length: " +
			fmt.Sprint(len(v1body)) + "\r\n\r\n" + string(v1body),
		"/cl-short": "HTTP/1.1 402 Payment Required\r\nContent-Type: application/json\r\nContent-Length: " +
			fmt.Sprint(len(v1body)-10) + "\r\n\r\n" + string(v1body),
		"/cl-long": "HTTP/1.1 402 Payment Required\r\nContent-Type: application/json\r\nContent-Length: " +
			fmt.Sprint(len(v1body)+10) + "\r\n\r\n" + string(v1body),
		"/chunked-trailers": "HTTP/1.1 402 Payment Required\r\nContent-Type: application/json\r\n" +
			"Transfer-Encoding: chunked\r\nTrailer: X-Payguard-Decision, Payment-Required\r\n\r\n" +
			chunk(v1body[:100]) + chunk(v1body[100:]) + "0\r\nX-Payguard-Decision: allow\r\nPayment-Required: " + v2hdr + "\r\n\r\n",
		"/gzip": "HTTP/1.1 402 Payment Required\r\nContent-Type: application/json\r\nContent-Encoding: gzip\r\nContent-Length: " +
			fmt.Sprint(gz.Len()) + "\r\n\r\n" + gz.String(),
		"/gzip-noae": "HTTP/1.1 402 Payment Required\r\nContent-Type: application/json\r\nContent-Encoding: gzip\r\nContent-Length: " +
			fmt.Sprint(gz.Len()) + "\r\n\r\n" + gz.String(),
		"/big-v2": "HTTP/1.1 402 Payment Required\r\nContent-Type: text/html\r\nPayment-Required: " + v2hdr +
			"\r\nContent-Length: " + fmt.Sprint(len(big)) + "\r\n\r\n" + string(big),
		"/big-plain": "HTTP/1.1 402 Payment Required\r\nContent-Type: text/html\r\nContent-Length: " +
			fmt.Sprint(len(big)) + "\r\n\r\n" + string(big),
		"/head-v2": "HTTP/1.1 402 Payment Required\r\nContent-Type: application/json\r\nPayment-Required: " + v2hdr +
			"\r\nContent-Length: " + fmt.Sprint(len(v1body)) + "\r\n\r\n",
		"/ok": "HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: 2\r\n\r\nok",
	}
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		raw, ok := scenarios[r.URL.Path]
		if !ok {
			http.NotFound(w, r)
			return
		}
		c, _, err := http.NewResponseController(w).Hijack()
		if err != nil {
			return
		}
		c.Write([]byte(raw))
		c.Close()
	})
	plain := httptest.NewServer(h)
	t.Cleanup(plain.Close)
	tlsSrv := httptest.NewTLSServer(h)
	t.Cleanup(tlsSrv.Close)
	hs := newHarness(t, memory.New(), testRules(), trustUpstream(&seller{srv: tlsSrv}))
	proxyAddr := strings.TrimPrefix(hs.srv.URL, "http://")

	// dial opens a connection to the agent's side of the proxy for origin: plain, or CONNECT and TLS
	// with payguard's CA (MITM).
	dial := func(t *testing.T, origin string) (net.Conn, *bufio.Reader, string) {
		u, _ := url.Parse(origin)
		c, err := net.Dial("tcp", proxyAddr)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close() })
		c.SetDeadline(time.Now().Add(time.Minute)) // a hang guard, not a timed assertion
		if u.Scheme == "http" {
			return c, bufio.NewReader(c), origin
		}
		fmt.Fprintf(c, "CONNECT %s HTTP/1.1\r\nHost: %s\r\n\r\n", u.Host, u.Host)
		br := bufio.NewReader(c)
		resp, err := http.ReadResponse(br, nil)
		if err != nil || resp.StatusCode != 200 {
			t.Fatalf("CONNECT: %v %v", resp, err)
		}
		tc := tls.Client(c, &tls.Config{RootCAs: hs.caPool, ServerName: u.Hostname()})
		if err := tc.Handshake(); err != nil {
			t.Fatal(err)
		}
		return tc, bufio.NewReader(tc), "" // origin-form requests inside the tunnel
	}

	for _, origin := range []string{plain.URL, tlsSrv.URL} {
		for path := range scenarios {
			if path == "/ok" {
				continue
			}
			method := http.MethodGet
			if strings.HasPrefix(path, "/head") {
				method = http.MethodHead
			}
			t.Run(origin[:5]+path, func(t *testing.T) {
				c, br, prefix := dial(t, origin)
				host := strings.TrimPrefix(strings.TrimPrefix(origin, "http://"), "https://")
				ae := "Accept-Encoding: gzip\r\n" // an agent that takes gzip; -noae: one that names no coding
				if strings.HasSuffix(path, "-noae") {
					ae = ""
				}
				fmt.Fprintf(c, "%s %s%s HTTP/1.1\r\nHost: %s\r\n%s\r\n", method, prefix, path, host, ae)
				req := &http.Request{Method: method}
				resp, err := http.ReadResponse(br, req)
				if err != nil {
					t.Fatalf("first answer unreadable: %v", err)
				}
				body, err := io.ReadAll(resp.Body)
				if err != nil {
					t.Fatalf("first answer's body (Content-Length %d, %v) unreadable: %v", resp.ContentLength, resp.TransferEncoding, err)
				}
				if resp.ContentLength >= 0 && method != http.MethodHead && int64(len(body)) != resp.ContentLength {
					t.Fatalf("body %d bytes, Content-Length %d", len(body), resp.ContentLength)
				}
				for k := range resp.Trailer {
					if ck := http.CanonicalHeaderKey(k); ck == "X-Payguard-Decision" || ck == "Payment-Required" {
						if v := resp.Trailer.Get(k); v != "" {
							t.Errorf("forged trailer %s: %q reached the agent", k, v)
						}
					}
				}
				if path == "/big-v2" && resp.StatusCode == 402 && len(body) > 0 && !bytes.Equal(body, big) && string(body) != "{}" {
					t.Errorf("a 64 KiB+ body passed on is not the seller's (%d bytes, want %d)", len(body), len(big))
				}
				t.Logf("%d, Content-Length %d, %v, %d bytes, trailer %v, close %v", resp.StatusCode, resp.ContentLength, resp.TransferEncoding, len(body), resp.Trailer, resp.Close)
				if path == "/big-plain" && (resp.StatusCode != 402 || !bytes.Equal(body, big)) {
					t.Errorf("a 64 KiB+ 402 that is no challenge: %d, %d bytes; want the seller's %d bytes byte for byte", resp.StatusCode, len(body), len(big))
				}
				checkOnlyCent(t, resp, body)
				if resp.Close {
					rest, _ := io.ReadAll(br)
					if len(rest) != 0 {
						t.Fatalf("%d bytes after a closing answer's body: %.80q", len(rest), rest)
					}
					return
				}
				// The same connection again: the first answer's framing must have ended where its body did.
				fmt.Fprintf(c, "GET %s/ok HTTP/1.1\r\nHost: %s\r\n\r\n", prefix, host)
				resp2, err := http.ReadResponse(br, nil)
				if err != nil {
					t.Fatalf("second answer on the connection unreadable (the first one's framing lied?): %v", err)
				}
				b2, err := io.ReadAll(resp2.Body)
				if err != nil || resp2.StatusCode != 200 || string(b2) != "ok" {
					t.Fatalf("second answer: %d %q %v", resp2.StatusCode, b2, err)
				}
			})
		}
	}
}

// checkOnlyCent fails when an answer's header or body offers anything but the $0.01 option.
func checkOnlyCent(t *testing.T, resp *http.Response, body []byte) {
	t.Helper()
	if hv := resp.Header.Get(x402.HeaderPaymentRequired); hv != "" {
		pr, err := x402.DecodePaymentRequiredHeader(hv)
		if err != nil {
			t.Errorf("header challenge unreadable: %v", err)
		} else {
			for _, r := range pr.Accepts {
				if r.Amount != cent {
					t.Errorf("header offers an un-narrowed option %+v", r)
				}
			}
		}
	}
	if resp.Header.Get("Content-Encoding") != "" {
		zr, err := gzip.NewReader(bytes.NewReader(body))
		if err != nil {
			t.Fatalf("coded body: %v", err)
		}
		body, err = io.ReadAll(zr)
		if err != nil {
			t.Fatalf("coded body: %v", err)
		}
	}
	if pr, err := x402.ParsePaymentRequired(body); err == nil {
		for _, r := range pr.Accepts {
			if r.Amount != cent {
				t.Errorf("body offers an un-narrowed option %+v", r)
			}
		}
	}
}

// A redirect chain that ends in a 402 (attack2): the agent follows it through payguard hop by hop, and the
// 402 it ends on is narrowed with its length, over plain HTTP and MITM'd HTTPS.
func TestRedirectChainEndingIn402Narrowed(t *testing.T) {
	v1 := []x402.Requirement{
		offer(x402.V1, "base-sepolia", baseSepoliaUSDC, sellerPayTo, fiveDollar),
		offer(x402.V1, "base-sepolia", baseSepoliaUSDC, sellerPayTo, cent),
	}
	mux := http.NewServeMux()
	mux.HandleFunc("/r1", func(w http.ResponseWriter, r *http.Request) { http.Redirect(w, r, "/r2", http.StatusFound) })
	mux.HandleFunc("/r2", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "/paid", http.StatusTemporaryRedirect)
	})
	mux.HandleFunc("/paid", func(w http.ResponseWriter, r *http.Request) {
		body, _ := json.Marshal(&x402.PaymentRequired{X402Version: 1, Error: strings.Repeat("x", 3000), Accepts: v1})
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Content-Length", fmt.Sprint(len(body)))
		w.WriteHeader(402)
		w.Write(body)
	})
	plain := newRawServer(t, mux)
	tlsSrv := httptest.NewTLSServer(mux)
	t.Cleanup(tlsSrv.Close)
	hs := newHarness(t, memory.New(), testRules(), trustUpstream(&seller{srv: tlsSrv}))
	b := hs.buyer()
	for _, u := range []string{plain + "/r1", tlsSrv.URL + "/r1"} {
		resp, body := b.get(u, nil)
		if resp.StatusCode != 402 || resp.Request.URL.Path != "/paid" {
			t.Fatalf("%s: status %d at %s", u, resp.StatusCode, resp.Request.URL)
		}
		if resp.ContentLength != int64(len(body)) {
			t.Errorf("%s: Content-Length %d for %d bytes", u, resp.ContentLength, len(body))
		}
		checkOnlyCent(t, resp, body)
		if pr, err := x402.ParsePaymentRequired(body); err != nil || len(pr.Accepts) != 1 {
			t.Errorf("%s: body not narrowed to one option (%v)", u, err)
		}
	}
}

//go:build unix

package server

import (
	"bytes"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/payguard/payguard/config"
	"github.com/payguard/payguard/index"
	"github.com/payguard/payguard/internal/benchcpu"
	"github.com/payguard/payguard/internal/logout"
	"github.com/payguard/payguard/policy"
	"github.com/payguard/payguard/preflight"
	"github.com/payguard/payguard/receipts"
	"github.com/payguard/payguard/screening"
	"github.com/payguard/payguard/screening/domain"
	"github.com/payguard/payguard/screening/sanctions"
	"github.com/payguard/payguard/server/core"
	"github.com/payguard/payguard/server/fees"
	"github.com/payguard/payguard/server/trial"
	"github.com/payguard/payguard/store"
	"github.com/payguard/payguard/store/bolt"
	"github.com/payguard/payguard/store/memory"
)

// benchServer is the real engine, checker, receipt keys and memory store behind the HTTP handler; the
// facilitator is never reached (trial path).
func benchServer(b testing.TB) *Server {
	return benchServerWith(b, memory.New(), nil, nil)
}

// benchServerWith is benchServer on the given store, logger and metrics registry (nil: discarded).
func benchServerWith(b testing.TB, st benchStore, log *slog.Logger, reg prometheus.Registerer) *Server {
	list, err := sanctions.LoadDir("../cmd/payguard/testdata/check-sanctions")
	if err != nil {
		b.Fatal(err)
	}
	keys, err := receipts.GenerateKey(time.Now())
	if err != nil {
		b.Fatal(err)
	}
	cfg, _ := config.Default()
	sc := cfg.Server
	sc.TrustedProxies = []string{"192.0.2.1"}
	sc.TrialLimit = 1000
	seller, err := fees.NewSeller(fees.SellerOptions{Terms: fees.Terms{Network: "eip155:84532", NetworkV1: "base-sepolia",
		Asset: testAsset, AssetName: "USDC", AssetVersion: "2", PayTo: testPayTo, MaxTimeoutSeconds: 60},
		Facilitator: fees.NewFacilitator("http://127.0.0.1:1", nil, time.Second, time.Second), Signer: keys})
	if err != nil {
		b.Fatal(err)
	}
	// The engine as serve builds it (internal/app's parts, with rate.sh's --offline): the Endpoint Index
	// through its cache over the store, and the domain checker with its lookups off.
	dc := cfg.Screening.Domain
	dc.Enabled = false
	engine := preflight.New(preflight.Options{Rules: policy.DefaultRules(), Sanctions: list, Signer: keys,
		Domains: domain.NewFromConfig(dc), Index: index.NewCache(st, 0), IndexMaxAge: time.Duration(cfg.Index.Retention)})
	checker := screening.NewChecker(screening.CheckerOptions{Sanctions: list})
	s, err := New(Options{Config: sc, Rules: policy.DefaultRules(), Seller: seller,
		Trial: trial.New(st, sc.TrialLimit, 48*time.Hour, nil), Endpoints: st,
		Preflight: core.PreflightPort(engine), Checker: core.CheckerPort(checker), Sanctions: list, JWKS: keys.PublicJWKS,
		Logger: log, Metrics: reg})
	if err != nil {
		b.Fatal(err)
	}
	return s
}

// benchStore is what the server needs of a store for the trial path.
type benchStore interface {
	store.Trial
	store.Endpoints
	index.Reader
}

const benchPreflightBody = `{"challenge":{"x402Version":2,"resource":{"url":"https://api.example.com/data"},"accepts":[{"scheme":"exact","network":"eip155:8453","amount":"10000","asset":"0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913","payTo":"0x3C44CdDdB6a900fa2b585dd299e03d12FA4293BC","maxTimeoutSeconds":60,"extra":{"name":"USD Coin","version":"2"}}]}}`

// BenchmarkPreflightTrial is one POST /v1/preflight?trial=1 through the whole handler: limits, parse,
// trial count, engine, receipt signing (ES256), JSON encoding. A different client address per call.
func BenchmarkPreflightTrial(b *testing.B) {
	s := benchServer(b)
	h := s.Handler()
	b.ReportAllocs()
	start := benchcpu.Now()
	defer benchcpu.Report(b, start)
	i := 0
	for b.Loop() {
		i++
		req := httptest.NewRequest(http.MethodPost, "/v1/preflight?trial=1", bytes.NewReader([]byte(benchPreflightBody)))
		req.RemoteAddr = "192.0.2.1:1234"
		req.Header.Set("X-Forwarded-For", ipv4(i))
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		if rec.Code != 200 {
			b.Fatalf("%d %s", rec.Code, rec.Body)
		}
	}
}

// BenchmarkCheckTrial is one GET /v1/check?trial=1 (name and wallet, no domain).
func BenchmarkCheckTrial(b *testing.B) {
	s := benchServer(b)
	h := s.Handler()
	b.ReportAllocs()
	start := benchcpu.Now()
	defer benchcpu.Report(b, start)
	i := 0
	for b.Loop() {
		i++
		req := httptest.NewRequest(http.MethodGet, "/v1/check?trial=1&name=Acme%20Widgets%20LLC&address=0x3C44CdDdB6a900fa2b585dd299e03d12FA4293BC", nil)
		req.RemoteAddr = "192.0.2.1:1234"
		req.Header.Set("X-Forwarded-For", ipv4(i))
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		if rec.Code != 200 {
			b.Fatalf("%d %s", rec.Code, rec.Body)
		}
	}
}

// benchRateBody is the body server/testdata/bench/rate.sh sends (preflight.lua's): a v2 challenge and a rules
// object.
const benchRateBody = `{"challenge":{"x402Version":2,"resource":{"url":"https://api.example.com/data"},"accepts":[{"scheme":"exact","network":"eip155:8453","amount":"10000","asset":"0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913","payTo":"0x3C44CdDdB6a900fa2b585dd299e03d12FA4293BC","maxTimeoutSeconds":60,"extra":{"name":"USD Coin","version":"2"}}]},"rules":{"max_per_payment_usd":1}}`

// BenchmarkPreflightTrialBolt is the call rate.sh measures (STORE=bolt), in process: rate.sh's body, the
// embedded default store (a bbolt file, the trial counter journaled), serve's buffered JSON request log to a file and
// its metrics registry. What it leaves out is net/http's connection handling and the loopback socket
// (the floor server's share). docs/benchmarks/server.md has its figures.
func BenchmarkPreflightTrialBolt(b *testing.B) {
	dir := b.TempDir()
	st, err := bolt.Open(filepath.Join(dir, "payguard.db"), bolt.Options{})
	if err != nil {
		b.Fatal(err)
	}
	defer st.Close()
	logf, err := os.Create(filepath.Join(dir, "serve.log"))
	if err != nil {
		b.Fatal(err)
	}
	defer logf.Close()
	logOut := logout.NewWriter(logf, logout.FlushDelay) // serve's log (app.NewBufferedLogger)
	defer logOut.Close()
	s := benchServerWith(b, st, slog.New(logout.NewHandler(logOut, slog.LevelInfo)), prometheus.NewRegistry())
	h := s.Handler()
	b.ReportAllocs()
	start := benchcpu.Now()
	defer benchcpu.Report(b, start)
	i := 0
	for b.Loop() {
		i++
		req := httptest.NewRequest(http.MethodPost, "/v1/preflight?trial=1", strings.NewReader(benchRateBody))
		req.RemoteAddr = "192.0.2.1:1234"
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("X-Forwarded-For", ipv4(i))
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		if rec.Code != 200 {
			b.Fatalf("%d %s", rec.Code, rec.Body)
		}
	}
}

func ipv4(i int) string {
	return netip.AddrFrom4([4]byte{10, byte(i >> 16), byte(i >> 8), byte(i)}).String()
}

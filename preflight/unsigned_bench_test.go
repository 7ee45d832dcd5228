//go:build unix

package preflight

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/payguard/payguard/index"
	"github.com/payguard/payguard/internal/benchcpu"
	"github.com/payguard/payguard/policy"
	"github.com/payguard/payguard/screening/domain"
	"github.com/payguard/payguard/screening/sanctions"
	"github.com/payguard/payguard/store"
	"github.com/payguard/payguard/store/memory"
	"github.com/payguard/payguard/x402"
)

// proxyBenchChallenge is the v2 402 the proxy's end-to-end 402 bench decides (proxy-bench's upstream, the
// official npm seller's field order): one exact option on Base Sepolia USDC.
const proxyBenchChallenge = `{"x402Version":2,"error":"Payment required","resource":{"url":"http://127.0.0.1:18080/402",` +
	`"description":"Weather report (proxy-bench upstream)","mimeType":"application/json"},` +
	`"accepts":[{"scheme":"exact","network":"eip155:84532","amount":"10000",` +
	`"asset":"0x036CbD53842c5426634e7929541eC2318f3dCF7e","payTo":"0xf54127927F219FB78C8D1A1fF3D7dc6D7f70C98E",` +
	`"maxTimeoutSeconds":60,"extra":{"name":"USDC","version":"2"}}]}`

// BenchmarkDecideUnsigned402 is the engine's part of the proxy's decided 402 alone (issue 36): DecideUnsigned
// of the input the proxy builds for an allowed v2 challenge (resource URL and method, the ledger's spend,
// the agent and rule set hash), with what the proxy decides with: the rules the end-to-end bench gives
// (Base Sepolia allowed, a large cap), a loaded sanctions list (the real index, a small list), the offline
// domain checker's answer (unknown), and the Endpoint Index through a warm index.Cache holding the
// endpoint's observation and its site's payee record, as the proxy's Index writer leaves them. No
// signature: an allowed 402 is released with its receipt id alone.
func BenchmarkDecideUnsigned402(b *testing.B) {
	e, in := unsigned402(b)
	loopDecideUnsigned(b, e, in)
}

// loopDecideUnsigned is the timed loop of the DecideUnsigned benchmarks: every decision must allow.
func loopDecideUnsigned(b *testing.B, e *Engine, in *Input) {
	ctx := context.Background()
	b.ReportAllocs()
	start := benchcpu.Now()
	for b.Loop() {
		res, err := e.DecideUnsigned(ctx, in)
		if err != nil || res.Decision != "allow" {
			b.Fatalf("%v %+v", err, res)
		}
	}
	benchcpu.Report(b, start)
}

// unsigned402 is BenchmarkDecideUnsigned402's engine and input (also checked by TestUnsigned402Bench).
func unsigned402(t testing.TB) (*Engine, *Input) {
	t.Helper()
	pr, err := x402.ParsePaymentRequired([]byte(proxyBenchChallenge))
	if err != nil {
		t.Fatal(err)
	}
	const url = "http://127.0.0.1:18080/402"
	list, err := sanctions.LoadDir("../screening/sanctions/testdata/basic")
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now() // the index.Cache reads its own clock: its entries must be fresh for it
	st := memory.New()
	o := index.FromChallenge(url, "GET", pr, now.Add(-time.Minute))
	if err := st.PutObservation(context.Background(), o, store.Retention{}); err != nil {
		t.Fatal(err)
	}
	site, entries := index.SitePayeesOf(o)
	for _, p := range entries {
		if err := st.PutSitePayee(context.Background(), site, p, store.Retention{}); err != nil {
			t.Fatal(err)
		}
	}
	rules := policy.DefaultRules()
	rules.AllowedNetworks = []string{"eip155:84532"}
	rules.DailyCapUSD = 1_000_000_000 * policy.MicrosPerUSD
	e := New(Options{Rules: rules, Sanctions: sanctions.NewScreener(list), Domains: domain.New(domain.Options{Offline: true}), Signer: testKeys(t),
		Now: func() time.Time { return now }, Index: index.NewCache(st, time.Hour), IndexMaxAge: 30 * 24 * time.Hour})
	in := &Input{Challenge: pr, ResourceURL: url, ResourceMethod: "GET",
		Context: &Context{SpentTodayUSD: 123_450_000, AgentID: "default", ConfigSHA256: "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08"}}
	return e, in
}

// BenchmarkDecideUnsigned402Lists is BenchmarkDecideUnsigned402 with full rule lists (policy.MaxListEntries
// domains and payees in each of the four lists, none matching the payee or its host): with the lists
// prepared once per rule set (the engine's), and compared entry by entry on every decision (as a request's
// patched lists are, and as every decision was before).
func BenchmarkDecideUnsigned402Lists(b *testing.B) {
	for _, prepared := range []bool{true, false} {
		name := "prepared"
		if !prepared {
			name = "entry_by_entry"
		}
		b.Run(name, func(b *testing.B) {
			e, in := unsigned402(b)
			r := e.opts.Rules
			r.DomainAllowlist, r.DomainBlocklist, r.PayToAllowlist, r.PayToBlocklist = nil, nil, nil, nil
			for i := range policy.MaxListEntries {
				r.DomainAllowlist = append(r.DomainAllowlist, fmt.Sprintf("Shop%d.Example.com", i))
				r.DomainBlocklist = append(r.DomainBlocklist, fmt.Sprintf("evil%d.example", i))
				r.PayToAllowlist = append(r.PayToAllowlist, fmt.Sprintf("0x%040X", i+1))
				r.PayToBlocklist = append(r.PayToBlocklist, fmt.Sprintf("0x%040x", i+1000))
			}
			opts := e.opts
			opts.Rules = r
			e = New(opts)
			if !prepared {
				e.lists = nil
			}
			loopDecideUnsigned(b, e, in)
		})
	}
}

//go:build js && wasm

// Command bench-clients (GOOS=js GOARCH=wasm only) is the measured alternative to the guards' native code
// (docs/SPEC.md §12.6, docs/benchmarks/clients.md): the Go engine compiled to WebAssembly, deciding a
// decision vector the way preflight's TestDecisionVectors does (ParseInput, fake screeners answering the
// vector's facts, policy.Evaluate). It registers one global function for bench.mjs:
//
//	payguardDecide(vectorJSON string) -> expectJSON string ({decision, reasons, chosen, amount_micros})
//
// It is not shipped: the guards stay native (see the benchmark for why).
package main

import (
	"context"
	"encoding/json"
	"syscall/js"
	"time"

	"github.com/payguard/payguard/policy"
	"github.com/payguard/payguard/preflight"
	"github.com/payguard/payguard/screening"
	"github.com/payguard/payguard/screening/screeningtest"
)

// vectorNow is preflight's testNow, the clock the vectors were decided at.
var vectorNow = time.Date(2026, 11, 22, 8, 0, 0, 0, time.UTC)

type vector struct {
	Input     json.RawMessage `json:"input"`
	Screening struct {
		Sanctions     string `json:"sanctions"`
		DomainAgeDays *int   `json:"domain_age_days"`
		DomainHasA    *bool  `json:"domain_has_a"`
		DomainFailed  bool   `json:"domain_failed"`
	} `json:"screening"`
}

type noSigner struct{} // the guard signs nothing; DecideUnsigned only needs a signer to exist

func (noSigner) Sign([]byte) (string, error) { return "", nil }

func decide(raw string) (string, error) {
	var v vector
	if err := json.Unmarshal([]byte(raw), &v); err != nil {
		return "", err
	}
	in, err := preflight.ParseInput(v.Input)
	if err != nil {
		return "", err
	}
	opts := preflight.Options{Rules: policy.DefaultRules(), Signer: noSigner{}, Now: func() time.Time { return vectorNow }}
	switch v.Screening.Sanctions {
	case "clear":
		opts.Sanctions = &screeningtest.Sanctions{}
	case "listed":
		s := &screeningtest.Sanctions{}
		for _, r := range in.Challenge.Accepts {
			s.List(r.PayTo)
		}
		opts.Sanctions = s
	case "failed":
		opts.Sanctions = &screeningtest.Sanctions{Panics: true}
	}
	sc := v.Screening
	if sc.DomainAgeDays != nil || sc.DomainHasA != nil || sc.DomainFailed {
		d := in.MerchantDomain()
		opts.Domains = &screeningtest.Domains{Panics: sc.DomainFailed, Table: map[string]screening.DomainFacts{
			d: {Domain: d, Valid: true, AgeDays: sc.DomainAgeDays, HasA: sc.DomainHasA},
		}}
	}
	res, err := preflight.New(opts).DecideUnsigned(context.Background(), in)
	if err != nil {
		return "", err
	}
	out, err := json.Marshal(map[string]any{
		"decision": res.Decision, "reasons": res.Reasons, "chosen": res.ChosenIndex, "amount_micros": res.AmountMicros,
	})
	return string(out), err
}

func main() {
	js.Global().Set("payguardDecide", js.FuncOf(func(_ js.Value, args []js.Value) any {
		out, err := decide(args[0].String())
		if err != nil {
			return map[string]any{"error": err.Error()}
		}
		return out
	}))
	select {}
}

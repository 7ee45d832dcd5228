package preflight

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/payguard/payguard/policy"
	"github.com/payguard/payguard/receipts"
	"github.com/payguard/payguard/screening"
	"github.com/payguard/payguard/screening/screeningtest"
)

const (
	baseUSDC = "0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913"
	payA     = "0xAaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
	payB     = "0xBbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb"
	payC     = "0xCccccccccccccccccccccccccccccccccccccccc"
	payD     = "0xDddddddddddddddddddddddddddddddddddddddd"
)

func v2Option(amount, payTo string) string {
	return fmt.Sprintf(`{"scheme":"exact","network":"eip155:8453","amount":%q,"asset":%q,"payTo":%q,"maxTimeoutSeconds":300,"extra":{"name":"USD Coin","version":"2"}}`,
		amount, baseUSDC, payTo)
}

// fourOptionInput is a v2 challenge with four Base USDC options; the cheapest is the third (payC, $0.01).
func fourOptionInput(extra string) []byte {
	return []byte(`{"challenge":{"x402Version":2,"resource":{"url":"https://api.shop.example/v1/data"},"accepts":[` +
		v2Option("50000", payA) + "," + v2Option("30000", payB) + "," + v2Option("10000", payC) + "," + v2Option("20000", payD) +
		`]}` + extra + `}`)
}

type harness struct {
	sanctions *screeningtest.Sanctions
	domains   *screeningtest.Domains
	keys      *receipts.KeySet
	engine    *Engine
}

func newHarness(t testing.TB) *harness {
	h := &harness{
		sanctions: clearList(),
		domains:   &screeningtest.Domains{Table: map[string]screening.DomainFacts{"api.shop.example": oldDomain("api.shop.example", 900)}},
		keys:      testKeys(t),
	}
	h.rebuild(policy.DefaultRules())
	return h
}

func (h *harness) rebuild(rules policy.Rules) {
	opts := Options{Rules: rules, Signer: h.keys, Now: func() time.Time { return testNow }}
	if h.sanctions != nil {
		opts.Sanctions = h.sanctions
	}
	if h.domains != nil {
		opts.Domains = h.domains
	}
	h.engine = New(opts)
}

func (h *harness) decide(t *testing.T, body []byte) *Result {
	t.Helper()
	in, err := ParseInput(body)
	if err != nil {
		t.Fatalf("ParseInput: %v", err)
	}
	res, err := h.engine.Decide(context.Background(), in)
	if err != nil {
		t.Fatalf("Decide: %v", err)
	}
	return res
}

func wantDecision(t *testing.T, res *Result, decision string, reasons ...string) {
	t.Helper()
	if res.Decision != decision || !slices.Equal(res.Reasons, reasons) {
		t.Fatalf("got %s %q\nwant %s %q", res.Decision, res.Reasons, decision, reasons)
	}
}

func TestDecideAllowsCheapestAndScreensOnlyItsPayee(t *testing.T) {
	h := newHarness(t)
	res := h.decide(t, fourOptionInput(""))
	wantDecision(t, res, "allow", "allow: all rules passed")
	if res.ChosenIndex != 2 || res.ChosenOption == nil || res.ChosenOption.PayTo != payC || res.AmountMicros != 10_000 || res.OptionsEvaluated != 4 {
		t.Fatalf("chosen %d %+v amount %d evaluated %d", res.ChosenIndex, res.ChosenOption, res.AmountMicros, res.OptionsEvaluated)
	}
	if !slices.Equal(h.sanctions.Screened(), []string{payC}) {
		t.Fatalf("screened %v, want only the chosen payee", h.sanctions.Screened())
	}
	p := res.Payee
	if p.PayTo != payC || p.Network != "eip155:8453" || p.MerchantDomain != "api.shop.example" ||
		!p.Sanctions.Screened || p.Sanctions.Status != SanctionsClear || *p.Domain.AgeDays != 900 || !*p.Domain.HasA {
		t.Fatalf("payee %+v", p)
	}
	if res.DataAsOf != "2026-11-21T00:00:00Z" || res.Receipt.TS != "2026-11-22T08:00:00Z" || res.Receipt.Decision != "allow" ||
		!strings.HasPrefix(res.Receipt.ID, "rcpt_") || len(res.Receipt.ID) != 5+32 {
		t.Fatalf("receipt %+v data_as_of %s", res.Receipt, res.DataAsOf)
	}
	sum := sha256.Sum256(fourOptionInput(""))
	if res.Receipt.InputSHA256 != hex.EncodeToString(sum[:]) {
		t.Fatal("input_sha256 is not the hash of the body")
	}
}

func TestReceiptBindsEveryField(t *testing.T) {
	h := newHarness(t)
	res := h.decide(t, fourOptionInput(""))
	out, err := json.Marshal(res)
	if err != nil {
		t.Fatal(err)
	}
	jwks, _ := h.keys.PublicJWKS()
	opts := receipts.VerifyOptions{Now: func() time.Time { return testNow.Add(time.Minute) }}
	if err := receipts.VerifyResult(out, jwks, opts); err != nil {
		t.Fatalf("VerifyResult: %v", err)
	}
	for _, edit := range []struct{ from, to, field string }{
		{`"decision":"allow"`, `"decision":"hold"`, "decision"},
		{`"amount":"10000"`, `"amount":"1"`, "chosen_option.amount"},
		{`"options_evaluated":4`, `"options_evaluated":3`, "options_evaluated"},
		{`"status":"clear"`, `"status":"match"`, "payee.sanctions.status"},
	} {
		bad := strings.Replace(string(out), edit.from, edit.to, 1)
		if bad == string(out) {
			t.Fatalf("%s not found in %s", edit.from, out)
		}
		var fe *receipts.FieldError
		if err := receipts.VerifyResult([]byte(bad), jwks, opts); !errors.As(err, &fe) || fe.Field != edit.field {
			t.Errorf("%s: got %v", edit.field, err)
		}
	}
	if _, claims, err := receipts.Verify(res.Receipt.JWS, jwks, opts); err != nil || claims.ID != res.Receipt.ID {
		t.Fatalf("Verify: %v", err)
	}
}

func TestDecideFacts(t *testing.T) {
	cases := []struct {
		name     string
		setup    func(h *harness)
		body     []byte
		decision string
		reasons  []string
		check    func(t *testing.T, r *Result)
	}{
		{"sanctioned payee blocks", func(h *harness) { h.sanctions.List(payC) },
			fourOptionInput(""), "block", []string{"block: payTo " + payC + " is an OFAC SDN-listed address"},
			func(t *testing.T, r *Result) {
				if r.Payee.Sanctions.Status != SanctionsMatch || len(r.Payee.Sanctions.Matches) != 1 {
					t.Fatalf("sanctions %+v", r.Payee.Sanctions)
				}
			}},
		{"no sanctions list holds (fail closed)", func(h *harness) { h.sanctions = nil },
			fourOptionInput(""), "hold", []string{"hold: sanctions data unavailable"},
			func(t *testing.T, r *Result) {
				if r.DataAsOf != "unknown" || r.Payee.Sanctions.Screened || r.Payee.Sanctions.Status != SanctionsUnknown {
					t.Fatalf("data_as_of %s sanctions %+v", r.DataAsOf, r.Payee.Sanctions)
				}
			}},
		{"list not ready holds", func(h *harness) { h.sanctions.Unready = true },
			fourOptionInput(""), "hold", []string{"hold: sanctions data unavailable"}, nil},
		{"screener panic holds", func(h *harness) { h.sanctions.Panics = true },
			fourOptionInput(""), "hold", []string{"hold: sanctions screening failed"},
			func(t *testing.T, r *Result) {
				if !strings.Contains(r.Payee.Sanctions.Note, "index corrupted") {
					t.Fatalf("note %q", r.Payee.Sanctions.Note)
				}
			}},
		{"screening disabled by rules", func(h *harness) { h.sanctions = nil },
			fourOptionInput(`,"rules":{"screen_sanctions":false}`), "allow", []string{"allow: all rules passed"},
			func(t *testing.T, r *Result) {
				if !strings.Contains(r.Payee.Sanctions.Note, "disabled") {
					t.Fatalf("note %q", r.Payee.Sanctions.Note)
				}
			}},
		{"new domain holds", func(h *harness) { h.domains.Table["api.shop.example"] = oldDomain("api.shop.example", 3) },
			fourOptionInput(""), "hold", []string{"hold: domain registered 3 days ago (< 30)"}, nil},
		{"domain checker panic holds", func(h *harness) { h.domains.Panics = true },
			fourOptionInput(""), "hold", []string{"hold: domain screening failed"}, nil},
		{"unknown domain facts are reported, not evidence", func(h *harness) { delete(h.domains.Table, "api.shop.example") },
			fourOptionInput(""), "allow", []string{"allow: all rules passed"},
			func(t *testing.T, r *Result) {
				d := r.Payee.Domain
				if !d.Checked || d.AgeDays != nil || d.HasA != nil || !strings.Contains(d.Note, "no RDAP server") {
					t.Fatalf("domain %+v", d)
				}
			}},
		{"offline: no domain checker", func(h *harness) { h.domains = nil },
			fourOptionInput(""), "allow", []string{"allow: all rules passed"},
			func(t *testing.T, r *Result) {
				if r.Payee.Domain.Checked || !strings.Contains(r.Payee.Domain.Note, "offline") {
					t.Fatalf("domain %+v", r.Payee.Domain)
				}
			}},
		{"request rules overlay the deployment's", nil,
			fourOptionInput(`,"rules":{"hold_above_usd":0.001}`), "hold", []string{"hold: amount $0.01 above hold threshold $0.001"}, nil},
		{"spent today counts against the daily cap", nil,
			fourOptionInput(`,"context":{"spent_today_usd":24.995,"agent_id":"a1"}`), "block",
			[]string{"block: daily cap $25 would be exceeded (spent $24.995)"}, nil},
		{"no challenge and no cart", nil, []byte(`{}`), "block", []string{"block: no payment options found in input"},
			func(t *testing.T, r *Result) {
				if r.Payee != nil || r.ChosenOption != nil || r.OptionsEvaluated != 0 {
					t.Fatalf("%+v", r)
				}
			}},
		{"cart above hold threshold", nil,
			[]byte(`{"cart":{"merchant_domain":"https://api.shop.example/cart","total_usd":0.50,"pay_to":"` + payA + `","merchant_name":"Shop"}}`),
			"hold", []string{"hold: amount $0.5 above hold threshold $0.25"},
			func(t *testing.T, r *Result) {
				if r.ChosenOption != nil || r.ChosenIndex != -1 || r.AmountMicros != 500_000 || r.Payee.MerchantName != "Shop" {
					t.Fatalf("%+v", r)
				}
			}},
		{"cart merchant name exact match blocks", func(h *harness) { h.sanctions.Exact = map[string]bool{"Evil Corp": true} },
			[]byte(`{"cart":{"merchant_domain":"api.shop.example","total_usd":0.1,"pay_to":"` + payA + `","merchant_name":"Evil Corp"}}`),
			"block", []string{"block: merchant name exactly matches an OFAC SDN entry"}, nil},
		{"cart negative total", nil,
			[]byte(`{"cart":{"merchant_domain":"api.shop.example","total_usd":-1,"pay_to":"` + payA + `"}}`),
			"block", []string{"block: invalid payment amount"}, nil},
		{"cart without total", nil,
			[]byte(`{"cart":{"merchant_domain":"api.shop.example","pay_to":"` + payA + `"}}`),
			"block", []string{"block: unsupported or malformed payment option"}, nil},
		{"cart without domain", nil,
			[]byte(`{"cart":{"total_usd":0.1,"pay_to":"` + payA + `"}}`),
			"hold", []string{"hold: could not determine merchant domain"}, nil},
		{"resource_url supplies the domain", nil,
			[]byte(`{"resource_url":"https://api.shop.example/x","cart":{"total_usd":0.1,"pay_to":"` + payA + `"}}`),
			"allow", []string{"allow: all rules passed"}, nil},
		{"no acceptable option: chosen is null", nil,
			[]byte(`{"challenge":{"x402Version":2,"resource":{"url":"https://api.shop.example/"},"accepts":[` +
				v2Option("5000000", payA) + "," + v2Option("NaN", payB) + `]}}`),
			"block", []string{"block: amount $5 exceeds max $1"},
			func(t *testing.T, r *Result) {
				if r.ChosenOption != nil || r.ChosenIndex != -1 || r.Payee.PayTo != "" || r.Payee.Sanctions.Screened || r.OptionsEvaluated != 2 {
					t.Fatalf("%+v", r)
				}
			}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			h := newHarness(t)
			if c.setup != nil {
				c.setup(h)
			}
			h.rebuild(policy.DefaultRules())
			res := h.decide(t, c.body)
			wantDecision(t, res, c.decision, c.reasons...)
			if c.check != nil {
				c.check(t, res)
			}
		})
	}
}

func TestRealFixtures(t *testing.T) {
	h := newHarness(t)
	h.domains = nil // 127.0.0.1 sellers: no registry knows them
	h.rebuild(policy.DefaultRules())
	for _, path := range []string{"v2/challenge-402.json", "v1/challenge-402.json", "v2-offer-receipt/challenge-402.json"} {
		t.Run(path, func(t *testing.T) {
			ch := fixtureChallenge(t, path)
			// The captures are Base Sepolia sellers: blocked by the default networks...
			res := h.decide(t, []byte(`{"challenge":`+string(ch)+`}`))
			if res.Decision != "block" || !strings.HasPrefix(res.Reasons[0], "block: network ") {
				t.Fatalf("default rules: %s %q", res.Decision, res.Reasons)
			}
			// ...and allowed once the caller allows that network.
			res = h.decide(t, []byte(`{"challenge":`+string(ch)+`,"rules":{"allowed_networks":["eip155:84532","base-sepolia"]}}`))
			wantDecision(t, res, "allow", "allow: all rules passed")
			if res.Payee.MerchantDomain != "127.0.0.1" || res.AmountMicros != 10_000 || res.ChosenOption.Amount != "10000" {
				t.Fatalf("payee %+v amount %d", res.Payee, res.AmountMicros)
			}
		})
	}
}

func TestSigningUnavailable(t *testing.T) {
	e := New(Options{Rules: policy.DefaultRules()})
	if _, err := e.Decide(context.Background(), &Input{}); !errors.Is(err, receipts.ErrSigningUnavailable) {
		t.Fatalf("got %v", err)
	}
	e = New(Options{Rules: policy.DefaultRules(), Signer: failingSigner{}})
	if _, err := e.Decide(context.Background(), &Input{}); !errors.Is(err, receipts.ErrSigningUnavailable) {
		t.Fatalf("got %v", err)
	}
}

// TestDecideUnsignedThenSign: the two halves of Decide give a result that verifies like Decide's, the
// unsigned half leaves the hash and signature empty, and a receipt is signed once.
func TestDecideUnsignedThenSign(t *testing.T) {
	h := newHarness(t)
	in, err := ParseInput(fourOptionInput(""))
	if err != nil {
		t.Fatal(err)
	}
	res, err := h.engine.DecideUnsigned(context.Background(), in)
	if err != nil {
		t.Fatal(err)
	}
	if res.Decision != "allow" || res.Receipt.ID == "" || res.Receipt.TS == "" || res.Receipt.Decision != "allow" {
		t.Fatalf("unsigned result = %+v", res)
	}
	if res.Receipt.InputSHA256 != "" || res.Receipt.JWS != "" {
		t.Fatalf("DecideUnsigned hashed or signed: %+v", res.Receipt)
	}
	if err := h.engine.SignReceipt(res, in); err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(fourOptionInput(""))
	if res.Receipt.InputSHA256 != hex.EncodeToString(sum[:]) {
		t.Errorf("input_sha256 = %s, want the body's hash", res.Receipt.InputSHA256)
	}
	jwks, _ := h.keys.PublicJWKS()
	out, _ := json.Marshal(res)
	if err := receipts.VerifyResult(out, jwks, receipts.VerifyOptions{Now: func() time.Time { return testNow }}); err != nil {
		t.Fatalf("signed result does not verify: %v", err)
	}
	jws := res.Receipt.JWS
	if err := h.engine.SignReceipt(res, in); !errors.Is(err, receipts.ErrSigningUnavailable) || res.Receipt.JWS != jws {
		t.Fatalf("second SignReceipt = %v (jws changed: %v)", err, res.Receipt.JWS != jws)
	}
}

func TestSignReceiptFailureLeavesResultUnsigned(t *testing.T) {
	h := newHarness(t)
	in := &Input{Cart: &Cart{MerchantDomain: "api.shop.example", TotalUSD: 10_000, PayTo: payA}}
	e := New(Options{Rules: policy.DefaultRules(), Signer: failingSigner{}, Domains: h.domains, Sanctions: h.sanctions})
	res, err := e.DecideUnsigned(context.Background(), in)
	if err != nil {
		t.Fatal(err)
	}
	if err := e.SignReceipt(res, in); !errors.Is(err, receipts.ErrSigningUnavailable) {
		t.Fatalf("SignReceipt = %v", err)
	}
	if res.Receipt.JWS != "" || res.Receipt.InputSHA256 != "" {
		t.Fatalf("a failed signature left %+v", res.Receipt)
	}
	if _, err := New(Options{Rules: policy.DefaultRules()}).DecideUnsigned(context.Background(), in); !errors.Is(err, receipts.ErrSigningUnavailable) {
		t.Fatalf("DecideUnsigned without a signer = %v", err)
	}
}

type failingSigner struct{}

func (failingSigner) Sign([]byte) (string, error) { return "", errors.New("HSM offline") }

func TestInputBuiltInCodeIsHashedAsJSON(t *testing.T) {
	h := newHarness(t)
	in := &Input{Cart: &Cart{MerchantDomain: "api.shop.example", TotalUSD: 10_000, PayTo: payA}}
	res, err := h.engine.Decide(context.Background(), in)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := json.Marshal(in)
	sum := sha256.Sum256(b)
	if res.Receipt.InputSHA256 != hex.EncodeToString(sum[:]) || res.Decision != "allow" {
		t.Fatalf("%+v", res)
	}
}

func TestDecideConcurrently(t *testing.T) {
	h := newHarness(t)
	in, err := ParseInput(fourOptionInput(""))
	if err != nil {
		t.Fatal(err)
	}
	jwks, _ := h.keys.PublicJWKS()
	errs := make(chan error, 8)
	for range 8 {
		go func() {
			for range 10 {
				res, err := h.engine.Decide(context.Background(), in)
				if err != nil {
					errs <- err
					return
				}
				out, _ := json.Marshal(res)
				if err := receipts.VerifyResult(out, jwks, receipts.VerifyOptions{Now: func() time.Time { return testNow }}); err != nil {
					errs <- err
					return
				}
			}
			errs <- nil
		}()
	}
	for range 8 {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
}

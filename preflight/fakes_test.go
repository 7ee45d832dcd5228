package preflight

import (
	"context"
	"encoding/json"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/payguard/payguard/receipts"
	"github.com/payguard/payguard/screening"
	"github.com/payguard/payguard/x402"
)

var testNow = time.Date(2026, 11, 22, 8, 0, 0, 0, time.UTC)

// fakeSanctions is an in-memory list: listed addresses (any case) and exact/possible names.
type fakeSanctions struct {
	mu       sync.Mutex
	ready    bool
	panics   bool
	asOf     time.Time
	addrs    map[string]bool
	exact    map[string]bool
	possible map[string]bool
	screened []string // addresses asked about
}

func (f *fakeSanctions) ScreenAddress(a string) []screening.SanctionsMatch {
	if f.panics {
		panic("index corrupted")
	}
	f.mu.Lock()
	f.screened = append(f.screened, a)
	f.mu.Unlock()
	if f.addrs[strings.ToLower(a)] {
		return []screening.SanctionsMatch{{UID: 1, Name: "Bad Actor", Score: 1, Address: a, Currency: "USDC"}}
	}
	return nil
}

func (f *fakeSanctions) ScreenName(n string) screening.NameResult {
	if f.panics {
		panic("index corrupted")
	}
	var r screening.NameResult
	if f.exact[n] {
		r.Exact = []screening.SanctionsMatch{{UID: 2, Name: n, MatchedName: n, Score: 1}}
	}
	if f.possible[n] {
		r.Possible = []screening.SanctionsMatch{{UID: 3, Name: n + " Ltd", MatchedName: n + " Ltd", Score: 0.9}}
	}
	return r
}

func (f *fakeSanctions) DataAsOf() time.Time { return f.asOf }
func (f *fakeSanctions) Ready() bool         { return f.ready }

func clearList() *fakeSanctions {
	return &fakeSanctions{ready: true, asOf: time.Date(2026, 11, 21, 0, 0, 0, 0, time.UTC)}
}

// fakeDomains answers from a map; unknown domains get unknown facts.
type fakeDomains struct {
	facts  map[string]screening.DomainFacts
	panics bool
}

func (f *fakeDomains) Facts(_ context.Context, d string) screening.DomainFacts {
	if f.panics {
		panic("resolver exploded")
	}
	if x, ok := f.facts[d]; ok {
		return x
	}
	return screening.DomainFacts{Domain: d, Valid: true, AgeError: "no RDAP server", DNSError: "timeout"}
}

func oldDomain(d string, days int) screening.DomainFacts {
	reg := testNow.Add(-time.Duration(days) * 24 * time.Hour)
	yes := true
	return screening.DomainFacts{Domain: d, Valid: true, RegisteredAt: &reg, HasA: &yes, HasMX: &yes}
}

func testKeys(t testing.TB) *receipts.KeySet {
	t.Helper()
	k, err := receipts.GenerateKey(testNow)
	if err != nil {
		t.Fatal(err)
	}
	return k
}

// fixtureChallenge reads a real captured 402: the v2 PAYMENT-REQUIRED header or the v1 body.
func fixtureChallenge(t testing.TB, path string) []byte {
	t.Helper()
	// The real captures live once in the repository, in x402/testdata/fixtures (its README says where from).
	data, err := os.ReadFile("../x402/testdata/fixtures/" + path)
	if err != nil {
		t.Fatalf("fixture: %v", err)
	}
	var capture struct {
		Response struct {
			Headers [][2]string `json:"headers"`
			Body    string      `json:"body"`
		} `json:"response"`
	}
	if err := json.Unmarshal(data, &capture); err != nil {
		t.Fatal(err)
	}
	for _, h := range capture.Response.Headers {
		if strings.EqualFold(h[0], x402.HeaderPaymentRequired) {
			var raw json.RawMessage
			if err := x402.DecodeHeaderJSON(h[1], &raw); err != nil {
				t.Fatal(err)
			}
			return raw
		}
	}
	return []byte(capture.Response.Body)
}

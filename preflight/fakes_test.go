package preflight

import (
	"encoding/json"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/payguard/payguard/receipts"
	"github.com/payguard/payguard/screening"
	"github.com/payguard/payguard/screening/screeningtest"
	"github.com/payguard/payguard/x402"
)

var testNow = time.Date(2026, 11, 22, 8, 0, 0, 0, time.UTC)

// clearList is a loaded list with nothing on it (screeningtest's fake, as every package's tests use).
func clearList() *screeningtest.Sanctions { return &screeningtest.Sanctions{} }

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

// Command sdkcheck writes challenges narrowed by package x402 for check.mjs, which runs them through the
// official @x402/core 2.27.0 (installed under interop/node_modules): its header decoder and schema, and
// the seller's own requirement matching against the echoed `accepted`. Run from the module root:
//
//	go run ./x402/testdata/sdkcheck | node x402/testdata/sdkcheck/check.mjs
//
// It is a manual cross-check, not part of `go test` (it needs the interop npm install).
package main

import (
	"encoding/json"
	"log"
	"os"
	"strings"

	"github.com/payguard/payguard/x402"
)

func main() {
	// The offer-receipt capture (extensions, resource) plus two options with unknown members, a
	// reordered and widened extra, and HTML-significant characters.
	full := buildChallenge()
	p, err := x402.ParsePaymentRequired(full)
	if err != nil {
		log.Fatal(err)
	}
	var narrowed []string
	for i := range p.Accepts {
		h, err := x402.EncodeHeaderJSON(p.Narrowed(i))
		if err != nil {
			log.Fatal(err)
		}
		narrowed = append(narrowed, h)
	}
	v1body := fixtureBody("x402/testdata/fixtures/v1/challenge-402.json")
	v1, err := x402.ParsePaymentRequired(v1body)
	if err != nil {
		log.Fatal(err)
	}
	v1narrowed, err := v1.Narrowed(0).MarshalJSON()
	if err != nil {
		log.Fatal(err)
	}
	out := map[string]any{"full": string(full), "narrowed": narrowed, "v1orig": string(v1body), "v1narrowed": string(v1narrowed)}
	if err := json.NewEncoder(os.Stdout).Encode(out); err != nil {
		log.Fatal(err)
	}
}

func buildChallenge() []byte {
	raw, err := os.ReadFile("x402/testdata/fixtures/v2-offer-receipt/challenge-402.json")
	if err != nil {
		log.Fatal(err)
	}
	var capture struct {
		Response struct {
			Headers [][]string `json:"headers"`
		} `json:"response"`
	}
	if err := json.Unmarshal(raw, &capture); err != nil {
		log.Fatal(err)
	}
	var doc map[string]json.RawMessage
	for _, h := range capture.Response.Headers {
		if strings.EqualFold(h[0], x402.HeaderPaymentRequired) {
			if err := x402.DecodeHeaderJSON(h[1], &doc); err != nil {
				log.Fatal(err)
			}
		}
	}
	var entries []json.RawMessage
	if err := json.Unmarshal(doc["accepts"], &entries); err != nil || len(entries) == 0 {
		log.Fatalf("no accepts in the capture: %v", err)
	}
	second := strings.Replace(string(entries[0]), `"amount":"10000"`, `"amount":"20000","futureField":{"b":[1,2.50,"x&y<z>"],"a":null}`, 1)
	third := strings.Replace(string(entries[0]), `"extra":{"name":"USDC","version":"2"}`, `"extra":{"version":"2","name":"USDC","assetTransferMethod":"eip3009","nested":{"k":[1,{"z":1}]}}`, 1)
	entries = append(entries, json.RawMessage(second), json.RawMessage(third))
	doc["accepts"], _ = json.Marshal(entries)
	doc["topLevelExtra"] = json.RawMessage(`{"keep":"me"}`)
	full, err := json.Marshal(doc)
	if err != nil {
		log.Fatal(err)
	}
	return full
}

func fixtureBody(path string) []byte {
	raw, err := os.ReadFile(path)
	if err != nil {
		log.Fatal(err)
	}
	var capture struct {
		Response struct {
			Body string `json:"body"`
		} `json:"response"`
	}
	if err := json.Unmarshal(raw, &capture); err != nil {
		log.Fatal(err)
	}
	return []byte(capture.Response.Body)
}

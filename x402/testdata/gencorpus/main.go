// Command gencorpus writes the fuzz seed corpora of package x402 from the captured fixtures:
//
//	go run ./x402/testdata/gencorpus
//
// run from the module root. Each seed is one file in Go's corpus format under
// x402/testdata/fuzz/<FuzzName>/, named by the SHA-256 of its content, so running it again is idempotent.
package main

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"log"
	"os"
	"path/filepath"
	"strings"
)

const root = "x402/testdata"

type message struct {
	Status  int        `json:"status"`
	Headers [][]string `json:"headers"`
	Body    string     `json:"body"`
}

func main() {
	seeds := map[string]map[string]bool{}
	add := func(fuzz, typ, value string) {
		if seeds[fuzz] == nil {
			seeds[fuzz] = map[string]bool{}
		}
		seeds[fuzz][fmt.Sprintf("go test fuzz v1\n%s(%q)\n", typ, value)] = true
	}
	visit := func(m *message) {
		if m == nil {
			return
		}
		for _, h := range m.Headers {
			if len(h) != 2 {
				continue
			}
			// Header fuzzers get the value and the JSON document it carries (they try both forms).
			doc, err := base64.StdEncoding.DecodeString(h[1])
			if err != nil {
				continue
			}
			fuzz := ""
			switch strings.ToUpper(h[0]) {
			case "PAYMENT-REQUIRED":
				fuzz = "FuzzDecodePaymentRequiredHeader"
				add("FuzzParsePaymentRequired", "[]byte", string(doc))
			case "PAYMENT-SIGNATURE", "X-PAYMENT":
				fuzz = "FuzzDecodePaymentPayloadHeader"
			case "PAYMENT-RESPONSE", "X-PAYMENT-RESPONSE":
				fuzz = "FuzzDecodeSettleResponseHeader"
			default:
				continue
			}
			add(fuzz, "string", h[1])
			add(fuzz, "string", string(doc))
		}
		if m.Status == 402 && strings.Contains(m.Body, `"x402Version"`) {
			add("FuzzParsePaymentRequired", "[]byte", m.Body)
		}
	}
	record := func(raw []byte) {
		var doc struct {
			message
			Request  *message `json:"request"`
			Response *message `json:"response"`
		}
		if err := json.Unmarshal(raw, &doc); err != nil {
			log.Fatal(err)
		}
		visit(&doc.message)
		visit(doc.Request)
		visit(doc.Response)
	}
	files, err := filepath.Glob(filepath.Join(root, "fixtures/*/*"))
	if err != nil {
		log.Fatal(err)
	}
	for _, f := range files {
		if strings.Contains(filepath.Base(f), "facilitator-") {
			continue
		}
		raw, err := os.ReadFile(f)
		if err != nil {
			log.Fatal(err)
		}
		if !strings.HasSuffix(f, ".jsonl") {
			record(raw)
			continue
		}
		sc := bufio.NewScanner(bytes.NewReader(raw))
		sc.Buffer(nil, 1<<20)
		for sc.Scan() {
			record(sc.Bytes())
		}
		if err := sc.Err(); err != nil {
			log.Fatal(err)
		}
	}
	// Amounts seen in the fixtures and their edges.
	for _, a := range []string{"10000", "20000", "5000", "0", "1000000000000000000", "1000000000000000001", "-10000", "10000.0", "1e4"} {
		add("FuzzParseAtomic", "string", a)
	}
	for fuzz, set := range seeds {
		dir := filepath.Join(root, "fuzz", fuzz)
		if err := os.MkdirAll(dir, 0o755); err != nil {
			log.Fatal(err)
		}
		for content := range set {
			sum := sha256.Sum256([]byte(content))
			name := filepath.Join(dir, hex.EncodeToString(sum[:8]))
			if err := os.WriteFile(name, []byte(content), 0o644); err != nil {
				log.Fatal(err)
			}
		}
		fmt.Printf("%s: %d seeds\n", fuzz, len(set))
	}
}

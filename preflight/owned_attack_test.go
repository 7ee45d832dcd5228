package preflight

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"sync"
	"testing"
)

// TestOwnedBodyNeverWrittenByADecision attacks ParseInputOwned (serve4: the Input aliases the request's own
// buffer): nothing the engine does with an owned Input may write into that buffer, or a receipt would hash
// (and a result echo) bytes the caller never sent. Each decision vector is parsed into a buffer with spare
// capacity past the body (where an append to an aliased member would land unseen) and decided by several
// goroutines at once (-race); the buffer, its spare bytes and the receipt's input_sha256 must stay the
// body's, and the signed result must be the one a copied Input gets.
func TestOwnedBodyNeverWrittenByADecision(t *testing.T) {
	keys := testKeys(t)
	for _, v := range buildVectorCases() {
		e, copied := vectorEngine(t, keys, v)
		want, err := e.DecideUnsigned(context.Background(), copied)
		if err != nil {
			t.Fatal(err)
		}
		// the body, then 256 bytes of sentinel in the same allocation
		buf := append(append(make([]byte, 0, len(v.Input)+256), v.Input...), bytes.Repeat([]byte{'#'}, 256)...)
		body := buf[:len(v.Input)]
		in, err := ParseInputOwned(body)
		if err != nil {
			t.Fatalf("%s: %v", v.Name, err)
		}
		sum := sha256.Sum256(v.Input)
		var wg sync.WaitGroup
		for range 4 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				res, out, err := e.DecideJSON(context.Background(), in)
				if err != nil {
					t.Errorf("%s: %v", v.Name, err)
					return
				}
				if res.Receipt.InputSHA256 != hex.EncodeToString(sum[:]) || !bytes.Contains(out, []byte(hex.EncodeToString(sum[:]))) {
					t.Errorf("%s: receipt hashes %s, want the body's", v.Name, res.Receipt.InputSHA256)
				}
				if res.Decision != want.Decision || res.ChosenIndex != want.ChosenIndex || res.AmountMicros != want.AmountMicros {
					t.Errorf("%s: owned input decided %s/%d/%d, copied %s/%d/%d", v.Name, res.Decision, res.ChosenIndex,
						res.AmountMicros, want.Decision, want.ChosenIndex, want.AmountMicros)
				}
			}()
		}
		wg.Wait()
		if !bytes.Equal(body, v.Input) || !bytes.Equal(buf[len(v.Input):cap(body)], bytes.Repeat([]byte{'#'}, 256)) {
			t.Fatalf("%s: a decision wrote into the owned body or past it", v.Name)
		}
	}
}

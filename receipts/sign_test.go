package receipts

import (
	"crypto/ecdsa"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"math/big"
	"strings"
	"testing"
	"time"

	"github.com/go-jose/go-jose/v4"
)

// Sign writes its compact JWS itself (see compactSigner); it must be what go-jose writes for the same key:
// the same protected header bytes, the payload as base64url, and a 64-byte R || S signature that go-jose
// and crypto/ecdsa both accept.
func TestSignMatchesGoJose(t *testing.T) {
	k := mustKey(t)
	key := k.keys[0]
	priv := key.Key.(*ecdsa.PrivateKey)
	js, err := jose.NewSigner(jose.SigningKey{Algorithm: jose.ES256, Key: priv},
		(&jose.SignerOptions{}).WithType(ReceiptType).WithHeader("kid", key.KeyID))
	if err != nil {
		t.Fatal(err)
	}
	for _, payload := range [][]byte{resultJSON(t0), {}, []byte("\x00\xff<>&\u2028 not JSON at all")} {
		obj, err := js.Sign(payload)
		if err != nil {
			t.Fatal(err)
		}
		ref, err := obj.CompactSerialize()
		if err != nil {
			t.Fatal(err)
		}
		got, err := k.Sign(payload)
		if err != nil {
			t.Fatal(err)
		}
		gp, rp := strings.Split(got, "."), strings.Split(ref, ".")
		if len(gp) != 3 || gp[0] != rp[0] || gp[1] != rp[1] {
			t.Fatalf("Sign wrote %q, go-jose %q (header and payload must match)", got, ref)
		}
		sig, err := base64.RawURLEncoding.DecodeString(gp[2])
		if err != nil || len(sig) != 64 {
			t.Fatalf("signature %q: %d bytes, %v", gp[2], len(sig), err)
		}
		digest := sha256.Sum256([]byte(gp[0] + "." + gp[1]))
		r, s := new(big.Int).SetBytes(sig[:32]), new(big.Int).SetBytes(sig[32:])
		if !ecdsa.Verify(&priv.PublicKey, digest[:], r, s) {
			t.Fatal("crypto/ecdsa does not accept the signature")
		}
		parsed, err := jose.ParseSignedCompact(got, []jose.SignatureAlgorithm{jose.ES256})
		if err != nil {
			t.Fatal(err)
		}
		out, err := parsed.Verify(&priv.PublicKey)
		if err != nil || string(out) != string(payload) {
			t.Fatalf("go-jose verify: %v, payload %q", err, out)
		}
	}
}

// A key set with no usable signing key refuses to sign rather than writing an unsigned receipt.
func TestSignWithoutSigner(t *testing.T) {
	if _, err := (&KeySet{}).Sign([]byte("{}")); err != ErrNoSigner {
		t.Fatalf("Sign on an empty key set: %v, want ErrNoSigner", err)
	}
}

// Sign writes only low-S signatures, and Verify refuses the high-S twin of one, which go-jose (and any plain
// ECDSA verifier) accepts: one decision has one valid receipt. On the old code half the receipts were
// high-S and the twin of a low-S one verified.
func TestLowSOnly(t *testing.T) {
	key := mustKey(t)
	jwks := jwksOf(t, key)
	now := t0
	opts := VerifyOptions{Now: func() time.Time { return now }}
	for i := range 64 {
		jws, err := key.Sign(resultJSON(now.Add(-time.Duration(i) * time.Second)))
		if err != nil {
			t.Fatal(err)
		}
		parts := strings.Split(jws, ".")
		sig, _ := base64.RawURLEncoding.DecodeString(parts[2])
		if isHighS(sig) {
			t.Fatalf("signature %d is high-S", i)
		}
		if _, _, err := Verify(jws, jwks, opts); err != nil {
			t.Fatalf("signature %d: %v", i, err)
		}
		twin := highSTwin(t, jws)
		if _, _, err := Verify(twin, jwks, opts); !errors.Is(err, ErrSignature) {
			t.Fatalf("the high-S twin of signature %d: %v, want ErrSignature", i, err)
		}
		obj, err := jose.ParseSignedCompact(twin, []jose.SignatureAlgorithm{jose.ES256})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := obj.Verify(&key.keys[0].Key.(*ecdsa.PrivateKey).PublicKey); err != nil {
			t.Fatalf("go-jose refuses the twin (the test would prove nothing): %v", err)
		}
	}
}

package receipts

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/sha256"
	"encoding/asn1"
	"encoding/base64"
	"errors"
	"math/big"
	mathrand "math/rand/v2"
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

// Receipts are signed deterministically (RFC 6979): the same key and signing input give the same JWS, and it
// verifies. Hedged signing (the old code) gave a different signature every time, so this fails on it.
func TestSignIsDeterministic(t *testing.T) {
	k := mustKey(t)
	payload := resultJSON(t0)
	a, err := k.Sign(payload)
	if err != nil {
		t.Fatal(err)
	}
	b, err := k.Sign(payload)
	if err != nil {
		t.Fatal(err)
	}
	if a != b {
		t.Fatalf("two signatures of one payload differ:\n%s\n%s", a, b)
	}
	if _, _, err := Verify(a, jwksOf(t, k), VerifyOptions{Now: func() time.Time { return t0 }}); err != nil {
		t.Fatal(err)
	}
	c, err := k.Sign(resultJSON(t0.Add(time.Second)))
	if err != nil {
		t.Fatal(err)
	}
	if strings.Split(c, ".")[2] == strings.Split(a, ".")[2] {
		t.Fatal("two payloads, one signature")
	}
}

// derToRaw and lowSRaw are the signature's conversion from crypto/ecdsa's DER to JWS's low-S R || S: held
// to encoding/asn1 and math/big on many real signatures (about half of them high-S before lowSRaw), and
// derToRaw refuses what a P-256 signature cannot be.
func TestDERToLowSRaw(t *testing.T) {
	priv := mustKey(t).keys[0].Key.(*ecdsa.PrivateKey)
	n := elliptic.P256().Params().N
	half := new(big.Int).Rsh(n, 1)
	flipped := 0
	for i := range 400 {
		digest := sha256.Sum256([]byte{byte(i), byte(i >> 8)})
		der, err := ecdsa.SignASN1(rand.Reader, priv, digest[:])
		if err != nil {
			t.Fatal(err)
		}
		var want struct{ R, S *big.Int }
		if _, err := asn1.Unmarshal(der, &want); err != nil {
			t.Fatal(err)
		}
		if want.S.Cmp(half) > 0 {
			want.S.Sub(n, want.S)
			flipped++
		}
		var sig [es256Size]byte
		if !derToRaw(der, &sig) {
			t.Fatalf("derToRaw refused %x", der)
		}
		lowSRaw(&sig)
		if new(big.Int).SetBytes(sig[:32]).Cmp(want.R) != 0 || new(big.Int).SetBytes(sig[32:]).Cmp(want.S) != 0 {
			t.Fatalf("%x: got %x", der, sig)
		}
		if !ecdsa.Verify(&priv.PublicKey, digest[:], want.R, want.S) {
			t.Fatal("the low-S signature does not verify")
		}
	}
	if flipped < 100 || flipped > 300 {
		t.Fatalf("%d of 400 signatures were high-S: the test did not cover lowSRaw's subtraction", flipped)
	}
	long := append([]byte{0x02, 34, 0x00, 0x80}, make([]byte, 32)...)
	for _, bad := range [][]byte{
		nil, {0x30}, {0x30, 0x00}, {0x31, 0x06, 0x02, 0x01, 0x01, 0x02, 0x01, 0x01},
		{0x30, 0x06, 0x02, 0x01, 0x01, 0x02, 0x01},                                   // s cut short
		{0x30, 0x07, 0x02, 0x01, 0x01, 0x02, 0x01, 0x01, 0x00},                       // a byte after s
		{0x30, 0x06, 0x02, 0x01, 0x81, 0x02, 0x01, 0x01},                             // negative r
		{0x30, 0x05, 0x02, 0x00, 0x02, 0x01, 0x01},                                   // empty r
		{0x30, 0x06, 0x04, 0x01, 0x01, 0x02, 0x01, 0x01},                             // not an INTEGER
		append([]byte{0x30, byte(len(long) + 3)}, append(long, 0x02, 0x01, 0x01)...), // r of 33 significant bytes
	} {
		var sig [es256Size]byte
		if derToRaw(bad, &sig) {
			t.Fatalf("derToRaw accepted %x", bad)
		}
	}
}

// AppendSign appends exactly what Sign returns (signing is deterministic) after what dst holds, which it
// leaves alone, and JWSLen is its length; with no key it appends nothing.
func TestAppendSignIsSign(t *testing.T) {
	k := mustKey(t)
	for _, payload := range [][]byte{resultJSON(t0), {}, []byte("x")} {
		want, err := k.Sign(payload)
		if err != nil {
			t.Fatal(err)
		}
		for _, prefix := range []string{"", `{"jws":"`} {
			dst := make([]byte, 0, len(prefix)+3) // too small: AppendSign grows it
			dst = append(dst, prefix...)
			got, err := k.AppendSign(dst, payload)
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != prefix+want {
				t.Fatalf("AppendSign(%q) = %q, want %q", prefix, got, prefix+want)
			}
			if k.JWSLen(len(payload)) != len(want) {
				t.Fatalf("JWSLen %d, the JWS is %d bytes", k.JWSLen(len(payload)), len(want))
			}
		}
	}
	if got, err := (&KeySet{}).AppendSign([]byte("ab"), []byte("{}")); err != ErrNoSigner || string(got) != "ab" {
		t.Fatalf("no key: %q, %v", got, err)
	}
}

// AppendsPlainJWS's promise: every byte of every JWS the key set writes is base64url or one of its two
// dots, whatever the payload (random bytes, quotes, control bytes, non-UTF-8), for new keys too; and the
// check the promise rests on refuses anything but base64url's alphabet.
func TestAppendSignWritesPlainJWS(t *testing.T) {
	if !mustKey(t).AppendsPlainJWS() {
		t.Fatal("the key set does not promise a plain JWS")
	}
	r := mathrand.New(mathrand.NewPCG(5, 6))
	for i := range 40 {
		k := mustKey(t)
		payload := make([]byte, r.IntN(3000))
		for j := range payload {
			payload[j] = byte(r.IntN(256))
		}
		if i == 0 {
			payload = []byte("\"\\</script>\x00\xff")
		}
		jws, err := k.AppendSign(nil, payload)
		if err != nil {
			t.Fatal(err)
		}
		dots := 0
		for _, c := range jws {
			if c == '.' {
				dots++
			} else if !base64URL(string(c)) {
				t.Fatalf("JWS byte %q is not base64url: %s", c, jws)
			}
		}
		if dots != 2 {
			t.Fatalf("%d dots in %s", dots, jws)
		}
	}
	for s, want := range map[string]bool{"eyJhbGciOiJFUzI1NiJ9": true, "": true, "a-_Z09": true, "ab=": false, "a.b": false,
		"a+b": false, "a/b": false, "a b": false, `a"b`: false, "é": false} {
		if base64URL(s) != want {
			t.Errorf("base64URL(%q) = %v, want %v", s, !want, want)
		}
	}
}

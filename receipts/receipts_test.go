package receipts

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/go-jose/go-jose/v4"
)

var t0 = time.Date(2026, 11, 22, 8, 0, 0, 0, time.UTC)

func resultJSON(ts time.Time) []byte {
	return []byte(`{"decision":"allow","reasons":["allow: all rules passed"],"chosen_option":{"scheme":"exact","payTo":"0xabc","maxTimeoutSeconds":60},` +
		`"options_evaluated":1,"payee":null,"receipt":{"id":"rcpt_1","ts":"` + ts.Format(time.RFC3339) +
		`","input_sha256":"ab","decision":"allow"},"data_as_of":"unknown"}`)
}

func mustKey(t *testing.T) *KeySet {
	t.Helper()
	k, err := GenerateKey(t0)
	if err != nil {
		t.Fatal(err)
	}
	return k
}

func jwksOf(t *testing.T, k *KeySet) []byte {
	t.Helper()
	b, err := k.PublicJWKS()
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func at(now time.Time) VerifyOptions { return VerifyOptions{Now: func() time.Time { return now }} }

// withJWS inserts the jws into the result's receipt, as the engine does.
func withJWS(t *testing.T, payload []byte, jws string) []byte {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(payload, &m); err != nil {
		t.Fatal(err)
	}
	m["receipt"].(map[string]any)["jws"] = jws
	b, _ := json.Marshal(m)
	return b
}

func TestSignVerifyRoundTrip(t *testing.T) {
	k := mustKey(t)
	payload := resultJSON(t0)
	jws, err := k.Sign(payload)
	if err != nil {
		t.Fatal(err)
	}
	got, claims, err := Verify(jws, jwksOf(t, k), at(t0.Add(30*time.Minute)))
	if err != nil {
		t.Fatal(err)
	}
	if string(got) != string(payload) || claims.ID != "rcpt_1" || claims.Decision != "allow" ||
		claims.KeyID != k.ActiveKeyID() || !claims.IssuedAt.Equal(t0) || claims.InputSHA256 != "ab" {
		t.Fatalf("claims %+v", claims)
	}
	hdr, _ := base64.RawURLEncoding.DecodeString(strings.Split(jws, ".")[0])
	if !strings.Contains(string(hdr), `"typ":"payguard-receipt+jws"`) || !strings.Contains(string(hdr), `"kid":"`+k.ActiveKeyID()+`"`) {
		t.Fatalf("header %s", hdr)
	}
}

func TestKidIsRFC7638Thumbprint(t *testing.T) {
	k := mustKey(t)
	pub := k.keys[0].Key.(*ecdsa.PrivateKey).PublicKey
	// RFC 7638: SHA-256 over {"crv","kty","x","y"} in lexicographic order, no spaces.
	enc := func(b []byte) string { return base64.RawURLEncoding.EncodeToString(b) }
	// The uncompressed point: 0x04, then x and y in 32 bytes each.
	point, err := pub.Bytes()
	if err != nil {
		t.Fatal(err)
	}
	x, y := point[1:33], point[33:65]
	canon := `{"crv":"P-256","kty":"EC","x":"` + enc(x) + `","y":"` + enc(y) + `"}`
	want := jose.JSONWebKey{Key: &pub}
	tp, _ := want.Thumbprint(crypto.SHA256)
	if k.ActiveKeyID() != enc(tp) || !strings.Contains(canon, enc(x)) {
		t.Fatalf("kid %s, thumbprint %s", k.ActiveKeyID(), enc(tp))
	}
	sum := sha256Sum([]byte(canon))
	if k.ActiveKeyID() != enc(sum) {
		t.Fatalf("kid %s is not sha256 of %s", k.ActiveKeyID(), canon)
	}
}

func TestVerifyErrors(t *testing.T) {
	k := mustKey(t)
	other := mustKey(t)
	jwks := jwksOf(t, k)
	jws, _ := k.Sign(resultJSON(t0))
	parts := strings.Split(jws, ".")

	tamperedPayload := parts[0] + "." + base64.RawURLEncoding.EncodeToString(resultJSON(t0.Add(time.Second))) + "." + parts[2]
	sig, _ := base64.RawURLEncoding.DecodeString(parts[2])
	sig[5] ^= 1
	tamperedSig := parts[0] + "." + parts[1] + "." + base64.RawURLEncoding.EncodeToString(sig)

	// A key set that names other's key with k's kid: the signature cannot verify under it.
	wrong := other.keys[0].Public()
	wrong.KeyID = k.ActiveKeyID()
	wrongJWKS, _ := json.Marshal(jose.JSONWebKeySet{Keys: []jose.JSONWebKey{wrong}})

	es384, _ := ecdsa.GenerateKey(elliptic.P384(), rand.Reader)
	s384, _ := jose.NewSigner(jose.SigningKey{Algorithm: jose.ES384, Key: es384},
		(&jose.SignerOptions{}).WithType(ReceiptType).WithHeader("kid", k.ActiveKeyID()))
	obj, _ := s384.Sign(resultJSON(t0))
	wrongAlg, _ := obj.CompactSerialize()

	hs, _ := jose.NewSigner(jose.SigningKey{Algorithm: jose.HS256, Key: []byte("0123456789abcdef0123456789abcdef")},
		(&jose.SignerOptions{}).WithType(ReceiptType).WithHeader("kid", k.ActiveKeyID()))
	obj, _ = hs.Sign(resultJSON(t0))
	hmac, _ := obj.CompactSerialize()

	noType, _ := jose.NewSigner(jose.SigningKey{Algorithm: jose.ES256, Key: k.keys[0].Key},
		(&jose.SignerOptions{}).WithHeader("kid", k.ActiveKeyID()))
	obj, _ = noType.Sign(resultJSON(t0))
	untyped, _ := obj.CompactSerialize()

	noTS, _ := k.Sign([]byte(`{"decision":"allow","receipt":{}}`))
	oldIAT, _ := k.Sign([]byte(fmt.Sprintf(`{"decision":"allow","iat":%d}`, t0.Add(-2*time.Hour).Unix())))

	cases := []struct {
		name string
		jws  string
		jwks []byte
		opts VerifyOptions
		want error
	}{
		{"tampered payload", tamperedPayload, jwks, at(t0), ErrSignature},
		{"tampered signature", tamperedSig, jwks, at(t0), ErrSignature},
		{"unknown kid", jws, jwksOf(t, other), at(t0), ErrUnknownKey},
		{"wrong key under the kid", jws, wrongJWKS, at(t0), ErrSignature},
		{"expired", jws, jwks, at(t0.Add(time.Hour + 61*time.Second)), ErrExpired},
		{"future", jws, jwks, at(t0.Add(-61 * time.Second)), ErrNotYetValid},
		{"ES384", wrongAlg, jwks, at(t0), ErrAlgorithm},
		{"HS256", hmac, jwks, at(t0), ErrAlgorithm},
		{"no typ", untyped, jwks, at(t0), ErrType},
		{"not a JWS", "abc", jwks, at(t0), ErrMalformed},
		{"no ts", noTS, jwks, at(t0), ErrNoTimestamp},
		{"expired by iat", oldIAT, jwks, at(t0), ErrExpired},
		{"bad key set", jws, []byte(`{"keys":[]}`), at(t0), ErrBadKeySet},
		{"custom max age", jws, jwks, VerifyOptions{MaxAge: time.Minute, Now: func() time.Time { return t0.Add(3 * time.Minute) }}, ErrExpired},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if _, _, err := Verify(c.jws, c.jwks, c.opts); !errors.Is(err, c.want) {
				t.Fatalf("got %v, want %v", err, c.want)
			}
		})
	}
}

func TestAgeBoundariesAndArchival(t *testing.T) {
	k := mustKey(t)
	jwks := jwksOf(t, k)
	jws, _ := k.Sign(resultJSON(t0))
	if _, _, err := Verify(jws, jwks, at(t0.Add(time.Hour+60*time.Second))); err != nil {
		t.Fatalf("at max age plus tolerance: %v", err)
	}
	if _, _, err := Verify(jws, jwks, at(t0.Add(-60*time.Second))); err != nil {
		t.Fatalf("within clock tolerance ahead: %v", err)
	}
	late := VerifyOptions{Archival: true, Now: func() time.Time { return t0.Add(1000 * time.Hour) }}
	if _, _, err := Verify(jws, jwks, late); err != nil {
		t.Fatalf("archival: %v", err)
	}
	// Archival drops only the age check: a tampered signature still fails.
	parts := strings.Split(jws, ".")
	bad := parts[0] + "." + base64.RawURLEncoding.EncodeToString([]byte(`{"decision":"allow"}`)) + "." + parts[2]
	if _, _, err := Verify(bad, jwks, late); !errors.Is(err, ErrSignature) {
		t.Fatalf("archival tampered: %v", err)
	}
}

func TestRotation(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "keys.json")
	k := mustKey(t)
	if err := k.Save(path); err != nil {
		t.Fatal(err)
	}
	st, _ := os.Stat(path)
	if st.Mode().Perm() != 0o600 {
		t.Fatalf("mode %v", st.Mode())
	}
	oldJWS, _ := k.Sign(resultJSON(t0))

	loaded, err := LoadKeySet(path)
	if err != nil {
		t.Fatal(err)
	}
	next := mustKey(t)
	loaded.Add(next)
	loaded.Add(next) // idempotent
	if err := loaded.Save(path); err != nil {
		t.Fatal(err)
	}
	again, err := LoadKeySet(path)
	if err != nil {
		t.Fatal(err)
	}
	if ids := again.KeyIDs(); len(ids) != 2 || ids[0] != k.ActiveKeyID() || ids[1] != next.ActiveKeyID() || again.ActiveKeyID() != next.ActiveKeyID() {
		t.Fatalf("ids %v", ids)
	}
	newJWS, _ := again.Sign(resultJSON(t0))
	jwks := jwksOf(t, again)
	if strings.Contains(string(jwks), `"d"`) {
		t.Fatal("public JWKS leaks a private key")
	}
	for _, j := range []string{oldJWS, newJWS} {
		if _, _, err := Verify(j, jwks, at(t0)); err != nil {
			t.Fatal(err)
		}
	}
	_, claims, _ := Verify(newJWS, jwks, at(t0))
	if claims.KeyID != next.ActiveKeyID() {
		t.Fatal("new receipts are not signed by the newest key")
	}
	// The private key file verifies too (its private parts are ignored).
	file, _ := os.ReadFile(path)
	if _, _, err := Verify(oldJWS, file, at(t0)); err != nil {
		t.Fatalf("verify with key file: %v", err)
	}
}

func TestLoadKeySetRejects(t *testing.T) {
	k := mustKey(t)
	var f jose.JSONWebKeySet
	_ = json.Unmarshal(func() []byte { b, _ := json.Marshal(jose.JSONWebKeySet{Keys: k.keys}); return b }(), &f)
	f.Keys[0].KeyID = "made-up"
	badKid, _ := json.Marshal(f)
	for name, data := range map[string][]byte{
		"not json":   []byte("nope"),
		"empty":      []byte(`{"keys":[]}`),
		"public key": jwksOf(t, k),
		"kid lies":   badKid,
	} {
		if _, err := ParseKeySet(data); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
}

func TestVerifyResult(t *testing.T) {
	k := mustKey(t)
	jwks := jwksOf(t, k)
	payload := resultJSON(t0)
	jws, _ := k.Sign(payload)
	full := withJWS(t, payload, jws)
	if err := VerifyResult(full, jwks, at(t0)); err != nil {
		t.Fatal(err)
	}
	edit := func(f func(m map[string]any)) []byte {
		var m map[string]any
		_ = json.Unmarshal(full, &m)
		f(m)
		b, _ := json.Marshal(m)
		return b
	}
	cases := map[string][]byte{
		"decision":            edit(func(m map[string]any) { m["decision"] = "block" }),
		"reasons[0]":          edit(func(m map[string]any) { m["reasons"] = []any{"allow: ok"} }),
		"reasons":             edit(func(m map[string]any) { m["reasons"] = []any{"allow: all rules passed", "x"} }),
		"chosen_option.payTo": edit(func(m map[string]any) { m["chosen_option"].(map[string]any)["payTo"] = "0xevil" }),
		"receipt.id":          edit(func(m map[string]any) { m["receipt"].(map[string]any)["id"] = "rcpt_2" }),
		"extra":               edit(func(m map[string]any) { m["extra"] = true }),
		"data_as_of":          edit(func(m map[string]any) { delete(m, "data_as_of") }),
	}
	for field, data := range cases {
		err := VerifyResult(data, jwks, at(t0))
		var fe *FieldError
		if !errors.As(err, &fe) || fe.Field != field || !errors.Is(err, ErrFieldAltered) {
			t.Errorf("%s: got %v", field, err)
		}
	}
	// A re-encoded number with the same value is not tampering.
	same := []byte(strings.Replace(string(full), `"options_evaluated":1`, `"options_evaluated":1.0`, 1))
	if err := VerifyResult(same, jwks, at(t0)); err != nil {
		t.Fatalf("1.0 vs 1: %v", err)
	}
	if err := VerifyResult(payload, jwks, at(t0)); err == nil {
		t.Fatal("result without jws accepted")
	}
	if err := VerifyResult(full, jwks, at(t0.Add(2*time.Hour))); !errors.Is(err, ErrExpired) {
		t.Fatalf("expired result: %v", err)
	}
}

func sha256Sum(b []byte) []byte {
	s := sha256.Sum256(b)
	return s[:]
}

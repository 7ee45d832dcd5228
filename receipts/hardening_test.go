package receipts

import (
	"crypto/ecdsa"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/go-jose/go-jose/v4"
)

// A key file whose d belongs to another key than its x, y (and kid) would sign receipts its own public set
// cannot verify: it is refused when loaded.
func TestKeyFileWithForeignPrivatePartRefused(t *testing.T) {
	a, _ := GenerateKey(t0)
	b, _ := GenerateKey(t0)
	pa, pb := a.keys[0].Key.(*ecdsa.PrivateKey), b.keys[0].Key.(*ecdsa.PrivateKey)
	//lint:ignore SA1019 a deliberately inconsistent key can only be built from the raw fields
	mixed := &ecdsa.PrivateKey{PublicKey: pa.PublicKey, D: pb.D}
	data, _ := json.Marshal(jose.JSONWebKeySet{Keys: []jose.JSONWebKey{{Key: mixed, KeyID: a.keys[0].KeyID, Algorithm: "ES256", Use: "sig"}}})
	if _, err := ParseKeySet(data); err == nil || !strings.Contains(err.Error(), "does not belong") {
		t.Fatalf("ParseKeySet = %v, want the mismatch refused", err)
	}
	good, _ := json.Marshal(jose.JSONWebKeySet{Keys: []jose.JSONWebKey{a.keys[0]}})
	if _, err := ParseKeySet(good); err != nil {
		t.Fatalf("a sound key file: %v", err)
	}
}

// VerifyResult compares exactly what a reader sees: a repeated member name (a reader keeping the first of
// two "decision"s reads another result) or a second JSON value after the result is refused.
func TestVerifyResultRefusesRepeatedNamesAndTrailingJSON(t *testing.T) {
	k, _ := GenerateKey(t0)
	jwks, _ := k.PublicJWKS()
	ts := t0.Format(time.RFC3339)
	payload := `{"decision":"block","reasons":["block: sanctions match"],"receipt":{"id":"rcpt_1","ts":"` + ts + `","input_sha256":"ab","decision":"block"}}`
	jws, _ := k.Sign([]byte(payload))
	full := strings.Replace(payload, `"decision":"block"}`, `"decision":"block","jws":"`+jws+`"}`, 1)
	opts := VerifyOptions{Now: func() time.Time { return t0 }}
	if err := VerifyResult([]byte(full), jwks, opts); err != nil {
		t.Fatalf("the genuine result: %v", err)
	}
	for name, forged := range map[string]string{
		"repeated name":   strings.Replace(full, `{"decision":"block"`, `{"decision":"allow","decision":"block"`, 1),
		"repeated nested": strings.Replace(full, `"id":"rcpt_1"`, `"id":"rcpt_2","id":"rcpt_1"`, 1),
		"trailing value":  full + `{"decision":"allow"}`,
	} {
		if err := VerifyResult([]byte(forged), jwks, opts); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
}

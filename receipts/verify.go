package receipts

import (
	"bytes"
	"crypto/ecdsa"
	"crypto/elliptic"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/go-jose/go-jose/v4"

	"github.com/payguard/payguard/x402/jsonscan"
)

// Verification errors. Verify wraps exactly one of them, so callers can use errors.Is.
var (
	ErrMalformed    = errors.New("receipt is not a well-formed compact JWS")
	ErrAlgorithm    = errors.New("receipt is not signed with ES256")
	ErrType         = errors.New("receipt JWS is not of type " + ReceiptType)
	ErrUnknownKey   = errors.New("receipt was signed by a key that is not in the pinned key set")
	ErrSignature    = errors.New("receipt signature does not verify (payload or signature altered, or signed by another key)")
	ErrExpired      = errors.New("receipt is older than the maximum age")
	ErrNotYetValid  = errors.New("receipt is dated in the future")
	ErrNoTimestamp  = errors.New("receipt payload has no usable receipt.ts")
	ErrBadKeySet    = errors.New("verification key set is unusable")
	ErrFieldAltered = errors.New("a returned field differs from the signed one")
)

// Defaults of VerifyOptions (SPEC §6.3: one hour, 60 seconds of clock tolerance).
const (
	DefaultMaxAge = time.Hour
	DefaultLeeway = 60 * time.Second
)

// VerifyOptions tune Verify. Zero values mean the defaults; Archival drops only the maximum-age check.
type VerifyOptions struct {
	MaxAge   time.Duration
	Leeway   time.Duration
	Archival bool
	Now      func() time.Time
}

// Claims are the receipt facts read from a verified payload.
type Claims struct {
	KeyID       string
	ID          string
	IssuedAt    time.Time
	Decision    string
	InputSHA256 string
}

type signedPayload struct {
	Decision string `json:"decision"`
	IAT      *int64 `json:"iat"` // used only when receipt.ts is absent`
	Receipt  struct {
		ID          string `json:"id"`
		TS          string `json:"ts"`
		InputSHA256 string `json:"input_sha256"`
		Decision    string `json:"decision"`
	} `json:"receipt"`
}

// Verify checks a compact JWS receipt against a pinned key set (a public JWKS, or a key file whose private
// parts are ignored) without any network request, and returns the signed payload and its claims. The age is
// measured from the signed receipt.ts (or a numeric iat member when a payload has no receipt.ts).
func Verify(jws string, jwks []byte, opts VerifyOptions) ([]byte, *Claims, error) {
	keys, err := publicKeys(jwks)
	if err != nil {
		return nil, nil, err
	}
	jws = strings.TrimSpace(jws)
	parts := strings.Split(jws, ".")
	if len(parts) != 3 {
		return nil, nil, fmt.Errorf("%w: %d dot-separated parts (want 3)", ErrMalformed, len(parts))
	}
	hdrJSON, err := base64.RawURLEncoding.DecodeString(parts[0])
	if err != nil {
		return nil, nil, fmt.Errorf("%w: header: %v", ErrMalformed, err)
	}
	var hdr struct {
		Alg  string   `json:"alg"`
		Kid  string   `json:"kid"`
		Typ  string   `json:"typ"`
		Crit []string `json:"crit"`
	}
	if err := json.Unmarshal(hdrJSON, &hdr); err != nil {
		return nil, nil, fmt.Errorf("%w: header: %v", ErrMalformed, err)
	}
	if hdr.Alg != string(jose.ES256) {
		return nil, nil, fmt.Errorf("%w: alg is %q", ErrAlgorithm, hdr.Alg)
	}
	if hdr.Typ != ReceiptType {
		return nil, nil, fmt.Errorf("%w: typ is %q", ErrType, hdr.Typ)
	}
	key, ok := keys[hdr.Kid]
	if !ok {
		return nil, nil, fmt.Errorf("%w: kid %q", ErrUnknownKey, hdr.Kid)
	}
	obj, err := jose.ParseSignedCompact(jws, []jose.SignatureAlgorithm{jose.ES256})
	if err != nil {
		return nil, nil, fmt.Errorf("%w: %v", ErrMalformed, err)
	}
	// One decision, one valid receipt: ECDSA's (r, n-s) twin of a signature verifies too, so only the low-S
	// one (what Sign writes) is accepted, as the JS and Python verifiers do.
	if sig, err := base64.RawURLEncoding.DecodeString(parts[2]); err == nil && isHighS(sig) {
		return nil, nil, fmt.Errorf("%w: high-S signature (kid %q); receipts carry the low-S one", ErrSignature, hdr.Kid)
	}
	payload, err := obj.Verify(key)
	if err != nil {
		return nil, nil, fmt.Errorf("%w (kid %q)", ErrSignature, hdr.Kid)
	}
	var p signedPayload
	if err := json.Unmarshal(payload, &p); err != nil {
		return nil, nil, fmt.Errorf("%w: payload is not a JSON result: %v", ErrNoTimestamp, err)
	}
	var ts time.Time
	switch {
	case p.Receipt.TS != "":
		if ts, err = time.Parse(time.RFC3339, p.Receipt.TS); err != nil {
			return nil, nil, fmt.Errorf("%w: %q", ErrNoTimestamp, p.Receipt.TS)
		}
	case p.IAT != nil:
		ts = time.Unix(*p.IAT, 0)
	default:
		return nil, nil, fmt.Errorf("%w: neither receipt.ts nor iat is present", ErrNoTimestamp)
	}
	now, maxAge, leeway := time.Now(), DefaultMaxAge, DefaultLeeway
	if opts.Now != nil {
		now = opts.Now()
	}
	if opts.MaxAge > 0 {
		maxAge = opts.MaxAge
	}
	if opts.Leeway > 0 {
		leeway = opts.Leeway
	}
	if ts.After(now.Add(leeway)) {
		return nil, nil, fmt.Errorf("%w: issued %s, now %s", ErrNotYetValid, ts.UTC().Format(time.RFC3339), now.UTC().Format(time.RFC3339))
	}
	if !opts.Archival {
		if age := now.Sub(ts); age > maxAge+leeway {
			return nil, nil, fmt.Errorf("%w: issued %s, %s ago (max %s; archival mode skips this check)",
				ErrExpired, ts.UTC().Format(time.RFC3339), age.Round(time.Second), maxAge)
		}
	}
	return payload, &Claims{KeyID: hdr.Kid, ID: p.Receipt.ID, IssuedAt: ts, Decision: p.Decision, InputSHA256: p.Receipt.InputSHA256}, nil
}

// publicKeys reads a JWK Set and returns its P-256 public keys by kid.
func publicKeys(jwks []byte) (map[string]*ecdsa.PublicKey, error) {
	var set jose.JSONWebKeySet
	if err := json.Unmarshal(jwks, &set); err != nil {
		return nil, fmt.Errorf("%w: not a JWK Set: %v", ErrBadKeySet, err)
	}
	keys := make(map[string]*ecdsa.PublicKey, len(set.Keys))
	for _, k := range set.Keys {
		pub := k.Public()
		ec, ok := pub.Key.(*ecdsa.PublicKey)
		if !ok || ec.Curve != elliptic.P256() || k.KeyID == "" {
			continue // not an ES256 verification key; ignored, like any key this verifier cannot use
		}
		keys[k.KeyID] = ec
	}
	if len(keys) == 0 {
		return nil, fmt.Errorf("%w: no P-256 key with a kid", ErrBadKeySet)
	}
	return keys, nil
}

// FieldError says which returned field differs from the signed payload.
type FieldError struct {
	Field string
}

func (e *FieldError) Error() string {
	return fmt.Sprintf("receipts: field %q differs from the signed payload (result altered after signing)", e.Field)
}

func (e *FieldError) Unwrap() error { return ErrFieldAltered }

// VerifyResult verifies a whole PreflightResult: the JWS in receipt.jws must verify (see Verify), and every
// field of the result, except receipt.jws itself, must equal the signed payload, with nothing added or
// removed. A difference is a *FieldError naming the first differing field.
func VerifyResult(resultJSON []byte, jwks []byte, opts VerifyOptions) error {
	dec := json.NewDecoder(bytes.NewReader(resultJSON))
	dec.UseNumber()
	var result map[string]any
	if err := dec.Decode(&result); err != nil || result == nil {
		return fmt.Errorf("receipts: not a JSON result object: %v", err)
	}
	// Only one JSON value, with each member once: a trailing value or a repeated name is bytes a reader may
	// take differently from this comparison (one that keeps the first of two "decision"s reads another result).
	if _, err := dec.Token(); err != io.EOF {
		return errors.New("receipts: the result is followed by more JSON")
	}
	if err := noRepeatedNames(resultJSON); err != nil {
		return err
	}
	receipt, _ := result["receipt"].(map[string]any)
	jws, _ := receipt["jws"].(string)
	if jws == "" {
		return errors.New("receipts: the result has no receipt.jws")
	}
	payload, _, err := Verify(jws, jwks, opts)
	if err != nil {
		return err
	}
	delete(receipt, "jws")
	pdec := json.NewDecoder(bytes.NewReader(payload))
	pdec.UseNumber()
	var signed map[string]any
	if err := pdec.Decode(&signed); err != nil {
		return fmt.Errorf("receipts: signed payload is not a JSON object: %v", err)
	}
	if field := firstDifference("", result, signed); field != "" {
		return &FieldError{Field: field}
	}
	return nil
}

// noRepeatedNames reports an object anywhere in the JSON value v that names a member twice. jsonscan
// splits objects and arrays as encoding/json reads them, keeping repeated names.
func noRepeatedNames(v []byte) error {
	if members, ok := jsonscan.Object(v); ok {
		seen := make(map[string]bool, len(members))
		for _, m := range members {
			if seen[m.Name] {
				return fmt.Errorf("receipts: member %q appears twice in one object", m.Name)
			}
			seen[m.Name] = true
			if err := noRepeatedNames(m.Value); err != nil {
				return err
			}
		}
		return nil
	}
	elems, _ := jsonscan.Array(v)
	for _, e := range elems {
		if err := noRepeatedNames(e); err != nil {
			return err
		}
	}
	return nil
}

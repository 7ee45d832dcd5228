package receipts

import (
	"bytes"
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"fmt"
	"math/big"
	"slices"
	"strings"
	"unsafe"

	"github.com/go-jose/go-jose/v4"
)

// ErrSigningUnavailable means a receipt, a decision's or a paid call's (an offer, a delivery receipt), could
// not be signed: no signing key, or signing failed. It is the one error for it across the engine
// (preflight), the pay-per-call server (server/core, server/fees) and their channels, which answer 503
// receipt_signing_unavailable and never charge.
var ErrSigningUnavailable = errors.New("receipt signing unavailable")

// ErrNoSigner is returned by Sign when the key set has no usable signing key.
var ErrNoSigner = errors.New("receipts: no active signing key")

// Sign returns payload as a compact JWS (ES256) whose protected header names the active key (kid) and the
// receipt type (typ). The preflight engine passes the JSON of the result without its jws member, so the
// signature binds every returned field.
func (k *KeySet) Sign(payload []byte) (string, error) {
	k.mu.RLock()
	s := k.signer
	k.mu.RUnlock()
	if s == nil {
		return "", ErrNoSigner
	}
	return s.sign(payload)
}

// compactSigner writes an ES256 compact JWS for one key. It is what go-jose's Sign + CompactSerialize
// produce, without their per-call work (header JSON marshalled again, the payload base64-encoded twice,
// intermediate objects): receipts are signed on every decision, and that overhead was a quarter of the
// signing cost. The protected header is taken from go-jose itself once, so the bytes stay go-jose's; the
// signature is crypto/ecdsa's (deterministic, RFC 6979; see sign), in JWS's fixed-width R || S form (RFC 7518
// section 3.4).
type compactSigner struct {
	priv   *ecdsa.PrivateKey
	header string // base64url of the protected header, without the trailing '.'
}

func newCompactSigner(key jose.JSONWebKey) (*compactSigner, error) {
	priv, ok := key.Key.(*ecdsa.PrivateKey)
	if !ok || priv.Curve.Params().BitSize != 256 {
		return nil, errors.New("receipts: signer: not a private P-256 key")
	}
	opts := (&jose.SignerOptions{}).WithType(ReceiptType).WithHeader("kid", key.KeyID)
	js, err := jose.NewSigner(jose.SigningKey{Algorithm: jose.ES256, Key: priv}, opts)
	if err != nil {
		return nil, fmt.Errorf("receipts: signer: %w", err)
	}
	obj, err := js.Sign([]byte("{}"))
	if err != nil {
		return nil, fmt.Errorf("receipts: signer: %w", err)
	}
	compact, err := obj.CompactSerialize()
	if err != nil {
		return nil, fmt.Errorf("receipts: signer: %w", err)
	}
	header, _, ok := strings.Cut(compact, ".")
	if !ok || header == "" {
		return nil, errors.New("receipts: signer: go-jose wrote no protected header")
	}
	if !base64URL(header) { // AppendsPlainJWS's promise rests on it
		return nil, errors.New("receipts: signer: go-jose's protected header is not base64url")
	}
	return &compactSigner{priv: priv, header: header}, nil
}

// base64URL reports whether s is made of base64url's alphabet only (no padding).
func base64URL(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !('A' <= c && c <= 'Z' || 'a' <= c && c <= 'z' || '0' <= c && c <= '9' || c == '-' || c == '_') {
			return false
		}
	}
	return true
}

// AppendsPlainJWS reports that every JWS Sign and AppendSign write is base64url and two dots only, which
// JSON writes as they are: the protected header is checked once when the signer is made (newCompactSigner),
// and the payload and signature are base64url-encoded here. The preflight engine then writes the JWS into
// the answer without scanning its 1–2 KB again (it scans a signer's output that makes no such promise).
func (k *KeySet) AppendsPlainJWS() bool { return true }

// p256HalfOrder is n/2 for P-256: an ECDSA S above it is "high".
var p256HalfOrder = new(big.Int).Rsh(elliptic.P256().Params().N, 1)

// isHighS reports whether a raw ES256 signature (R || S) has S above n/2.
func isHighS(sig []byte) bool {
	return len(sig) == es256Size && new(big.Int).SetBytes(sig[32:]).Cmp(p256HalfOrder) > 0
}

// es256Size is the byte length of an ES256 signature: R and S, each left-padded to 32 bytes.
const es256Size = 64

// AppendSign is Sign that appends the compact JWS to dst (growing it as append does) instead of returning
// it as a new string: a caller that puts the JWS into a larger document (the preflight engine, into the
// result's JSON) writes it there once. JWSLen says how many bytes it appends. On an error dst is returned
// unchanged in length.
func (k *KeySet) AppendSign(dst, payload []byte) ([]byte, error) {
	k.mu.RLock()
	s := k.signer
	k.mu.RUnlock()
	if s == nil {
		return dst, ErrNoSigner
	}
	return s.appendSign(dst, payload)
}

// JWSLen is the length of the compact JWS that Sign and AppendSign write for a payload of n bytes with the
// active key (0 with none).
func (k *KeySet) JWSLen(n int) int {
	k.mu.RLock()
	s := k.signer
	k.mu.RUnlock()
	if s == nil {
		return 0
	}
	return s.jwsLen(n)
}

func (c *compactSigner) jwsLen(n int) int {
	enc := base64.RawURLEncoding
	return len(c.header) + 1 + enc.EncodedLen(n) + 1 + enc.EncodedLen(es256Size)
}

func (c *compactSigner) sign(payload []byte) (string, error) {
	buf, err := c.appendSign(make([]byte, 0, c.jwsLen(len(payload))), payload)
	if err != nil {
		return "", err
	}
	// buf becomes the string without a copy (as strings.Builder does): the JWS is longer than the receipt's
	// JSON, a few KB on every decision, and nothing writes to buf after this point.
	return unsafe.String(unsafe.SliceData(buf), len(buf)), nil
}

func (c *compactSigner) appendSign(dst, payload []byte) ([]byte, error) {
	enc := base64.RawURLEncoding
	start := len(dst)
	buf := slices.Grow(dst, c.jwsLen(len(payload)))
	buf = append(buf, c.header...)
	buf = append(buf, '.')
	buf = enc.AppendEncode(buf, payload)
	digest := sha256.Sum256(buf[start:])
	// A nil random source makes crypto/ecdsa sign deterministically (RFC 6979, its HMAC-SHA-256 nonce): no
	// entropy is drawn per signature, and a weak or failing random source can never leak the key through a
	// repeated nonce. The same key and signing input give the same signature, which reveals nothing here:
	// every receipt has its own id and time, so no two signing inputs are equal. Any ES256 verifier accepts
	// it (the nonce is the signer's business); it is about a fifth cheaper than the hedged signature
	// (docs/benchmarks/server.md, section serve3).
	der, err := c.priv.Sign(nil, digest[:], crypto.SHA256)
	if err != nil {
		return dst, fmt.Errorf("receipts: sign: %w", err)
	}
	var sig [es256Size]byte
	if !derToRaw(der, &sig) {
		return dst, errors.New("receipts: sign: crypto/ecdsa wrote an unexpected signature encoding")
	}
	// (r, n-s) verifies as well as (r, s): the low one of the two is the receipt's one encoding, the only
	// one Verify and the JS and Python verifiers accept (lowS).
	lowSRaw(&sig)
	buf = append(buf, '.')
	return enc.AppendEncode(buf, sig[:]), nil
}

// derToRaw writes an ASN.1 DER ECDSA-Sig-Value (SEQUENCE { r INTEGER, s INTEGER }, as crypto/ecdsa encodes
// it) into sig as R || S, each left-padded to 32 bytes. It accepts only what a P-256 signature can be: short
// lengths, positive integers of at most 32 significant bytes, nothing after s.
func derToRaw(der []byte, sig *[es256Size]byte) bool {
	if len(der) < 2 || der[0] != 0x30 || int(der[1]) != len(der)-2 || der[1] >= 0x80 {
		return false
	}
	rest := der[2:]
	for i := range 2 {
		if len(rest) < 2 || rest[0] != 0x02 || rest[1] >= 0x80 || int(rest[1]) > len(rest)-2 || rest[1] == 0 {
			return false
		}
		v := rest[2 : 2+rest[1]]
		rest = rest[2+rest[1]:]
		if v[0]&0x80 != 0 { // negative: never for r or s
			return false
		}
		if len(v) > 1 && v[0] == 0 {
			v = v[1:]
		}
		if len(v) > 32 {
			return false
		}
		copy(sig[i*32+32-len(v):(i+1)*32], v)
	}
	return len(rest) == 0
}

// p256N and p256HalfN are P-256's group order n and n/2, big-endian.
var (
	p256N     = [32]byte(elliptic.P256().Params().N.FillBytes(make([]byte, 32)))
	p256HalfN = [32]byte(new(big.Int).Rsh(elliptic.P256().Params().N, 1).FillBytes(make([]byte, 32)))
)

// lowSRaw replaces S of a raw ES256 signature with n-S when S is above n/2.
func lowSRaw(sig *[es256Size]byte) {
	s := sig[32:]
	if bytes.Compare(s, p256HalfN[:]) <= 0 {
		return
	}
	var borrow int
	for i := 31; i >= 0; i-- {
		d := int(p256N[i]) - int(s[i]) - borrow
		borrow = 0
		if d < 0 {
			d += 256
			borrow = 1
		}
		s[i] = byte(d)
	}
}

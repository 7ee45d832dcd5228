// Package receipts signs preflight decisions as compact JWS (go-jose) and verifies them offline.
package receipts

// Contract for the rest of payguard (bodies in keys.go, sign.go, verify.go):
//
//   type KeySet struct{...}                                // private keys with kid; the newest is the active signer
//   func GenerateKey(now time.Time) (*KeySet, error)       // ES256 (P-256), kid derived from the public key (RFC 7638 thumbprint)
//   func LoadKeySet(path string) (*KeySet, error)          // a JWK Set JSON file with private keys (mode 0600 on write)
//   func (k *KeySet) Save(path string) error
//   func (k *KeySet) Add(other *KeySet)                    // rotation: the added key becomes active, old ones still verify
//   func (k *KeySet) Sign(payload []byte) (string, error)  // compact JWS, header kid + typ "payguard-receipt+jws"
//   func (k *KeySet) PublicJWKS() ([]byte, error)          // the /.well-known/payguard-keys.json document
//
//   type VerifyOptions struct { MaxAge time.Duration (default 1h); Leeway time.Duration (default 60s); Archival bool; Now func() time.Time }
//   func Verify(jws string, jwks []byte, opts VerifyOptions) (payload []byte, claims *Claims, err error) // no network
//   func VerifyResult(resultJSON []byte, jwks []byte, opts VerifyOptions) error  // a whole PreflightResult: every field must equal the signed one
//
// As built (additive): ParseKeySet(data), (*KeySet).ActiveKeyID(), KeyIDs(); ReceiptType; Claims{KeyID, ID,
// IssuedAt, Decision, InputSHA256}; errors ErrMalformed, ErrAlgorithm, ErrType, ErrUnknownKey, ErrSignature,
// ErrExpired, ErrNotYetValid, ErrNoTimestamp, ErrBadKeySet, and *FieldError{Field} (wraps ErrFieldAltered)
// from VerifyResult. Verify also requires typ "payguard-receipt+jws", and a key file's kid must equal its
// RFC 7638 thumbprint. Archival keeps the "dated in the future" check (beyond the 60 s tolerance).

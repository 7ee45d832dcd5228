// Package receipts signs preflight decisions as compact JWS (go-jose) and verifies them offline.
//
// A KeySet holds private keys, each with a kid (its RFC 7638 thumbprint; a key file's kid must equal it);
// the newest is the active signer. GenerateKey makes an ES256 (P-256) key; LoadKeySet and Save read and
// write a JWK Set file with private keys (mode 0600); LoadOrCreate is what a long-running process starts
// with (a key generated and saved on first run); Add rotates (the added key becomes active, old ones still
// verify); PublicJWKS is the /.well-known/payguard-keys.json document. Sign makes a compact JWS with header
// kid and typ "payguard-receipt+jws".
//
// Verification needs no network: Verify checks a JWS against a JWK Set (typ, algorithm, kid, signature,
// and its age: MaxAge 1 h and Leeway 60 s by default; Archival drops only the age check and keeps the
// "dated in the future" one), returning the payload and its Claims; VerifyResult checks a whole
// PreflightResult, every field of which must equal the signed one (a *FieldError names the altered field).
// The errors are ErrMalformed, ErrAlgorithm, ErrType, ErrUnknownKey, ErrSignature, ErrExpired,
// ErrNotYetValid, ErrNoTimestamp, ErrBadKeySet and ErrFieldAltered.
package receipts

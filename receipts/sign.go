package receipts

import (
	"errors"
	"fmt"
)

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
	obj, err := s.Sign(payload)
	if err != nil {
		return "", fmt.Errorf("receipts: sign: %w", err)
	}
	jws, err := obj.CompactSerialize()
	if err != nil {
		return "", fmt.Errorf("receipts: sign: %w", err)
	}
	return jws, nil
}

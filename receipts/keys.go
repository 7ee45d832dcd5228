package receipts

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/go-jose/go-jose/v4"
)

// ReceiptType is the JWS "typ" header of a payguard receipt.
const ReceiptType = "payguard-receipt+jws"

// KeySet holds receipt signing keys. The last key is the active signer; every key stays in the public JWKS
// so that receipts signed before a rotation still verify. A KeySet is safe for concurrent use.
type KeySet struct {
	mu     sync.RWMutex
	keys   []jose.JSONWebKey // private ES256 keys, oldest first
	signer *compactSigner    // for keys[len(keys)-1], built once
}

// keyFile is the on-disk form: a JWK Set whose keys carry their private parts. "created" is informational.
type keyFile struct {
	Keys []json.RawMessage `json:"keys"`
}

// GenerateKey returns a KeySet with one new ES256 (P-256) key whose kid is its RFC 7638 thumbprint.
// The JWK format has no creation-time member, so a key's age is recorded only by its position in the set
// (newest last); now is accepted so that callers pass their injected clock.
func GenerateKey(now time.Time) (*KeySet, error) {
	_ = now
	priv, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, fmt.Errorf("receipts: generate key: %w", err)
	}
	jwk := jose.JSONWebKey{Key: priv, Algorithm: string(jose.ES256), Use: "sig"}
	kid, err := thumbprint(jwk)
	if err != nil {
		return nil, err
	}
	jwk.KeyID = kid
	k := &KeySet{keys: []jose.JSONWebKey{jwk}}
	if err := k.rebuildSigner(); err != nil {
		return nil, err
	}
	return k, nil
}

func thumbprint(jwk jose.JSONWebKey) (string, error) {
	pub := jwk.Public()
	tp, err := pub.Thumbprint(crypto.SHA256)
	if err != nil {
		return "", fmt.Errorf("receipts: key thumbprint: %w", err)
	}
	return base64.RawURLEncoding.EncodeToString(tp), nil
}

// LoadKeySet reads a JWK Set file with private ES256 keys (as written by Save). Each key's kid must equal its
// thumbprint, so a hand-edited file cannot sign under another key's name.
func LoadKeySet(path string) (*KeySet, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("receipts: read key file: %w", err)
	}
	k, err := ParseKeySet(data)
	if err != nil {
		return nil, fmt.Errorf("receipts: key file %s: %w", path, err)
	}
	return k, nil
}

// ParseKeySet parses the key file format (see LoadKeySet).
func ParseKeySet(data []byte) (*KeySet, error) {
	var f keyFile
	if err := json.Unmarshal(data, &f); err != nil {
		return nil, fmt.Errorf("not a JWK Set: %w", err)
	}
	if len(f.Keys) == 0 {
		return nil, errors.New("the JWK Set has no keys")
	}
	k := &KeySet{}
	for i, raw := range f.Keys {
		var jwk jose.JSONWebKey
		if err := jwk.UnmarshalJSON(raw); err != nil {
			return nil, fmt.Errorf("key %d: %w", i, err)
		}
		priv, ok := jwk.Key.(*ecdsa.PrivateKey)
		if !ok || priv.Curve != elliptic.P256() {
			return nil, fmt.Errorf("key %d (kid %q): not a private P-256 key (ES256 signing needs one)", i, jwk.KeyID)
		}
		kid, err := thumbprint(jwk)
		if err != nil {
			return nil, err
		}
		if jwk.KeyID != kid {
			return nil, fmt.Errorf("key %d: kid %q is not the key's RFC 7638 thumbprint %q", i, jwk.KeyID, kid)
		}
		if !keyPairMatches(priv) {
			// The thumbprint covers x and y only: a d from another key would load, sign, and publish a key set
			// under which none of its receipts verify.
			return nil, fmt.Errorf("key %d (kid %q): the private key d does not belong to its public key x, y", i, jwk.KeyID)
		}
		jwk.Algorithm, jwk.Use = string(jose.ES256), "sig"
		k.keys = append(k.keys, jwk)
	}
	if err := k.rebuildSigner(); err != nil {
		return nil, err
	}
	return k, nil
}

// Save writes the key set, private keys included, with mode 0600. It writes a temporary file and renames it,
// so a crash never leaves a half-written key file.
func (k *KeySet) Save(path string) error {
	k.mu.RLock()
	data, err := json.MarshalIndent(jose.JSONWebKeySet{Keys: k.keys}, "", "  ")
	k.mu.RUnlock()
	if err != nil {
		return fmt.Errorf("receipts: encode key file: %w", err)
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), ".payguard-keys-*")
	if err != nil {
		return fmt.Errorf("receipts: write key file: %w", err)
	}
	defer os.Remove(tmp.Name())
	if err := tmp.Chmod(0o600); err != nil {
		tmp.Close()
		return fmt.Errorf("receipts: write key file: %w", err)
	}
	if _, err := tmp.Write(append(data, '\n')); err != nil {
		tmp.Close()
		return fmt.Errorf("receipts: write key file: %w", err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("receipts: write key file: %w", err)
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		return fmt.Errorf("receipts: write key file: %w", err)
	}
	return nil
}

// Add appends other's keys (rotation): the last added key becomes the active signer, and the old keys keep
// verifying. A key already present is not added twice.
func (k *KeySet) Add(other *KeySet) {
	other.mu.RLock()
	add := append([]jose.JSONWebKey(nil), other.keys...)
	other.mu.RUnlock()
	k.mu.Lock()
	defer k.mu.Unlock()
	for _, n := range add {
		dup := false
		for _, have := range k.keys {
			if have.KeyID == n.KeyID {
				dup = true
				break
			}
		}
		if !dup {
			k.keys = append(k.keys, n)
		}
	}
	// The keys were valid signers when they were made or loaded, so this cannot fail in practice; if it
	// does, signer stays nil and Sign reports it.
	if err := k.rebuildSignerLocked(); err != nil {
		k.signer = nil
	}
}

// ActiveKeyID is the kid of the key that signs.
func (k *KeySet) ActiveKeyID() string {
	k.mu.RLock()
	defer k.mu.RUnlock()
	if len(k.keys) == 0 {
		return ""
	}
	return k.keys[len(k.keys)-1].KeyID
}

// KeyIDs lists every kid, oldest first.
func (k *KeySet) KeyIDs() []string {
	k.mu.RLock()
	defer k.mu.RUnlock()
	ids := make([]string, len(k.keys))
	for i, key := range k.keys {
		ids[i] = key.KeyID
	}
	return ids
}

// PublicJWKS returns the public JWK Set document (/.well-known/payguard-keys.json): every key, public parts
// only.
func (k *KeySet) PublicJWKS() ([]byte, error) {
	k.mu.RLock()
	defer k.mu.RUnlock()
	set := jose.JSONWebKeySet{Keys: make([]jose.JSONWebKey, len(k.keys))}
	for i, key := range k.keys {
		set.Keys[i] = key.Public()
	}
	return json.Marshal(set)
}

func (k *KeySet) rebuildSigner() error {
	k.mu.Lock()
	defer k.mu.Unlock()
	return k.rebuildSignerLocked()
}

func (k *KeySet) rebuildSignerLocked() error {
	s, err := newCompactSigner(k.keys[len(k.keys)-1])
	if err != nil {
		return err
	}
	k.signer = s
	return nil
}

// keyPairMatches reports whether priv's public point is d·G.
func keyPairMatches(priv *ecdsa.PrivateKey) bool {
	derived, err := priv.ECDH()
	if err != nil {
		return false
	}
	stated, err := priv.PublicKey.ECDH()
	return err == nil && derived.PublicKey().Equal(stated)
}

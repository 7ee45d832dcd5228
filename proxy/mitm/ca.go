// Package mitm holds payguard's interception CA (ECDSA P-256, never goproxy's built-in CA, whose key is
// public) and the bounded, single-flight cache of leaf certificates it signs.
package mitm

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"fmt"
	"io/fs"
	"math/big"
	"os"
	"path/filepath"
	"time"
)

// CA file names written by NewCA's callers (`payguard ca init`, first run).
const (
	CACertFileName = "payguard-ca.pem"
	CAKeyFileName  = "payguard-ca-key.pem"
)

// NewCA makes a fresh ECDSA P-256 certificate authority for MITM interception, valid for ten years. It
// returns the certificate and key as PEM. The key must stay private: whoever holds it can impersonate any
// site to agents that trust the certificate.
func NewCA(commonName string, now time.Time) (certPEM, keyPEM []byte, err error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, nil, fmt.Errorf("mitm: generate key: %w", err)
	}
	serial, err := randomSerial()
	if err != nil {
		return nil, nil, err
	}
	tmpl := &x509.Certificate{
		SerialNumber:          serial,
		Subject:               pkix.Name{CommonName: commonName, Organization: []string{"payguard"}},
		NotBefore:             now.Add(-time.Hour),
		NotAfter:              now.AddDate(10, 0, 0),
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageCRLSign | x509.KeyUsageDigitalSignature,
		BasicConstraintsValid: true,
		IsCA:                  true,
		MaxPathLenZero:        true,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		return nil, nil, fmt.Errorf("mitm: create certificate: %w", err)
	}
	keyDER, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		return nil, nil, fmt.Errorf("mitm: encode key: %w", err)
	}
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}),
		pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: keyDER}), nil
}

// WriteCA writes a CA pair: the certificate world-readable (agents must trust it), the key mode 0600.
// Existing files are never overwritten.
func WriteCA(certPath, keyPath string, certPEM, keyPEM []byte) error {
	for _, p := range []string{certPath, keyPath} {
		if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
			return fmt.Errorf("mitm: %w", err)
		}
	}
	if err := writeNew(keyPath, keyPEM, 0o600); err != nil {
		return err
	}
	if err := writeNew(certPath, certPEM, 0o644); err != nil {
		_ = os.Remove(keyPath)
		return err
	}
	return nil
}

func writeNew(path string, data []byte, mode os.FileMode) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, mode)
	if err != nil {
		return fmt.Errorf("mitm: %w", err)
	}
	if _, err := f.Write(data); err != nil {
		f.Close()
		return fmt.Errorf("mitm: write %s: %w", path, err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("mitm: write %s: %w", path, err)
	}
	return nil
}

// LoadCA reads a CA pair written by WriteCA (or any PEM certificate with a CA flag and an ECDSA, RSA or
// Ed25519 key) and checks that the key belongs to the certificate.
func LoadCA(certPath, keyPath string) (*tls.Certificate, error) {
	certPEM, err := os.ReadFile(certPath)
	if err != nil {
		return nil, fmt.Errorf("mitm: %w", err)
	}
	keyPEM, err := os.ReadFile(keyPath)
	if err != nil {
		return nil, fmt.Errorf("mitm: %w", err)
	}
	return ParseCA(certPEM, keyPEM)
}

// ParseCA is LoadCA on PEM bytes.
func ParseCA(certPEM, keyPEM []byte) (*tls.Certificate, error) {
	pair, err := tls.X509KeyPair(certPEM, keyPEM)
	if err != nil {
		return nil, fmt.Errorf("mitm: %w", err)
	}
	leaf, err := x509.ParseCertificate(pair.Certificate[0])
	if err != nil {
		return nil, fmt.Errorf("mitm: parse certificate: %w", err)
	}
	if !leaf.IsCA {
		return nil, errors.New("mitm: the certificate is not a CA (basicConstraints CA:FALSE)")
	}
	pair.Leaf = leaf
	return &pair, nil
}

// LoadOrCreateCA loads the CA pair, or generates one when both files are missing. created reports the
// latter so the caller can tell the operator which certificate agents must trust.
func LoadOrCreateCA(certPath, keyPath string, now time.Time) (ca *tls.Certificate, created bool, err error) {
	_, certErr := os.Stat(certPath)
	_, keyErr := os.Stat(keyPath)
	if errors.Is(certErr, fs.ErrNotExist) && errors.Is(keyErr, fs.ErrNotExist) {
		certPEM, keyPEM, err := NewCA("payguard MITM CA", now)
		if err != nil {
			return nil, false, err
		}
		if err := WriteCA(certPath, keyPath, certPEM, keyPEM); err != nil {
			return nil, false, err
		}
		ca, err := ParseCA(certPEM, keyPEM)
		return ca, true, err
	}
	ca, err = LoadCA(certPath, keyPath)
	return ca, false, err
}

func randomSerial() (*big.Int, error) {
	s, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 127))
	if err != nil {
		return nil, fmt.Errorf("mitm: serial: %w", err)
	}
	return s.Add(s, big.NewInt(1)), nil
}

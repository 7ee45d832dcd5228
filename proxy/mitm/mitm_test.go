package mitm

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/x509"
	"encoding/pem"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"
)

func newTestCA(t *testing.T) (certPath, keyPath string) {
	t.Helper()
	dir := t.TempDir()
	certPEM, keyPEM, err := NewCA("test CA", time.Now())
	if err != nil {
		t.Fatal(err)
	}
	certPath, keyPath = filepath.Join(dir, "ca", CACertFileName), filepath.Join(dir, "ca", CAKeyFileName)
	if err := WriteCA(certPath, keyPath, certPEM, keyPEM); err != nil {
		t.Fatal(err)
	}
	return certPath, keyPath
}

func TestCAFiles(t *testing.T) {
	certPath, keyPath := newTestCA(t)
	st, err := os.Stat(keyPath)
	if err != nil {
		t.Fatal(err)
	}
	if st.Mode().Perm() != 0o600 {
		t.Errorf("key mode = %v, want 0600", st.Mode().Perm())
	}
	ca, err := LoadCA(certPath, keyPath)
	if err != nil {
		t.Fatal(err)
	}
	pub, ok := ca.Leaf.PublicKey.(*ecdsa.PublicKey)
	if !ok || pub.Curve != elliptic.P256() || !ca.Leaf.IsCA {
		t.Errorf("CA is not an ECDSA P-256 CA: %T CA=%v", ca.Leaf.PublicKey, ca.Leaf.IsCA)
	}
	// Never overwritten.
	certPEM, keyPEM, _ := NewCA("other", time.Now())
	if err := WriteCA(certPath, keyPath, certPEM, keyPEM); err == nil {
		t.Error("WriteCA overwrote an existing CA")
	}
}

func TestLoadOrCreateCA(t *testing.T) {
	dir := t.TempDir()
	c, k := filepath.Join(dir, "c.pem"), filepath.Join(dir, "k.pem")
	first, created, err := LoadOrCreateCA(c, k, time.Now())
	if err != nil || !created {
		t.Fatalf("first run: created=%v err=%v", created, err)
	}
	again, created, err := LoadOrCreateCA(c, k, time.Now())
	if err != nil || created || !again.Leaf.Equal(first.Leaf) {
		t.Fatalf("second run: created=%v err=%v same=%v", created, err, again.Leaf.Equal(first.Leaf))
	}
	os.Remove(k)
	if _, _, err := LoadOrCreateCA(c, k, time.Now()); err == nil {
		t.Error("a CA certificate without its key was accepted (or silently replaced)")
	}
}

func TestParseCARejectsLeaf(t *testing.T) {
	certPath, keyPath := newTestCA(t)
	ca, _ := LoadCA(certPath, keyPath)
	cache, _ := NewCertCache(ca, 4, time.Now)
	leaf, err := cache.Get("shop.example")
	if err != nil {
		t.Fatal(err)
	}
	keyPEM, _ := os.ReadFile(keyPath)
	leafPEM := pemCert(leaf.Certificate[0])
	if _, err := ParseCA(leafPEM, keyPEM); err == nil {
		t.Error("a non-CA certificate was accepted as the CA")
	}
}

func TestCertCacheSignsVerifiableLeaves(t *testing.T) {
	certPath, keyPath := newTestCA(t)
	ca, err := LoadCA(certPath, keyPath)
	if err != nil {
		t.Fatal(err)
	}
	cache, err := NewCertCache(ca, 2, time.Now)
	if err != nil {
		t.Fatal(err)
	}
	roots := x509.NewCertPool()
	roots.AddCert(ca.Leaf)
	for _, host := range []string{"shop.example", "127.0.0.1"} {
		c, err := cache.Get(host)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := c.Leaf.Verify(x509.VerifyOptions{DNSName: host, Roots: roots}); err != nil {
			t.Errorf("%s: leaf does not verify against the CA: %v", host, err)
		}
	}
	a1, _ := cache.Get("a.example")
	a2, _ := cache.Get("a.example")
	if a1 != a2 {
		t.Error("a cached leaf was re-signed")
	}
	cache.Get("b.example")
	cache.Get("c.example")
	if n := cache.Len(); n != 2 {
		t.Errorf("cache holds %d leaves, bound is 2", n)
	}
	if a3, _ := cache.Get("a.example"); a3 == a1 {
		t.Error("the least recently used leaf was not evicted")
	}
}

func TestCertCacheSingleFlight(t *testing.T) {
	certPath, keyPath := newTestCA(t)
	ca, _ := LoadCA(certPath, keyPath)
	cache, _ := NewCertCache(ca, 16, time.Now)
	var wg sync.WaitGroup
	got := make([]any, 32)
	for i := range got {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c, err := cache.Get("same.example")
			if err != nil {
				t.Error(err)
			}
			got[i] = c
		}()
	}
	wg.Wait()
	for _, c := range got[1:] {
		if c != got[0] {
			t.Fatal("concurrent requests for one host got different leaves: signed more than once")
		}
	}
}

func pemCert(der []byte) []byte {
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})
}

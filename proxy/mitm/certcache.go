package mitm

import (
	"container/list"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"fmt"
	"net"
	"sync"
	"time"
)

// leafLifetime is how long a MITM leaf certificate is valid. Leaves are re-signed once they are in the
// last tenth of their life.
const leafLifetime = 7 * 24 * time.Hour

// CertCache signs MITM leaf certificates with the CA and keeps the most recently used ones. It is bounded
// (LRU) and single-flight: concurrent handshakes for one host wait for one signature.
type CertCache struct {
	ca   *tls.Certificate
	max  int
	now  func() time.Time
	key  *ecdsa.PrivateKey // one leaf key for every host: signing is the cost worth caching, not keygen
	mu   sync.Mutex
	lru  *list.List // of *certEntry, most recent first
	byCN map[string]*list.Element
	busy map[string]*flight
}

type certEntry struct {
	host string
	cert *tls.Certificate
}

type flight struct {
	done chan struct{}
	cert *tls.Certificate
	err  error
}

// NewCertCache makes a cache of at most max leaves signed by ca (as returned by ParseCA).
func NewCertCache(ca *tls.Certificate, max int, now func() time.Time) (*CertCache, error) {
	if ca == nil || ca.Leaf == nil {
		return nil, fmt.Errorf("mitm: a parsed CA is required")
	}
	if now == nil {
		now = time.Now
	}
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, fmt.Errorf("mitm: leaf key: %w", err)
	}
	if max < 1 {
		max = 1
	}
	return &CertCache{ca: ca, max: max, now: now, key: key, lru: list.New(),
		byCN: map[string]*list.Element{}, busy: map[string]*flight{}}, nil
}

// Get returns a leaf certificate for host (a DNS name or an IP address), signing one at most once at a
// time per host.
func (c *CertCache) Get(host string) (*tls.Certificate, error) {
	c.mu.Lock()
	if el, ok := c.byCN[host]; ok {
		e := el.Value.(*certEntry)
		if c.now().Before(e.cert.Leaf.NotAfter.Add(-leafLifetime / 10)) {
			c.lru.MoveToFront(el)
			c.mu.Unlock()
			return e.cert, nil
		}
		c.lru.Remove(el)
		delete(c.byCN, host)
	}
	if f, ok := c.busy[host]; ok {
		c.mu.Unlock()
		<-f.done
		return f.cert, f.err
	}
	f := &flight{done: make(chan struct{})}
	c.busy[host] = f
	c.mu.Unlock()

	f.cert, f.err = c.sign(host)

	c.mu.Lock()
	delete(c.busy, host)
	if f.err == nil {
		c.byCN[host] = c.lru.PushFront(&certEntry{host: host, cert: f.cert})
		for c.lru.Len() > c.max {
			old := c.lru.Remove(c.lru.Back()).(*certEntry)
			delete(c.byCN, old.host)
		}
	}
	c.mu.Unlock()
	close(f.done)
	return f.cert, f.err
}

// Len is the number of cached leaves.
func (c *CertCache) Len() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.lru.Len()
}

func (c *CertCache) sign(host string) (*tls.Certificate, error) {
	serial, err := randomSerial()
	if err != nil {
		return nil, err
	}
	now := c.now()
	tmpl := &x509.Certificate{
		SerialNumber: serial,
		Subject:      pkix.Name{CommonName: host, Organization: []string{"payguard"}},
		NotBefore:    now.Add(-time.Hour),
		NotAfter:     now.Add(leafLifetime),
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	if ip := net.ParseIP(host); ip != nil {
		tmpl.IPAddresses = []net.IP{ip}
	} else {
		tmpl.DNSNames = []string{host}
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, c.ca.Leaf, &c.key.PublicKey, c.ca.PrivateKey)
	if err != nil {
		return nil, fmt.Errorf("mitm: sign leaf for %s: %w", host, err)
	}
	leaf, err := x509.ParseCertificate(der)
	if err != nil {
		return nil, fmt.Errorf("mitm: parse leaf for %s: %w", host, err)
	}
	return &tls.Certificate{Certificate: [][]byte{der, c.ca.Certificate[0]}, PrivateKey: c.key, Leaf: leaf}, nil
}

package admin_test

import (
	"bytes"
	"crypto/x509"
	"encoding/pem"
	"io"
	"net/http"
	"strings"
	"testing"
)

// GET /ca.pem on the admin listener serves the MITM CA's certificate without a token (it is public: agents
// fetch it to trust payguard), exactly the certificate the proxy signs leaves with and nothing else (no
// private key), and only to a Host the listener answers to (421 for a rebound name, like every route).
func TestAdminServesTheCACertificate(t *testing.T) {
	e := newEnv(t)
	code, body := e.api("GET", "/ca.pem", "", nil)
	if code != http.StatusOK {
		t.Fatalf("GET /ca.pem: %d %s", code, body)
	}
	if bytes.Contains(body, []byte("PRIVATE KEY")) {
		t.Fatal("/ca.pem carries a private key")
	}
	block, rest := pem.Decode(body)
	if block == nil || block.Type != "CERTIFICATE" || len(bytes.TrimSpace(rest)) != 0 {
		t.Fatalf("/ca.pem is not exactly one PEM certificate: %q", body)
	}
	cert, err := x509.ParseCertificate(block.Bytes)
	if err != nil {
		t.Fatal(err)
	}
	if !cert.IsCA || !bytes.Equal(cert.Raw, e.ca.Certificate[0]) {
		t.Fatal("/ca.pem is not the proxy's CA certificate")
	}
	// A pool built from /ca.pem alone verifies a leaf the proxy mints: what an agent needs.
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(body) {
		t.Fatal("the PEM does not load into a cert pool")
	}
	want := x509.NewCertPool()
	want.AddCert(e.ca.Leaf)
	if !pool.Equal(want) {
		t.Fatal("the pool from /ca.pem differs from the proxy's CA")
	}

	req, _ := http.NewRequest("GET", e.url+"/ca.pem", nil)
	req.Host = "attacker.example"
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusMisdirectedRequest || strings.Contains(string(b), "CERTIFICATE") {
		t.Fatalf("GET /ca.pem with a foreign Host: %d, want 421 without the certificate", resp.StatusCode)
	}
}

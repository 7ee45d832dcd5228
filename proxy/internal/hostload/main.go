// Command hostload measures payguard's proxy against many distinct HTTPS hosts on one machine: every
// hostname h<N>.localhost is served by one local TLS upstream, and the proxy's dialer maps them all to it, so
// each host costs the proxy a CONNECT, a MITM leaf certificate and an upstream connection, as real traffic
// would. It runs as three processes so that the proxy's resident memory is its own:
//
//	hostload upstream -listen 127.0.0.1:18543 -ca-out /tmp/hl/up-ca.pem
//	hostload proxy -listen 127.0.0.1:18502 -upstream 127.0.0.1:18543 -upstream-ca /tmp/hl/up-ca.pem \
//	    -data /tmp/hl/data [-sanctions-dir DIR]            # prints its pid; RSS: /proc/<pid>/status
//	hostload load -proxy 127.0.0.1:18502 -ca /tmp/hl/data/ca.pem -hosts 1000 -requests 10000 -c 32
//
// The proxy is payguard's real proxy (proxy.New with the preflight engine, receipts and a bolt store); only
// the upstream dialer differs from `payguard proxy`.
package main

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"math/big"
	"net"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"sort"
	"sync"
	"sync/atomic"
	"time"

	"github.com/payguard/payguard/policy"
	"github.com/payguard/payguard/preflight"
	"github.com/payguard/payguard/proxy"
	"github.com/payguard/payguard/proxy/mitm"
	"github.com/payguard/payguard/receipts"
	"github.com/payguard/payguard/screening"
	"github.com/payguard/payguard/screening/sanctions"
	"github.com/payguard/payguard/store/bolt"
)

func main() {
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: hostload upstream|proxy|load [flags]")
		os.Exit(2)
	}
	var err error
	switch os.Args[1] {
	case "upstream":
		err = runUpstream(os.Args[2:])
	case "proxy":
		err = runProxy(os.Args[2:])
	case "load":
		err = runLoad(os.Args[2:])
	default:
		err = fmt.Errorf("unknown mode %q", os.Args[1])
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "hostload:", err)
		os.Exit(1)
	}
}

// runUpstream serves GET /ok (200 bytes of JSON) over TLS with a *.localhost certificate from a fresh CA.
func runUpstream(args []string) error {
	fs := flag.NewFlagSet("upstream", flag.ExitOnError)
	listen := fs.String("listen", "127.0.0.1:18543", "TLS listen address")
	caOut := fs.String("ca-out", "up-ca.pem", "where to write the upstream CA")
	fs.Parse(args)
	caKey, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	caTmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "hostload upstream CA"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(24 * time.Hour), IsCA: true,
		BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign}
	caDER, err := x509.CreateCertificate(rand.Reader, caTmpl, caTmpl, &caKey.PublicKey, caKey)
	if err != nil {
		return err
	}
	caCert, _ := x509.ParseCertificate(caDER)
	key, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	leafTmpl := &x509.Certificate{SerialNumber: big.NewInt(2), Subject: pkix.Name{CommonName: "*.localhost"},
		DNSNames: []string{"*.localhost", "localhost"}, IPAddresses: []net.IP{net.IPv4(127, 0, 0, 1)},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(24 * time.Hour),
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}, KeyUsage: x509.KeyUsageDigitalSignature}
	leafDER, err := x509.CreateCertificate(rand.Reader, leafTmpl, caCert, &key.PublicKey, caKey)
	if err != nil {
		return err
	}
	if err := os.WriteFile(*caOut, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: caDER}), 0o644); err != nil {
		return err
	}
	body := []byte(fmt.Sprintf(`{"ok":true,"pad":"%0180d"}`, 0))
	srv := &http.Server{Addr: *listen, Handler: http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.Write(body)
	}), TLSConfig: &tls.Config{Certificates: []tls.Certificate{{Certificate: [][]byte{leafDER}, PrivateKey: key}},
		NextProtos: []string{"http/1.1"}}}
	fmt.Printf("upstream https://%s (CA %s)\n", *listen, *caOut)
	return srv.ListenAndServeTLS("", "")
}

// runProxy runs payguard's proxy with a dialer that sends every host to the upstream.
func runProxy(args []string) error {
	fs := flag.NewFlagSet("proxy", flag.ExitOnError)
	listen := fs.String("listen", "127.0.0.1:18502", "proxy listen address")
	upstream := fs.String("upstream", "127.0.0.1:18543", "where every host is dialled")
	upCA := fs.String("upstream-ca", "up-ca.pem", "upstream CA (PEM)")
	data := fs.String("data", "hostload-data", "state directory (CA, bolt file)")
	sanctionsDir := fs.String("sanctions-dir", "", "OFAC list to load, as payguard proxy --sanctions-dir")
	fs.Parse(args)
	ca, _, err := mitm.LoadOrCreateCA(filepath.Join(*data, "ca.pem"), filepath.Join(*data, "ca-key.pem"), time.Now())
	if err != nil {
		return err
	}
	pemBytes, err := os.ReadFile(*upCA)
	if err != nil {
		return err
	}
	roots := x509.NewCertPool()
	roots.AppendCertsFromPEM(pemBytes)
	keys, err := receipts.GenerateKey(time.Now())
	if err != nil {
		return err
	}
	st, err := bolt.Open(filepath.Join(*data, "payguard.db"), bolt.Options{})
	if err != nil {
		return err
	}
	defer st.Close()
	rules := policy.DefaultRules()
	var list screening.Sanctions
	if *sanctionsDir != "" {
		l, err := sanctions.LoadDir(*sanctionsDir)
		if err != nil {
			return err
		}
		list = l
	}
	var d net.Dialer
	p, err := proxy.New(proxy.Options{
		Decider: preflight.New(preflight.Options{Rules: rules, Sanctions: list, Signer: keys}),
		Store:   st, CA: ca, Rules: rules, UpstreamRoots: roots,
		Logger: slog.New(slog.NewJSONHandler(io.Discard, nil)),
		DialContext: func(ctx context.Context, network, _ string) (net.Conn, error) {
			return d.DialContext(ctx, network, *upstream)
		},
	})
	if err != nil {
		return err
	}
	fmt.Printf("proxy %s pid %d\n", *listen, os.Getpid())
	return (&http.Server{Addr: *listen, Handler: p, ReadHeaderTimeout: 30 * time.Second}).ListenAndServe()
}

// runLoad sends requests round-robin over hosts h0..h<N-1>.localhost, through the proxy, with c workers.
// Each host gets its own client connection (as distinct sites would), so every host costs a CONNECT and a
// MITM handshake.
func runLoad(args []string) error {
	fs := flag.NewFlagSet("load", flag.ExitOnError)
	proxyAddr := fs.String("proxy", "127.0.0.1:18502", "proxy address")
	caFile := fs.String("ca", "hostload-data/ca.pem", "the proxy's MITM CA")
	hosts := fs.Int("hosts", 1000, "distinct hostnames")
	requests := fs.Int("requests", 10000, "requests in all")
	conc := fs.Int("c", 32, "workers")
	port := fs.String("port", "18543", "port in the request URLs")
	fs.Parse(args)
	pemBytes, err := os.ReadFile(*caFile)
	if err != nil {
		return err
	}
	roots := x509.NewCertPool()
	roots.AppendCertsFromPEM(pemBytes)
	pu, _ := url.Parse("http://" + *proxyAddr)
	tr := &http.Transport{Proxy: http.ProxyURL(pu), TLSClientConfig: &tls.Config{RootCAs: roots},
		MaxIdleConnsPerHost: 1, MaxIdleConns: *hosts + *conc}
	client := &http.Client{Transport: tr, Timeout: 30 * time.Second}
	var next, failed atomic.Int64
	lat := make([][]time.Duration, *conc)
	start := time.Now()
	var wg sync.WaitGroup
	for w := range *conc {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				i := next.Add(1) - 1
				if i >= int64(*requests) {
					return
				}
				u := fmt.Sprintf("https://h%d.localhost:%s/ok", i%int64(*hosts), *port)
				t0 := time.Now()
				resp, err := client.Get(u)
				if err == nil {
					_, err = io.Copy(io.Discard, resp.Body)
					resp.Body.Close()
					if err == nil && resp.StatusCode != 200 {
						err = fmt.Errorf("status %d", resp.StatusCode)
					}
				}
				if err != nil {
					if failed.Add(1) <= 3 {
						fmt.Fprintln(os.Stderr, "request failed:", u, err)
					}
					continue
				}
				lat[w] = append(lat[w], time.Since(t0))
			}
		}()
	}
	wg.Wait()
	elapsed := time.Since(start)
	var all []time.Duration
	for _, l := range lat {
		all = append(all, l...)
	}
	sort.Slice(all, func(i, j int) bool { return all[i] < all[j] })
	pct := func(p float64) time.Duration {
		if len(all) == 0 {
			return 0
		}
		return all[int(p*float64(len(all)-1))]
	}
	fmt.Printf("requests %d ok %d failed %d hosts %d c %d in %.2fs (%.0f req/s) p50 %v p99 %v\n",
		*requests, len(all), failed.Load(), *hosts, *conc, elapsed.Seconds(), float64(len(all))/elapsed.Seconds(),
		pct(0.5).Round(time.Microsecond), pct(0.99).Round(time.Microsecond))
	return nil
}

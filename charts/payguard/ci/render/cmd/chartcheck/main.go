// Command chartcheck is ci/check.sh's helper for what it used to do with python3 (PyYAML) and curl, so the
// chart check runs on a machine with Go alone:
//
//	chartcheck config RENDER OUT            # the payguard.yaml of the one extra ConfigMap (fleet or serve)
//	chartcheck unpack RENDER WORKDIR        # the default render as files: payguard.yaml (paths under WORKDIR,
//	                                        # listeners on 127.0.0.1) and the Secrets under WORKDIR/etc/{ca,admin}
//	chartcheck live PROXY ADMIN TOKEN CA HOST RENDER
//	                                        # the running proxy: /healthz, the token, a MITM'd CONNECT, /readyz
//	                                        # on the image's OFAC snapshot, /ca.pem, admin.hosts' HOST, and every
//	                                        # metric RENDER's PrometheusRule uses in /metrics
package main

import (
	"crypto/tls"
	"crypto/x509"
	"encoding/base64"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"time"

	"sigs.k8s.io/yaml"
)

type object struct {
	Kind     string `json:"kind"`
	Metadata struct {
		Name string `json:"name"`
	} `json:"metadata"`
	Data map[string]string `json:"data"`
}

func main() {
	var err error
	switch {
	case len(os.Args) == 4 && os.Args[1] == "config":
		err = config(os.Args[2], os.Args[3])
	case len(os.Args) == 4 && os.Args[1] == "unpack":
		err = unpack(os.Args[2], os.Args[3])
	case len(os.Args) == 8 && os.Args[1] == "live":
		err = live(os.Args[2], os.Args[3], os.Args[4], os.Args[5])
		if err == nil {
			err = liveFleetChecks(os.Args[3], os.Args[5], os.Args[6], os.Args[7])
		}
	default:
		err = errors.New("usage: chartcheck config RENDER OUT | unpack RENDER WORKDIR | live PROXY ADMIN TOKEN CA HOST RENDER")
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "chartcheck:", err)
		os.Exit(1)
	}
}

var separator = regexp.MustCompile(`(?m)^---\s*$`)

func objects(path string) ([]object, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var out []object
	for _, doc := range separator.Split(string(b), -1) {
		if strings.TrimSpace(doc) == "" {
			continue
		}
		var o object
		if err := yaml.Unmarshal([]byte(doc), &o); err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		if o.Kind != "" {
			out = append(out, o)
		}
	}
	return out, nil
}

// config writes the payguard.yaml of the one ConfigMap besides the sidecar's (t-payguard).
func config(render, out string) error {
	objs, err := objects(render)
	if err != nil {
		return err
	}
	var found []object
	for _, o := range objs {
		if o.Kind == "ConfigMap" && o.Metadata.Name != "t-payguard" {
			found = append(found, o)
		}
	}
	if len(found) != 1 {
		return fmt.Errorf("%d ConfigMaps besides t-payguard, want 1", len(found))
	}
	return os.WriteFile(out, []byte(found[0].Data["payguard.yaml"]), 0o600)
}

// unpack takes the default render apart into the files a payguard on this machine reads.
func unpack(render, work string) error {
	objs, err := objects(render)
	if err != nil {
		return err
	}
	for _, o := range objs {
		switch o.Kind {
		case "ConfigMap":
			text := o.Data["payguard.yaml"]
			text = strings.ReplaceAll(text, "/etc/payguard", work+"/etc")
			text = strings.ReplaceAll(text, `"/data`, `"`+work+"/data")
			text = strings.ReplaceAll(text, `"0.0.0.0:`, `"127.0.0.1:`)
			text = strings.ReplaceAll(text, `"/usr/share/payguard/sanctions"`, `"`+work+`/snapshot"`) // the image's OFAC snapshot
			if err := os.WriteFile(filepath.Join(work, "payguard.yaml"), []byte(text), 0o600); err != nil {
				return err
			}
		case "Secret":
			sub := "admin"
			if strings.HasSuffix(o.Metadata.Name, "-ca") {
				sub = "ca"
			}
			dir := filepath.Join(work, "etc", sub)
			if err := os.MkdirAll(dir, 0o700); err != nil {
				return err
			}
			for k, v := range o.Data {
				b, err := base64.StdEncoding.DecodeString(v)
				if err != nil {
					return fmt.Errorf("secret %s key %s: %w", o.Metadata.Name, k, err)
				}
				if err := os.WriteFile(filepath.Join(dir, k), b, 0o600); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

// live checks the proxy started from the unpacked render: the admin listener answers /healthz, refuses the
// API without the token and serves it with the token, and a CONNECT through the proxy verifies payguard's
// leaf against the rendered CA (the upstream, a closed port, then fails: 502 inside the tunnel).
func live(proxyAddr, adminAddr, token, caFile string) error {
	admin := "http://" + adminAddr
	client := &http.Client{Timeout: 5 * time.Second}
	var err error
	for i := 0; i < 100; i++ {
		var resp *http.Response
		if resp, err = client.Get(admin + "/healthz"); err == nil {
			resp.Body.Close()
			if resp.StatusCode == 200 {
				break
			}
			err = fmt.Errorf("/healthz: %d", resp.StatusCode)
		}
		time.Sleep(100 * time.Millisecond)
	}
	if err != nil {
		return err
	}
	status := func(path, bearer string) (int, error) {
		req, _ := http.NewRequest("GET", admin+path, nil)
		if bearer != "" {
			req.Header.Set("Authorization", "Bearer "+bearer)
		}
		resp, err := client.Do(req)
		if err != nil {
			return 0, err
		}
		resp.Body.Close()
		return resp.StatusCode, nil
	}
	if code, err := status("/v1/holds", ""); err != nil || code != 401 {
		return fmt.Errorf("/v1/holds without the token: %d %v, want 401", code, err)
	}
	if code, err := status("/v1/budget", token); err != nil || code != 200 {
		return fmt.Errorf("/v1/budget with the token: %d %v, want 200", code, err)
	}
	pem, err := os.ReadFile(caFile)
	if err != nil {
		return err
	}
	roots := x509.NewCertPool()
	if !roots.AppendCertsFromPEM(pem) {
		return fmt.Errorf("%s: no certificate", caFile)
	}
	proxyURL, _ := url.Parse("http://" + proxyAddr)
	mitm := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{
		Proxy: http.ProxyURL(proxyURL), TLSClientConfig: &tls.Config{RootCAs: roots, ServerName: "127.0.0.1"}}}
	resp, err := mitm.Get("https://127.0.0.1:9/")
	if err != nil {
		return fmt.Errorf("MITM through the rendered CA: %w", err)
	}
	resp.Body.Close()
	if resp.StatusCode != 502 {
		return fmt.Errorf("MITM through the rendered CA: got %d, want 502", resp.StatusCode)
	}
	return nil
}

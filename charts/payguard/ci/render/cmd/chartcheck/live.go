package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"regexp"
	"strings"
	"time"

	"sigs.k8s.io/yaml"
)

// snapshotAsOf is when the image's OFAC snapshot was fetched (docker/sanctions-snapshot.sh).
const snapshotAsOf = "2024-05-03T18:43:23Z"

// liveFleetChecks asks the proxy started from the unpacked render (offline, its cache empty) what an agent's
// pod and a fleet's monitoring depend on:
//   - /readyz is 200 at once, serving the image's OFAC snapshot with the snapshot's own data_as_of (the pod is
//     not held NotReady by the download);
//   - /ca.pem is the rendered CA certificate, without a token;
//   - a request naming admin.hosts' host is answered, a foreign Host gets 421;
//   - every payguard_* metric the rendered PrometheusRule's alerts use is in /metrics.
func liveFleetChecks(adminAddr, caFile, host, render string) error {
	admin := "http://" + adminAddr
	client := &http.Client{Timeout: 5 * time.Second}
	get := func(path, hostHeader string) (int, []byte, error) {
		req, _ := http.NewRequest("GET", admin+path, nil)
		if hostHeader != "" {
			req.Host = hostHeader
		}
		resp, err := client.Do(req)
		if err != nil {
			return 0, nil, err
		}
		defer resp.Body.Close()
		b, err := io.ReadAll(resp.Body)
		return resp.StatusCode, b, err
	}

	code, body, err := get("/readyz", "")
	if err != nil || code != 200 {
		return fmt.Errorf("/readyz on the image's snapshot: %d %v %s", code, err, body)
	}
	var ready struct {
		Sanctions struct {
			Loaded   bool   `json:"loaded"`
			DataAsOf string `json:"data_as_of"`
			Source   string `json:"source"`
			Kind     string `json:"source_kind"`
		} `json:"sanctions"`
	}
	if err := json.Unmarshal(body, &ready); err != nil || !ready.Sanctions.Loaded || ready.Sanctions.DataAsOf != snapshotAsOf ||
		!strings.HasPrefix(ready.Sanctions.Source, "snapshot ") || ready.Sanctions.Kind != "snapshot" {
		return fmt.Errorf("/readyz does not serve the snapshot dated %s: %s", snapshotAsOf, body)
	}

	want, err := os.ReadFile(caFile)
	if err != nil {
		return err
	}
	code, body, err = get("/ca.pem", "")
	if err != nil || code != 200 || !bytes.Equal(bytes.TrimSpace(body), bytes.TrimSpace(want)) {
		return fmt.Errorf("/ca.pem: %d %v, body is the rendered tls.crt: %v", code, err, bytes.Equal(bytes.TrimSpace(body), bytes.TrimSpace(want)))
	}

	if code, _, err = get("/healthz", host); err != nil || code != 200 {
		return fmt.Errorf("/healthz with Host %s (admin.hosts): %d %v, want 200", host, code, err)
	}
	if code, _, err = get("/ca.pem", "attacker.example"); err != nil || code != http.StatusMisdirectedRequest {
		return fmt.Errorf("/ca.pem with a foreign Host: %d %v, want 421", code, err)
	}

	code, metrics, err := get("/metrics", "")
	if err != nil || code != 200 {
		return fmt.Errorf("/metrics: %d %v", code, err)
	}
	names, err := alertMetrics(render)
	if err != nil {
		return err
	}
	if len(names) == 0 {
		return fmt.Errorf("%s has no PrometheusRule metrics to look for", render)
	}
	for _, n := range names {
		if !regexp.MustCompile(`(?m)^` + n + `[ {]`).Match(metrics) {
			return fmt.Errorf("the alerts use %s, which the running proxy's /metrics does not have", n)
		}
	}
	fmt.Printf("live: ready on the image's snapshot (data_as_of %s), /ca.pem, admin.hosts, alert metrics %v\n", snapshotAsOf, names)
	return nil
}

// alertMetrics is every payguard_* name in the expressions of the PrometheusRule in render.
func alertMetrics(render string) ([]string, error) {
	b, err := os.ReadFile(render)
	if err != nil {
		return nil, err
	}
	seen := map[string]bool{}
	var out []string
	for _, doc := range separator.Split(string(b), -1) {
		var r struct {
			Kind string `json:"kind"`
			Spec struct {
				Groups []struct {
					Rules []struct {
						Expr string `json:"expr"`
					} `json:"rules"`
				} `json:"groups"`
			} `json:"spec"`
		}
		if yaml.Unmarshal([]byte(doc), &r) != nil || r.Kind != "PrometheusRule" {
			continue
		}
		for _, g := range r.Spec.Groups {
			for _, rule := range g.Rules {
				for _, n := range regexp.MustCompile(`\bpayguard_[a-z0-9_]+\b`).FindAllString(rule.Expr, -1) {
					if !seen[n] {
						seen[n] = true
						out = append(out, n)
					}
				}
			}
		}
	}
	return out, nil
}

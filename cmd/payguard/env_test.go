package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/payguard/payguard/proxy/mitm"
)

// envCA makes a data directory whose path needs quoting in a shell (a space, a quote, a dollar) and a CA in it.
func envCA(t *testing.T) (dataDir, caFile string) {
	t.Helper()
	dataDir = filepath.Join(t.TempDir(), "agent's $HOME data")
	caFile = filepath.Join(dataDir, "ca", mitm.CACertFileName)
	certPEM, keyPEM, err := mitm.NewCA("payguard env test", time.Now())
	if err != nil {
		t.Fatal(err)
	}
	if err := mitm.WriteCA(caFile, filepath.Join(dataDir, "ca", mitm.CAKeyFileName), certPEM, keyPEM); err != nil {
		t.Fatal(err)
	}
	return dataDir, caFile
}

// sourced runs bash -c 'set -eu; . FILE; printf NAME=value…' on out and returns the variables it then has,
// with a hostile environment cleared first (a leftover HTTPS_PROXY must not pass the test for the output).
func sourced(t *testing.T, out []byte, names []string) map[string]string {
	t.Helper()
	f := filepath.Join(t.TempDir(), "env.sh")
	if err := os.WriteFile(f, out, 0o600); err != nil {
		t.Fatal(err)
	}
	script := "set -eu; . \"$1\"; shift; for n in \"$@\"; do printf '%s=%s\\n' \"$n\" \"${!n-UNSET}\"; done"
	cmd := exec.Command("bash", append([]string{"-c", script, "bash", f}, names...)...)
	cmd.Env = []string{"PATH=" + os.Getenv("PATH")}
	got, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("sourcing the output failed: %v\n%s\noutput was:\n%s", err, got, out)
	}
	vars := map[string]string{}
	for _, l := range strings.Split(strings.TrimRight(string(got), "\n"), "\n") {
		k, v, _ := strings.Cut(l, "=")
		vars[k] = v
	}
	return vars
}

var allEnvNames = []string{"HTTP_PROXY", "HTTPS_PROXY", "http_proxy", "https_proxy", "SSL_CERT_FILE", "CURL_CA_BUNDLE",
	"NODE_EXTRA_CA_CERTS", "REQUESTS_CA_BUNDLE"}

// payguard env's output, sourced by bash, sets every variable README used to list by hand: the proxy URL
// from the configuration's listen address (0.0.0.0 reached on loopback) and the CA path from the data
// directory, quoted so that a path with a space, a quote and a dollar survives intact. Node's and Python's
// outputs set what those runtimes read and nothing that replaces Node's roots, and are sourceable too.
func TestEnvOutputSourcesIntoTheShell(t *testing.T) {
	dataDir, caFile := envCA(t)
	cfgFile := filepath.Join(t.TempDir(), "payguard.yaml")
	if err := os.WriteFile(cfgFile, []byte("proxy:\n  listen: 0.0.0.0:18402\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	run := func(args ...string) []byte {
		t.Helper()
		var out, errb bytes.Buffer
		if code := runMain(append([]string{"env"}, args...), nil, &out, &errb); code != 0 {
			t.Fatalf("payguard env %v: exit %d: %s", args, code, errb.String())
		}
		return out.Bytes()
	}
	const proxyURL = "http://127.0.0.1:18402"
	shell := sourced(t, run("--config", cfgFile, "--data-dir", dataDir), allEnvNames)
	for _, n := range allEnvNames {
		want := caFile
		if strings.HasSuffix(strings.ToLower(n), "_proxy") {
			want = proxyURL
		}
		if shell[n] != want {
			t.Errorf("shell: %s=%q, want %q", n, shell[n], want)
		}
	}
	// The CA path the shell ends up with is the very file: readable, the certificate the data dir holds.
	if b, err := os.ReadFile(shell["SSL_CERT_FILE"]); err != nil || !bytes.Contains(b, []byte("BEGIN CERTIFICATE")) {
		t.Errorf("SSL_CERT_FILE does not name the CA certificate: %v", err)
	}

	out := run("--for", "node", "--config", cfgFile, "--data-dir", dataDir, "--listen", "127.0.0.1:9999")
	node := sourced(t, out, allEnvNames)
	if node["NODE_EXTRA_CA_CERTS"] != caFile || node["HTTPS_PROXY"] != "http://127.0.0.1:9999" || node["SSL_CERT_FILE"] != "UNSET" {
		t.Errorf("node: %v", node)
	}
	if !strings.Contains(string(out), "EnvHttpProxyAgent") {
		t.Errorf("node output lacks the undici EnvHttpProxyAgent snippet:\n%s", out)
	}
	// Every-address listeners are reached on loopback, IPv6 in brackets.
	if v6 := sourced(t, run("--data-dir", dataDir, "--listen", "[::]:8402"), allEnvNames); v6["HTTPS_PROXY"] != "http://[::1]:8402" {
		t.Errorf("listen [::]:8402: HTTPS_PROXY=%q", v6["HTTPS_PROXY"])
	}
	py := sourced(t, run("--for", "python", "--data-dir", dataDir), allEnvNames)
	if py["REQUESTS_CA_BUNDLE"] != caFile || py["SSL_CERT_FILE"] != caFile || py["HTTPS_PROXY"] != "http://127.0.0.1:8402" ||
		py["NODE_EXTRA_CA_CERTS"] != "UNSET" {
		t.Errorf("python (default listen): %v", py)
	}
}

// Without a CA, or with an unknown --for, payguard env prints nothing to source and says why.
func TestEnvRefusesWhatItCannotPointAt(t *testing.T) {
	for _, c := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"--data-dir", t.TempDir()}, 1, "no CA certificate"},
		{[]string{"--for", "ruby"}, 2, "want shell, node or python"},
		{[]string{"--listen", "nonsense"}, 1, "proxy.listen"},
	} {
		var out, errb bytes.Buffer
		code := runMain(append([]string{"env"}, c.args...), nil, &out, &errb)
		if code != c.code || out.Len() != 0 || !strings.Contains(errb.String(), c.want) {
			t.Errorf("env %v: exit %d, stdout %q, stderr %q", c.args, code, out.String(), errb.String())
		}
	}
}

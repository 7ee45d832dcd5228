package setup

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"net"
	"os"
	"path/filepath"
	"strings"

	"github.com/payguard/payguard/config"
	"github.com/payguard/payguard/internal/cli"
	"github.com/payguard/payguard/internal/shell"
)

// Env is `payguard env`.
var Env = cli.Command{Summary: "print the exports that point an agent at the proxy and make it trust the CA", Run: runEnv}

// agentEnv is what an agent needs to go through this proxy: its URL and the CA certificate's path.
type agentEnv struct {
	proxyURL string // http://host:port, with an unspecified listen host replaced by loopback
	caFile   string // absolute path of the MITM CA certificate
}

// envVars are the variables each kind of agent reads, in the order they are printed. The proxy variables go
// in both spellings (curl and wget read only the lower-case http_proxy); each CA variable is read by one TLS
// stack: SSL_CERT_FILE by Go and OpenSSL, CURL_CA_BUNDLE by curl (Debian's ignores SSL_CERT_FILE),
// NODE_EXTRA_CA_CERTS by Node (read once at start, so it must be in the environment before node runs),
// REQUESTS_CA_BUNDLE by Python requests.
var envVars = map[string][]string{
	"shell":  {"HTTP_PROXY", "HTTPS_PROXY", "http_proxy", "https_proxy", "SSL_CERT_FILE", "CURL_CA_BUNDLE", "NODE_EXTRA_CA_CERTS", "REQUESTS_CA_BUNDLE"},
	"node":   {"HTTP_PROXY", "HTTPS_PROXY", "http_proxy", "https_proxy", "NODE_EXTRA_CA_CERTS"},
	"python": {"HTTP_PROXY", "HTTPS_PROXY", "http_proxy", "https_proxy", "SSL_CERT_FILE", "REQUESTS_CA_BUNDLE"},
}

// envSnippets follow a kind's exports as shell comments, so the whole output can still be sourced: the code
// the agent itself needs to use the variables.
var envSnippets = map[string]string{
	"node": `# Node's built-in fetch ignores HTTP(S)_PROXY: route it through payguard with undici
# (npm install undici), before the first fetch:
#   import { EnvHttpProxyAgent, setGlobalDispatcher } from 'undici';
#   setGlobalDispatcher(new EnvHttpProxyAgent());
`,
	"python": `# requests and httpx read HTTPS_PROXY; the x402 client for httpx brings its own transport, which ignores it:
#   through_payguard = httpx.AsyncHTTPTransport(proxy=os.environ["HTTPS_PROXY"])
#   httpx.AsyncClient(transport=x402AsyncTransport(client, transport=through_payguard))
`,
}

func runEnv(args []string, _ io.Reader, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("env", flag.ContinueOnError)
	fs.SetOutput(stderr)
	configPath := fs.String("config", "", "the proxy's YAML configuration file (default: the embedded default)")
	forKind := fs.String("for", "shell", "shell (every variable), node or python (the variables that runtime reads, and the code it needs)")
	listen := fs.String("listen", "", "the proxy's listen address, as given to payguard proxy --listen (default: proxy.listen)")
	applyDataDir := cli.DataDirFlag(fs)
	if code, done := cli.ParseFlags(fs, args, stdout); done {
		return code
	}
	if fs.NArg() != 0 {
		fmt.Fprintf(stderr, "payguard env: unexpected argument %q\n", fs.Arg(0))
		return 2
	}
	if _, ok := envVars[*forKind]; !ok {
		fmt.Fprintf(stderr, "payguard env: --for %q: want shell, node or python\n", *forKind)
		return 2
	}
	cfg, err := config.Load(*configPath)
	if err != nil {
		fmt.Fprintln(stderr, "payguard env:", err)
		return 2
	}
	applyDataDir(cfg)
	if *listen != "" {
		cfg.Proxy.Listen = *listen
	}
	e, err := agentEnvFor(cfg)
	if err != nil {
		fmt.Fprintln(stderr, "payguard env:", err)
		return 1
	}
	writeEnv(stdout, *forKind, e)
	return 0
}

// agentEnvFor reads the proxy's address and CA path from cfg. The CA must exist: exports that name a missing
// file would make every HTTPS request of the agent fail later, far from the cause.
func agentEnvFor(cfg *config.Config) (agentEnv, error) {
	host, port, err := net.SplitHostPort(cfg.Proxy.Listen)
	if err != nil {
		return agentEnv{}, fmt.Errorf("proxy.listen %q: %w", cfg.Proxy.Listen, err)
	}
	// A proxy listening on every address is reached on loopback from the same machine or pod.
	switch host {
	case "", "0.0.0.0":
		host = "127.0.0.1"
	case "::":
		host = "::1"
	}
	cert, _ := cfg.CAFiles()
	abs, err := filepath.Abs(cert)
	if err != nil {
		return agentEnv{}, err
	}
	if _, err := os.Stat(abs); errors.Is(err, fs.ErrNotExist) {
		return agentEnv{}, fmt.Errorf("no CA certificate at %s yet: start payguard proxy once (it creates one), "+
			"or run payguard ca init, or fetch it from the admin listener's /ca.pem", abs)
	} else if err != nil {
		return agentEnv{}, err
	}
	return agentEnv{proxyURL: "http://" + net.JoinHostPort(host, port), caFile: abs}, nil
}

// writeEnv prints kind's exports, one per line, values quoted for a POSIX shell, then kind's snippet.
func writeEnv(w io.Writer, kind string, e agentEnv) {
	var b strings.Builder
	fmt.Fprintf(&b, "# payguard env --for %s: eval \"$(payguard env --for %s)\" or save and source it\n", kind, kind)
	for _, name := range envVars[kind] {
		v := e.caFile
		if strings.HasSuffix(strings.ToLower(name), "_proxy") {
			v = e.proxyURL
		}
		fmt.Fprintf(&b, "export %s=%s\n", name, shell.Quote(v))
	}
	if kind != "node" {
		b.WriteString("# SSL_CERT_FILE, CURL_CA_BUNDLE and REQUESTS_CA_BUNDLE replace the system roots: enough while every\n" +
			"# HTTPS host goes through payguard; for hosts in tunnel_hosts or NO_PROXY use a bundle of both.\n")
	}
	b.WriteString(envSnippets[kind])
	_, _ = io.WriteString(w, b.String())
}

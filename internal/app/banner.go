package app

import (
	"fmt"
	"io"
	"path/filepath"
	"strings"

	"github.com/payguard/payguard/internal/shell"
)

// startupInfo is what an operator needs to point an agent at a freshly started proxy.
type startupInfo struct {
	proxyAddr, adminAddr string
	caCert               string
	tokenFrom            string // "$PAYGUARD_ADMIN_TOKEN" or a file
	decideFrom           string // "$PAYGUARD_DECIDE_TOKEN" or a file
	notReady             error  // why decisions will hold everything, if they will
	reportMode           string // who is in report (shadow) mode, if anyone: nothing of theirs is refused
	offline              bool   // --offline: no list will be downloaded
}

// writeBanner prints the start-up summary: plain text for a person, next to the JSON log on stderr.
func writeBanner(w io.Writer, s startupInfo) {
	if w == nil {
		return
	}
	var b strings.Builder
	ca := absPath(s.caCert)
	proxyURL := "http://" + s.proxyAddr
	adminURL := "http://" + s.adminAddr
	token := "$(cat " + shell.Quote(absPath(s.tokenFrom)) + ")"
	if strings.HasPrefix(s.tokenFrom, "$") {
		token = s.tokenFrom
	}
	fmt.Fprintf(&b, `payguard proxy is running
  proxy      %[1]s
  admin API  %[2]s  (holds, budget; /healthz /readyz /metrics /ca.pem need no token)
  console    %[2]s/  (approve or deny holds in a browser; sign in with the admin token)
  MITM CA    %[3]s
  admin token from %[4]s
  decide-only token from %[6]s  (for in-process guards' sidecar option: POST /v1/decide, never approvals)

Point an agent at it (or: eval "$(payguard env)" with this one's --config / --data-dir; --for node or python):
  export HTTP_PROXY=%[1]s HTTPS_PROXY=%[1]s http_proxy=%[1]s  (curl reads only the lower-case http_proxy)
  export SSL_CERT_FILE=%[3]s REQUESTS_CA_BUNDLE=%[3]s NODE_EXTRA_CA_CERTS=%[3]s CURL_CA_BUNDLE=%[3]s
  (SSL_CERT_FILE, REQUESTS_CA_BUNDLE and CURL_CA_BUNDLE replace the system roots: enough while every HTTPS
  host goes through payguard; add the system bundle for hosts in tunnel_hosts or NO_PROXY.)
List pending holds (or open the console, or run payguard holds list):
  curl -H "Authorization: Bearer %[5]s" '%[2]s/v1/holds?status=pending'
`, proxyURL, adminURL, ca, absPath(s.tokenFrom), token, absPath(s.decideFrom))
	if s.notReady != nil {
		how := "or wait for the download"
		if s.offline {
			how = "or run payguard sdn update and start again (--offline downloads nothing)"
		}
		fmt.Fprintf(&b, "\nNOT READY: %v; /readyz answers 503 and no payment is allowed until a list loads.\n"+
			"  Give one with --sanctions-dir DIR (OFAC's SDN CSV set or SDN.XML), %s.\n", s.notReady, how)
	}
	if s.reportMode != "" {
		fmt.Fprintf(&b, "\nREPORT MODE (%s): blocks and holds are logged as would_block / would_hold and NOT enforced.\n", s.reportMode)
	}
	_, _ = io.WriteString(w, b.String())
}

func absPath(p string) string {
	if strings.HasPrefix(p, "$") {
		return p
	}
	if a, err := filepath.Abs(p); err == nil {
		return a
	}
	return p
}

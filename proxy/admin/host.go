package admin

import (
	"net"
	"net/http"
	"net/netip"
	"strings"
)

// hostGuard refuses, with 421 Misdirected Request, every admin request whose Host names another server
// than this listener. The threat is DNS rebinding: a page an approver opens at
// http://attacker.example:8403 re-points its name to 127.0.0.1 and then talks to the admin listener from the
// approver's browser, as a same-origin page (the console's SameSite cookie, Origin and CSRF checks all
// compare with that same name). Its requests still carry Host: attacker.example, so checking Host closes it.
//
// Allowed: an IP address (a rebinding page can only name itself by its DNS name; an address in the Host is
// what a kubelet probe, a CLI or a browser pointed at the address sends), "localhost", and the configured
// names (Options.Hosts). The port is not compared (a port-forward or a Service may change it).
func hostGuard(hosts []string, next http.Handler) http.Handler {
	allowed := map[string]bool{"localhost": true}
	for _, h := range hosts {
		if h = canonicalHost(h); h != "" {
			allowed[h] = true
		}
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		host := canonicalHost(r.Host)
		if _, err := netip.ParseAddr(host); err != nil && !allowed[host] {
			w.Header().Set("Connection", "close")
			writeJSON(w, http.StatusMisdirectedRequest, apiError("misdirected_request",
				"this admin listener does not answer to that host name; add it to admin.hosts if it is yours"))
			return
		}
		next.ServeHTTP(w, r)
	})
}

// canonicalHost is a Host header's name without port, brackets or trailing dot, in lower case; "" for none.
func canonicalHost(h string) string {
	h = strings.TrimSpace(h)
	if hh, _, err := net.SplitHostPort(h); err == nil {
		h = hh
	}
	h = strings.TrimSuffix(strings.TrimPrefix(h, "["), "]")
	return strings.ToLower(strings.TrimSuffix(h, "."))
}

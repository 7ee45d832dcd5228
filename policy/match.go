package policy

import (
	"net"
	"net/url"
	"strings"
)

// MerchantDomain extracts the merchant host from a URL ("https://api.example.com:8443/x") or a bare host
// ("Example.COM."): lower case, without scheme, user info, port, path or trailing dot. It returns "" when no
// host can be read. IP literals are returned as they are (without brackets): they are hosts, but no registry
// knows their age, so their domain facts stay unknown.
func MerchantDomain(s string) string {
	s = strings.TrimSpace(s)
	if s == "" {
		return ""
	}
	host := s
	if strings.Contains(s, "://") {
		u, err := url.Parse(s)
		if err != nil {
			return ""
		}
		host = u.Hostname()
	} else {
		if i := strings.IndexAny(host, "/?#"); i >= 0 {
			host = host[:i]
		}
		if i := strings.LastIndex(host, "@"); i >= 0 {
			host = host[i+1:]
		}
		if h, _, err := net.SplitHostPort(host); err == nil {
			host = h
		}
		host = strings.TrimSuffix(strings.TrimPrefix(host, "["), "]")
	}
	host = strings.TrimSuffix(strings.ToLower(host), ".")
	if host == "" || strings.ContainsAny(host, " \t\r\n/\\@") {
		return ""
	}
	return host
}

// domainListed reports whether domain is an entry of list or a subdomain of one. Entries are compared
// without case and trailing dot; there is no wildcard syntax (SPEC), so "*.example.com" matches nothing.
func domainListed(domain string, list []string) bool {
	if domain == "" {
		return false
	}
	for _, e := range list {
		e = strings.TrimSuffix(strings.ToLower(strings.TrimSpace(e)), ".")
		if e == "" {
			continue
		}
		if domain == e || strings.HasSuffix(domain, "."+e) {
			return true
		}
	}
	return false
}

// payeeListed reports whether payTo is in list. EVM addresses (0x + 40 hex digits) ignore letter case;
// other identifiers compare exactly (SPEC: non-EVM identifiers preserve case).
func payeeListed(payTo string, list []string) bool {
	if payTo == "" {
		return false
	}
	for _, e := range list {
		if samePayee(payTo, strings.TrimSpace(e)) {
			return true
		}
	}
	return false
}

func samePayee(a, b string) bool {
	if isEVMAddress(a) && isEVMAddress(b) {
		return strings.EqualFold(a, b)
	}
	return a == b
}

// isEVMAddress is the same test as x402.IsEVMAddress; policy keeps its own copy to stay free of the wire
// package.
func isEVMAddress(s string) bool {
	if len(s) != 42 || s[0] != '0' || (s[1] != 'x' && s[1] != 'X') {
		return false
	}
	for i := 2; i < len(s); i++ {
		c := s[i]
		if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F') {
			return false
		}
	}
	return true
}

// networkAllowed reports whether any of the option's network names is in the allowed list.
func networkAllowed(o Option, allowed []string) bool {
	ids := o.NetworkIDs
	if len(ids) == 0 {
		ids = []string{o.Network}
	}
	for _, id := range ids {
		if id == "" {
			continue
		}
		for _, a := range allowed {
			if strings.EqualFold(strings.TrimSpace(a), id) {
				return true
			}
		}
	}
	return false
}

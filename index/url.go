package index

import (
	"errors"
	"net"
	"net/netip"
	"net/url"
	"strings"

	"golang.org/x/net/idna"
)

// MaxURLBytes bounds a normalized endpoint URL (the store's name bound leaves room for its key prefix).
const MaxURLBytes = 2048

// NormalizeURL is the Index key of an endpoint URL: an absolute http or https URL (or mcp://host/tool/<name>,
// the key the proxy gives an MCP tool: SPEC §11.8), scheme and host in lower
// case, the default port dropped, an empty path as "/", and no query, fragment or credentials.
func NormalizeURL(raw string) (string, error) {
	u, err := url.Parse(strings.TrimSpace(raw))
	if err != nil {
		return "", err
	}
	scheme := strings.ToLower(u.Scheme)
	if scheme != "http" && scheme != "https" && scheme != "mcp" {
		return "", errors.New("index: endpoint URL must be http or https (or mcp: an MCP tool)")
	}
	host := strings.TrimSuffix(strings.ToLower(u.Hostname()), ".")
	if host == "" {
		return "", errors.New("index: endpoint URL has no host")
	}
	port := u.Port()
	if (scheme == "http" && port == "80") || (scheme == "https" && port == "443") {
		port = ""
	}
	if strings.Contains(host, ":") {
		host = "[" + host + "]"
	}
	if port != "" {
		host = net.JoinHostPort(strings.Trim(host, "[]"), port)
	}
	path := u.EscapedPath()
	if scheme == "mcp" && (!strings.HasPrefix(path, "/tool/") || len(path) == len("/tool/")) {
		// Only the proxy's key of a tool on a host; a seller's own resource URL (mcp://tool/<name>) names
		// no host and keys nothing.
		return "", errors.New("index: an MCP endpoint is mcp://<host>/tool/<name>")
	}
	if path == "" {
		path = "/"
	}
	out := scheme + "://" + host + path
	if len(out) > MaxURLBytes {
		return "", errors.New("index: endpoint URL is too long")
	}
	return out, nil
}

// CanonicalHost is the one spelling of a host name that every spelling reaching the same server shares, for
// the checks that key on a host (the hosts that answered 402, a category's sites): no brackets, port or
// trailing dot; an IP address in its canonical text (IPv6 zeros compressed, lower case, an IPv4-mapped IPv6
// address as the IPv4 one); a name in lower-case ASCII, a Unicode name as its IDNA (punycode) form, as
// Go's HTTP client dials it. A name IDNA refuses stays lower-cased as given. "" for no host.
func CanonicalHost(host string) string {
	host = strings.TrimSpace(host)
	if h, _, err := net.SplitHostPort(host); err == nil {
		host = h
	}
	host = strings.TrimSuffix(strings.TrimPrefix(host, "["), "]")
	if a, err := netip.ParseAddr(host); err == nil {
		return a.Unmap().String()
	}
	if a, err := idna.Lookup.ToASCII(host); err == nil && a != "" {
		host = a // also maps full stops such as U+3002 to "."
	}
	return strings.ToLower(strings.TrimRight(host, "."))
}

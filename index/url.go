package index

import (
	"errors"
	"net"
	"net/netip"
	"net/url"
	"strconv"
	"strings"

	"golang.org/x/net/idna"

	"github.com/payguard/payguard/internal/plainurl"
)

// MaxURLBytes bounds a normalized endpoint URL (the store's name bound leaves room for its key prefix).
const MaxURLBytes = 2048

// defaultPorts are the schemes an endpoint key may have and the port each drops as its default. A scheme of
// another transport (an MCP tool endpoint, say) is added here; the host and path rules below are the same
// for every scheme.
var defaultPorts = map[string]string{"http": "80", "https": "443", "mcp": ""}

// NormalizeURL is the Index key of an endpoint URL (http or https; or mcp://<host>/tool/<name>, the key the
// proxy gives an MCP tool: SPEC §11.10), the one canonicalisation every writer and reader of the
// Index uses (the proxy's observations, the prober, the engine's lookups, GET /v1/endpoint, the admin
// lookup), so that no other spelling of an endpoint reaches a server as the same endpoint without its
// history (docs/index.md "One key per endpoint"):
//
//   - scheme in lower case, http or https; no query, fragment or credentials (a query names an input of
//     the endpoint, not another endpoint);
//   - the host as CanonicalHost spells it (lower case, IDNA, no trailing dot, IPv6 compressed, an
//     IPv4-mapped IPv6 address as the IPv4 one, an IPv6 zone dropped); the port in decimal without leading zeros, dropped when
//     it is the scheme's default;
//   - the path as canonicalPath spells it: RFC 3986 normalisation (unreserved characters' %-escapes
//     decoded, other escapes in upper-case hex, dot segments removed) and then, deliberately coarser than
//     RFC 3986, ASCII letters in lower case, ";params" dropped from every segment, empty segments and a
//     trailing slash dropped. Many servers route "/Weather", "/weather/" and "/weather;x" to the same
//     handler (Express routes case-insensitively and ignores a trailing slash; servlet containers strip
//     path parameters), and a seller decides how its server routes: the key folds every such spelling
//     into one, so two endpoints that differ only so share one history: more holds, never fewer.
//
// A URL already in this form (plainurl.Parse: the common case, the proxy's and every seller's usual URL) is
// its own key without being parsed again.
func NormalizeURL(raw string) (string, error) {
	if u, ok := plainurl.Parse(raw); ok {
		return u.Key, nil
	}
	return normalizeURL(raw)
}

// normalizeURL is NormalizeURL's full path, for every URL.
func normalizeURL(raw string) (string, error) {
	u, err := url.Parse(strings.TrimSpace(raw))
	if err != nil {
		return "", err
	}
	scheme := strings.ToLower(u.Scheme)
	defPort, ok := defaultPorts[scheme]
	if !ok {
		return "", errors.New("index: endpoint URL must be http or https (or mcp: an MCP tool)")
	}
	host := CanonicalHost(u.Hostname())
	if host == "" || u.Opaque != "" {
		return "", errors.New("index: endpoint URL has no host")
	}
	if a, err := netip.ParseAddr(host); err == nil {
		host = a.WithZone("").String() // a link-local zone names an interface of the dialler, not the endpoint
	} else if !hostName(host) {
		return "", errors.New("index: endpoint URL has an invalid host name")
	}
	if strings.Contains(host, ":") {
		host = "[" + host + "]"
	}
	if p := u.Port(); p != "" {
		n, err := strconv.ParseUint(p, 10, 16)
		if err != nil {
			return "", errors.New("index: endpoint URL has an invalid port")
		}
		if p = strconv.FormatUint(n, 10); p != defPort {
			host = net.JoinHostPort(strings.Trim(host, "[]"), p)
		}
	}
	path := canonicalPath(u.EscapedPath())
	if scheme == "mcp" && (!strings.HasPrefix(path, "/tool/") || len(path) == len("/tool/")) {
		// Only the proxy's key of a tool on a host; a seller's own resource URL (mcp://tool/<name>) names
		// no host and keys nothing.
		return "", errors.New("index: an MCP endpoint is mcp://<host>/tool/<name>")
	}
	out := scheme + "://" + host + path
	if len(out) > MaxURLBytes {
		return "", errors.New("index: endpoint URL is too long")
	}
	return out, nil
}

// hostName reports whether h (lower case, as CanonicalHost leaves it) is a name a resolver would look up:
// letters, digits, '-', '_' and dots between non-empty labels (Go's resolver refuses other names, so an
// endpoint under one is never reached).
func hostName(h string) bool {
	if h == "" || len(h) > 253 {
		return false
	}
	for _, label := range strings.Split(h, ".") {
		if label == "" || len(label) > 63 {
			return false
		}
		for i := 0; i < len(label); i++ {
			c := label[i]
			if !('a' <= c && c <= 'z' || '0' <= c && c <= '9' || c == '-' || c == '_') {
				return false
			}
		}
	}
	return true
}

// canonicalPath is the key's spelling of an escaped URL path (NormalizeURL says why each step): always
// starting with "/", "/" for an empty path.
func canonicalPath(escaped string) string {
	var b strings.Builder
	b.Grow(len(escaped))
	for i := 0; i < len(escaped); i++ {
		c := escaped[i]
		if c == '%' && i+2 < len(escaped) && isHex(escaped[i+1]) && isHex(escaped[i+2]) {
			d := unhex(escaped[i+1])<<4 | unhex(escaped[i+2])
			i += 2
			if unreserved(d) {
				b.WriteByte(lower(d))
			} else {
				b.WriteByte('%')
				b.WriteString(strings.ToUpper(escaped[i-1 : i+1]))
			}
			continue
		}
		b.WriteByte(lower(c))
	}
	var segs []string
	for _, s := range strings.Split(b.String(), "/") {
		if i := strings.IndexByte(s, ';'); i >= 0 {
			s = s[:i]
		}
		switch s {
		case "", ".":
		case "..":
			if len(segs) > 0 {
				segs = segs[:len(segs)-1]
			}
		default:
			segs = append(segs, s)
		}
	}
	return "/" + strings.Join(segs, "/")
}

// unreserved is RFC 3986's unreserved set: ALPHA / DIGIT / "-" / "." / "_" / "~".
func unreserved(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '-' || c == '.' || c == '_' || c == '~'
}

func lower(c byte) byte {
	if 'A' <= c && c <= 'Z' {
		return c + 'a' - 'A'
	}
	return c
}

func isHex(c byte) bool { return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F' }

func unhex(c byte) byte {
	switch {
	case c >= 'a':
		return c - 'a' + 10
	case c >= 'A':
		return c - 'A' + 10
	}
	return c - '0'
}

// CanonicalHost is the one spelling of a host name that every spelling reaching the same server shares, for
// the checks that key on a host (the hosts that answered 402, a category's sites): no brackets, port or
// trailing dot; an IP address in its canonical text (IPv6 zeros compressed, lower case, an IPv4-mapped IPv6
// address as the IPv4 one); a name in lower-case ASCII, a Unicode name as its IDNA (punycode) form, as
// Go's HTTP client dials it. A name IDNA refuses stays lower-cased as given. "" for no host.
func CanonicalHost(host string) string {
	host = strings.TrimSpace(host)
	// Without a colon there is no port to split (SplitHostPort would only make its error).
	if strings.IndexByte(host, ':') >= 0 {
		if h, _, err := net.SplitHostPort(host); err == nil {
			host = h
		}
	}
	host = strings.TrimSuffix(strings.TrimPrefix(host, "["), "]")
	if a, err := netip.ParseAddr(host); err == nil {
		if a.Is4() {
			return host // ParseAddr takes only the canonical dotted quad (no leading zeros): it is its String
		}
		return a.Unmap().String()
	}
	if a, err := idna.Lookup.ToASCII(host); err == nil && a != "" {
		host = a // also maps full stops such as U+3002 to "."
	}
	return strings.ToLower(strings.TrimRight(host, "."))
}

// Package plainurl recognizes an http(s) URL already written in its one canonical spelling, the spelling
// almost every paid endpoint's URL has ("https://api.example.com/v1/weather?city=x"), without parsing it:
// the decision of a 402 reads its URL's host and Index key several times (index.NormalizeURL, index.SiteOf,
// policy.MerchantDomain), and net/url's parse, with its allocations, was a measurable share of a decision
// (issue 36). Whatever Parse accepts, net/url parses, and the callers' full paths give exactly what Parse
// gives (their differential tests: index and policy); anything else (upper case, escapes, a fragment, a
// default port, user info, IDNA, IPv6...) is refused, and the caller takes its full path.
package plainurl

// URL is the parts of a plain URL.
type URL struct {
	// Key is the URL without its query: scheme "://" host [":" port] path, the URL's index.NormalizeURL key.
	Key string
	// Host is the host as net/url's Hostname gives it, already in its canonical spelling: a lower-case DNS
	// name of letters, digits, '-' and '_' (no label beginning "xn--"), or a dotted-quad IPv4 address.
	Host string
}

// MaxKey bounds Key (index.MaxURLBytes: a longer URL takes the full path, which refuses it).
const MaxKey = 2048

// Parse reports whether s is a plain URL, and its parts. A plain URL is
//
//	("http" | "https") "://" host [":" port] path ["?" query]
//
// where host is dot-separated labels of [a-z0-9_-] (1 to 63 bytes, not beginning "xn--", 253 bytes in all),
// port is a decimal without leading zeros from 1 to 65535 other than the scheme's default, path is "/" or
// "/"-separated non-empty segments of RFC 3986's unreserved characters in lower case other than "." and
// "..", with no trailing "/", and query is any bytes but ASCII control characters and "#" (no fragment).
func Parse(s string) (URL, bool) {
	var rest, defPort string
	switch {
	case len(s) > len("https://") && s[:len("https://")] == "https://":
		rest, defPort = s[len("https://"):], "443"
	case len(s) > len("http://") && s[:len("http://")] == "http://":
		rest, defPort = s[len("http://"):], "80"
	default:
		return URL{}, false
	}
	scheme := len(s) - len(rest)
	// host
	i, label := 0, 0
	for ; i < len(rest); i++ {
		c := rest[i]
		switch {
		case 'a' <= c && c <= 'z' || '0' <= c && c <= '9' || c == '-' || c == '_':
			if label++; label > 63 {
				return URL{}, false
			}
			if label == 4 && rest[i-3:i+1] == "xn--" {
				return URL{}, false
			}
			continue
		case c == '.':
			if label == 0 {
				return URL{}, false
			}
			label = 0
			continue
		}
		break
	}
	if label == 0 || i > 253 {
		return URL{}, false // no host, an empty label or a trailing dot
	}
	host := rest[:i]
	// port
	if i < len(rest) && rest[i] == ':' {
		j := i + 1
		for j < len(rest) && '0' <= rest[j] && rest[j] <= '9' {
			j++
		}
		port := rest[i+1 : j]
		if len(port) == 0 || len(port) > 5 || port[0] == '0' || port == defPort || len(port) == 5 && port > "65535" {
			return URL{}, false
		}
		i = j
	}
	// path
	if i == len(rest) || rest[i] != '/' {
		return URL{}, false // no path (the key has "/"), or anything else after the authority
	}
	root := i    // the path's first "/"
	seg := i + 1 // the start of the current segment
	for i++; i < len(rest); i++ {
		c := rest[i]
		if c == '/' {
			if !segmentOK(rest[seg:i]) {
				return URL{}, false
			}
			seg = i + 1
			continue
		}
		if 'a' <= c && c <= 'z' || '0' <= c && c <= '9' || c == '-' || c == '.' || c == '_' || c == '~' {
			continue
		}
		break
	}
	// The last segment as the others, but for the path "/" itself (a trailing "/" elsewhere is dropped by the
	// key: not plain).
	if !segmentOK(rest[seg:i]) && i != root+1 {
		return URL{}, false
	}
	key := s[:scheme+i]
	if len(key) > MaxKey {
		return URL{}, false
	}
	// query
	if i < len(rest) {
		if rest[i] != '?' {
			return URL{}, false
		}
		for j := i + 1; j < len(rest); j++ {
			if c := rest[j]; c < 0x20 || c == 0x7f || c == '#' {
				return URL{}, false
			}
		}
	}
	return URL{Key: key, Host: host}, true
}

// segmentOK reports whether seg is a segment the key keeps as it is: not empty, "." or "..".
func segmentOK(seg string) bool { return seg != "" && seg != "." && seg != ".." }

package domain

import (
	"errors"
	"fmt"
	"net"
	"net/url"
	"strings"
	"unicode/utf8"

	"golang.org/x/net/idna"
	"golang.org/x/net/publicsuffix"
)

// maxInputLen bounds what Normalize reads: a URL longer than this is not a merchant domain a caller typed.
const maxInputLen = 2048

// profile maps a host the way a browser does for lookup (UTS #46, non-transitional), then checks the
// result is a valid DNS name: STD3 letters, digits and hyphens only, label and name lengths within DNS
// limits, and the bidi rule for right-to-left labels.
var profile = idna.New(
	idna.MapForLookup(),
	idna.Transitional(false),
	idna.BidiRule(),
	idna.VerifyDNSLength(true),
	idna.StrictDomainName(true),
)

// Name is a merchant domain read from caller input.
type Name struct {
	// Host is the normalized host: ASCII (punycode for IDNs), lower case, no scheme, port, path or
	// trailing dot.
	Host string
	// Registrable is the registered domain the host belongs to (eTLD+1 under the Public Suffix List,
	// private suffixes included): for shop.example.co.uk it is example.co.uk.
	Registrable string
	// SharedSuffix is set when Host sits under a privately operated public suffix such as github.io.
	// The registry's registration date then belongs to the suffix's operator, not to the merchant, so
	// it must not be reported as the merchant domain's age.
	SharedSuffix string
}

// Normalize reads a domain or URL ("https://Shop.Example.com:443/x" -> "shop.example.com") as a public
// merchant domain. It rejects IP addresses, single labels, localhost, invalid labels, bare public
// suffixes and top-level domains that are not in the ICANN section of the Public Suffix List (.local,
// .internal, .test, ...). The error says why the input is not a public merchant domain.
func Normalize(input string) (Name, error) {
	if !utf8.ValidString(input) {
		return Name{}, errors.New("not valid UTF-8")
	}
	if len(input) > maxInputLen {
		return Name{}, fmt.Errorf("longer than %d bytes", maxInputLen)
	}
	host, err := hostOf(strings.TrimSpace(input))
	if err != nil {
		return Name{}, err
	}
	// The URL parser decodes %-escapes in the host: "%80" becomes a lone byte that IDNA's mapping would carry
	// into an xn-- label no one can decode again (found by FuzzNormalize). Such a name is invalid, not a domain.
	if !utf8.ValidString(host) {
		return Name{}, errors.New("invalid domain name: not valid UTF-8 once its %-escapes are decoded")
	}
	host = strings.TrimSuffix(host, ".")
	if host == "" {
		return Name{}, errors.New("no host name")
	}
	if h := strings.Trim(host, "[]"); mayBeIP(h) && net.ParseIP(h) != nil {
		return Name{}, errIPAddress
	}
	ascii, err := profile.ToASCII(host)
	if err != nil {
		return Name{}, fmt.Errorf("invalid domain name: %v", err)
	}
	if !strings.Contains(ascii, ".") {
		if ascii == "localhost" {
			return Name{}, errors.New("localhost is not a public domain")
		}
		return Name{}, errors.New("a single label, not a public domain name")
	}
	tld := ascii[strings.LastIndexByte(ascii, '.')+1:]
	if _, icann := publicsuffix.PublicSuffix(tld); !icann {
		return Name{}, fmt.Errorf("top-level domain .%s is not a public (ICANN) top-level domain", tld)
	}
	registrable, err := publicsuffix.EffectiveTLDPlusOne(ascii)
	if err != nil {
		return Name{}, fmt.Errorf("%s is a public suffix, not a registrable domain", ascii)
	}
	n := Name{Host: ascii, Registrable: registrable}
	if suffix, icann := publicsuffix.PublicSuffix(ascii); !icann {
		n.SharedSuffix = suffix
	}
	return n, nil
}

// errIPAddress is Normalize's error for an IP address (the engine asks about IP hosts too, on every decision).
var errIPAddress = errors.New("an IP address, not a domain name")

// mayBeIP reports whether net.ParseIP could read s: an IPv6 address has a colon, an IPv4 address only
// digits and dots (a name's failed parse allocates its error several times).
func mayBeIP(s string) bool {
	if strings.IndexByte(s, ':') >= 0 {
		return true
	}
	for i := 0; i < len(s); i++ {
		if c := s[i]; c != '.' && (c < '0' || c > '9') {
			return false
		}
	}
	return true
}

// bareHost reports whether s is a host name alone: letters, digits, '.', '-' and '_' (the engine's merchant
// domain, the common input), which url.Parse takes whole as the host of "http://" + s.
func bareHost(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '.' || c == '-' || c == '_') {
			return false
		}
	}
	return s != ""
}

// hostOf takes the host out of a bare domain ("shop.example.com"), a domain with a port or path
// ("shop.example.com:8443/x") or an http(s) URL.
func hostOf(s string) (string, error) {
	if s == "" {
		return "", errors.New("empty")
	}
	if bareHost(s) {
		return s, nil // what url.Parse("http://" + s) would give as its host name, without parsing
	}
	return hostOfParsed(s)
}

// hostOfParsed is hostOf's full path, for a non-empty s.
func hostOfParsed(s string) (string, error) {
	if strings.ContainsAny(s, " \t\r\n") {
		return "", errors.New("contains white space")
	}
	raw := s
	if i := strings.Index(s, "://"); i >= 0 {
		scheme := strings.ToLower(s[:i])
		if scheme != "http" && scheme != "https" {
			return "", fmt.Errorf("scheme %q is not http or https", s[:i])
		}
	} else {
		s = strings.TrimPrefix(s, "//")
		raw = "http://" + s
	}
	u, err := url.Parse(raw)
	if err != nil {
		return "", fmt.Errorf("not a domain or URL: %v", err)
	}
	if u.Host == "" {
		return "", errors.New("no host name")
	}
	if p := u.Port(); p != "" {
		for _, c := range p {
			if c < '0' || c > '9' {
				return "", fmt.Errorf("invalid port %q", p)
			}
		}
	}
	return u.Hostname(), nil
}

package policy

import (
	"net"
	"net/netip"
	"net/url"
	"strings"

	"github.com/payguard/payguard/internal/evmaddr"
	"github.com/payguard/payguard/internal/plainurl"
	"golang.org/x/net/idna"
)

// MerchantDomain extracts the merchant host from a URL ("https://api.example.com:8443/x") or a bare host
// ("Example.COM."): mapped for lookup (IDNs as punycode, as clients reach them), lower case, without scheme,
// user info, port, path or trailing dot. It returns "" when no
// host can be read. IP literals are returned as they are (without brackets): they are hosts, but no registry
// knows their age, so their domain facts stay unknown.
func MerchantDomain(s string) string {
	s = strings.TrimSpace(s)
	if s == "" {
		return ""
	}
	if u, ok := plainurl.Parse(s); ok {
		return u.Host // the common URL: its host is already canonicalHost's spelling, and url.Parse takes it
	}
	return merchantDomainParsed(s)
}

// merchantDomainParsed is MerchantDomain of a trimmed, non-empty s that is not a plain URL.
func merchantDomainParsed(s string) string {
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
		if h, port, err := net.SplitHostPort(host); err == nil {
			if port == "" {
				return "" // "https:/evil.com/x" reads as host "https" with an empty port: no host
			}
			host = h
		}
		host = strings.TrimSuffix(strings.TrimPrefix(host, "["), "]")
		if strings.Contains(host, ":") && net.ParseIP(host) == nil {
			return "" // a colon that is neither a port nor part of an IP literal: no host can be read
		}
	}
	host = canonicalHost(host)
	if host == "" || strings.ContainsAny(host, " \t\r\n/\\@") {
		return ""
	}
	return host
}

// lookupProfile maps a name as browsers and Go's HTTP client do before they look it up (UTS #46,
// non-transitional): fullwidth letters, ideographic full stops and Unicode labels become the ASCII (punycode)
// name actually reached. It does not validate: policy compares names, the domain checker judges them.
var lookupProfile = idna.New(idna.MapForLookup(), idna.Transitional(false))

// canonicalHost is the form hosts and list entries are compared in: an IP address in its canonical text, a
// name mapped for lookup, lower case, without a trailing dot. A name the mapping refuses is compared as it is, in lower case.
func canonicalHost(h string) string {
	h = strings.TrimSpace(h)
	// An IP address in its one text (IPv6 compressed in lower case, an IPv4-mapped IPv6 address as the IPv4
	// address it reaches, no zone): a seller must not escape a rule on its address by another spelling of it
	// (index.CanonicalHost reads addresses the same way).
	if a, err := netip.ParseAddr(strings.TrimSuffix(strings.TrimPrefix(h, "["), "]")); err == nil {
		return a.Unmap().WithZone("").String()
	}
	// For ASCII the mapping only lowers the case, so the common name skips it (every list entry of every
	// decision comes through here).
	if !isASCII(h) {
		if a, err := lookupProfile.ToASCII(h); err == nil && a != "" {
			h = a
		}
	}
	return strings.TrimSuffix(strings.ToLower(h), ".")
}

func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= 0x80 {
			return false
		}
	}
	return true
}

// domainListed reports whether domain is an entry of list or a subdomain of one. Entries are compared in
// canonicalHost's form (bücher.example and xn--bcher-kva.example are one entry); there is no wildcard syntax
// (SPEC §3.1), so "*.example.com" matches nothing.
func domainListed(domain string, list []string) bool {
	if domain == "" {
		return false
	}
	for _, e := range list {
		e = canonicalHost(e)
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
// other identifiers compare exactly (SPEC §3.1: non-EVM identifiers preserve case).
func payeeListed(payTo string, list []string) bool {
	if payTo == "" {
		return false
	}
	for _, e := range list {
		if evmaddr.Same(payTo, strings.TrimSpace(e)) {
			return true
		}
	}
	return false
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

package index

import (
	"errors"
	"net"
	"net/url"
	"strings"
)

// MaxURLBytes bounds a normalized endpoint URL (the store's name bound leaves room for its key prefix).
const MaxURLBytes = 2048

// NormalizeURL is the Index key of an endpoint URL: an absolute http or https URL, scheme and host in lower
// case, the default port dropped, an empty path as "/", and no query, fragment or credentials.
func NormalizeURL(raw string) (string, error) {
	u, err := url.Parse(strings.TrimSpace(raw))
	if err != nil {
		return "", err
	}
	scheme := strings.ToLower(u.Scheme)
	if scheme != "http" && scheme != "https" {
		return "", errors.New("index: endpoint URL must be http or https")
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
	if path == "" {
		path = "/"
	}
	out := scheme + "://" + host + path
	if len(out) > MaxURLBytes {
		return "", errors.New("index: endpoint URL is too long")
	}
	return out, nil
}

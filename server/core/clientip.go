package core

import (
	"net"
	"net/http"
	"net/netip"
	"strings"
)

// clientIP is the caller's address: the socket peer, unless the peer is a trusted proxy, in which case
// X-Forwarded-For is read right to left and the first address that is not itself a trusted proxy wins.
// A malformed X-Forwarded-For entry stops the walk at the last trusted hop (never a spoofable value).
func clientIP(r *http.Request, trusted []netip.Prefix) string {
	peer := remoteAddr(r.RemoteAddr)
	if !peer.IsValid() {
		return r.RemoteAddr
	}
	if !isTrusted(peer, trusted) {
		return peer.String()
	}
	// The hops are every X-Forwarded-For value split at its commas, in order; they are walked from the last
	// without building that list.
	client := peer
	vals := r.Header.Values("X-Forwarded-For")
	for vi := len(vals) - 1; vi >= 0; vi-- {
		v := vals[vi]
		for {
			i := strings.LastIndexByte(v, ',')
			a, err := netip.ParseAddr(strings.TrimSpace(v[i+1:]))
			if err != nil {
				return client.String()
			}
			client = a.Unmap()
			if !isTrusted(client, trusted) {
				return client.String()
			}
			if i < 0 {
				break
			}
			v = v[:i]
		}
	}
	return client.String()
}

func remoteAddr(s string) netip.Addr {
	host, _, err := net.SplitHostPort(s)
	if err != nil {
		host = s
	}
	a, err := netip.ParseAddr(host)
	if err != nil {
		return netip.Addr{}
	}
	return a.Unmap()
}

func isTrusted(a netip.Addr, trusted []netip.Prefix) bool {
	for _, p := range trusted {
		if p.Contains(a) {
			return true
		}
	}
	return false
}

package probe

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"syscall"
	"time"
)

// ErrForbiddenAddress is a probe refused by the egress guard.
var ErrForbiddenAddress = errors.New("probe: destination address is not public")

// specialPrefixes are refused beyond what netip's predicates cover: shared address space (CGNAT), IETF
// protocol assignments, benchmarking, documentation, reserved and "this network" ranges, NAT64, and the
// IPv6 discard, documentation and 6to4/Teredo ranges (which can embed any IPv4 address).
var specialPrefixes = mustPrefixes(
	"0.0.0.0/8", "100.64.0.0/10", "192.0.0.0/24", "192.0.2.0/24", "198.18.0.0/15", "198.51.100.0/24",
	"203.0.113.0/24", "240.0.0.0/4", "255.255.255.255/32",
	"64:ff9b::/96", "64:ff9b:1::/48", "100::/64", "2001::/32", "2001:db8::/32", "2002::/16",
)

func mustPrefixes(s ...string) []netip.Prefix {
	out := make([]netip.Prefix, len(s))
	for i, p := range s {
		out[i] = netip.MustParsePrefix(p)
	}
	return out
}

// Guard decides which addresses a probe may connect to: public unicast only, unless an address falls in an
// explicitly allowed prefix. It checks the address actually dialled (after DNS, on every redirect), so a
// hostname that resolves to a private address, or a redirect to one, is refused too.
type Guard struct {
	Allow []netip.Prefix
}

// Permitted reports whether ip may be probed.
func (g Guard) Permitted(ip netip.Addr) bool {
	ip = ip.Unmap()
	for _, p := range g.Allow {
		if p.Contains(ip) {
			return true
		}
	}
	if !ip.IsValid() || ip.IsLoopback() || ip.IsPrivate() || ip.IsLinkLocalUnicast() || ip.IsLinkLocalMulticast() ||
		ip.IsInterfaceLocalMulticast() || ip.IsMulticast() || ip.IsUnspecified() {
		return false
	}
	for _, p := range specialPrefixes {
		if p.Contains(ip) {
			return false
		}
	}
	return true
}

// DialContext dials like net.Dialer but refuses, before connecting, any address the guard does not permit.
func (g Guard) DialContext(timeout time.Duration) func(ctx context.Context, network, addr string) (net.Conn, error) {
	d := &net.Dialer{Timeout: timeout, Control: func(network, address string, _ syscall.RawConn) error {
		ap, err := netip.ParseAddrPort(address)
		if err != nil {
			return fmt.Errorf("%w: %s", ErrForbiddenAddress, address)
		}
		if !g.Permitted(ap.Addr()) {
			return fmt.Errorf("%w: %s", ErrForbiddenAddress, ap.Addr())
		}
		return nil
	}}
	return d.DialContext
}

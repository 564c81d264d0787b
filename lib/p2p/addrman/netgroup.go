package addrman

import (
	"errors"
	"fmt"
	"net/netip"

	"github.com/cointoolkit/coin/lib/reason"
)

// Network groups and routability: what decides where an address is stored, which outbound
// peers may be drawn together, and which addresses a node stores and relays at all.

// Policy says which addresses a network stores and relays. Mainnet takes routable
// addresses only; regtest and testnet also private and loopback ones, each with its port,
// so that nodes on one host (different ports) and the network lab's private namespaces
// discover each other.
type Policy struct {
	AllowLocal bool
}

// special lists the IPv4 and IPv6 ranges that are never routable on the public internet
// besides those netip classifies (loopback, private, link-local, multicast, unspecified).
var special = []netip.Prefix{
	netip.MustParsePrefix("0.0.0.0/8"),
	netip.MustParsePrefix("100.64.0.0/10"), // carrier-grade NAT (RFC 6598)
	netip.MustParsePrefix("192.0.0.0/24"),  // IETF protocol assignments
	netip.MustParsePrefix("192.0.2.0/24"),  // TEST-NET-1
	netip.MustParsePrefix("198.18.0.0/15"), // benchmarking (RFC 2544)
	netip.MustParsePrefix("198.51.100.0/24"),
	netip.MustParsePrefix("203.0.113.0/24"),
	netip.MustParsePrefix("240.0.0.0/4"), // reserved, broadcast
	netip.MustParsePrefix("2001:db8::/32"),
	netip.MustParsePrefix("100::/64"), // discard-only
}

// Routable reports whether ip can be reached across the public internet.
func Routable(ip netip.Addr) bool {
	ip = ip.Unmap()
	if !ip.IsValid() || ip.IsUnspecified() || ip.IsLoopback() || ip.IsPrivate() || ip.IsMulticast() ||
		ip.IsLinkLocalUnicast() || ip.IsLinkLocalMulticast() || ip.IsInterfaceLocalMulticast() {
		return false
	}
	for _, p := range special {
		if p.Contains(ip) {
			return false
		}
	}
	return true
}

// local reports whether ip is a private or loopback address (what AllowLocal admits).
func local(ip netip.Addr) bool {
	ip = ip.Unmap()
	return ip.IsLoopback() || ip.IsPrivate()
}

// Acceptable reports whether ap may be stored and relayed under the policy: a usable IP
// and port, routable or (when AllowLocal) private or loopback.
func (p Policy) Acceptable(ap netip.AddrPort) bool {
	ip := ap.Addr().Unmap()
	if !ap.IsValid() || ap.Port() == 0 {
		return false
	}
	if Routable(ip) {
		return true
	}
	return p.AllowLocal && local(ip)
}

// Group is the network group of an address ("host:port" or an IP): the range one operator
// is assumed to control. IPv4 addresses are grouped by /16 and IPv6 by /32, as Bitcoin
// Core does, so that addresses from one range share buckets and at most one outbound peer
// comes from it. Loopback addresses are grouped by address and port: on one host each
// port is a separate node. A hostname (a --connect or --addnode name) is its own group.
func Group(addr string) string {
	if ap, err := netip.ParseAddrPort(addr); err == nil {
		ip := ap.Addr().Unmap()
		if ip.IsLoopback() {
			return netip.AddrPortFrom(ip, ap.Port()).String()
		}
		return ipGroup(ip)
	}
	if ip, err := netip.ParseAddr(addr); err == nil {
		return ipGroup(ip.Unmap())
	}
	if host, _, err := SplitAddr(addr); err == nil {
		return "host:" + host
	}
	return addr
}

func ipGroup(ip netip.Addr) string {
	bits := 32
	if ip.Is4() {
		bits = 16
	}
	if pfx, err := ip.Prefix(bits); err == nil {
		return pfx.String()
	}
	return ip.String()
}

// ErrInvalidAddr is returned for an address that is not host:port with a port from 1 to
// 65535.
var ErrInvalidAddr = errors.New("invalid address: want host:port")

// MaxAddedNodes bounds the list of added nodes (--addnode and the addnode RPC).
const MaxAddedNodes = 64

// Errors of the added-node list kept by the P2P layer (addnode, getaddednodeinfo), here
// so that the RPC layer tells them apart with errors.Is without importing lib/p2p. Those
// that Bitcoin Core answers with a code of their own carry a reason kind too (the RPC sends
// Core's code with data.reason, docs/rpc-errors.md).
var (
	ErrAlreadyAdded error = &kindError{reason.NodeAlreadyAdded, "node already added"}
	ErrNotAdded     error = &kindError{reason.NodeNotAdded, "node has not been added"}
	ErrTooManyAdded       = fmt.Errorf("too many added nodes (at most %d)", MaxAddedNodes)
	ErrBadCommand         = errors.New("invalid addnode command")
	// ErrNoNetwork: the node runs without a P2P layer.
	ErrNoNetwork error = &kindError{reason.P2PDisabled, "the node has no P2P network"}
)

// kindError is an error with the reason kind the RPC sends for it.
type kindError struct {
	kind reason.Reason
	msg  string
}

func (e *kindError) Error() string { return e.msg }
func (e *kindError) Unwrap() error { return e.kind }

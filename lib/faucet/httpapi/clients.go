package httpapi

import (
	"net"
	"net/http"
	"net/netip"
	"strings"
)

// Who a request comes from: the client the per-client limits (protocol §14) count.

// clientAddr is the IP address of the client that made r: the socket's peer, or, when
// trusted proxies (reverse proxies the operator runs) stand in front, the address the
// outermost trusted proxy saw. The last trustedProxies hops of the request's path (the
// socket's peer and the X-Forwarded-For entries appended by the proxies) are the proxies;
// the hop before them is the client. Anything a client wrote in X-Forwarded-For itself is
// to the left of that and is never read. A hop that is not an IP address, or too few hops,
// make the leftmost readable hop the client.
func clientAddr(r *http.Request, trustedProxies int) netip.Addr {
	peer := peerAddr(r)
	if trustedProxies <= 0 {
		return peer
	}
	var hops []string
	for _, h := range r.Header.Values("X-Forwarded-For") {
		for _, e := range strings.Split(h, ",") {
			hops = append(hops, strings.TrimSpace(e))
		}
	}
	// hops[len-1] was added by the proxy next to us (our socket's peer), and so on leftwards.
	client := peer
	for i := len(hops) - 1; i >= 0 && len(hops)-i <= trustedProxies; i-- {
		a, err := netip.ParseAddr(hops[i])
		if err != nil {
			break
		}
		client = a.Unmap()
	}
	return client
}

// peerAddr is the socket's peer address of r.
func peerAddr(r *http.Request) netip.Addr {
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		host = r.RemoteAddr
	}
	a, err := netip.ParseAddr(host)
	if err != nil {
		return netip.IPv6Unspecified()
	}
	return a.Unmap()
}

// clientNet is the network a client address is counted in: its IPv4 address (/32), or its
// IPv6 /64 (one site: a host gets a /64 or more from its provider, so counting single IPv6
// addresses would let one host claim without limit).
func clientNet(a netip.Addr) string {
	if a.Is4() {
		return a.String()
	}
	p, err := a.Prefix(64)
	if err != nil {
		return a.String()
	}
	return p.String()
}

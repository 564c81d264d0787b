package rpcserver

import (
	"fmt"
	"strings"
)

// Host names the operator allows (--rpc-allow-host): the Host check refuses every DNS name
// but localhost, because a page whose name an attacker makes resolve to the node (DNS
// rebinding) still sends its own name (docs/security.md). A client inside a private network
// that calls the node by a name of that network, a Kubernetes Service's
// (coin-network-node-0.coin-network-node), is no browser; its name, and only it, is allowed
// by listing it. An attacker would need that exact name resolving to their page.

// ParseAllowHost checks an --rpc-allow-host value, a DNS name without port, scheme or
// wildcard, and returns it in the form the Host header is compared with (lower case, no
// trailing dot).
func ParseAllowHost(s string) (string, error) {
	h := normHost(strings.TrimSpace(s))
	if h == "" || len(h) > 253 {
		return "", fmt.Errorf("host %q: want a DNS name (for example coin-network-node-0.coin-network-node)", s)
	}
	for _, label := range strings.Split(h, ".") {
		if label == "" || len(label) > 63 {
			return "", fmt.Errorf("host %q: empty or over-long label: want a DNS name without port or scheme", s)
		}
		for _, c := range label {
			if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-' || c == '_') {
				return "", fmt.Errorf("host %q: %q is not allowed in a DNS name (no port, scheme, path or wildcard)", s, c)
			}
		}
	}
	return h, nil
}

// allowHosts adds the operator's names to the hosts the Host check accepts.
func (a *access) allowHosts(names []string) error {
	for _, s := range names {
		h, err := ParseAllowHost(s)
		if err != nil {
			return err
		}
		a.hosts[h] = true
	}
	return nil
}

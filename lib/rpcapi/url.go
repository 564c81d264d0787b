package rpcapi

import (
	"fmt"
	"net/url"
	"strings"

	"github.com/cointoolkit/coin/lib/params"
)

// NodeURL is the node RPC URL a client should call: raw (the --rpc value, "host:port"
// accepted as http://host:port) when given, otherwise http://127.0.0.1 at net's default RPC
// port. net may be nil only when raw is given.
func NodeURL(raw string, net *params.Network) (string, error) {
	example := uint16(params.Mainnet.RPCPort)
	if net != nil {
		example = net.RPCPort
	}
	if raw == "" {
		if net == nil {
			return "", fmt.Errorf("no --rpc URL and no network to take the default port from")
		}
		return fmt.Sprintf("http://127.0.0.1:%d", net.RPCPort), nil
	}
	s := strings.TrimSpace(raw)
	if !strings.Contains(s, "://") {
		s = "http://" + s
	}
	u, err := url.Parse(s)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		// The value may carry credentials (http://user:password@host): echo it only with the
		// password masked, and not at all when it does not parse.
		if err != nil {
			return "", fmt.Errorf("--rpc: not a URL; want one such as http://127.0.0.1:%d", example)
		}
		return "", fmt.Errorf("--rpc %q: want a URL such as http://127.0.0.1:%d", u.Redacted(), example)
	}
	return s, nil
}

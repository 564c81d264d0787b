package rpcserver_test

import (
	"testing"

	"github.com/cointoolkit/coin/lib/rpcauth"
	"github.com/cointoolkit/coin/lib/rpcserver"
)

// TestAllowHostAcceptsOnlyListedNames: on a wildcard bind with credentials (a pod's RPC), a
// name listed in AllowHosts is accepted as the Host (any case, trailing dot, with a port) and
// reaches the handler; an unlisted name, a name that only ends with the listed one, and a
// browser's rebinding name stay 403 and never reach it. Without AllowHosts the listed name is
// refused too: the option is what lets it in.
func TestAllowHostAcceptsOnlyListedNames(t *testing.T) {
	line, pass, _ := rpcauth.Generate("alice")
	es, _ := rpcauth.ParseAll([]string{line})
	const name = "coin-network-node-0.coin-network-node"
	s, reached := guarded(t, rpcserver.HTTPConfig{Bind: "0.0.0.0:0", Auth: es, AuthFailureDelay: -1,
		AllowHosts: []string{name, "Coin-Network-RPC-1."}})
	want := map[string]int{
		name + ":38332":                               200,
		"COIN-NETWORK-NODE-0.coin-network-node.":      200,
		"coin-network-rpc-1:38332":                    200,
		"10.1.2.3:38332":                              200, // an IP literal, as before
		"coin-network-node-1.coin-network-node:38332": 403,
		"evil.coin-network-node-0.coin-network-node":  403,
		"evil.example:38332":                          403,
	}
	ok := int64(0)
	for host, code := range want {
		if resp := do(t, s, req{ctype: "application/json", host: host, user: "alice", pass: pass}); resp.StatusCode != code {
			t.Errorf("Host %s: %d, want %d", host, resp.StatusCode, code)
		}
		if code == 200 {
			ok++
		}
	}
	if got := reached.Load(); got != ok {
		t.Errorf("%d requests reached the handler, want %d (the accepted ones)", got, ok)
	}

	plain, _ := guarded(t, rpcserver.HTTPConfig{Bind: "0.0.0.0:0", Auth: es, AuthFailureDelay: -1})
	if resp := do(t, plain, req{ctype: "application/json", host: name + ":38332", user: "alice", pass: pass}); resp.StatusCode != 403 {
		t.Errorf("Host %s without AllowHosts: %d, want 403", name, resp.StatusCode)
	}
}

// TestParseAllowHost: a DNS name is taken in the form Host headers are compared with; a port,
// a scheme, a wildcard or an empty name is refused with a message, and Listen refuses it too.
func TestParseAllowHost(t *testing.T) {
	for in, want := range map[string]string{"Node-0.Coin.SVC.": "node-0.coin.svc", " rpc ": "rpc", "a_b.example": "a_b.example"} {
		if got, err := rpcserver.ParseAllowHost(in); err != nil || got != want {
			t.Errorf("ParseAllowHost(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	for _, bad := range []string{"", ".", "node:38332", "http://node", "*.svc", "a..b", "node/x", "[::1]"} {
		if got, err := rpcserver.ParseAllowHost(bad); err == nil {
			t.Errorf("ParseAllowHost(%q) = %q, want an error", bad, got)
		}
	}
	if _, err := rpcserver.Listen(rpcserver.HTTPConfig{Bind: "127.0.0.1:0", AllowHosts: []string{"*.svc"}, Logger: quietLogger()}); err == nil {
		t.Fatal("Listen took a wildcard host")
	}
}

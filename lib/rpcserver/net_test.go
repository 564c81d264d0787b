package rpcserver_test

import (
	"encoding/json"
	"testing"

	"github.com/cointoolkit/coin/lib/jsonrpc"
	"github.com/cointoolkit/coin/lib/params"
	"github.com/cointoolkit/coin/lib/rpcapi"
)

// TestNetMethodsWithoutP2P: on a node without a P2P layer the network methods answer the
// domain error p2p_disabled, after their parameters are checked; getpeerinfo lists no peer.
// (With a P2P layer they run through the real executables: cmd/coin-node's
// TestE2EManualBans.)
func TestNetMethodsWithoutP2P(t *testing.T) {
	e := newEnv(t, params.Regtest)
	for _, c := range []struct {
		method string
		params []any
	}{
		{"getnetworkinfo", nil}, {"getnettotals", nil}, {"listbanned", nil}, {"clearbanned", nil}, {"ping", nil},
		{"setnetworkactive", []any{false}}, {"disconnectnode", []any{"127.0.0.1:1"}},
		{"setban", []any{"10.0.0.0/8", "add"}}, {"setban", []any{"10.0.0.1", "remove"}},
	} {
		err := e.wantError(jsonrpc.CodeMisc, "P2P networking is disabled", true, c.method, c.params...)
		if d, ok := err.Data.(map[string]any); !ok || d["reason"] != "p2p_disabled" {
			t.Errorf("%s: data %v", c.method, err.Data)
		}
	}
	// Parameters are checked first.
	e.wantError(jsonrpc.CodeMisc, `invalid IP/subnet "10.0.0.0/40"`, false, "setban", "10.0.0.0/40", "add")
	e.wantError(jsonrpc.CodeInvalidParams, "setban: command must be add or remove", false, "setban", "10.0.0.1", "ban")
	e.wantError(jsonrpc.CodeInvalidParams, "setban: absolute bantime 5 is not in the future", true, "setban", "10.0.0.1", "add", 5, true)
	e.wantError(jsonrpc.CodeInvalidParams, "disconnectnode: give an address", false, "disconnectnode")
	e.wantError(jsonrpc.CodeInvalidParams, "disconnectnode: give an address or a nodeid, not both", true, "disconnectnode", "1.2.3.4:5", 3)
	var pi rpcapi.PeerInfo
	if err := json.Unmarshal(e.mustCall("getpeerinfo"), &pi); err != nil || pi.Connected != 0 || pi.Peers == nil {
		t.Fatalf("getpeerinfo %+v (%v)", pi, err)
	}
}

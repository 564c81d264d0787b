package main

import (
	"net/http"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestE2EAllowHost: --rpc-allow-host lets a client that calls the node by a private
// network's name (a Kubernetes Service's) in, and only that name: another name still gets
// 403 and its "stop" does nothing. A malformed name stops the node at start with a message.
func TestE2EAllowHost(t *testing.T) {
	const name = "coin-network-node-0.coin-network-node"
	n := newTestNode(t, "--rpc-allow-host", name)
	port := strings.TrimPrefix(n.RPCAddr, "127.0.0.1:")
	json := map[string]string{"Content-Type": "application/json"}
	for host, want := range map[string]int{"evil.example:" + port: 403, "coin-network-node-1.coin-network-node:" + port: 403} {
		json["Host"] = host
		if status, body := rawPost(t, n.URL(), stopBody, json); status != want {
			t.Errorf("Host %s: stop answered %d %s, want %d", host, status, body, want)
		}
	}
	if n.Proc.Exited() {
		t.Fatalf("a refused stop stopped the node\n%s", n.Proc.Out.Tail(30))
	}
	json["Host"] = name + ":" + port
	status, body := rawPost(t, n.URL(), `{"jsonrpc":"2.0","method":"getblockcount","params":[],"id":1}`, json)
	if status != http.StatusOK || !strings.Contains(body, `"result":0`) {
		t.Fatalf("Host %s: getblockcount answered %d %s, want 200 and 0", name, status, body)
	}

	out, err := exec.Command(filepath.Join(bins(t), "coin-node"), "--network", "regtest", "--data-dir", t.TempDir(),
		"--rpc-bind", "127.0.0.1:0", "--rpc-allow-host", "node:38332").CombinedOutput()
	if err == nil || !strings.Contains(string(out), "--rpc-allow-host") {
		t.Fatalf("--rpc-allow-host node:38332: %v\n%s", err, out)
	}
}

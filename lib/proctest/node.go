package proctest

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/cointoolkit/coin/lib/rpcapi"
)

// NodeTimeout bounds how long Node.Start waits for the node to answer.
const NodeTimeout = 20 * time.Second

// Node is a regtest coin-node with its own data directory and loopback ports.
type Node struct {
	Bin     string   // the coin-node executable
	DataDir string   // --data-dir
	RPCAddr string   // --rpc-bind, 127.0.0.1:port
	P2PPort int      // --p2p-port
	Extra   []string // more arguments, after the others; read by each Start
	Proc    *Proc    // the latest process; nil before the first Start
	RPC     *rpcapi.Client
	started bool // came up at least once: its ports are known to others, keep them
}

// NewNode prepares a node (a fresh data directory, free ports, an RPC client) without
// starting it.
func NewNode(t testing.TB, bin string, extra ...string) *Node {
	t.Helper()
	n := &Node{Bin: bin, DataDir: t.TempDir(), RPCAddr: fmt.Sprintf("127.0.0.1:%d", FreePort(t)),
		P2PPort: FreePort(t), Extra: extra}
	n.RPC = rpcapi.NewClient(n.URL())
	t.Cleanup(func() { n.RPC.Close() })
	return n
}

// StartNode is NewNode and Start.
func StartNode(t testing.TB, bin string, extra ...string) *Node {
	t.Helper()
	n := NewNode(t, bin, extra...)
	n.Start(t)
	return n
}

// Args is the node's command line after the executable.
func (n *Node) Args() []string {
	return append([]string{"--network", "regtest", "--data-dir", n.DataDir, "--rpc-bind", n.RPCAddr,
		"--p2p-port", strconv.Itoa(n.P2PPort)}, n.Extra...)
}

// Start runs the node, for the first time or again after it stopped, and waits until it
// answers getblockcount; the test fails if it does not within NodeTimeout.
func (n *Node) Start(t testing.TB) {
	t.Helper()
	if n.Proc != nil && !n.Proc.Exited() {
		t.Fatalf("coin-node on %s is still running", n.DataDir)
	}
	for attempt := 1; ; attempt++ {
		n.Proc = Start(t, n.Bin, n.Args()...)
		err := n.waitUp()
		if err == nil {
			n.started = true
			return
		}
		// A port drawn by FreePort can be taken by a parallel test before the node binds it;
		// before anyone knows this node's ports, draw new ones and try again.
		if !n.started && attempt < 4 && n.Proc.Exited() && strings.Contains(n.Proc.Out.String(), "address already in use") {
			n.RPCAddr, n.P2PPort = fmt.Sprintf("127.0.0.1:%d", FreePort(t)), FreePort(t)
			n.RPC.Close()
			n.RPC = rpcapi.NewClient(n.URL())
			continue
		}
		t.Fatalf("coin-node did not come up: %v\n%s", err, n.Proc.Out.Tail(outputLines))
	}
}

// waitUp waits until the node answers getblockcount, its process exits, or NodeTimeout.
func (n *Node) waitUp() error {
	deadline := time.Now().Add(NodeTimeout)
	for {
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		_, err := n.RPC.GetBlockCount(ctx)
		cancel()
		if err == nil {
			return nil
		}
		if n.Proc.Exited() || time.Now().After(deadline) {
			return err
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// URL is the node's RPC URL.
func (n *Node) URL() string { return "http://" + n.RPCAddr }

// P2PAddr is the node's P2P address, for another node's --connect.
func (n *Node) P2PAddr() string { return fmt.Sprintf("127.0.0.1:%d", n.P2PPort) }

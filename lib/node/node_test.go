package node

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"testing"
	"time"

	"github.com/cointoolkit/coin/lib/consensus"
	"github.com/cointoolkit/coin/lib/p2p"
	"github.com/cointoolkit/coin/lib/params"
	"github.com/cointoolkit/coin/lib/proctest"
	"github.com/cointoolkit/coin/lib/types"
)

func startTestNode(t *testing.T, p2pCfg *p2p.Config) *Node {
	t.Helper()
	n, err := New(context.Background(), Config{Network: params.Regtest, DataDir: t.TempDir(), P2P: p2pCfg, MinFreeDiskPercent: 1e-9,
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- n.Run(ctx) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("Run: %v", err)
		}
	})
	return n
}

func waitUntil(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// TestP2PWiring: Config.P2P gives the node a P2P layer on its chain and mempool; a block
// submitted to one node reaches the other, and Peers reports the connection for RPC.
func TestP2PWiring(t *testing.T) {
	addr := fmt.Sprintf("127.0.0.1:%d", proctest.FreePort(t))
	a := startTestNode(t, &p2p.Config{ListenAddr: addr, MaxOutbound: -1})
	b := startTestNode(t, &p2p.Config{Connect: []string{addr}})
	waitUntil(t, "the nodes connected", func() bool { return len(a.Peers()) == 1 && len(b.Peers()) == 1 })
	if p := b.Peers()[0]; p.Addr != addr || p.Inbound || p.ConnTime == 0 {
		t.Fatalf("b's peer %+v", p)
	}
	if p := a.Peers()[0]; !p.Inbound {
		t.Fatalf("a's peer %+v", p)
	}

	next := a.Chain().NextBlock()
	blk := types.NewBlock(types.BlockSpec{Parent: next.Parent, Height: next.Height, Target: next.Target,
		Timestamp: max(uint64(time.Now().Unix()), next.MinTimestamp), Reward: consensus.Subsidy(next.Height)})
	if err := types.SolveBlock(blk, 1<<32); err != nil {
		t.Fatal(err)
	}
	if _, err := a.SubmitBlock(context.Background(), blk); err != nil {
		t.Fatal(err)
	}
	waitUntil(t, "the block at b", func() bool { return b.Chain().Tip().Hash == blk.Hash() })
	if b.Syncing() {
		t.Fatal("b syncing once at a's tip")
	}
}

// TestNoNetwork: without Config.P2P the node runs alone.
func TestNoNetwork(t *testing.T) {
	n := startTestNode(t, nil)
	if n.Peers() == nil || len(n.Peers()) != 0 || n.Syncing() {
		t.Fatal("a node without a network reports peers or syncing")
	}
}

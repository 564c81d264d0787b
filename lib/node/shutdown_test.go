package node

import (
	"context"
	"errors"
	"log/slog"
	"testing"
	"time"

	"github.com/cointoolkit/coin/lib/chaingen"
	"github.com/cointoolkit/coin/lib/chainstate"
	"github.com/cointoolkit/coin/lib/consensus"
	"github.com/cointoolkit/coin/lib/params"
	"github.com/cointoolkit/coin/lib/types"
)

// TestShutdownCancelsLongReorg: when Run's context ends while SubmitBlock runs a long
// reorganisation (here 1,500 blocks off and 1,501 on), the reorganisation stops between two
// blocks: Run returns promptly, SubmitBlock returns context.Canceled with the part done,
// the chain is consistent, and the next start finishes the reorganisation.
func TestShutdownCancelsLongReorg(t *testing.T) {
	const depth = 1500
	dir := t.TempDir()
	cfg := Config{Network: params.Regtest, DataDir: dir, MinFreeDiskPercent: 1e-9, Values: consensus.NominalValue{},
		Logger: slog.New(slog.DiscardHandler)}
	n, err := New(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	_, _, side := beforeReorg(t, n, depth)

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	runDone := make(chan error, 1)
	go func() { runDone <- n.Run(ctx) }()
	type submitted struct {
		res *chainstate.Result
		err error
	}
	sub := make(chan submitted, 1)
	started := time.Now()
	go func() {
		res, err := n.SubmitBlock(context.Background(), side[depth])
		sub <- submitted{res, err}
	}()
	// Once SubmitBlock holds the processing slot it is in (or about to enter) the chain's
	// reorganisation; give it a moment to be well inside.
	for len(n.proc) == 0 && time.Since(started) < 10*time.Second {
		time.Sleep(time.Millisecond)
	}
	time.Sleep(5 * time.Millisecond)
	cancel()
	stopped := time.Now()
	select {
	case err := <-runDone:
		if err != nil {
			t.Fatalf("Run: %v", err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("Run did not return within 30 s of its context ending")
	}
	shutdown := time.Since(stopped)
	s := <-sub
	if !errors.Is(s.err, context.Canceled) || s.res == nil || len(s.res.Connected) >= depth+1 {
		var done string
		if s.res != nil {
			done = " after " + time.Since(started).String()
		}
		t.Fatalf("SubmitBlock during shutdown: %v%s (result %v): the reorganisation was not cut short", s.err, done, s.res != nil)
	}
	t.Logf("shutdown took %v; the reorganisation had disconnected %d and connected %d of %d blocks",
		shutdown, len(s.res.Disconnected), len(s.res.Connected), depth+1)
	if shutdown > 5*time.Second {
		t.Errorf("shutdown took %v", shutdown)
	}

	n2, err := New(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer n2.Chain().Close()
	if tip := n2.Chain().Tip(); tip.Hash != side[depth].Hash() || tip.Height != depth+1 {
		t.Fatalf("tip after restarting: height %d %s, want the side branch's %d", tip.Height, tip.Hash, depth+1)
	}
}

// beforeReorg gives n a main chain "a" of depth blocks and a side branch "b" of depth blocks
// from genesis, one block short of the reorganisation that side[depth] (returned, with the
// generator and the a branch's last block's name) sets off: depth blocks off, depth+1 on.
func beforeReorg(t *testing.T, n *Node, depth int) (g *chaingen.Generator, aTip string, side []*types.Block) {
	t.Helper()
	g = chaingen.New(t, params.Regtest)
	aTip = g.Chain("a", "genesis", depth)
	for _, b := range g.Branch(aTip) {
		if _, err := n.SubmitBlock(context.Background(), b); err != nil {
			t.Fatal(err)
		}
	}
	side = g.Branch(g.Chain("b", "genesis", depth+1))
	for _, b := range side[:depth] {
		if _, err := n.SubmitBlock(context.Background(), b); err != nil {
			t.Fatal(err)
		}
	}
	return g, aTip, side
}

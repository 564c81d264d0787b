package node

import (
	"context"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/cointoolkit/coin/lib/consensus"
	"github.com/cointoolkit/coin/lib/params"
	"github.com/cointoolkit/coin/lib/types"
)

// TestBlockNotify: --blocknotify runs the command through the shell for each new tip with %s
// replaced by the tip's hash (every occurrence), and not for a block that does not move the
// tip.
func TestBlockNotify(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "tips")
	n, err := New(context.Background(), Config{Network: params.Regtest, DataDir: filepath.Join(dir, "data"), MinFreeDiskPercent: 1e-9,
		Logger:      slog.New(slog.NewTextHandler(io.Discard, nil)),
		BlockNotify: "echo %s-%s >> '" + out + "'"})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- n.Run(ctx) }()
	defer func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("Run: %v", err)
		}
	}()
	mine := func(ts uint64) *types.Block {
		next := n.Chain().NextBlock()
		blk := types.NewBlock(types.BlockSpec{Parent: next.Parent, Height: next.Height, Target: next.Target,
			Timestamp: max(ts, next.MinTimestamp), Reward: consensus.Subsidy(next.Height)})
		if err := types.SolveBlock(blk, 1<<32); err != nil {
			t.Fatal(err)
		}
		return blk
	}
	now := uint64(time.Now().Unix())
	var want []string
	for i := range 3 {
		b := mine(now + uint64(i))
		if _, err := n.SubmitBlock(context.Background(), b); err != nil {
			t.Fatal(err)
		}
		want = append(want, b.Hash().String()+"-"+b.Hash().String())
	}
	// A sibling of the tip with equal work does not move it: no run.
	tip := n.Chain().Tip()
	next := n.Chain().NextBlock()
	side := types.NewBlock(types.BlockSpec{Parent: tip.Parent.Hash, Height: tip.Height, Target: next.Target,
		Timestamp: tip.Header.Timestamp + 1, Reward: consensus.Subsidy(tip.Height)})
	if err := types.SolveBlock(side, 1<<32); err != nil {
		t.Fatal(err)
	}
	if _, err := n.SubmitBlock(context.Background(), side); err != nil {
		t.Fatal(err)
	}
	waitUntil(t, "three runs", func() bool {
		b, _ := os.ReadFile(out)
		return strings.Count(string(b), "\n") >= 3
	})
	// The runs may end in any order (four run at once): compare as sets.
	b, _ := os.ReadFile(out)
	got := strings.Fields(string(b))
	if len(got) != 3 {
		t.Fatalf("runs wrote %q, want %q", got, want)
	}
	for _, w := range want {
		found := false
		for _, g := range got {
			found = found || g == w
		}
		if !found {
			t.Fatalf("runs wrote %q, want %q", got, want)
		}
	}
}

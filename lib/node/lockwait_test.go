package node

import (
	"context"
	"errors"
	"log/slog"
	"testing"
	"time"

	"github.com/cointoolkit/coin/lib/chainstate"
	"github.com/cointoolkit/coin/lib/consensus"
	"github.com/cointoolkit/coin/lib/params"
)

// TestSubmitBlockGivesUpOnChainLock: while a long reorganisation (1,000 blocks off, 1,001
// on) holds the chain's lock but not the node's processing slot, a SubmitBlock whose
// context ends gives up waiting for the chain within milliseconds, with the context's error,
// and the block it brought is not stored.
func TestSubmitBlockGivesUpOnChainLock(t *testing.T) {
	const depth = 1000
	cfg := Config{Network: params.Regtest, DataDir: t.TempDir(), MinFreeDiskPercent: 1e-9, Values: consensus.NominalValue{},
		Logger: slog.New(slog.DiscardHandler)}
	n, err := New(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer n.Chain().Close()
	g, aTip, side := beforeReorg(t, n, depth)
	late := g.Next("a-late", aTip, nil)

	type reorged struct {
		err        error
		start, end time.Time
	}
	reorgDone := make(chan reorged, 1)
	go func() {
		start := time.Now()
		_, err := n.Chain().ProcessBlock(context.Background(), side[depth])
		reorgDone <- reorged{err, start, time.Now()}
	}()
	waitWriterInside(t, n.Chain())
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	res, err := n.SubmitBlock(ctx, late)
	returned := time.Now()
	deadline, _ := ctx.Deadline()
	r := <-reorgDone
	if r.err != nil {
		t.Fatal(r.err)
	}
	t.Logf("SubmitBlock returned %.2f ms after its deadline; the reorganisation took %d ms and ended %d ms after the deadline",
		float64(returned.Sub(deadline).Microseconds())/1000, r.end.Sub(r.start).Milliseconds(), r.end.Sub(deadline).Milliseconds())
	if r.end.Before(deadline) {
		t.Fatal("the reorganisation ended before SubmitBlock's deadline: the test lost its point")
	}
	if !errors.Is(err, context.DeadlineExceeded) || res != nil {
		t.Fatalf("SubmitBlock behind a reorganisation holding the chain's lock: %+v, %v, want context.DeadlineExceeded", res, err)
	}
	if d := returned.Sub(deadline); d > time.Second || !returned.Before(r.end) {
		t.Errorf("SubmitBlock returned %v after its deadline, waiting for the reorganisation", d)
	}
	if st := n.Chain().HeaderState(late.Hash()); st.Node != nil {
		t.Fatal("the block of a SubmitBlock that gave up was stored")
	}
	if tip := n.Chain().Tip(); tip.Hash != side[depth].Hash() {
		t.Fatalf("tip after the reorganisation: %d %s", tip.Height, tip.Hash)
	}
	// Offered again, it is taken (as a side block).
	if _, err := n.SubmitBlock(context.Background(), late); err != nil {
		t.Fatal(err)
	}
	if st := n.Chain().HeaderState(late.Hash()); !st.HaveBlock {
		t.Fatal("the block offered again was not stored")
	}
}

// waitWriterInside returns once a writer holds c's lock: a read of the tip, which waits for
// writers, has not returned within 20 ms. A plain sleep would be a guess that the writer's
// goroutine has run by then, which a loaded machine need not keep.
func waitWriterInside(t *testing.T, c *chainstate.Chain) {
	t.Helper()
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); {
		read := make(chan struct{})
		go func() { c.Tip(); close(read) }()
		select {
		case <-read:
			time.Sleep(time.Millisecond)
		case <-time.After(20 * time.Millisecond):
			return
		}
	}
	t.Fatal("no writer took the chain's lock within 30 s")
}

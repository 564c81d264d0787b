package chainfollow

import (
	"context"
	"path/filepath"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/cointoolkit/coin/lib/keys"
	"github.com/cointoolkit/coin/lib/params"
	"github.com/cointoolkit/coin/lib/proctest"
	"github.com/cointoolkit/coin/lib/types"
)

// recorder is a subscriber that checks each update against the chain it has built (the
// model) and lets the test wait for a state.
type recorder struct {
	mu sync.Mutex
	m  model
	ch chan struct{}
}

func (r *recorder) apply(ctx context.Context, u Update) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	err := r.m.apply(ctx, u)
	select {
	case r.ch <- struct{}{}:
	default:
	}
	return err
}

func (r *recorder) waitFor(t *testing.T, what string, cond func(m *model) bool) {
	t.Helper()
	deadline := time.After(30 * time.Second)
	for {
		r.mu.Lock()
		ok := cond(&r.m)
		r.mu.Unlock()
		if ok {
			return
		}
		select {
		case <-r.ch:
		case <-time.After(100 * time.Millisecond):
		case <-deadline:
			r.mu.Lock()
			defer r.mu.Unlock()
			t.Fatalf("timed out waiting for %s: chain %v from %d, undone %v", what, r.m.chain, r.m.base, r.m.undone)
		}
	}
}

func nodeHashes(t *testing.T, n *proctest.Node) []string {
	t.Helper()
	ctx := context.Background()
	tip, err := n.RPC.GetBlockCount(ctx)
	if err != nil {
		t.Fatal(err)
	}
	out := make([]string, tip+1)
	for h := uint64(0); h <= tip; h++ {
		if out[h], err = n.RPC.GetBlockHash(ctx, h); err != nil {
			t.Fatal(err)
		}
	}
	return out
}

func regtestAddr(b byte) string {
	a, _ := keys.EncodeAddress(params.Regtest.HRP, keys.PubKeyHash(types.Hash{b}))
	return a
}

// TestFollowRealNodes: the follower on coin-node's push stream (polling only every minute,
// so the stream alone must bring the blocks quickly) sees node A's blocks in order; when A
// meets B, whose branch is longer, A's blocks are disconnected newest first and B's
// connected; after A restarts (a new stream, its events renumbered) the follower resumes
// and brings the next block.
func TestFollowRealNodes(t *testing.T) {
	if testing.Short() {
		t.Skip("starts two coin-node processes")
	}
	bin := filepath.Join(proctest.Build(t, "./cmd/coin-node"), "coin-node")
	a := proctest.StartNode(t, bin, "--listen=false")
	b := proctest.StartNode(t, bin)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()

	f := New(a.RPC, Config{Mempool: true, PollInterval: time.Minute, CheckInterval: time.Minute})
	r := &recorder{m: model{t: t}, ch: make(chan struct{}, 1)}
	f.Subscribe(r.apply)
	done := make(chan struct{})
	go func() { f.Run(ctx); close(done) }()
	defer func() { cancel(); <-done }()
	r.waitFor(t, "the first update", func(m *model) bool { return m.chain != nil })
	waitStreaming(t, f)

	if _, err := a.RPC.GenerateToAddress(ctx, 2, regtestAddr(1)); err != nil {
		t.Fatal(err)
	}
	r.waitFor(t, "A's two blocks", func(m *model) bool { return len(m.chain) == 3 })
	onA := nodeHashes(t, a)
	if !r.m.matches(onA) {
		t.Fatalf("follower %v, node A %v", r.m.chain, onA)
	}

	// B mines a longer branch alone; A connects to it and reorganises.
	if _, err := b.RPC.GenerateToAddress(ctx, 4, regtestAddr(2)); err != nil {
		t.Fatal(err)
	}
	onB := nodeHashes(t, b)
	if err := a.RPC.Call(ctx, "addnode", []any{b.P2PAddr(), "onetry"}, nil); err != nil {
		t.Fatal(err)
	}
	r.waitFor(t, "A on B's branch", func(m *model) bool { return m.matches(onB) })
	if want := []string{onA[2], onA[1]}; !slices.Equal(r.m.undone, want) {
		t.Fatalf("undone %v, want A's blocks newest first %v", r.m.undone, want)
	}

	// A restarts: the stream comes back with a new id; the next block still arrives.
	resyncs := r.m.resync
	a.Proc.Stop(t, 20*time.Second)
	a.Start(t)
	waitStreaming(t, f)
	if _, err := a.RPC.GenerateToAddress(ctx, 1, regtestAddr(1)); err != nil {
		t.Fatal(err)
	}
	onA = nodeHashes(t, a)
	r.waitFor(t, "the block after A's restart", func(m *model) bool { return m.matches(onA) })
	if r.m.resync <= resyncs {
		t.Fatalf("no resync after the node restarted (resyncs %d)", r.m.resync)
	}
}

func waitStreaming(t *testing.T, f *Follower) {
	t.Helper()
	for deadline := time.Now().Add(20 * time.Second); !f.Streaming(); time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the follower never read the node's stream")
		}
	}
}

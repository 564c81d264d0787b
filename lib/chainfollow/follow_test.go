package chainfollow

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"

	"github.com/cointoolkit/coin/lib/rpcapi"
)

// memChain is a node's main chain in memory, for the follower's bookkeeping (the real-node
// tests, follow_e2e_test.go, check the same against coin-node).
type memChain struct {
	mu     sync.Mutex
	blocks []rpcapi.Block
	pool   []string
	fail   bool
}

func newMemChain() *memChain {
	return &memChain{blocks: []rpcapi.Block{{Hash: "genesis", Height: 0, Tx: []string{"cb-genesis"}}}}
}

var errDown = errors.New("node down")

func (m *memChain) mine(tag string, n int) {
	m.mu.Lock()
	defer m.mu.Unlock()
	for i := 0; i < n; i++ {
		top := m.blocks[len(m.blocks)-1]
		h := top.Height + 1
		hash := fmt.Sprintf("%s-%d", tag, h)
		m.blocks = append(m.blocks, rpcapi.Block{Hash: hash, Height: h, PrevHash: top.Hash, Tx: []string{"cb-" + hash, "tx-" + hash}})
	}
}

// reorg undoes depth blocks, then mines n on tag.
func (m *memChain) reorg(depth int, tag string, n int) {
	m.mu.Lock()
	m.blocks = m.blocks[:len(m.blocks)-depth]
	m.mu.Unlock()
	m.mine(tag, n)
}

func (m *memChain) GetBlockCount(context.Context) (uint64, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.fail {
		return 0, errDown
	}
	return uint64(len(m.blocks) - 1), nil
}

func (m *memChain) GetBlockHash(_ context.Context, h uint64) (string, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.fail || h >= uint64(len(m.blocks)) {
		return "", errDown
	}
	return m.blocks[h].Hash, nil
}

func (m *memChain) GetBlock(_ context.Context, hash string) (*rpcapi.Block, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, b := range m.blocks {
		if b.Hash == hash && !m.fail {
			return &b, nil
		}
	}
	return nil, errDown
}

func (m *memChain) GetRawMempool(context.Context) ([]string, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return slices.Clone(m.pool), nil
}

func (m *memChain) hashes() []string {
	m.mu.Lock()
	defer m.mu.Unlock()
	var out []string
	for _, b := range m.blocks {
		out = append(out, b.Hash)
	}
	return out
}

// model applies updates the way a subscriber keeping the chain would, and fails the test
// when one does not fit: a disconnected block that is not its top, a connected one that
// does not extend it.
type model struct {
	t      *testing.T
	chain  []string // hashes by height from base
	base   uint64
	undone []string // every disconnected hash, in the order told
	resync int
}

func (m *model) apply(_ context.Context, u Update) error {
	m.t.Helper()
	if u.Resync {
		m.resync++
	}
	if m.chain == nil && u.Tip.Hash != "" && len(u.Disconnected) == 0 && len(u.Connected) == 0 {
		m.chain, m.base = []string{u.Tip.Hash}, u.Tip.Height
		return nil
	}
	for _, d := range u.Disconnected {
		m.undone = append(m.undone, d.Hash)
		if n := len(m.chain); n == 0 || m.chain[n-1] != d.Hash {
			if u.Resync { // deeper than the follower remembers
				continue
			}
			m.t.Fatalf("disconnected %s is not the top of %v", d.Hash, m.chain)
		}
		m.chain = m.chain[:len(m.chain)-1]
	}
	for _, c := range u.Connected {
		if len(c.Txs) == 0 || c.Seen.IsZero() {
			m.t.Fatalf("connected block without its transactions or time: %+v", c)
		}
		if n := len(m.chain); n > 0 && m.chain[n-1] != c.PrevHash {
			if !u.Resync {
				m.t.Fatalf("connected %s (prev %s) does not extend %v", c.Hash, c.PrevHash, m.chain)
			}
			m.chain = nil
		}
		if len(m.chain) == 0 {
			m.base = c.Height
		}
		m.chain = append(m.chain, c.Hash)
	}
	return nil
}

// tail is the model's chain as the node's hashes from the model's base.
func (m *model) matches(node []string) bool {
	return slices.Equal(m.chain, node[m.base:])
}

func round(t *testing.T, f *Follower) {
	t.Helper()
	for {
		more, err := f.Round(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		if !more {
			return
		}
	}
}

// TestFollowReorg: blocks come in order; a reorganisation two blocks deep is told once, its
// blocks disconnected newest first with their transactions, then the new branch connected.
func TestFollowReorg(t *testing.T) {
	node := newMemChain()
	node.mine("a", 3)
	f := New(node, Config{Mempool: true})
	m := &model{t: t}
	f.Subscribe(m.apply)
	round(t, f) // starts at the tip
	if m.chain[0] != "a-3" || m.resync != 1 {
		t.Fatalf("start: %v (resync %d)", m.chain, m.resync)
	}
	if tip, ok := f.Tip(); !ok || tip != (BlockRef{3, "a-3"}) {
		t.Fatalf("Tip %v %v, want a-3", tip, ok)
	}
	node.mine("a", 2)
	round(t, f)
	node.reorg(2, "b", 3)
	var disc []Block
	f.Subscribe(func(_ context.Context, u Update) error { disc = append(disc, u.Disconnected...); return nil })
	round(t, f)
	if !m.matches(node.hashes()) {
		t.Fatalf("follower's chain %v from %d, node's %v", m.chain, m.base, node.hashes())
	}
	if len(disc) != 2 || disc[0].Hash != "a-5" || disc[1].Hash != "a-4" || !slices.Equal(disc[0].Txs, []string{"cb-a-5", "tx-a-5"}) {
		t.Fatalf("disconnected %+v, want a-5 then a-4 with their transactions", disc)
	}
	if m.resync != 1 {
		t.Fatalf("a reorganisation within the depth asked for %d resyncs", m.resync-1)
	}
}

// TestFollowStartPosition: a follower started from a stored position (a subscriber's,
// after a restart) disconnects the stored blocks the node no longer has and connects the
// blocks mined since.
func TestFollowStartPosition(t *testing.T) {
	node := newMemChain()
	node.mine("a", 4)
	start := []BlockRef{{2, "a-2"}, {3, "a-3"}, {4, "a-4"}}
	node.reorg(1, "b", 3) // a-4 undone while the subscriber was away; b-4..b-6 mined
	f := New(node, Config{Start: start})
	m := &model{t: t, chain: []string{"a-2", "a-3", "a-4"}, base: 2}
	f.Subscribe(m.apply)
	round(t, f)
	if !m.matches(node.hashes()) || !slices.Equal(m.undone, []string{"a-4"}) {
		t.Fatalf("chain %v undone %v; node %v", m.chain, m.undone, node.hashes())
	}
}

// TestFollowDeepReorg: a reorganisation deeper than the remembered blocks disconnects all of
// them, asks for a resync and goes on from below them.
func TestFollowDeepReorg(t *testing.T) {
	node := newMemChain()
	node.mine("a", 2)
	f := New(node, Config{Depth: 3})
	m := &model{t: t}
	f.Subscribe(m.apply)
	round(t, f)
	node.mine("a", 5) // remembered: a-5, a-6, a-7
	round(t, f)
	node.reorg(5, "b", 6)
	var last Update
	f.Subscribe(func(_ context.Context, u Update) error { last = u; return nil })
	round(t, f)
	if !last.Resync || len(last.Disconnected) != 3 || last.Disconnected[0].Hash != "a-7" || last.Tip.Hash != "b-8" {
		t.Fatalf("deep reorg update: %+v", last)
	}
	if got := m.chain[len(m.chain)-1]; got != "b-8" {
		t.Fatalf("follower's tip %s, want b-8", got)
	}
}

// TestFollowSubscriberRetry: a subscriber that fails is given the update again, merged with
// the next one: blocks it was never given that left the chain meanwhile cancel out, so it
// sees each block once and in order; other subscribers are not held back.
func TestFollowSubscriberRetry(t *testing.T) {
	node := newMemChain()
	f := New(node, Config{Mempool: true})
	fail := true
	m := &model{t: t}
	f.Subscribe(func(ctx context.Context, u Update) error {
		if fail && len(u.Connected) > 0 {
			return errors.New("store busy")
		}
		return m.apply(ctx, u)
	})
	other := &model{t: t}
	f.Subscribe(other.apply)
	round(t, f)
	node.mine("a", 3)
	if _, err := f.Round(context.Background()); !errors.Is(err, errSubscriber) {
		t.Fatalf("round with a failing subscriber: %v", err)
	}
	if !other.matches(node.hashes()) || m.matches(node.hashes()) {
		t.Fatalf("other %v, failing %v", other.chain, m.chain)
	}
	node.reorg(1, "b", 2)
	node.pool = []string{"p1"}
	fail = false
	round(t, f)
	if !m.matches(node.hashes()) || len(m.undone) != 0 {
		t.Fatalf("after the retry: chain %v (undone %v), node %v", m.chain, m.undone, node.hashes())
	}
	if !other.matches(node.hashes()) || !slices.Equal(other.undone, []string{"a-3"}) {
		t.Fatalf("other: %v undone %v", other.chain, other.undone)
	}
}

// TestFollowNodeAway: rounds fail while the node is away; the first one after it is back
// asks for a resync (its mempool may be gone) and brings the blocks.
func TestFollowNodeAway(t *testing.T) {
	node := newMemChain()
	f := New(node, Config{Mempool: true})
	var ups []Update
	f.Subscribe(func(_ context.Context, u Update) error { ups = append(ups, u); return nil })
	round(t, f)
	node.fail = true
	if _, err := f.Round(context.Background()); !errors.Is(err, errDown) {
		t.Fatalf("round with the node away: %v", err)
	}
	node.fail = false
	node.mine("a", 1)
	node.pool = []string{"p1"}
	f.mu.Lock()
	f.poolDirt = true
	f.mu.Unlock()
	round(t, f)
	u := ups[len(ups)-1]
	if !u.Resync || len(u.Connected) != 1 || !u.MempoolRead || !slices.Equal(u.Mempool, []string{"p1"}) {
		t.Fatalf("update after the node came back: %+v", u)
	}
}

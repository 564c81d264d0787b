package chainstate

import (
	"context"
	"errors"
	"math/big"
	"path/filepath"
	"testing"
	"time"

	"github.com/cointoolkit/coin/lib/consensus"
	"github.com/cointoolkit/coin/lib/params"
	"github.com/cointoolkit/coin/lib/pow"
	"github.com/cointoolkit/coin/lib/types"
)

// headerClock is the fixed clock of the header tests: well after every test block.
var headerClock = time.Unix(1_900_000_000, 0)

func openHeaderChain(t *testing.T, opts Options) (*Chain, string) {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "db")
	opts.Now = func() time.Time { return headerClock }
	c, err := Open(context.Background(), dir, params.Regtest, opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c, dir
}

// hdrBlock builds a solved regtest block on parent (a coinbase only); mutate may change the
// header before it is solved.
func hdrBlock(t *testing.T, parent *types.Block, height uint64, tag string, mutate ...func(*types.BlockHeader)) *types.Block {
	t.Helper()
	b := types.NewBlock(types.BlockSpec{Parent: parent.Hash(), Height: height, Target: params.Regtest.PowLimitBits,
		Timestamp: parent.Header.Timestamp + 60, Reward: consensus.Subsidy(height), Extra: []byte(tag)})
	for _, m := range mutate {
		m(&b.Header)
	}
	if err := types.SolveBlock(b, 1<<20); err != nil {
		t.Fatal(err)
	}
	return b
}

// hdrChain builds n blocks on parent, heights from height.
func hdrChain(t *testing.T, parent *types.Block, height uint64, n int, tag string) []*types.Block {
	t.Helper()
	var out []*types.Block
	for i := 0; i < n; i++ {
		parent = hdrBlock(t, parent, height+uint64(i), tag)
		out = append(out, parent)
	}
	return out
}

func wantRule(t *testing.T, err error, kind consensus.ErrorKind) {
	t.Helper()
	if !errors.Is(err, kind) || !consensus.IsRuleError(err) {
		t.Fatalf("got %v, want a rule error of kind %s", err, kind)
	}
}

func mustBlock(t *testing.T, c *Chain, b *types.Block) *Result {
	t.Helper()
	res, err := c.ProcessBlock(context.Background(), b)
	if err != nil {
		t.Fatalf("block %s: %v", b.Hash(), err)
	}
	return res
}

func TestProcessBlockHeaderAccepted(t *testing.T) {
	c, _ := openHeaderChain(t, Options{})
	g := params.Regtest.GenesisBlock()
	bs := hdrChain(t, g, 1, 3, "a")
	for _, b := range bs {
		if err := c.ProcessBlockHeader(&b.Header); err != nil {
			t.Fatal(err)
		}
	}
	// Again: already known, no effect.
	if err := c.ProcessBlockHeader(&bs[1].Header); err != nil {
		t.Fatalf("known header: %v", err)
	}
	st := c.HeaderState(bs[2].Hash())
	if st.Node == nil || st.HaveBlock || st.Invalid || st.Node.Height != 3 {
		t.Fatalf("header state %+v", st)
	}
	if n := c.NodeByHash(bs[0].Hash()); n != nil {
		t.Fatal("NodeByHash reports a header-only node")
	}
	if _, _, ok := c.NodeStatus(bs[0].Hash()); ok {
		t.Fatal("NodeStatus reports a header-only node")
	}
	if c.Tip().Height != 0 {
		t.Fatal("a header moved the tip")
	}
	if best := c.BestHeader(); best.Hash != bs[2].Hash() {
		t.Fatalf("best header at %d", best.Height)
	}
	path := c.BlocksToFetch()
	if len(path) != 3 || path[0].Hash != bs[0].Hash() || path[2].Hash != bs[2].Hash() {
		t.Fatalf("blocks to fetch: %d", len(path))
	}
	if loc := c.HeaderLocator(); loc[0] != bs[2].Hash() || loc[len(loc)-1] != g.Hash() || len(loc) != 4 {
		t.Fatalf("header locator of %d entries", len(loc))
	}
	if n, max := c.HeaderCount(); n != 3 || max != DefaultMaxHeaders {
		t.Fatalf("header count %d of %d", n, max)
	}
	res, err := c.ProcessBlockHeaders([]types.BlockHeader{bs[2].Header, hdrBlock(t, bs[2], 4, "a").Header})
	if err != nil || res.New != 1 || res.Last.Height != 4 || res.Best != res.Last {
		t.Fatalf("batch: %+v %v", res, err)
	}
}

func TestProcessBlockHeaderRejected(t *testing.T) {
	c, _ := openHeaderChain(t, Options{})
	g := params.Regtest.GenesisBlock()
	a1 := hdrBlock(t, g, 1, "a")
	mustBlock(t, c, a1)

	highHash := hdrBlock(t, a1, 2, "pow")
	for pow.CheckProofOfWork(highHash.Hash(), highHash.Header.DifficultyTarget, params.Regtest.PowLimit) == nil {
		highHash.Header.Nonce++
	}
	harder := hdrBlock(t, a1, 2, "difficulty", func(h *types.BlockHeader) { h.DifficultyTarget = 0x203fffff })
	tooOld := hdrBlock(t, a1, 2, "old", func(h *types.BlockHeader) { h.Timestamp = a1.Header.Timestamp })
	tooNew := hdrBlock(t, a1, 2, "new", func(h *types.BlockHeader) {
		h.Timestamp = uint64(headerClock.Unix()) + params.Regtest.MaxFutureDrift + 1
	})
	orphan := hdrBlock(t, a1, 2, "orphan", func(h *types.BlockHeader) { h.PrevHash = types.Hash{7} })
	version := hdrBlock(t, a1, 2, "version", func(h *types.BlockHeader) { h.Version = 2 })
	for _, tc := range []struct {
		name string
		b    *types.Block
		kind consensus.ErrorKind
	}{
		{"bad proof of work", highHash, consensus.ErrBadProofOfWork},
		{"wrong difficulty", harder, consensus.ErrWrongDifficulty},
		{"time too old", tooOld, consensus.ErrTimeTooOld},
		{"time too new", tooNew, consensus.ErrTimeTooNew},
		{"unknown parent", orphan, consensus.ErrUnknownParent},
		{"block version", version, consensus.ErrBadBlockVersion},
	} {
		err := c.ProcessBlockHeader(&tc.b.Header)
		wantRule(t, err, tc.kind)
		if c.HeaderState(tc.b.Hash()).Node != nil {
			t.Fatalf("%s: the header entered the index", tc.name)
		}
		// The block meets the same rules.
		_, berr := c.ProcessBlock(context.Background(), tc.b)
		wantRule(t, berr, tc.kind)
	}
	if n, _ := c.HeaderCount(); n != 0 {
		t.Fatalf("%d header-only nodes after rejections", n)
	}

	// An invalid block: its header is known invalid, and headers on it build on an invalid
	// block, as do the header-only nodes that were above it.
	bad := hdrBlock(t, a1, 2, "bad")
	bad.Transactions[0].Outputs[0].Value++ // pays more than the subsidy
	bad.Header.MerkleRoot = types.MerkleRoot(bad.TxIDs())
	if err := types.SolveBlock(bad, 1<<20); err != nil {
		t.Fatal(err)
	}
	above := hdrChain(t, bad, 3, 2, "above")
	for _, b := range []*types.Block{bad, above[0], above[1]} {
		if err := c.ProcessBlockHeader(&b.Header); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := c.ProcessBlock(context.Background(), bad); !errors.Is(err, consensus.ErrBadCoinbaseValue) {
		t.Fatalf("bad block: %v", err)
	}
	for _, b := range above {
		if st := c.HeaderState(b.Hash()); !st.Invalid || st.Node.status != StatusInvalidParent {
			t.Fatalf("header-only descendant of an invalid block: %+v", st)
		}
	}
	wantRule(t, c.ProcessBlockHeader(&bad.Header), consensus.ErrKnownInvalid)
	wantRule(t, c.ProcessBlockHeader(&above[1].Header), consensus.ErrKnownInvalid)
	child := hdrBlock(t, above[1], 5, "child")
	wantRule(t, c.ProcessBlockHeader(&child.Header), consensus.ErrInvalidAncestor)
	onBad := hdrBlock(t, bad, 3, "onbad")
	wantRule(t, c.ProcessBlockHeader(&onBad.Header), consensus.ErrInvalidAncestor)
	if best := c.BestHeader(); best.Hash != a1.Hash() {
		t.Fatalf("best header at height %d after the invalid branch", best.Height)
	}
	if path := c.BlocksToFetch(); len(path) != 0 {
		t.Fatalf("%d blocks to fetch on an invalid branch", len(path))
	}
}

func TestBlockFillsHeaderOnlyNode(t *testing.T) {
	c, dir := openHeaderChain(t, Options{})
	g := params.Regtest.GenesisBlock()
	bs := hdrChain(t, g, 1, 4, "a")
	for _, b := range bs {
		if err := c.ProcessBlockHeader(&b.Header); err != nil {
			t.Fatal(err)
		}
	}
	// A block whose parent is header-only waits (the caller keeps it as an orphan).
	if _, err := c.ProcessBlock(context.Background(), bs[1]); !errors.Is(err, consensus.ErrUnknownParent) {
		t.Fatalf("block on a header-only parent: %v", err)
	}
	res := mustBlock(t, c, bs[0])
	if !res.IsTip || c.Tip().Hash != bs[0].Hash() {
		t.Fatal("the filled block is not the tip")
	}
	st := c.HeaderState(bs[0].Hash())
	if !st.HaveBlock || st.Node.status != StatusValid || st.Node.txCount != 1 || c.NodeByHash(bs[0].Hash()) != st.Node {
		t.Fatalf("filled node %+v", st)
	}
	if _, err := c.ProcessBlock(context.Background(), bs[0]); !errors.Is(err, consensus.ErrDuplicateBlock) {
		t.Fatalf("the block again: %v", err)
	}
	if path := c.BlocksToFetch(); len(path) != 3 || path[0].Hash != bs[1].Hash() {
		t.Fatalf("blocks to fetch after one: %d", len(path))
	}
	mustBlock(t, c, bs[1])
	mustBlock(t, c, bs[2])
	if n, _ := c.HeaderCount(); n != 1 {
		t.Fatalf("%d header-only nodes, want 1", n)
	}
	// Header-only nodes live in memory only.
	c.Close()
	c2, err := Open(context.Background(), dir, params.Regtest, Options{Now: func() time.Time { return headerClock }, Values: consensus.NominalValue{}})
	if err != nil {
		t.Fatal(err)
	}
	defer c2.Close()
	if c2.Tip().Hash != bs[2].Hash() || c2.HeaderState(bs[3].Hash()).Node != nil {
		t.Fatal("after a restart: the tip moved or the header-only node survived")
	}
	if err := c2.ProcessBlockHeader(&bs[3].Header); err != nil {
		t.Fatal(err)
	}
	if res := mustBlock(t, c2, bs[3]); !res.IsTip {
		t.Fatal("the last block is not the tip")
	}
}

// TestHeaderOnlyNeverTip: a header-only branch with more work than the tip never becomes the
// tip, whatever blocks arrive elsewhere; its blocks move the tip once stored.
func TestHeaderOnlyNeverTip(t *testing.T) {
	c, _ := openHeaderChain(t, Options{})
	g := params.Regtest.GenesisBlock()
	a := hdrChain(t, g, 1, 2, "a")
	b := hdrChain(t, g, 1, 5, "b")
	for _, blk := range b {
		if err := c.ProcessBlockHeader(&blk.Header); err != nil {
			t.Fatal(err)
		}
	}
	for _, blk := range a {
		if res := mustBlock(t, c, blk); !res.IsTip {
			t.Fatal("a block on the stored chain is not the tip")
		}
	}
	if c.Tip().Hash != a[1].Hash() || c.BestHeader().Hash != b[4].Hash() {
		t.Fatal("tip or best header wrong")
	}
	// b's first two blocks tie then lose: the tip stays on a until b has more work.
	mustBlock(t, c, b[0])
	if res := mustBlock(t, c, b[1]); res.IsTip || c.Tip().Hash != a[1].Hash() {
		t.Fatal("a tie moved the tip")
	}
	res := mustBlock(t, c, b[2])
	if !res.IsTip || len(res.Disconnected) != 2 || len(res.Connected) != 3 {
		t.Fatalf("reorganisation to b: %+v", res)
	}
	if path := c.BlocksToFetch(); len(path) != 2 || path[0].Hash != b[3].Hash() {
		t.Fatalf("%d blocks to fetch", len(path))
	}
	// Invalidating the header-only rest leaves the tip as the best header.
	if err := c.InvalidateHeader(b[3].Hash()); err != nil {
		t.Fatal(err)
	}
	if st := c.HeaderState(b[4].Hash()); !st.Invalid {
		t.Fatal("InvalidateHeader left a descendant valid")
	}
	if c.BestHeader().Hash != b[2].Hash() {
		t.Fatal("best header after InvalidateHeader")
	}
	wantRule(t, func() error { _, err := c.ProcessBlock(context.Background(), b[3]); return err }(), consensus.ErrKnownInvalid)
}

func TestHeaderLimit(t *testing.T) {
	c, _ := openHeaderChain(t, Options{MaxHeaders: 3})
	g := params.Regtest.GenesisBlock()
	a := hdrChain(t, g, 1, 4, "a")
	for _, blk := range a[:3] {
		if err := c.ProcessBlockHeader(&blk.Header); err != nil {
			t.Fatal(err)
		}
	}
	if err := c.ProcessBlockHeader(&a[3].Header); !errors.Is(err, ErrTooManyHeaders) || consensus.IsRuleError(err) {
		t.Fatalf("beyond the limit: %v", err)
	}
	// Once the tip passes them, headers that cannot matter (no more work than the tip) make
	// room.
	for _, blk := range a[:3] {
		mustBlock(t, c, blk)
	}
	side := hdrChain(t, g, 1, 3, "side")
	for _, blk := range side {
		if err := c.ProcessBlockHeader(&blk.Header); err != nil {
			t.Fatal(err)
		}
	}
	if err := c.ProcessBlockHeader(&a[3].Header); err != nil {
		t.Fatal(err)
	}
	if n, _ := c.HeaderCount(); n != 1 || c.HeaderState(side[2].Hash()).Node != nil {
		t.Fatalf("%d header-only nodes after pruning", n)
	}
	want := new(big.Int).Add(c.Tip().WorkBig(), pow.Work(params.Regtest.PowLimitBits))
	if best := c.BestHeader(); best.Hash != a[3].Hash() || best.WorkBig().Cmp(want) != 0 {
		t.Fatal("best header after pruning")
	}
}

// TestForgetTakesHeaderOnlyDescendants: a block forgotten for a bad signature (its hash does
// not commit to it) takes the header-only nodes above it along, and the best header moves
// back to what remains.
func TestForgetTakesHeaderOnlyDescendants(t *testing.T) {
	c, _ := openHeaderChain(t, Options{})
	g := params.Regtest.GenesisBlock()
	a := hdrChain(t, g, 1, 2, "a")
	b := hdrChain(t, g, 1, 4, "b")
	for _, blk := range a {
		mustBlock(t, c, blk)
	}
	for _, blk := range b {
		if err := c.ProcessBlockHeader(&blk.Header); err != nil {
			t.Fatal(err)
		}
	}
	mustBlock(t, c, b[0])
	c.mu.Lock()
	err := c.forget(c.index.get(b[0].Hash()))
	c.mu.Unlock()
	if err != nil {
		t.Fatal(err)
	}
	for _, blk := range b {
		if c.HeaderState(blk.Hash()).Node != nil {
			t.Fatal("a forgotten block's descendant stayed in the index")
		}
	}
	if n, _ := c.HeaderCount(); n != 0 || c.BestHeader().Hash != a[1].Hash() || len(c.BlocksToFetch()) != 0 {
		t.Fatalf("after forgetting: %d header-only nodes, best header at %d", n, c.BestHeader().Height)
	}
	// The headers and the block can come again.
	for _, blk := range b {
		if err := c.ProcessBlockHeader(&blk.Header); err != nil {
			t.Fatal(err)
		}
	}
	mustBlock(t, c, b[0])
	if len(c.BlocksToFetch()) != 3 {
		t.Fatal("the headers did not come back")
	}
}

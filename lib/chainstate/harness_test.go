package chainstate

import (
	"bytes"
	"context"
	"fmt"
	"sort"
	"testing"
	"time"

	"github.com/cointoolkit/coin/lib/bincode"
	"github.com/cointoolkit/coin/lib/chaingen"
	"github.com/cointoolkit/coin/lib/consensus"
	"github.com/cointoolkit/coin/lib/params"
	"github.com/cointoolkit/coin/lib/types"
	"github.com/syndtr/goleveldb/leveldb/util"
)

// chainRunner is a Chain as a chaingen scenario sees it; it keeps the last result and error
// for the checks a step makes beyond its expectation.
type chainRunner struct {
	c   *Chain
	res *Result
	err error
}

var _ chaingen.Runner = (*chainRunner)(nil)

func (r *chainRunner) ProcessBlock(b *types.Block) error {
	r.res, r.err = r.c.ProcessBlock(context.Background(), b)
	return r.err
}

func (r *chainRunner) TipHash() types.Hash { return r.c.Tip().Hash }

// harness is a chain on a fresh database with a generator of named regtest blocks; after
// every step it checks the supply invariant and the stats against the UTXO set.
type harness struct {
	*chaingen.Generator
	t   testing.TB
	c   *Chain
	dir string
}

func newHarness(t *testing.T) *harness { return newHarnessWith(t, Options{}) }

// newHarnessWith is newHarness with opts (its clock and value model are the harness's).
func newHarnessWith(t *testing.T, opts Options) *harness {
	dir := t.TempDir()
	opts.Now, opts.Values = func() time.Time { return time.Unix(1<<40, 0) }, consensus.NominalValue{}
	c, err := Open(context.Background(), dir, params.Regtest, opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return &harness{Generator: chaingen.New(t, nil), t: t, c: c, dir: dir}
}

func (h *harness) play(st chaingen.Step) {
	h.t.Helper()
	if err := h.Play(&chainRunner{c: h.c}, st); err != nil {
		h.t.Fatal(err)
	}
	checkInvariants(h.t, h.c)
}

// accept processes the named block and expects success; tip names the expected tip.
func (h *harness) accept(name, tip string) { h.t.Helper(); h.play(chaingen.Accept(name, tip)) }

// reject processes the named block and expects the rule kind; the tip must stay `tip`.
func (h *harness) reject(name string, kind consensus.ErrorKind, tip string) {
	h.t.Helper()
	h.play(chaingen.Reject(name, kind, tip))
}

func (h *harness) expectTip(name string) { h.t.Helper(); h.play(chaingen.TipIs(name)) }

// spendTx builds a transfer named name of output idx of the transaction or block coinbase
// called from, less fee, to the miner in outputs equal parts.
func (h *harness) spendTx(name, from string, idx int, fee uint64, outputs int) *types.Transaction {
	h.t.Helper()
	var in chaingen.Output
	if h.Has(from) {
		in = chaingen.OutputOf(h.Block(from).Transactions[0], idx)
	} else {
		in = h.Out(from, idx)
	}
	return h.Spend(in).Fee(fee).Change(h.Miner().PKH, outputs).Name(name).Tx()
}

// checkInvariants checks the supply invariant and that the stored stats match the UTXO set.
func checkInvariants(t testing.TB, c *Chain) {
	t.Helper()
	s := c.Stats()
	if s.UtxoTotal+s.Pool+s.Burned != s.Issued {
		t.Fatalf("supply invariant: utxo %d + pool %d + burned %d != issued %d", s.UtxoTotal, s.Pool, s.Burned, s.Issued)
	}
	var issued uint64
	for h := uint64(1); h <= s.Height; h++ {
		issued += consensus.Subsidy(h)
	}
	if issued != s.Issued {
		t.Fatalf("issued %d, Σ subsidies %d", s.Issued, issued)
	}
	set := utxoSet(t, c)
	var total uint64
	for _, e := range set {
		total += e.Value
	}
	if uint64(len(set)) != s.UtxoCount || total != s.UtxoTotal {
		t.Fatalf("stats say %d utxos worth %d, the set has %d worth %d", s.UtxoCount, s.UtxoTotal, len(set), total)
	}
	checkCleanCache(t, c)
	checkCoinCache(t, c)
}

// flushForTest writes the write cache, which holds nothing outside bulk mode.
func flushForTest(t testing.TB, c *Chain) {
	t.Helper()
	c.mu.RLock()
	bulk, n := c.bulk, len(c.wc.blocks)
	c.mu.RUnlock()
	if !bulk && n != 0 {
		t.Fatalf("%d connected blocks not written outside bulk mode", n)
	}
	if err := c.Flush(context.Background()); err != nil {
		t.Fatal(err)
	}
}

// settle waits for the background write of the write cache, if one is under way.
func settle(t testing.TB, c *Chain) {
	t.Helper()
	c.mu.Lock()
	err := c.settleLocked()
	c.mu.Unlock()
	if err != nil {
		t.Fatal(err)
	}
}

// utxoSet reads the whole stored UTXO set (after writing the write cache).
func utxoSet(t testing.TB, c *Chain) map[types.Outpoint]consensus.UtxoEntry {
	t.Helper()
	flushForTest(t, c)
	out := map[types.Outpoint]consensus.UtxoEntry{}
	it := c.db.NewIterator(util.BytesPrefix([]byte{pfxUtxo}), nil)
	defer it.Release()
	for it.Next() {
		var op types.Outpoint
		copy(op.TxID[:], it.Key()[1:33])
		op.Index = uint32(it.Key()[33])<<24 | uint32(it.Key()[34])<<16 | uint32(it.Key()[35])<<8 | uint32(it.Key()[36])
		r := bincode.NewReader(it.Value())
		out[op] = *decodeEntry(r)
	}
	return out
}

// replaySet connects the main chain of c, block by block, into a fresh database and returns
// its UTXO set.
func replaySet(t *testing.T, c *Chain) map[types.Outpoint]consensus.UtxoEntry {
	t.Helper()
	fresh, err := Open(context.Background(), t.TempDir(), params.Regtest, c.opts)
	if err != nil {
		t.Fatal(err)
	}
	defer fresh.Close()
	tip := c.Tip()
	for h := uint64(1); h <= tip.Height; h++ {
		b, err := c.Block(c.NodeAt(h).Hash)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := fresh.ProcessBlock(context.Background(), b); err != nil {
			t.Fatalf("replay of height %d: %v", h, err)
		}
	}
	return utxoSet(t, fresh)
}

func sameSet(a, b map[types.Outpoint]consensus.UtxoEntry) error {
	if len(a) != len(b) {
		return fmt.Errorf("%d outputs vs %d", len(a), len(b))
	}
	keys := make([]types.Outpoint, 0, len(a))
	for k := range a {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool {
		if c := bytes.Compare(keys[i].TxID[:], keys[j].TxID[:]); c != 0 {
			return c < 0
		}
		return keys[i].Index < keys[j].Index
	})
	for _, k := range keys {
		if a[k] != b[k] {
			return fmt.Errorf("output %s differs: %+v vs %+v", k, a[k], b[k])
		}
	}
	return nil
}

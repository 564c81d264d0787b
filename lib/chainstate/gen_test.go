package chainstate

import (
	"bytes"
	"crypto/ed25519"
	"errors"
	"fmt"
	"sort"
	"testing"
	"time"

	"github.com/cointoolkit/coin/lib/bincode"
	"github.com/cointoolkit/coin/lib/consensus"
	"github.com/cointoolkit/coin/lib/miner"
	"github.com/cointoolkit/coin/lib/params"
	"github.com/cointoolkit/coin/lib/types"
	"github.com/syndtr/goleveldb/leveldb/util"
)

// generator builds named regtest blocks and forks, in the manner of btcd's fullblocktests:
// each block is built on a named parent, and the test says whether the chain must accept it,
// reject it with a given rule, and which block must be the tip afterwards.
type generator struct {
	t      testing.TB
	net    *params.Network
	key    ed25519.PrivateKey
	pkh    types.Hash
	blocks map[string]*types.Block
	height map[string]uint64
	// spendable coinbase outputs by block name
}

func newGenerator(t testing.TB) *generator {
	key := ed25519.NewKeyFromSeed(make([]byte, 32))
	g := &generator{t: t, net: params.Regtest, key: key, pkh: types.Blake3(key.Public().(ed25519.PublicKey)),
		blocks: map[string]*types.Block{}, height: map[string]uint64{}}
	g.blocks["genesis"] = params.Regtest.GenesisBlock()
	g.height["genesis"] = 0
	return g
}

// next builds a block named name on parent with txs; mutate may change it before solving.
func (g *generator) next(name, parent string, txs []*types.Transaction, mutate ...func(b *types.Block)) *types.Block {
	g.t.Helper()
	p, ok := g.blocks[parent]
	if !ok {
		g.t.Fatalf("unknown parent %q", parent)
	}
	h := g.height[parent] + 1
	var fees uint64
	for _, tx := range txs {
		fees += g.feeOf(tx)
	}
	b := miner.NewBlock(miner.Spec{Parent: p.Hash(), Height: h, Target: g.net.PowLimitBits,
		Timestamp: p.Header.Timestamp + 60, PayTo: g.pkh, Reward: consensus.Subsidy(h) + fees, Txs: txs,
		Extra: []byte(name)})
	for _, m := range mutate {
		m(b)
	}
	if err := miner.Solve(b, 1<<20); err != nil {
		g.t.Fatal(err)
	}
	g.blocks[name] = b
	g.height[name] = h
	return b
}

// feeOf is the fee of a tx spending the generator's coinbases (inputs looked up by name).
func (g *generator) feeOf(tx *types.Transaction) uint64 {
	var in, out uint64
	for _, i := range tx.Inputs {
		for _, b := range g.blocks {
			for _, t := range b.Transactions {
				if t.TxID() == i.PrevTxID && int(i.PrevIndex) < len(t.Outputs) {
					in += t.Outputs[i.PrevIndex].Value
				}
			}
		}
	}
	for _, o := range tx.Outputs {
		out += o.Value
	}
	if in < out {
		return 0
	}
	return in - out
}

// spend builds a transfer of the coinbase of block `from` to the generator's key with fee.
func (g *generator) spend(from string, fee uint64, outputs int) *types.Transaction {
	cb := g.blocks[from].Transactions[0]
	return g.spendOutput(cb, 0, fee, outputs)
}

func (g *generator) spendOutput(prev *types.Transaction, idx uint32, fee uint64, outputs int) *types.Transaction {
	v := prev.Outputs[idx].Value - fee
	tx := &types.Transaction{Version: 1, Kind: types.KindTransfer,
		Inputs: []types.TxInput{{PrevTxID: prev.TxID(), PrevIndex: idx}}}
	for i := 0; i < outputs; i++ {
		part := v / uint64(outputs)
		if i == outputs-1 {
			part = v - part*uint64(outputs-1)
		}
		tx.Outputs = append(tx.Outputs, types.TxOutput{Value: part, PubKeyHash: g.pkh})
	}
	types.SignInputs(tx, g.key, g.net.Magic)
	return tx
}

type harness struct {
	*generator
	c   *Chain
	dir string
}

func newHarness(t *testing.T) *harness {
	dir := t.TempDir()
	c, err := Open(dir, params.Regtest, Options{Now: func() time.Time { return time.Unix(1<<40, 0) }})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return &harness{generator: newGenerator(t), c: c, dir: dir}
}

// accept processes the named block and expects success; tip names the expected tip.
func (h *harness) accept(name, tip string) {
	h.t.Helper()
	if _, err := h.c.ProcessBlock(h.blocks[name]); err != nil {
		h.t.Fatalf("block %s rejected: %v", name, err)
	}
	h.expectTip(tip)
}

// reject processes the named block and expects the rule kind; the tip must stay `tip`.
func (h *harness) reject(name string, kind consensus.ErrorKind, tip string) {
	h.t.Helper()
	_, err := h.c.ProcessBlock(h.blocks[name])
	if !errors.Is(err, kind) {
		h.t.Fatalf("block %s: got error %v, want %s", name, err, kind)
	}
	h.expectTip(tip)
}

func (h *harness) expectTip(name string) {
	h.t.Helper()
	tip := h.c.Tip()
	if tip.Hash != h.blocks[name].Hash() {
		h.t.Fatalf("tip is at height %d (%s), want %s", tip.Height, tip.Hash, name)
	}
	checkInvariants(h.t, h.c)
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
	if err := c.Flush(); err != nil {
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
	fresh, err := Open(t.TempDir(), params.Regtest, c.opts)
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
		if _, err := fresh.ProcessBlock(b); err != nil {
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

// chain builds n blocks named prefix1..prefixN on parent and returns the last name.
func (g *generator) chain(prefix, parent string, n int) string {
	for i := 1; i <= n; i++ {
		name := fmt.Sprintf("%s%d", prefix, i)
		g.next(name, parent, nil)
		parent = name
	}
	return parent
}

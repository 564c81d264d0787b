package chainstate

import (
	"bytes"
	"context"
	"fmt"
	"testing"

	"github.com/cointoolkit/coin/lib/bincode"
	"github.com/cointoolkit/coin/lib/consensus"
	"github.com/cointoolkit/coin/lib/params"
	"github.com/cointoolkit/coin/lib/types"
	"github.com/syndtr/goleveldb/leveldb/util"
)

// checkRecovered checks a reopened chain: the supply invariant and stats, the UTXO set and
// the conduct state (ConductInfo: hash, agents, open contracts) against a replay of the main
// chain, and every index against the main chain.
func checkRecovered(t *testing.T, c *Chain, ref *replayer) {
	t.Helper()
	checkInvariants(t, c)
	set := utxoSet(t, c)
	if err := sameSet(set, ref.replay(t, c)); err != nil {
		t.Fatal("UTXO set differs from a replay of the main chain:", err)
	}
	if got, want := conductInfo(t, c), ref.conduct(t); got != want {
		t.Fatalf("conduct state differs from a replay of the main chain:\n reopened %+v\n replay   %+v", got, want)
	}
	checkIndexes(t, c, set)
}

// conductInfo is c's ConductInfo.
func conductInfo(t testing.TB, c *Chain) ConductInfo {
	t.Helper()
	info, err := c.ConductInfo(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return info
}

// replayer is replaySet with memory: it connects the main chain of a chain block by block into
// a fresh database, and next time only the blocks past the previous tip when that tip is still
// on the main chain (otherwise it starts again from genesis). It never reorganises.
type replayer struct {
	c *Chain
}

func (r *replayer) close() {
	if r.c != nil {
		r.c.Close()
	}
}

func (r *replayer) replay(t *testing.T, c *Chain) map[types.Outpoint]consensus.UtxoEntry {
	t.Helper()
	if r.c != nil && !c.InMainChain(r.c.Tip().Hash) {
		r.close()
		r.c = nil
	}
	if r.c == nil {
		fresh, err := Open(context.Background(), t.TempDir(), params.Regtest, c.opts)
		if err != nil {
			t.Fatal(err)
		}
		r.c = fresh
	}
	for h := r.c.Tip().Height + 1; h <= c.Tip().Height; h++ {
		b, err := c.Block(c.NodeAt(h).Hash)
		if err != nil {
			t.Fatal(err)
		}
		res, err := r.c.ProcessBlock(context.Background(), b)
		if err != nil || !res.IsTip || len(res.Disconnected) != 0 {
			t.Fatalf("replay of height %d: %v", h, err)
		}
	}
	return utxoSet(t, r.c)
}

// conduct is the ConductInfo of the replayed chain (after replay).
func (r *replayer) conduct(t *testing.T) ConductInfo {
	t.Helper()
	return conductInfo(t, r.c)
}

// checkIndexes checks the height, undo, transaction, address and cluster indexes against the
// main chain and the UTXO set: a torn connect or disconnect would leave them apart.
func checkIndexes(t testing.TB, c *Chain, set map[types.Outpoint]consensus.UtxoEntry) {
	t.Helper()
	tip := c.Tip()
	each := func(pfx byte, f func(k, v []byte)) int {
		it := c.db.NewIterator(util.BytesPrefix([]byte{pfx}), nil)
		defer it.Release()
		n := 0
		for it.Next() {
			f(it.Key(), it.Value())
			n++
		}
		if err := it.Error(); err != nil {
			t.Fatal(err)
		}
		return n
	}
	var bad []string
	heights := each(pfxHeight, func(k, v []byte) {
		h := uint64(0)
		for _, b := range k[1:] {
			h = h<<8 | uint64(b)
		}
		if n := c.NodeAt(h); n == nil || !bytes.Equal(n.Hash[:], v) {
			bad = append(bad, fmt.Sprintf("height index %d -> %x", h, v))
		}
	})
	if heights != int(tip.Height)+1 {
		bad = append(bad, fmt.Sprintf("%d height records for tip %d", heights, tip.Height))
	}
	// Undo data is in the rev files, or in the database when an older version wrote it.
	undos := each(pfxUndo, func(k, _ []byte) {
		var h types.Hash
		copy(h[:], k[1:])
		if !c.InMainChain(h) {
			bad = append(bad, "undo data of a block off the main chain: "+h.String())
		}
	})
	undos += each(pfxUndoAt, func(k, _ []byte) {
		var h types.Hash
		copy(h[:], k[1:])
		if !c.InMainChain(h) {
			bad = append(bad, "undo data of a block off the main chain: "+h.String())
		}
		if raw, _, err := c.undoBytes(h); err != nil {
			bad = append(bad, fmt.Sprintf("undo data of %s: %v", h, err))
		} else if _, err := decodeUndo(raw); err != nil {
			bad = append(bad, fmt.Sprintf("undo data of %s does not decode: %v", h, err))
		}
	})
	if undos != int(tip.Height) {
		bad = append(bad, fmt.Sprintf("%d undo records for tip %d", undos, tip.Height))
	}
	txs := each(pfxTx, func([]byte, []byte) {})
	if uint64(txs) != c.Stats().TxCount {
		bad = append(bad, fmt.Sprintf("%d tx index records, stats say %d txs", txs, c.Stats().TxCount))
	}
	for h := uint64(0); h <= tip.Height; h++ {
		n := c.NodeAt(h)
		if n.status != StatusValid {
			bad = append(bad, fmt.Sprintf("main-chain block %d has status %s", h, n.status))
		}
		if h < tip.Height-min(tip.Height, 10) {
			continue // the tx index of the last blocks is enough (the count covers the rest)
		}
		b, err := c.Block(n.Hash)
		if err != nil {
			t.Fatal(err)
		}
		for i, id := range b.TxIDs() {
			if loc, err := c.TxLocation(id); err != nil || loc != (TxLocation{n.Hash, h, uint32(i)}) {
				bad = append(bad, fmt.Sprintf("tx %s of block %d: %+v %v", id, h, loc, err))
			}
		}
	}
	addrs := each(pfxAddr, func(k, v []byte) {
		var op types.Outpoint
		copy(op.TxID[:], k[33:65])
		op.Index = uint32(k[65])<<24 | uint32(k[66])<<16 | uint32(k[67])<<8 | uint32(k[68])
		e, ok := set[op]
		if !ok || !bytes.Equal(e.PubKeyHash[:], k[1:33]) {
			bad = append(bad, "address index entry without its output: "+op.String())
		} else if len(v) != 0 {
			bad = append(bad, "address index entry with a value (it is bare): "+op.String())
		}
	})
	if addrs != len(set) {
		bad = append(bad, fmt.Sprintf("%d address index entries for %d outputs", addrs, len(set)))
	}
	// Each output counts in its address's current cluster (merges move addresses, not
	// outputs).
	clusters := map[types.Hash]uint64{}
	for _, e := range set {
		id, err := c.ClusterOf(e.PubKeyHash)
		if err != nil {
			t.Fatal(err)
		}
		clusters[id] += e.Value
	}
	stored := each(pfxCluster, func(k, v []byte) {
		var id types.Hash
		copy(id[:], k[1:])
		r := bincode.NewReader(v)
		if bal := r.U64(); r.Finish() != nil || bal != clusters[id] {
			bad = append(bad, fmt.Sprintf("cluster %s: stored %d, outputs hold %d", id, bal, clusters[id]))
		}
	})
	if stored != len(clusters) {
		bad = append(bad, fmt.Sprintf("%d cluster records for %d clusters", stored, len(clusters)))
	}
	bad = append(bad, checkConductIndexes(t, c)...)
	if len(bad) > 0 {
		t.Fatalf("indexes disagree with the chain (%d problems), first: %s", len(bad), bad[0])
	}
}

// checkConductIndexes checks the directory index against the agent table (one entry per
// agent, under its score, holding its record) and the agent and open contract counts of the
// stats against the tables.
func checkConductIndexes(t testing.TB, c *Chain) []string {
	t.Helper()
	flushForTest(t, c)
	var bad []string
	table := func(pfx byte) map[string][]byte {
		out := map[string][]byte{}
		it := c.db.NewIterator(util.BytesPrefix([]byte{pfx}), nil)
		defer it.Release()
		for it.Next() {
			out[string(it.Key())] = bytes.Clone(it.Value())
		}
		if err := it.Error(); err != nil {
			t.Fatal(err)
		}
		return out
	}
	agents, dir, contracts := table(pfxAgent), table(pfxDir), table(pfxContract)
	for k, v := range agents {
		r := bincode.NewReader(v)
		a := decodeAgent(r)
		if err := r.Finish(); err != nil {
			bad = append(bad, fmt.Sprintf("agent %x: %v", k[1:], err))
			continue
		}
		dk := string(dirKeyTo(nil, a.Score, k[1:]))
		if dv, ok := dir[dk]; !ok || !bytes.Equal(dv, v) {
			bad = append(bad, fmt.Sprintf("agent %x with score %d: directory entry %v, %x", k[1:], a.Score, ok, dv))
		}
	}
	if len(dir) != len(agents) {
		bad = append(bad, fmt.Sprintf("%d directory entries for %d agents", len(dir), len(agents)))
	}
	open := 0
	for k, v := range contracts {
		r := bincode.NewReader(v)
		rec := decodeContract(r)
		if err := r.Finish(); err != nil {
			bad = append(bad, fmt.Sprintf("contract %x: %v", k[1:], err))
		} else if rec.Status == consensus.ContractOpen {
			open++
		}
	}
	if s := c.Stats(); s.Agents != uint64(len(agents)) || s.OpenContracts != uint64(open) {
		bad = append(bad, fmt.Sprintf("stats say %d agents and %d open contracts, the tables hold %d and %d",
			s.Agents, s.OpenContracts, len(agents), open))
	}
	return bad
}

// conductCount is what the conduct tables of a chain hold.
type conductCount struct {
	agents, open, fulfilled, expired, reviews, vouches int
}

func (n conductCount) String() string {
	return fmt.Sprintf("%d agents, contracts %d open %d fulfilled %d expired, %d reviews, %d vouches",
		n.agents, n.open, n.fulfilled, n.expired, n.reviews, n.vouches)
}

func countConduct(t testing.TB, c *Chain) conductCount {
	t.Helper()
	flushForTest(t, c)
	var n conductCount
	for _, pfx := range []byte{pfxAgent, pfxContract, pfxReviews, pfxVouch} {
		it := c.db.NewIterator(util.BytesPrefix([]byte{pfx}), nil)
		for it.Next() {
			switch pfx {
			case pfxAgent:
				n.agents++
			case pfxVouch:
				n.vouches++
			case pfxReviews:
				r := bincode.NewReader(it.Value())
				n.reviews += int(r.U64())
			case pfxContract:
				r := bincode.NewReader(it.Value())
				switch decodeContract(r).Status {
				case consensus.ContractOpen:
					n.open++
				case consensus.ContractFulfilled:
					n.fulfilled++
				default:
					n.expired++
				}
			}
		}
		it.Release()
		if err := it.Error(); err != nil {
			t.Fatal(err)
		}
	}
	return n
}

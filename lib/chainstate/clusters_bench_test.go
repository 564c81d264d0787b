package chainstate

import (
	"context"
	"encoding/binary"
	"fmt"
	"math/bits"
	"sync"
	"testing"
	"time"

	"github.com/cointoolkit/coin/lib/bincode"
	"github.com/cointoolkit/coin/lib/chaingen"
	"github.com/cointoolkit/coin/lib/consensus"
	"github.com/cointoolkit/coin/lib/params"
	"github.com/cointoolkit/coin/lib/types"
	"github.com/syndtr/goleveldb/leveldb"
	"github.com/syndtr/goleveldb/leveldb/util"
)

// bigClusterSize is the number of addresses of the benchmark's big cluster (protocol §8's cost
// bound names a cluster of 1,000,000 addresses).
const bigClusterSize = 1_000_000

// benchPKH is the pubkey hash of address i of the benchmark's clusters.
func benchPKH(i uint64) types.Hash {
	var b [8]byte
	binary.LittleEndian.PutUint64(b[:], i)
	return types.Blake3(b[:])
}

// writeBigCluster writes, straight into the database (no blocks: a million merges through
// blocks would take the benchmark's whole budget), the forest that union by size builds
// when a cluster of n addresses grows by merging clusters of equal size pairwise: address i
// (i > 0) hangs under address i with its lowest set bit cleared, so the tree is a binomial
// tree rooted at address 0, and address i is popcount(i) links from the root. That is the
// deepest forest union by size can make of n nodes (depth ≤ log2 n). The root record names
// the cluster after address 0 with n addresses, and the cluster holds balance. It returns the
// deepest address.
func writeBigCluster(tb testing.TB, c *Chain, n uint64, balance uint64) (deep uint64) {
	tb.Helper()
	nodes := make([]types.Hash, n)
	for i := range nodes {
		nodes[i] = consensus.ClusterIDOf(benchPKH(uint64(i)))
	}
	batch := new(leveldb.Batch)
	w := bincode.NewWriter(nil)
	put := func(key []byte, t table, v any) {
		w.Reset()
		t.encodeAny(w, v)
		batch.Put(key, append([]byte(nil), w.Bytes()...))
		if batch.Len() >= 100_000 {
			if err := c.db.Write(batch, nil); err != nil {
				tb.Fatal(err)
			}
			batch.Reset()
		}
	}
	for i := uint64(1); i < n; i++ {
		put(hashKey(pfxClusterNode, nodes[i]), clusterNodeTable, clusterNode{Parent: nodes[i&(i-1)]})
		if bits.OnesCount64(i) > bits.OnesCount64(deep) {
			deep = i
		}
	}
	put(hashKey(pfxClusterNode, nodes[0]), clusterNodeTable, clusterNode{Root: true, Name: nodes[0], Size: n})
	put(hashKey(pfxCluster, nodes[0]), clusterTable, balance)
	if err := c.db.Write(batch, nil); err != nil {
		tb.Fatal(err)
	}
	// Settle the tables, as a node's are long after the writes: otherwise a read checks however
	// many level-0 tables the background compaction has not merged yet, and the benchmark
	// measures the compaction's progress.
	if err := c.db.CompactRange(util.Range{}); err != nil {
		tb.Fatal(err)
	}
	return deep
}

// countingGet counts the reads of a find.
func countingGet(get stateGet, n *int) stateGet {
	return func(k []byte) (any, error) { *n++; return get(k) }
}

// BenchmarkClusterMerge1M merges a cluster of 1,000,000 addresses (built by writeBigCluster,
// 20 levels deep at most) with a one-address cluster through the block code
// (clusterBlock.tx: the finds of both inputs' clusters, consensus.Survivor, the staged
// writes), and finds the deepest address (19 links below the root), cold (the write cache emptied, so
// every link is a database read) and through Chain.ClusterOfAddress. reads/op is the number
// of table reads, which depends on the depth, never on the cluster's size.
func BenchmarkClusterMerge1M(b *testing.B) {
	c, err := Open(context.Background(), b.TempDir(), params.Regtest, Options{})
	if err != nil {
		b.Fatal(err)
	}
	defer c.Close()
	const balance = 1_000_000 * 100_000
	deep := writeBigCluster(b, c, bigClusterSize, balance)
	deepPKH := benchPKH(deep)
	bigName := consensus.ClusterIDOf(benchPKH(0))
	small := benchPKH(bigClusterSize + 1)
	// The small cluster holds a little, so the big one names the result.
	if err := c.db.Put(hashKey(pfxCluster, consensus.ClusterIDOf(small)), bincode.AppendVarint(nil, 5_000), nil); err != nil {
		b.Fatal(err)
	}
	spent := []*consensus.UtxoEntry{{Value: 1, PubKeyHash: deepPKH}, {Value: 1, PubKeyHash: small}}

	b.Run("Merge", func(b *testing.B) {
		c.mu.Lock()
		defer c.mu.Unlock()
		var reads int
		b.ReportAllocs()
		b.ResetTimer()
		for i := 0; i < b.N; i++ {
			b.StopTimer()
			c.wc.reset() // cold: every link read from the database
			cb := newClusterBlock(c, nil)
			b.StartTimer()
			if err := cb.tx(spent, nil); err != nil {
				b.Fatal(err)
			}
			b.StopTimer()
			reads = 0
			ci, err := findCluster(countingGet(cb.get, &reads), small)
			if err != nil || ci.Name != bigName || ci.Size != bigClusterSize+1 || ci.Root != bigName {
				b.Fatalf("after the merge: %+v, %v", ci, err)
			}
			b.StartTimer()
		}
		b.StopTimer()
		c.wc.reset()
	})

	b.Run("FindDeep", func(b *testing.B) {
		var reads int
		c.mu.RLock()
		ci, err := findCluster(countingGet(c.getLocked, &reads), deepPKH)
		c.mu.RUnlock()
		if err != nil || ci.Name != bigName || ci.Size != bigClusterSize {
			b.Fatalf("%+v %v", ci, err)
		}
		b.ReportAllocs()
		b.ResetTimer()
		for i := 0; i < b.N; i++ {
			s, err := c.ClusterOfAddress(deepPKH)
			if err != nil || s.ID != bigName || s.Addresses != bigClusterSize || s.Balance != balance {
				b.Fatalf("%+v %v", s, err)
			}
		}
		b.ReportMetric(float64(reads), "reads/op")
	})
}

// The decay benchmark block: like BenchmarkConnectBlock1000's, 1,000 one-input transfers
// each paying a different address, but on a chain with the consensus value model, whose
// inputs decay: the miner holds the whole supply (concentration 10^9 ppb, the rate ≈ R_MAX)
// and the split outputs are 50 blocks old. The coinbase claims subsidy + fees at effective
// value + the pool's release, computed from the chain at the parent.
var decayBench struct {
	once  sync.Once
	chain []*types.Block // heights 1..150
	block *types.Block   // height 151
	decay uint64         // Σ(nominal − effective) of its inputs
}

func decayOptions(workers int) Options {
	return Options{SigWorkers: workers, Now: func() time.Time { return time.Unix(1<<40, 0) }}
}

func decayBenchSetup(b *testing.B) {
	decayBench.once.Do(func() {
		g := chaingen.New(b, nil)
		g.Chain("a", "genesis", 100)
		miner := g.Miner()
		c, err := Open(context.Background(), b.TempDir(), params.Regtest, decayOptions(0))
		if err != nil {
			b.Fatal(err)
		}
		defer c.Close()
		process := func(blk *types.Block) {
			if _, err := c.ProcessBlock(context.Background(), blk); err != nil {
				b.Fatal(err)
			}
		}
		for h := 1; h <= 100; h++ {
			process(g.Block(fmt.Sprintf("a%d", h)))
		}
		// At the coinbase's effective value: the split pays exactly what a1's coinbase is worth.
		e, _, err := c.Utxo(g.Coinbase("a1").Outpoint)
		if err != nil {
			b.Fatal(err)
		}
		v, err := c.InputValue(e, 101)
		if err != nil {
			b.Fatal(err)
		}
		split := g.Spend(g.Coinbase("a1")).Fee(e.Value-v).Change(miner.PKH, consensus.MaxTxOutputs).Tx()
		g.Next("a101", "a100", []*types.Transaction{split},
			chaingen.CoinbaseValue(consensus.Subsidy(101)+consensus.PoolRelease(c.Stats().Pool)))
		process(g.Block("a101"))
		parent := "a101"
		for h := 102; h <= 150; h++ {
			name := fmt.Sprintf("a%d", h)
			g.Next(name, parent, nil, chaingen.CoinbaseValue(consensus.Subsidy(uint64(h))+consensus.PoolRelease(c.Stats().Pool)))
			process(g.Block(name))
			parent = name
		}
		for h := 1; h <= 150; h++ {
			decayBench.chain = append(decayBench.chain, g.Block(fmt.Sprintf("a%d", h)))
		}
		txs := make([]*types.Transaction, 0, len(split.Outputs))
		var fees uint64
		for i, out := range chaingen.OutputsOf(split) {
			e, _, err := c.Utxo(out.Outpoint)
			if err != nil || e == nil {
				b.Fatal(err)
			}
			v, err := c.InputValue(e, 151)
			if err != nil {
				b.Fatal(err)
			}
			if v >= e.Value {
				b.Fatalf("split output %d does not decay: %d of %d", i, v, e.Value)
			}
			decayBench.decay += e.Value - v
			var seed [8]byte
			binary.LittleEndian.PutUint64(seed[:], uint64(i))
			txs = append(txs, g.Spend(out).Pay(types.Blake3(seed[:]), v-200).Fee(e.Value-v+200).Tx())
			fees += 200
		}
		max, err := consensus.MaxCoinbaseValue(151, fees, c.Stats().Pool)
		if err != nil {
			b.Fatal(err)
		}
		decayBench.block = g.Next("a151", "a150", txs, chaingen.CoinbaseValue(max))
		// Check it connects, so that the benchmark times a valid block.
		process(decayBench.block)
	})
}

// decayBenchChain is a decaying chain at height 150 with the 1,000 split outputs unspent.
func decayBenchChain(b *testing.B, sigWorkers int) *Chain {
	decayBenchSetup(b)
	return chainWith(b, decayOptions(sigWorkers), decayBench.chain)
}

// BenchmarkConnectBlock1000Decay is BenchmarkConnectBlock1000 with decay on and inputs that
// decay: ProcessBlock of the 1,000-transfer block on the tip, each input valued by its
// cluster's concentration (a find, a balance read, the agent check and the fixed-point
// power), the pool updated. Compare SigWorkers=1 with BenchmarkVerify1000Sequential (the
// same number of signatures on one core).
func BenchmarkConnectBlock1000Decay(b *testing.B) {
	for _, bc := range []struct {
		name    string
		workers int
	}{{"SigWorkers=1", 1}, {"SigWorkers=0", 0}} {
		b.Run(bc.name, func(b *testing.B) {
			c := decayBenchChain(b, bc.workers)
			blk := decayBench.block
			pool := c.Stats().Pool
			b.ReportAllocs()
			b.ResetTimer()
			cpu := startThreadCPU(b)
			for i := 0; i < b.N; i++ {
				res, err := c.ProcessBlock(context.Background(), blk)
				if err != nil || !res.IsTip {
					b.Fatal(err)
				}
				cpu.stop()
				b.StopTimer()
				if got := c.Stats().Pool; got != pool-consensus.PoolRelease(pool)+decayBench.decay {
					b.Fatalf("pool %d after the block, want %d", got, pool-consensus.PoolRelease(pool)+decayBench.decay)
				}
				n := c.Tip()
				if _, err := c.disconnectTip(); err != nil {
					b.Fatal(err)
				}
				if err := c.forget(n); err != nil {
					b.Fatal(err)
				}
				b.StartTimer()
				cpu.resume()
			}
			cpu.report()
		})
	}
}

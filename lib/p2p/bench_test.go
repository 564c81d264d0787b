package p2p

import (
	"context"
	"crypto/ed25519"
	"errors"
	"fmt"
	"path/filepath"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cointoolkit/coin/lib/chaingen"
	"github.com/cointoolkit/coin/lib/chainstate"
	"github.com/cointoolkit/coin/lib/consensus"
	"github.com/cointoolkit/coin/lib/params"
	"github.com/cointoolkit/coin/lib/proctest"
	"github.com/cointoolkit/coin/lib/types"
)

// spendChain is a regtest chain whose last blocks are full of signed transfers: funding
// blocks whose coinbases pay 1,000 outputs each to w, 100 blocks for maturity, then nBlocks
// blocks of nTxs one-input transfers each.
type spendChain struct {
	blocks []*types.Block
	checks []consensus.SigCheck // every signature of the transfers
	txs    int
}

func buildSpendChain(tb testing.TB, w wallet, nBlocks, nTxs int) *spendChain {
	tb.Helper()
	const perCoinbase, fee = 1000, 500
	g := chaingen.New(tb, params.Regtest)
	g.SetMiner(w.Wallet)
	sc := &spendChain{}
	parent := "genesis"
	add := func(txs []*types.Transaction, mungers ...chaingen.Munger) {
		name := fmt.Sprintf("s%d", len(sc.blocks)+1)
		sc.blocks = append(sc.blocks, g.Next(name, parent, txs, mungers...))
		parent = name
	}
	for n := 0; n < nBlocks*nTxs; n += perCoinbase {
		add(nil, chaingen.SplitCoinbase(perCoinbase))
	}
	for i := 0; i < consensus.CoinbaseMaturity; i++ {
		add(nil)
	}
	utxos := g.Take(parent, w.Wallet, nBlocks*nTxs)
	for i := 0; i < nBlocks; i++ {
		txs := make([]*types.Transaction, nTxs)
		for j := range txs {
			tx := g.Spend(utxos[i*nTxs+j]).Fee(fee).Tx()
			txs[j] = tx
			sc.checks = consensus.SigChecks(tx, tx.TxID(), params.Regtest.Magic, sc.checks)
		}
		add(txs)
		sc.txs += nTxs
	}
	return sc
}

// store writes the chain into a fresh data directory for a node.
func (sc *spendChain) store(tb testing.TB) string {
	tb.Helper()
	dir := tb.TempDir()
	c, err := chainstate.Open(context.Background(), filepath.Join(dir, "db"), params.Regtest, chainstate.Options{Values: consensus.NominalValue{}})
	if err != nil {
		tb.Fatal(err)
	}
	defer c.Close()
	for _, b := range sc.blocks {
		if _, err := c.ProcessBlock(context.Background(), b); err != nil {
			tb.Fatal(err)
		}
	}
	return dir
}

// TestSyncBlocksWithTransactions: blocks full of transfers sync to the same UTXO set.
func TestSyncBlocksWithTransactions(t *testing.T) {
	sc := buildSpendChain(t, newWallet(8), 4, 300)
	src := startNode(t, "source", quiet(nodeOpts{dir: sc.store(t)}))
	sink := startNode(t, "sink", quiet(nodeOpts{connect: []string{src.addr()}}))
	waitFor(t, 60*time.Second, "the sink synced", func() bool { return sink.tip() == src.tip() })
	waitFor(t, 5*time.Second, "the sink's download buffer empty", func() bool {
		sink.s.sync.mu.Lock()
		defer sink.s.sync.mu.Unlock()
		return len(sink.s.sync.received) == 0 && sink.s.sync.receivedBytes == 0
	})
	a, _ := src.n.Chain().UtxoSetInfo(context.Background())
	b, _ := sink.n.Chain().UtxoSetInfo(context.Background())
	if a.Hash != b.Hash || a.Count != b.Count {
		t.Fatalf("UTXO sets differ: %+v / %+v", a, b)
	}
}

// TestSyncFetchesEachBlockOnce: blocks whose signatures take a while to verify are not
// requested again while they wait for their turn (the scheduler used to see them neither in
// flight nor buffered, and fetched and verified them twice).
func TestSyncFetchesEachBlockOnce(t *testing.T) {
	sc := buildSpendChain(t, newWallet(8), 4, 1500)
	src := startNode(t, "source", quiet(nodeOpts{dir: sc.store(t)}))
	sink := startNode(t, "sink", quiet(nodeOpts{connect: []string{src.addr()}}))
	waitFor(t, 60*time.Second, "the sink synced", func() bool { return sink.tip() == src.tip() })
	total := 0
	for _, n := range sink.s.blocksByPeer() {
		total += n
	}
	if total != len(sc.blocks) {
		t.Fatalf("%d blocks fetched for a chain of %d", total, len(sc.blocks))
	}
}

// connectLocally replays the chain into a fresh chain state, block after block, with no
// network: what the sync costs at the least, since the node connects blocks one at a time.
func (sc *spendChain) connectLocally(tb testing.TB) time.Duration {
	tb.Helper()
	c, err := chainstate.Open(context.Background(), filepath.Join(tb.TempDir(), "db"), params.Regtest, chainstate.Options{Values: consensus.NominalValue{}})
	if err != nil {
		tb.Fatal(err)
	}
	defer c.Close()
	t0 := time.Now()
	for _, b := range sc.blocks {
		if _, err := c.ProcessBlock(context.Background(), b); err != nil {
			tb.Fatal(err)
		}
	}
	return time.Since(t0)
}

// verifyStdlibParallel is the old bound of BenchmarkSync: every signature verified alone with
// crypto/ed25519 (RFC 8032, cofactorless, as consensus did before ZIP 215 and batches), on
// every core.
func verifyStdlibParallel(checks []consensus.SigCheck) error {
	workers := runtime.GOMAXPROCS(0)
	var next atomic.Int64
	var bad atomic.Bool
	var wg sync.WaitGroup
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				i := int(next.Add(1) - 1)
				if i >= len(checks) {
					return
				}
				c := &checks[i]
				if !ed25519.Verify(c.PublicKey[:], c.Message, c.Signature[:]) {
					bad.Store(true)
				}
			}
		}()
	}
	wg.Wait()
	if bad.Load() {
		return errors.New("invalid signature")
	}
	return nil
}

// BenchmarkSync measures a fresh node syncing blocks full of transactions from one peer on
// loopback (from the start of the node, its empty database opened, until its tip is the
// peer's), against, in the same run, verifying the same signatures one by one on every core
// with crypto/ed25519 (the bound before batch verification, verifyStdlibParallel), verifying
// them in batches on every core (consensus.VerifyParallel) and connecting the same blocks into
// a chain state with no network. The sync ends when the sink's tip is the source's and every
// block is written to its database (the node writes in bulk while it catches up). Metrics:
// blocks/s and tx/s of the sync, the four times, the ratios sync / single verification (the
// target is at most 1.0) and sync / local connect (the P2P layer's own cost), and
// sync-cores, the CPU time of both nodes during the sync over its wall time (at most
// GOMAXPROCS: how busy the sync kept the machine).
func BenchmarkSync(b *testing.B) {
	for _, c := range []struct{ blocks, txs int }{{20, 2000}, {100, 200}} {
		b.Run(fmt.Sprintf("blocks=%d/txs=%d", c.blocks, c.txs), func(b *testing.B) {
			sc := buildSpendChain(b, newWallet(9), c.blocks, c.txs)
			src := startNode(b, "source", nodeOpts{dir: sc.store(b), discard: true})
			var syncT, verifyT, batchT, connectT, syncCPU time.Duration
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				b.StopTimer()
				t0 := time.Now()
				if err := verifyStdlibParallel(sc.checks); err != nil {
					b.Fatal(err)
				}
				verifyT += time.Since(t0)
				t0 = time.Now()
				if err := consensus.VerifyParallel(sc.checks, 0); err != nil {
					b.Fatal(err)
				}
				batchT += time.Since(t0)
				connectT += sc.connectLocally(b)
				cpu0 := proctest.ProcessCPU()
				b.StartTimer()
				sink := startNode(b, "sink", nodeOpts{connect: []string{src.addr()}, discard: true})
				// Synced: the tip is the peer's and every block is written to the database.
				for sink.tip() != src.tip() || sink.n.Chain().Unflushed() != 0 {
					time.Sleep(200 * time.Microsecond)
				}
				syncT += time.Since(sink.started)
				b.StopTimer()
				syncCPU += proctest.ProcessCPU() - cpu0
				sink.stop()
				b.StartTimer()
			}
			n := float64(b.N)
			b.ReportMetric(float64(len(sc.blocks))*n/syncT.Seconds(), "blocks/s")
			b.ReportMetric(float64(sc.txs)*n/syncT.Seconds(), "tx/s")
			b.ReportMetric(verifyT.Seconds()/n*1000, "sigverify-ms")
			b.ReportMetric(batchT.Seconds()/n*1000, "batchverify-ms")
			b.ReportMetric(connectT.Seconds()/n*1000, "connect-ms")
			b.ReportMetric(syncT.Seconds()/n*1000, "sync-ms")
			b.ReportMetric(syncCPU.Seconds()/syncT.Seconds(), "sync-cores")
			b.ReportMetric(syncT.Seconds()/verifyT.Seconds(), "sync/verify")
			b.ReportMetric(syncT.Seconds()/connectT.Seconds(), "sync/connect")
			avg := func(d time.Duration) time.Duration { return (d / time.Duration(b.N)).Round(time.Millisecond) }
			b.Logf("%d blocks (%d with %d transfers each), %d signatures, GOMAXPROCS %d: sync %s, local connect %s, parallel verification %s single, %s in batches",
				len(sc.blocks), c.blocks, c.txs, len(sc.checks), runtime.GOMAXPROCS(0), avg(syncT), avg(connectT), avg(verifyT), avg(batchT))
		})
	}
}

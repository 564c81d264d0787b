package chainstate

import (
	"context"
	"crypto/ed25519"
	"encoding/binary"
	"fmt"
	"runtime"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/cointoolkit/coin/lib/chaingen"
	"github.com/cointoolkit/coin/lib/consensus"
	"github.com/cointoolkit/coin/lib/params"
	"github.com/cointoolkit/coin/lib/types"
)

// Benchmarks of the Proof of Conduct state: reading a directory page as the agent table grows,
// and connecting a block full of agent operations against verifying its signatures alone.

func conductBenchClock() time.Time { return time.Unix(1<<40, 0) }

// threadCPU measures the CPU time (user and system) of the benchmark's own thread over its
// timed sections and reports it as cpu-ns/op: on a machine shared with other work it varies far
// less than wall time. Signatures verified on one core (SigWorkers=1) run on that thread; the
// garbage collector's background work and goroutines the code starts do not count.
type threadCPU struct {
	b     *testing.B
	start time.Duration
	total time.Duration
}

func startThreadCPU(b *testing.B) *threadCPU {
	runtime.LockOSThread()
	b.Cleanup(runtime.UnlockOSThread)
	t := &threadCPU{b: b}
	t.start = t.now()
	return t
}

func (t *threadCPU) now() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_THREAD, &ru); err != nil {
		t.b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// stop and resume bracket the untimed parts, with b.StopTimer and b.StartTimer.
func (t *threadCPU) stop()   { t.total += t.now() - t.start }
func (t *threadCPU) resume() { t.start = t.now() }

// report ends the measurement (the timer running).
func (t *threadCPU) report() {
	t.stop()
	t.b.ReportMetric(float64(t.total.Nanoseconds())/float64(t.b.N), "cpu-ns/op")
}

// benchAgentKey is the key of the i-th agent of the directory benchmark.
func benchAgentKey(i int) ed25519.PrivateKey {
	var seed [32]byte
	copy(seed[:], "directory benchmark agent")
	binary.LittleEndian.PutUint64(seed[24:], uint64(i))
	return ed25519.NewKeyFromSeed(seed[:])
}

// directoryChain builds, in dir, a chain with n registered agents, all through real blocks.
// Each registration stakes exactly 50 COIN and regtest issues 50 COIN a block, so the chain
// has one block per agent whose coinbase pays that agent (heights 1..n), then blocks of up
// to 1,000 registrations, each spending its agent's own matured coinbase with no fee. The
// blocks are connected in bulk mode.
func directoryChain(b *testing.B, dir string, n int) *Chain {
	b.Helper()
	net := params.Regtest
	c, err := Open(context.Background(), dir, net, Options{Now: conductBenchClock, Values: consensus.NominalValue{}})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { c.Close() })
	if err := c.SetBulk(true); err != nil {
		b.Fatal(err)
	}
	parent := net.GenesisBlock()
	var height uint64
	next := func(payTo types.Hash, txs []*types.Transaction) *types.Block {
		height++
		blk := types.NewBlock(types.BlockSpec{Parent: parent.Hash(), Height: height, Target: net.PowLimitBits,
			Timestamp: parent.Header.Timestamp + 1, PayTo: payTo, Reward: consensus.Subsidy(height), Txs: txs})
		if err := types.SolveBlock(blk, 1<<32); err != nil {
			b.Fatal(err)
		}
		if _, err := c.ProcessBlock(context.Background(), blk); err != nil {
			b.Fatalf("block %d: %v", height, err)
		}
		parent = blk
		return blk
	}
	keys := make([]ed25519.PrivateKey, n)
	coinbases := make([]types.Hash, n)
	for i := range keys {
		keys[i] = benchAgentKey(i)
		coinbases[i] = next(types.Blake3(keys[i].Public().(ed25519.PublicKey)), nil).Transactions[0].TxID()
	}
	for start := 0; start < n; start += 1000 {
		end := min(n, start+1000)
		for height+1 < uint64(end)+consensus.CoinbaseMaturity { // the coinbase of agent i is at height i+1
			next(types.Hash{}, nil)
		}
		var txs []*types.Transaction
		for i := start; i < end; i++ {
			tx := &types.Transaction{Version: 1, Kind: types.KindAgentRegister,
				Inputs:  []types.TxInput{{PrevTxID: coinbases[i], PrevIndex: 0}},
				Outputs: []types.TxOutput{{Value: consensus.AgentStake, PubKeyHash: types.Blake3(keys[i].Public().(ed25519.PublicKey))}}}
			types.SignInputs(tx, keys[i], net.Magic)
			txs = append(txs, tx)
		}
		next(types.Hash{}, txs)
	}
	if err := c.SetBulk(false); err != nil {
		b.Fatal(err)
	}
	if got := c.Stats().Agents; got != uint64(n) {
		b.Fatalf("%d agents registered, want %d", got, n)
	}
	return c
}

// BenchmarkDirectoryPage reads the first page (20 agents) of the directory of a chain with 20
// and with 100,000 registered agents: the page is one range scan of the score index, so both
// should cost about the same. Each chain is built once per run, outside the timer.
func BenchmarkDirectoryPage(b *testing.B) {
	for _, n := range []int{20, 100_000} {
		start := time.Now()
		c := directoryChain(b, b.TempDir(), n)
		b.Logf("agents=%d: chain of %d blocks built in %v", n, c.Tip().Height, time.Since(start).Round(time.Millisecond))
		b.Run(fmt.Sprintf("agents=%d", n), func(b *testing.B) {
			page := make([]DirectoryEntry, 0, 20)
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				page = page[:0]
				if err := c.Directory(func(e DirectoryEntry) bool {
					page = append(page, e)
					return len(page) < 20
				}); err != nil {
					b.Fatal(err)
				}
			}
			b.StopTimer()
			if len(page) != 20 {
				b.Fatalf("a page of %d agents", len(page))
			}
		})
	}
}

// The agent benchmark block holds 1,000 agent operations: 250 registrations of new agents,
// 250 contracts between registered agents, 250 fulfilments of open contracts and 250 reviews
// of fulfilled contracts, every one by a different actor.
const agentBenchOps = 250

var agentBench struct {
	once  sync.Once
	chain []*types.Block // the blocks before it
	block *types.Block
}

func agentBenchSetup(b *testing.B) {
	agentBench.once.Do(func() {
		g := chaingen.New(b, nil)
		wallets := func(prefix string, n int) []*chaingen.Wallet {
			out := make([]*chaingen.Wallet, n)
			for i := range out {
				out[i] = g.Wallet(fmt.Sprintf("%s%d", prefix, i))
			}
			return out
		}
		// Registered before the block: initiators and counterparties of the contracts the
		// block creates (c), fulfils (f) and reviews (r); 1,500 agents. Registering in the
		// block: n.
		ci, cc := wallets("ci", agentBenchOps), wallets("cc", agentBenchOps)
		fi, fc := wallets("fi", agentBenchOps), wallets("fc", agentBenchOps)
		ri, rc := wallets("ri", agentBenchOps), wallets("rc", agentBenchOps)
		nw := wallets("n", agentBenchOps)
		var agents []*chaingen.Wallet
		for _, ws := range [][]*chaingen.Wallet{ci, cc, fi, fc, ri, rc} {
			agents = append(agents, ws...)
		}
		// One block per stake (its coinbase pays the agent), a few for the miner's coins.
		parent, h := "genesis", 0
		next := func(payTo types.Hash, txs []*types.Transaction) string {
			h++
			name := fmt.Sprintf("h%d", h)
			g.Next(name, parent, txs, chaingen.PayTo(payTo))
			parent = name
			return name
		}
		stake := map[types.Hash]string{}
		for _, w := range append(append([]*chaingen.Wallet(nil), agents...), nw...) {
			stake[w.PKH] = next(w.PKH, nil)
		}
		miner := g.Miner()
		var funds []string
		for i := 0; i < 4; i++ {
			funds = append(funds, next(miner.PKH, nil))
		}
		for fundH := h; h < fundH+consensus.CoinbaseMaturity-1; {
			next(miner.PKH, nil)
		}
		// Coins for the initiators' escrows and the reviewers' fees: the miner's coinbases
		// split into one output per agent (3 × 500 outputs of 0.1 COIN).
		var splits []*types.Transaction
		coins := map[types.Hash]chaingen.Output{}
		for i, ws := range [][]*chaingen.Wallet{append(ci, fi...), append(ri, rc...)} {
			sp := g.Spend(g.Coinbase(funds[i])).Fee(0)
			for _, w := range ws {
				sp.Pay(w.PKH, 10_000_000)
			}
			tx := sp.Tx()
			splits = append(splits, tx)
			for j, w := range ws {
				coins[w.PKH] = chaingen.OutputOf(tx, j)
			}
		}
		var regs []*types.Transaction
		for _, w := range agents {
			regs = append(regs, g.Spend(g.Coinbase(stake[w.PKH])).Kind(types.KindAgentRegister, nil).
				Pay(w.PKH, consensus.AgentStake).Fee(0).Tx())
		}
		next(miner.PKH, append(splits, regs...))
		create := func(from, to *chaingen.Wallet) *types.Transaction {
			payload := types.ContractCreatePayload{Counterparty: to.PKH, ExpiryBlocks: consensus.DefaultExpiry}.Bytes()
			tx := g.Spend(coins[from.PKH]).Kind(types.KindContractCreate, payload).Pay(to.PKH, 100_000).Fee(300).Tx()
			coins[from.PKH] = chaingen.OutputOf(tx, 1)
			return tx
		}
		fulfil := func(k *types.Transaction) *types.Transaction {
			return g.Spend(chaingen.OutputOf(k, 0)).Kind(types.KindContractFulfil,
				types.ContractRefPayload{ContractID: k.TxID()}.Bytes()).Fee(300).Tx()
		}
		var open, toFulfil []*types.Transaction
		for i := 0; i < agentBenchOps; i++ {
			open = append(open, create(fi[i], fc[i]))
			toFulfil = append(toFulfil, create(ri[i], rc[i]))
		}
		next(miner.PKH, append(append([]*types.Transaction(nil), open...), toFulfil...))
		var fulfilled []*types.Transaction
		for _, k := range toFulfil {
			fulfilled = append(fulfilled, fulfil(k))
		}
		next(miner.PKH, fulfilled)

		var txs []*types.Transaction
		for i := 0; i < agentBenchOps; i++ {
			w := nw[i]
			txs = append(txs, g.Spend(g.Coinbase(stake[w.PKH])).Kind(types.KindAgentRegister, nil).
				Pay(w.PKH, consensus.AgentStake).Fee(0).Tx())
			txs = append(txs, create(ci[i], cc[i]))
			txs = append(txs, fulfil(open[i]))
			review := types.ReviewPayload{ContractID: toFulfil[i].TxID(), Subject: ri[i].PKH, Score: 9}.Bytes()
			txs = append(txs, g.Spend(coins[rc[i].PKH]).Kind(types.KindReview, review).Fee(300).Tx())
		}
		last := parent
		for _, blk := range g.Branch(last) {
			agentBench.chain = append(agentBench.chain, blk)
		}
		agentBench.block = g.Next("bench", last, txs)
	})
}

// agentBenchChain is a chain on which the agent benchmark block connects.
func agentBenchChain(b *testing.B, sigWorkers int) *Chain {
	agentBenchSetup(b)
	return chainWith(b, Options{SigWorkers: sigWorkers, Now: conductBenchClock, Values: consensus.NominalValue{}},
		agentBench.chain)
}

// BenchmarkConnectAgentBlock is ProcessBlock of the agent benchmark block on the tip (sanity
// checks, storing it, the UTXO and conduct checks, 1,000 signatures and the connect batch),
// with signatures verified on one core and on every core.
func BenchmarkConnectAgentBlock(b *testing.B) {
	for _, bc := range []struct {
		name    string
		workers int
	}{{"SigWorkers=1", 1}, {"SigWorkers=0", 0}} {
		b.Run(bc.name, func(b *testing.B) {
			c := agentBenchChain(b, bc.workers)
			blk := agentBench.block
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
				if i == 0 {
					s := c.Stats()
					if s.Agents != 7*agentBenchOps || s.OpenContracts != agentBenchOps {
						b.Fatalf("after the block: %d agents, %d open contracts", s.Agents, s.OpenContracts)
					}
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

// BenchmarkVerifyAgentBlockSigs1Core is the signature work of the agent benchmark block
// alone: its 1,000 signatures verified one after another on one core (txids computed
// beforehand).
func BenchmarkVerifyAgentBlockSigs1Core(b *testing.B) {
	agentBenchSetup(b)
	verify := verifyEach(agentBench.block)
	b.ReportAllocs()
	b.ResetTimer()
	cpu := startThreadCPU(b)
	for i := 0; i < b.N; i++ {
		verify(b)
	}
	cpu.report()
}

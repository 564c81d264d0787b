package mempool

import (
	"context"
	"crypto/ed25519"
	"testing"
	"time"

	"github.com/cointoolkit/coin/lib/consensus"
	"github.com/cointoolkit/coin/lib/proctest"
	"github.com/cointoolkit/coin/lib/types"
)

// Acceptance is compared with its floor, the signature checks alone: each BenchmarkAccept*
// has a BenchmarkVerify* twin that verifies the same transactions' signatures one after
// another (consensus.VerifySignatures, txids computed beforehand; VerifyStdlib* is the same
// through crypto/ed25519, the bound before ZIP 215 and batches). AcceptBursts* accepts as
// the node accepts a relay burst: the burst's signatures verified together into the shared
// signature cache (consensus.SigCache.PreverifyTransactions, in batches on every CPU), then
// Accept one by one: compare its cpu-ns/tx. Run them together:
//
//	go test -run '^$' -bench 'Accept|Verify' -benchtime 10x ./lib/mempool/
//
// One op is the whole set (10,000 or 500 transactions); ns/tx is reported too, and cpu-ns/tx,
// the process's CPU time per transaction, which shared machines disturb less than wall time.

const independentTxs = 10_000

// benchSet is a fixture with its transactions built once per benchmark.
type benchSet struct {
	f   *fixture
	txs []*types.Transaction
	ids []types.Hash
}

func newBenchSet(b *testing.B, chained bool, n int) *benchSet {
	b.Helper()
	f := newFixture(b, Options{})
	s := &benchSet{f: f}
	if chained {
		prev := f.take(1)[0]
		for i := 0; i < n; i++ {
			tx := f.transfer([]coin{prev}, 500, 1)
			s.txs = append(s.txs, tx)
			prev = out(tx, 0)
		}
	} else {
		for _, c := range f.take(n) {
			s.txs = append(s.txs, f.transfer([]coin{c}, 500, 1))
		}
	}
	for _, tx := range s.txs {
		s.ids = append(s.ids, tx.TxID())
	}
	return s
}

func (s *benchSet) accept(b *testing.B) {
	b.ReportAllocs()
	cpu := proctest.ProcessCPU()
	for b.Loop() {
		p := New(s.f.chain, testNet.Magic, Options{})
		for _, tx := range s.txs {
			if _, err := p.Accept(context.Background(), tx); err != nil {
				b.Fatal(err)
			}
		}
		if p.Info().Size != len(s.txs) {
			b.Fatal("not every transaction was accepted")
		}
	}
	s.report(b, cpu)
}

// acceptBursts is accept as a relay burst of burst transactions is accepted (lib/p2p's
// acceptBurst): their signatures verified together into the pool's signature cache, then
// Accept for each, which finds them verified.
func (s *benchSet) acceptBursts(b *testing.B, burst int) {
	b.ReportAllocs()
	cpu := proctest.ProcessCPU()
	for b.Loop() {
		cache := consensus.NewSigCache(0)
		p := New(s.f.chain, testNet.Magic, Options{SigCache: cache})
		for start := 0; start < len(s.txs); start += burst {
			end := min(start+burst, len(s.txs))
			cache.PreverifyTransactions(s.txs[start:end], s.ids[start:end], testNet.Magic, 0)
			for _, tx := range s.txs[start:end] {
				if _, err := p.Accept(context.Background(), tx); err != nil {
					b.Fatal(err)
				}
			}
		}
		if p.Info().Size != len(s.txs) {
			b.Fatal("not every transaction was accepted")
		}
	}
	s.report(b, cpu)
}

// verifyStdlib is the old bound: the same signatures through crypto/ed25519 (RFC 8032,
// cofactorless), one after another, as consensus verified them before ZIP 215.
func (s *benchSet) verifyStdlib(b *testing.B) {
	b.ReportAllocs()
	cpu := proctest.ProcessCPU()
	for b.Loop() {
		for i, tx := range s.txs {
			msg := types.SigMessage(testNet.Magic, s.ids[i])
			for j := range tx.Inputs {
				if !ed25519.Verify(tx.Inputs[j].PublicKey[:], msg, tx.Inputs[j].Signature[:]) {
					b.Fatal("invalid signature")
				}
			}
		}
	}
	s.report(b, cpu)
}

func (s *benchSet) verify(b *testing.B) {
	b.ReportAllocs()
	cpu := proctest.ProcessCPU()
	for b.Loop() {
		for i, tx := range s.txs {
			if err := consensus.VerifySignatures(tx, s.ids[i], testNet.Magic); err != nil {
				b.Fatal(err)
			}
		}
	}
	s.report(b, cpu)
}

// report adds wall and CPU time per transaction.
func (s *benchSet) report(b *testing.B, cpuBefore time.Duration) {
	n := float64(b.N * len(s.txs))
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/n, "ns/tx")
	if cpu := proctest.ProcessCPU() - cpuBefore; cpuBefore > 0 {
		b.ReportMetric(float64(cpu.Nanoseconds())/n, "cpu-ns/tx")
	}
}

// BenchmarkAccept10000Independent accepts 10,000 one-input transfers of distinct mature
// outputs into a fresh pool over the same chain.
func BenchmarkAccept10000Independent(b *testing.B) {
	newBenchSet(b, false, independentTxs).accept(b)
}

// BenchmarkVerify10000Independent is its baseline: the same signatures, verified in a row.
func BenchmarkVerify10000Independent(b *testing.B) {
	newBenchSet(b, false, independentTxs).verify(b)
}

// BenchmarkAcceptBursts10000Independent accepts the same transactions as relay bursts of
// 1,000 whose signatures are verified together, in batches on every CPU, before Accept.
func BenchmarkAcceptBursts10000Independent(b *testing.B) {
	newBenchSet(b, false, independentTxs).acceptBursts(b, 1000)
}

// BenchmarkVerifyStdlib10000Independent is the old bound: the same signatures through
// crypto/ed25519, one after another.
func BenchmarkVerifyStdlib10000Independent(b *testing.B) {
	newBenchSet(b, false, independentTxs).verifyStdlib(b)
}

// BenchmarkAccept500Chained accepts a chain of 500 unconfirmed transactions, each spending
// the previous one, into a fresh pool.
func BenchmarkAccept500Chained(b *testing.B) {
	newBenchSet(b, true, 500).accept(b)
}

// BenchmarkVerify500Chained is its baseline.
func BenchmarkVerify500Chained(b *testing.B) {
	newBenchSet(b, true, 500).verify(b)
}

package chainstate

import (
	"crypto/ed25519"
	"testing"

	"github.com/cointoolkit/coin/lib/consensus"
	"github.com/cointoolkit/coin/lib/params"
	"github.com/cointoolkit/coin/lib/types"
)

// BenchmarkVerify1000Stdlib is the old bound of BenchmarkConnectBlock1000: the benchmark
// block's 1,000 signatures verified one after another with crypto/ed25519 (RFC 8032,
// cofactorless), as consensus did before ZIP 215 and batch verification. Connect on one core
// ÷ this is the ratio docs/chain.md reports.
func BenchmarkVerify1000Stdlib(b *testing.B) {
	benchSetup(b)
	txs := benchBlocks.block.Transactions[1:]
	msgs := make([][]byte, len(txs))
	for i, tx := range txs {
		msgs[i] = types.SigMessage(params.Regtest.Magic, tx.TxID())
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		for j, tx := range txs {
			for k := range tx.Inputs {
				if !ed25519.Verify(tx.Inputs[k].PublicKey[:], msgs[j], tx.Inputs[k].Signature[:]) {
					b.Fatal("invalid signature")
				}
			}
		}
	}
}

// BenchmarkVerify1000Batch is the same signatures in batches (consensus.VerifyParallel) on one
// core, what connecting the block now spends on them.
func BenchmarkVerify1000Batch(b *testing.B) {
	benchSetup(b)
	var checks []consensus.SigCheck
	for _, tx := range benchBlocks.block.Transactions[1:] {
		checks = consensus.SigChecks(tx, tx.TxID(), params.Regtest.Magic, checks)
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if err := consensus.VerifyParallel(checks, 1); err != nil {
			b.Fatal(err)
		}
	}
}

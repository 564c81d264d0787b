package consensus_test

import (
	"crypto/ed25519"
	"fmt"
	"testing"

	"github.com/cointoolkit/coin/lib/consensus"
	"github.com/cointoolkit/coin/lib/types"
)

// BenchmarkVerifySignature is one ed25519 input verification.
func BenchmarkVerifySignature(b *testing.B) {
	tx := sign(transfer([]types.TxInput{input(op("a", 0), alice)}, pay(900, bob)), regtestMagic, alice)
	txid := tx.TxID()
	noErr(b, consensus.VerifySignatures(tx, txid, regtestMagic))
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if err := consensus.VerifySignatures(tx, txid, regtestMagic); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkVerifySignatureStdlib is the same input through crypto/ed25519 (RFC 8032,
// cofactorless): the single verification consensus used before ZIP 215.
func BenchmarkVerifySignatureStdlib(b *testing.B) {
	tx := sign(transfer([]types.TxInput{input(op("a", 0), alice)}, pay(900, bob)), regtestMagic, alice)
	msg := types.SigMessage(regtestMagic, tx.TxID())
	in := &tx.Inputs[0]
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if !ed25519.Verify(in.PublicKey[:], msg, in.Signature[:]) {
			b.Fatal("invalid")
		}
	}
}

// BenchmarkVerifyBatch is batch verification of n signatures on one goroutine; ns/sig is the
// cost per signature, to compare with BenchmarkVerifySignature.
func BenchmarkVerifyBatch(b *testing.B) {
	for _, n := range []int{2, 8, 16, 32, 64, 128, 256} {
		b.Run(fmt.Sprintf("n=%d", n), func(b *testing.B) {
			checks := signedChecks(n)
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				if err := consensus.VerifyBatch(checks); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*n), "ns/sig")
		})
	}
}

// BenchmarkVerifyBatchDistinctKeys is BenchmarkVerifyBatch with a different key for every
// signature, the worst case (no shared A term).
func BenchmarkVerifyBatchDistinctKeys(b *testing.B) {
	for _, n := range []int{16, 64, 128} {
		b.Run(fmt.Sprintf("n=%d", n), func(b *testing.B) {
			checks := make([]consensus.SigCheck, n)
			for i := range checks {
				k := newKey(byte(i + 10))
				txid := types.Blake3([]byte(fmt.Sprint("distinct", i)))
				msg := types.SigMessage(regtestMagic, txid)
				var sig [64]byte
				copy(sig[:], ed25519.Sign(k.priv, msg))
				checks[i] = consensus.SigCheck{PublicKey: &k.pub, Signature: &sig, Message: msg, TxID: txid}
			}
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				if err := consensus.VerifyBatch(checks); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*n), "ns/sig")
		})
	}
}

// bigConnectInput is a block of n one-input transfers, each spending a mature output of its own
// and paying a fee of 100, with the coinbase claiming everything.
func bigConnectInput(tb testing.TB, n int) consensus.BlockInput {
	tb.Helper()
	const height = 1000
	view := mapView{}
	txs := []*types.Transaction{coinbase(height, pay(consensus.Subsidy(height)+uint64(n)*100, miner))}
	for i := 0; i < n; i++ {
		o := op(fmt.Sprint("fund", i), uint32(i%3))
		view[o] = &consensus.UtxoEntry{Value: 10_000, PubKeyHash: alice.pkh, Height: uint64(i % 900)}
		txs = append(txs, sign(transfer([]types.TxInput{input(o, alice)}, pay(9_900, bob)), regtestMagic, alice))
	}
	blk := newBlock(txs...)
	ids, err := sanity(blk)
	noErr(tb, err)
	return consensus.BlockInput{
		Block: blk, TxIDs: ids, Height: height, MedianTimePast: 1_767_300_000, Magic: regtestMagic,
		View: consensus.ValuedView{Utxos: view},
	}
}

// BenchmarkCheckBlockConnect1000 connects a block of 1,000 one-input transfers with signatures
// verified sequentially (SigWorkers=1) and on every CPU (SigWorkers=0).
func BenchmarkCheckBlockConnect1000(b *testing.B) {
	in := bigConnectInput(b, 1000)
	for _, workers := range []int{1, 0} {
		b.Run(fmt.Sprintf("SigWorkers=%d", workers), func(b *testing.B) {
			in := in
			in.SigWorkers = workers
			eff, err := consensus.CheckBlockConnect(in)
			noErr(b, err)
			if eff.Fees != 100_000 || eff.Burned != 0 || len(eff.Spent) != 1000 {
				b.Fatalf("effect %+v", eff)
			}
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				if _, err := consensus.CheckBlockConnect(in); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// distinctKeysInput is bigConnectInput with every transfer signed by a key of its own: the
// worst case for batch verification, where no two signatures share an A term.
func distinctKeysInput(tb testing.TB, n int) consensus.BlockInput {
	tb.Helper()
	const height = 1000
	view := mapView{}
	txs := []*types.Transaction{coinbase(height, pay(consensus.Subsidy(height)+uint64(n)*100, miner))}
	for i := 0; i < n; i++ {
		seed := types.Blake3([]byte(fmt.Sprint("key", i)))
		var k key
		k.priv = ed25519.NewKeyFromSeed(seed[:])
		copy(k.pub[:], k.priv.Public().(ed25519.PublicKey))
		k.pkh = types.Blake3(k.pub[:])
		o := op(fmt.Sprint("fund", i), uint32(i%3))
		view[o] = &consensus.UtxoEntry{Value: 10_000, PubKeyHash: k.pkh, Height: uint64(i % 900)}
		txs = append(txs, sign(transfer([]types.TxInput{input(o, k)}, pay(9_900, bob)), regtestMagic, k))
	}
	blk := newBlock(txs...)
	ids, err := sanity(blk)
	noErr(tb, err)
	return consensus.BlockInput{
		Block: blk, TxIDs: ids, Height: height, MedianTimePast: 1_767_300_000, Magic: regtestMagic,
		View: consensus.ValuedView{Utxos: view},
	}
}

// BenchmarkCheckBlockConnect1000DistinctKeys connects a block of 1,000 transfers by 1,000
// different keys on one goroutine (Connect), against the same signatures verified one by one
// with crypto/ed25519 (Stdlib, the old bound) and with ZIP 215 (Single).
func BenchmarkCheckBlockConnect1000DistinctKeys(b *testing.B) {
	in := distinctKeysInput(b, 1000)
	in.SigWorkers = 1
	var checks []consensus.SigCheck
	for i, tx := range in.Block.Transactions[1:] {
		checks = consensus.SigChecks(tx, in.TxIDs[i+1], regtestMagic, checks)
	}
	b.Run("Connect", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			if _, err := consensus.CheckBlockConnect(in); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("Stdlib", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			for j := range checks {
				if !ed25519.Verify(checks[j].PublicKey[:], checks[j].Message, checks[j].Signature[:]) {
					b.Fatal("invalid")
				}
			}
		}
	})
	b.Run("Single", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			for j := range checks {
				if err := checks[j].Verify(); err != nil {
					b.Fatal(err)
				}
			}
		}
	})
}

package consensus_test

import (
	"fmt"
	"math/rand"
	"slices"
	"strings"
	"testing"

	"github.com/cointoolkit/coin/lib/amount"
	"github.com/cointoolkit/coin/lib/consensus"
	"github.com/cointoolkit/coin/lib/params"
	"github.com/cointoolkit/coin/lib/types"
)

// baseBlock is a sane block at height 5: a coinbase and two transfers (signatures are not a
// sanity rule).
func baseBlock() *types.Block {
	return newBlock(
		coinbase(5, pay(50*coin, miner)),
		transfer([]types.TxInput{input(op("a", 0), alice)}, pay(900, bob)),
		transfer([]types.TxInput{input(op("b", 0), bob)}, pay(800, carol)),
	)
}

func TestCheckBlockSanityBase(t *testing.T) {
	b := baseBlock()
	ids, err := sanity(b)
	noErr(t, err)
	if !slices.Equal(ids, b.TxIDs()) {
		t.Fatal("returned txids differ from the block's")
	}
	// A coinbase-only block and every network's genesis block are sane.
	noErr(t, second(sanity(newBlock(coinbase(1, pay(1, miner))))))
	for _, n := range params.Networks {
		g := n.GenesisBlock()
		_, err := consensus.CheckBlockSanity(g, g.Hash(), g.SerializeSize(), n.PowLimit)
		noErr(t, err)
		if g.Hash() != n.GenesisHash {
			t.Fatalf("%s genesis hash %s", n.Name, g.Hash())
		}
	}
}

func second[T any](_ T, err error) error { return err }

func TestCheckBlockSanityRules(t *testing.T) {
	tests := []struct {
		name   string
		mutate func(b *types.Block)
		want   consensus.ErrorKind
	}{
		{"version 0", func(b *types.Block) { b.Header.Version = 0; fix(b) }, consensus.ErrBadBlockVersion},
		{"version 2", func(b *types.Block) { b.Header.Version = 2; fix(b) }, consensus.ErrBadBlockVersion},
		{"hash above target", func(b *types.Block) { mine(b, false) }, consensus.ErrBadProofOfWork},
		{"target above the pow limit", func(b *types.Block) { b.Header.DifficultyTarget = 0x2100ffff; fix(b) }, consensus.ErrBadTarget},
		{"sign bit with zero mantissa", func(b *types.Block) { b.Header.DifficultyTarget = 0x20800000 }, consensus.ErrBadTarget},
		{"negative target", func(b *types.Block) { b.Header.DifficultyTarget = 0x1d800001 }, consensus.ErrBadTarget},
		{"overflowing target", func(b *types.Block) { b.Header.DifficultyTarget = 0xff123456 }, consensus.ErrBadTarget},
		{"overflowing target 34 bytes", func(b *types.Block) { b.Header.DifficultyTarget = 0x22010000 }, consensus.ErrBadTarget},
		{"zero target", func(b *types.Block) { b.Header.DifficultyTarget = 0x1d000000 }, consensus.ErrBadTarget},
		{"no transactions", func(b *types.Block) { b.Transactions = nil; fix(b) }, consensus.ErrNoTransactions},
		{"first tx not a coinbase", func(b *types.Block) { b.Transactions = b.Transactions[1:]; fix(b) }, consensus.ErrFirstTxNotCoinbase},
		{"coinbase second", func(b *types.Block) {
			b.Transactions[0], b.Transactions[1] = b.Transactions[1], b.Transactions[0]
			fix(b)
		}, consensus.ErrFirstTxNotCoinbase},
		{"second coinbase", func(b *types.Block) {
			b.Transactions = append(b.Transactions, coinbase(6, pay(1, miner)))
			fix(b)
		}, consensus.ErrMultipleCoinbases},
		{"bad merkle root", func(b *types.Block) { b.Header.MerkleRoot[31] ^= 1; mine(b, true) }, consensus.ErrBadMerkleRoot},
		{"merkle root of other transactions", func(b *types.Block) {
			b.Transactions[2].Outputs[0].Value++
			mine(b, true)
		}, consensus.ErrBadMerkleRoot},
		{"duplicate transfer", func(b *types.Block) {
			dup := *b.Transactions[1]
			b.Transactions = append(b.Transactions, &dup)
			fix(b)
		}, consensus.ErrDuplicateTx},
		{"duplicate transfer not adjacent", func(b *types.Block) {
			dup := *b.Transactions[1]
			b.Transactions = append(b.Transactions, transfer([]types.TxInput{input(op("c", 0), carol)}, pay(1, bob)), &dup)
			fix(b)
		}, consensus.ErrDuplicateTx},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			b := baseBlock()
			noErr(t, second(sanity(b)))
			tc.mutate(b)
			_, err := sanity(b)
			wantKind(t, err, tc.want)
		})
	}

	t.Run("pow at the limit of each network", func(t *testing.T) {
		b := baseBlock()
		// Regtest bits against the mainnet limit: above the limit.
		_, err := consensus.CheckBlockSanity(b, b.Hash(), b.SerializeSize(), params.Mainnet.PowLimit)
		wantKind(t, err, consensus.ErrBadTarget)
		// The hash that is checked is the one passed in.
		_, err = consensus.CheckBlockSanity(b, types.Hash{0: 0xff}, b.SerializeSize(), regtestLimit)
		wantKind(t, err, consensus.ErrBadProofOfWork)
		_, err = consensus.CheckBlockSanity(b, types.Hash{}, b.SerializeSize(), regtestLimit)
		noErr(t, err)
	})
	t.Run("high hash message", func(t *testing.T) {
		b := baseBlock()
		mine(b, false)
		_, err := sanity(b)
		wantKind(t, err, consensus.ErrBadProofOfWork)
		if !strings.HasPrefix(err.Error(), "invalid proof of work") || !strings.Contains(err.Error(), b.Hash().String()) {
			t.Fatalf("message %q", err)
		}
		wantKind(t, consensus.CheckProofOfWork(&b.Header, b.Hash(), regtestLimit), consensus.ErrBadProofOfWork)
		mine(b, true)
		noErr(t, consensus.CheckProofOfWork(&b.Header, b.Hash(), regtestLimit))
	})
	t.Run("too large", func(t *testing.T) {
		// Eleven sane transfers of 99,000 bytes each: over 1,048,576 bytes in all.
		txs := []*types.Transaction{coinbase(5, pay(50*coin, miner))}
		for i := 0; i < 11; i++ {
			txs = append(txs, sizedTransfer(t, 99_000, fmt.Sprint("big", i)))
		}
		b := newBlock(txs...)
		size := b.SerializeSize()
		if size <= consensus.MaxBlockSize || len(b.Bytes()) != size {
			t.Fatalf("block of %d bytes", size)
		}
		_, err := consensus.CheckBlockSanity(b, b.Hash(), size, regtestLimit)
		wantKind(t, err, consensus.ErrBlockTooLarge)
		// Only the size is wrong: at the limit the same block passes.
		_, err = consensus.CheckBlockSanity(b, b.Hash(), consensus.MaxBlockSize, regtestLimit)
		noErr(t, err)
		small := baseBlock()
		_, err = consensus.CheckBlockSanity(small, small.Hash(), consensus.MaxBlockSize+1, regtestLimit)
		wantKind(t, err, consensus.ErrBlockTooLarge)
	})
	t.Run("bad transaction inside", func(t *testing.T) {
		tests := []struct {
			name   string
			index  int
			mutate func(tx *types.Transaction)
			want   consensus.ErrorKind
		}{
			{"zero output", 2, func(tx *types.Transaction) { tx.Outputs[0].Value = 0 }, consensus.ErrZeroOutput},
			{"transfer payload", 1, func(tx *types.Transaction) { tx.Payload = []byte("x") }, consensus.ErrBadTransferPayload},
			{"agent payload", 2, func(tx *types.Transaction) { tx.Kind = types.KindVouch }, consensus.ErrBadAgentPayload},
			{"tx version", 1, func(tx *types.Transaction) { tx.Version = 9 }, consensus.ErrBadTxVersion},
			{"coinbase payload", 0, func(tx *types.Transaction) { tx.Payload = []byte{1, 2, 3} }, consensus.ErrBadCoinbasePayload},
			{"coinbase inputs", 0, func(tx *types.Transaction) { tx.Inputs = []types.TxInput{input(op("z", 0), alice)} }, consensus.ErrBadCoinbaseInputs},
			{"no inputs", 2, func(tx *types.Transaction) { tx.Inputs = nil }, consensus.ErrNoInputs},
		}
		for _, tc := range tests {
			t.Run(tc.name, func(t *testing.T) {
				b := baseBlock()
				tc.mutate(b.Transactions[tc.index])
				fix(b)
				_, err := sanity(b)
				wantKind(t, err, tc.want)
				txid := b.Transactions[tc.index].TxID()
				if !strings.HasPrefix(err.Error(), "transaction "+txid.String()+": ") {
					t.Fatalf("message %q does not name transaction %s", err, txid)
				}
			})
		}
	})
}

func TestMedianTime(t *testing.T) {
	ts := []uint64{100, 90, 110, 105, 95, 120, 80, 101, 99, 130, 70}
	orig := slices.Clone(ts)
	if got := consensus.MedianTime(ts); got != 100 {
		t.Fatalf("median of 11: %d", got)
	}
	if !slices.Equal(ts, orig) {
		t.Fatal("MedianTime reordered its argument")
	}
	r := rand.New(rand.NewSource(1))
	for i := 0; i < 20; i++ {
		r.Shuffle(len(ts), func(i, j int) { ts[i], ts[j] = ts[j], ts[i] })
		if got := consensus.MedianTime(ts); got != 100 {
			t.Fatalf("median of shuffled 11: %d", got)
		}
	}
	tests := []struct {
		in   []uint64
		want uint64
	}{
		{nil, 0},
		{[]uint64{42}, 42},
		{[]uint64{5, 3}, 5}, // the upper of two: sorted[len/2]
		{[]uint64{3, 9, 1}, 3},
		{[]uint64{4, 4, 1, 9}, 4},
		{[]uint64{1, 2, 3, 4, 5, 6}, 4},
		{[]uint64{7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7}, 7},
	}
	for _, tc := range tests {
		if got := consensus.MedianTime(tc.in); got != tc.want {
			t.Errorf("MedianTime(%v) = %d, want %d", tc.in, got, tc.want)
		}
	}
}

func TestCheckHeaderContext(t *testing.T) {
	const mtp = 1_767_300_000
	const now = mtp + 5000
	ctx := consensus.HeaderContext{Height: 61, ExpectedTarget: 0x1e0fffff, MedianTimePast: mtp, Now: now}
	h := types.BlockHeader{Version: 1, DifficultyTarget: 0x1e0fffff, Timestamp: mtp + 1}
	noErr(t, consensus.CheckHeaderContext(&h, ctx))

	at := func(ts uint64) *types.BlockHeader { c := h; c.Timestamp = ts; return &c }
	wantKind(t, consensus.CheckHeaderContext(at(mtp), ctx), consensus.ErrTimeTooOld)
	wantKind(t, consensus.CheckHeaderContext(at(mtp-1), ctx), consensus.ErrTimeTooOld)
	wantKind(t, consensus.CheckHeaderContext(at(0), ctx), consensus.ErrTimeTooOld)
	noErr(t, consensus.CheckHeaderContext(at(mtp+1), ctx))
	noErr(t, consensus.CheckHeaderContext(at(now), ctx))
	noErr(t, consensus.CheckHeaderContext(at(now+900), ctx))
	wantKind(t, consensus.CheckHeaderContext(at(now+901), ctx), consensus.ErrTimeTooNew)
	if consensus.MaxFutureDrift != 900 {
		t.Fatalf("MaxFutureDrift %d", consensus.MaxFutureDrift)
	}
	// Each network sets its own limit: regtest's is Bitcoin's two hours (protocol §6).
	for _, n := range []*params.Network{params.Mainnet, params.Testnet, params.Regtest} {
		c := ctx
		c.MaxFutureDrift = n.MaxFutureDrift
		want := uint64(900)
		if n == params.Regtest {
			want = 7200
		}
		noErr(t, consensus.CheckHeaderContext(at(now+want), c))
		wantKind(t, consensus.CheckHeaderContext(at(now+want+1), c), consensus.ErrTimeTooNew)
	}

	wrong := h
	wrong.DifficultyTarget = 0x1e0ffffe
	err := consensus.CheckHeaderContext(&wrong, ctx)
	wantKind(t, err, consensus.ErrWrongDifficulty)
	if !strings.Contains(err.Error(), "0x1e0ffffe") || !strings.Contains(err.Error(), "0x1e0fffff") {
		t.Fatalf("message %q", err)
	}
	// An easier target is as wrong as a harder one.
	wrong.DifficultyTarget = 0x1e100000
	wantKind(t, consensus.CheckHeaderContext(&wrong, ctx), consensus.ErrWrongDifficulty)
}

func TestCheckCoinbaseHeight(t *testing.T) {
	cb := coinbase(1234, pay(1, miner))
	noErr(t, consensus.CheckCoinbaseHeight(cb, 1234))
	wantKind(t, consensus.CheckCoinbaseHeight(cb, 1233), consensus.ErrBadCoinbaseHeight)
	wantKind(t, consensus.CheckCoinbaseHeight(cb, 1235), consensus.ErrBadCoinbaseHeight)
	cb.Payload = cb.Payload[:1]
	wantKind(t, consensus.CheckCoinbaseHeight(cb, 1234), consensus.ErrBadCoinbasePayload)
	cb.Payload = types.CoinbasePayload{Height: 1234, Extra: make([]byte, 65)}.Bytes()
	wantKind(t, consensus.CheckCoinbaseHeight(cb, 1234), consensus.ErrBadCoinbasePayload)
}

func TestCheckCoinbaseValue(t *testing.T) {
	const height, fees, pool = 10, 300, 10_000
	limit := 50*coin + fees + pool/100
	cb := coinbase(height, pay(limit, miner))
	burned, err := consensus.CheckCoinbaseValue(cb, height, fees, pool)
	noErr(t, err)
	if burned != 0 {
		t.Fatalf("burned %d", burned)
	}
	cb.Outputs[0].Value = limit + 1
	_, err = consensus.CheckCoinbaseValue(cb, height, fees, pool)
	wantKind(t, err, consensus.ErrBadCoinbaseValue)
	// Split over two outputs, one subunit too many.
	cb.Outputs = []types.TxOutput{pay(limit-10, miner), pay(11, alice)}
	_, err = consensus.CheckCoinbaseValue(cb, height, fees, pool)
	wantKind(t, err, consensus.ErrBadCoinbaseValue)
	// Paying less burns the difference.
	cb.Outputs = []types.TxOutput{pay(limit-1000, miner), pay(1, alice)}
	burned, err = consensus.CheckCoinbaseValue(cb, height, fees, pool)
	noErr(t, err)
	if burned != 999 {
		t.Fatalf("burned %d", burned)
	}
	// After 64 halvings only fees and release may be claimed.
	cb.Outputs = []types.TxOutput{pay(fees+pool/100, miner)}
	_, err = consensus.CheckCoinbaseValue(cb, 64*consensus.HalvingInterval, fees, pool)
	noErr(t, err)
	cb.Outputs[0].Value++
	_, err = consensus.CheckCoinbaseValue(cb, 64*consensus.HalvingInterval, fees, pool)
	wantKind(t, err, consensus.ErrBadCoinbaseValue)
	// Outputs above MaxMoney and a limit that overflows.
	cb.Outputs = []types.TxOutput{pay(amount.MaxMoney, miner), pay(1, miner)}
	_, err = consensus.CheckCoinbaseValue(cb, height, fees, pool)
	wantKind(t, err, consensus.ErrValueOverflow)
	cb.Outputs = []types.TxOutput{pay(1, miner)}
	_, err = consensus.CheckCoinbaseValue(cb, height, ^uint64(0), pool)
	wantKind(t, err, consensus.ErrValueOverflow)
}

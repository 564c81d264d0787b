package consensus_test

import (
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/cointoolkit/coin/lib/consensus"
	"github.com/cointoolkit/coin/lib/types"
)

const (
	connHeight = 500
	connMTP    = 1_767_300_000
	connPool   = 1_000_000 // release 10,000
)

var (
	fundA = op("fundA", 0) // alice, 10,000, a coinbase of height 100: mature
	fundB = op("fundB", 1) // bob, 5,000, a coinbase of height 400: mature exactly at 500
	fundC = op("fundC", 0) // carol, 3,000, an ordinary output of height 499
)

func connectView() mapView {
	return mapView{
		fundA: {Value: 10_000, PubKeyHash: alice.pkh, Height: 100, Coinbase: true, ClusterID: consensus.ClusterIDOf(alice.pkh)},
		fundB: {Value: 5_000, PubKeyHash: bob.pkh, Height: 400, Coinbase: true, ClusterID: consensus.ClusterIDOf(bob.pkh)},
		fundC: {Value: 3_000, PubKeyHash: carol.pkh, Height: 499, ClusterID: consensus.ClusterIDOf(carol.pkh)},
	}
}

// connectTxs are four signed transfers; tx3 spends tx1's first output inside the block.
//
//	tx1: alice fundA 10,000 → bob 6,000 + alice 3,500   fee 500
//	tx2: bob   fundB  5,000 → carol 4,800               fee 200
//	tx3: bob   tx1:0  6,000 → carol 5,900               fee 100
//	tx4: carol fundC  3,000 → alice 2,950               fee  50
func connectTxs() (tx1, tx2, tx3, tx4 *types.Transaction) {
	tx1 = sign(transfer([]types.TxInput{input(fundA, alice)}, pay(6_000, bob), pay(3_500, alice)), regtestMagic, alice)
	tx2 = sign(transfer([]types.TxInput{input(fundB, bob)}, pay(4_800, carol)), regtestMagic, bob)
	tx3 = sign(transfer([]types.TxInput{input(types.Outpoint{TxID: tx1.TxID()}, bob)}, pay(5_900, carol)), regtestMagic, bob)
	tx4 = sign(transfer([]types.TxInput{input(fundC, carol)}, pay(2_950, alice)), regtestMagic, carol)
	return
}

const connFees = 500 + 200 + 100 + 50

// connectLimit is what the coinbase of the fixture block may claim.
var connectLimit = consensus.Subsidy(connHeight) + connFees + connPool/100

// connectInput is the fixture block (coinbase paying cbValue, then txs) ready to connect.
func connectInput(cbValue uint64, txs ...*types.Transaction) consensus.BlockInput {
	b := newBlock(append([]*types.Transaction{coinbase(connHeight, pay(cbValue, miner))}, txs...)...)
	return consensus.BlockInput{
		Block: b, TxIDs: b.TxIDs(), Height: connHeight, MedianTimePast: connMTP, PoolBefore: connPool,
		Magic: regtestMagic, View: consensus.ValuedView{Utxos: connectView()}, SigWorkers: 1,
	}
}

func TestCheckBlockConnectValid(t *testing.T) {
	tx1, tx2, tx3, tx4 := connectTxs()
	in := connectInput(connectLimit, tx1, tx2, tx3, tx4)
	_, err := sanity(in.Block)
	noErr(t, err)
	view := utxosOf(in)
	eff, err := consensus.CheckBlockConnect(in)
	noErr(t, err)

	ids := in.TxIDs
	entry := func(v uint64, k key, cb bool) consensus.UtxoEntry {
		return consensus.UtxoEntry{Value: v, PubKeyHash: k.pkh, Height: connHeight, Coinbase: cb, ClusterID: consensus.ClusterIDOf(k.pkh)}
	}
	want := consensus.BlockEffect{
		Spent: []types.Outpoint{fundA, fundB, {TxID: ids[1], Index: 0}, fundC},
		Created: []consensus.Created{
			{Outpoint: types.Outpoint{TxID: ids[0], Index: 0}, Entry: entry(connectLimit, miner, true)},
			// tx1:0 is spent by tx3 inside the block and so is not created.
			{Outpoint: types.Outpoint{TxID: ids[1], Index: 1}, Entry: entry(3_500, alice, false)},
			{Outpoint: types.Outpoint{TxID: ids[2], Index: 0}, Entry: entry(4_800, carol, false)},
			{Outpoint: types.Outpoint{TxID: ids[3], Index: 0}, Entry: entry(5_900, carol, false)},
			{Outpoint: types.Outpoint{TxID: ids[4], Index: 0}, Entry: entry(2_950, alice, false)},
		},
		Fees:      connFees,
		Release:   10_000,
		DecayPaid: 0,
		Burned:    0,
		Subsidy:   50 * coin,
		PoolAfter: connPool - 10_000,
	}
	spentUndo := eff.SpentUndo
	eff.SpentUndo = nil
	if !reflect.DeepEqual(*eff, want) {
		t.Fatalf("effect\n got %+v\nwant %+v", *eff, want)
	}
	// Undo data: the view's own entries for outputs from earlier blocks, and the in-block entry
	// for tx1:0.
	if len(spentUndo) != 4 || spentUndo[0] != view[fundA] || spentUndo[1] != view[fundB] || spentUndo[3] != view[fundC] {
		t.Fatalf("spent undo %+v", spentUndo)
	}
	if *spentUndo[2] != entry(6_000, bob, false) {
		t.Fatalf("undo entry of tx1:0 %+v", *spentUndo[2])
	}

	// The view is untouched.
	if !reflect.DeepEqual(view, connectView()) {
		t.Fatal("CheckBlockConnect changed the view")
	}

	t.Run("same result on every worker count", func(t *testing.T) {
		for _, w := range []int{0, 2, 8} {
			in := in
			in.SigWorkers = w
			eff2, err := consensus.CheckBlockConnect(in)
			noErr(t, err)
			eff2.SpentUndo = nil
			if !reflect.DeepEqual(*eff2, want) {
				t.Fatalf("workers %d: effect differs", w)
			}
		}
	})
	t.Run("coinbase burns what it does not claim", func(t *testing.T) {
		in := connectInput(connectLimit-777, tx1, tx2, tx3, tx4)
		eff, err := consensus.CheckBlockConnect(in)
		noErr(t, err)
		if eff.Burned != 777 || eff.Fees != connFees || eff.PoolAfter != connPool-10_000 {
			t.Fatalf("effect %+v", eff)
		}
	})
	t.Run("coinbase over the limit", func(t *testing.T) {
		in := connectInput(connectLimit+1, tx1, tx2, tx3, tx4)
		_, err := consensus.CheckBlockConnect(in)
		wantKind(t, err, consensus.ErrBadCoinbaseValue)
		// Fees of the block are what the coinbase may claim: without tx4 its 50 are missing.
		in = connectInput(connectLimit, tx1, tx2, tx3)
		_, err = consensus.CheckBlockConnect(in)
		wantKind(t, err, consensus.ErrBadCoinbaseValue)
		in = connectInput(connectLimit-50, tx1, tx2, tx3)
		noErr(t, second(consensus.CheckBlockConnect(in)))
	})
	t.Run("decay flows to the pool", func(t *testing.T) {
		in := connectInput(consensus.Subsidy(connHeight)+10_000+400-300, tx4)
		withValues(&in, &decayModel{})
		// tx4: 3,000 nominal, 2,700 effective, 2,950 out: insufficient under decay.
		_, err := consensus.CheckBlockConnect(in)
		wantKind(t, err, consensus.ErrInsufficientFunds)
		tx := sign(transfer([]types.TxInput{input(fundC, carol)}, pay(2_600, alice)), regtestMagic, carol)
		in = connectInput(consensus.Subsidy(connHeight)+10_000+100, tx)
		withValues(&in, &decayModel{})
		eff, err := consensus.CheckBlockConnect(in)
		noErr(t, err)
		if eff.Fees != 100 || eff.DecayPaid != 300 || eff.Burned != 0 || eff.PoolAfter != connPool-10_000+300 {
			t.Fatalf("effect %+v", eff)
		}
	})
}

func TestCheckBlockConnectRules(t *testing.T) {
	tx1, tx2, tx3, tx4 := connectTxs()
	noErr(t, second(consensus.CheckBlockConnect(connectInput(connectLimit, tx1, tx2, tx3, tx4))))

	// wantTx checks the kind and that the message names the transaction at index i.
	wantTx := func(t *testing.T, in consensus.BlockInput, i int, kind consensus.ErrorKind) {
		t.Helper()
		_, err := consensus.CheckBlockConnect(in)
		wantKind(t, err, kind)
		if !strings.Contains(err.Error(), in.TxIDs[i].String()) {
			t.Fatalf("message %q does not name transaction %d (%s)", err, i, in.TxIDs[i])
		}
	}

	t.Run("double spend across transactions", func(t *testing.T) {
		// tx5 spends fundA again, with different outputs (so a different txid).
		tx5 := sign(transfer([]types.TxInput{input(fundA, alice)}, pay(9_000, carol)), regtestMagic, alice)
		wantTx(t, connectInput(connectLimit, tx1, tx2, tx3, tx4, tx5), 5, consensus.ErrDoubleSpend)
		// Alone, tx5 is valid.
		noErr(t, second(consensus.CheckBlockConnect(connectInput(consensus.Subsidy(connHeight), tx5))))
	})
	t.Run("double spend of an output created in the block", func(t *testing.T) {
		tx3b := sign(transfer([]types.TxInput{input(types.Outpoint{TxID: tx1.TxID()}, bob)}, pay(1, bob)), regtestMagic, bob)
		wantTx(t, connectInput(connectLimit, tx1, tx2, tx3, tx4, tx3b), 5, consensus.ErrDoubleSpend)
	})
	t.Run("spending an output created later in the block", func(t *testing.T) {
		wantTx(t, connectInput(connectLimit, tx3, tx1, tx2, tx4), 1, consensus.ErrMissingInputs)
	})
	t.Run("spending this block's coinbase", func(t *testing.T) {
		in := connectInput(connectLimit, tx1, tx2, tx3, tx4)
		spend := sign(transfer([]types.TxInput{input(types.Outpoint{TxID: in.TxIDs[0]}, miner)}, pay(1, miner)), regtestMagic, miner)
		wantTx(t, connectInput(connectLimit, tx1, tx2, tx3, tx4, spend), 5, consensus.ErrImmatureCoinbase)
	})
	t.Run("immature coinbase from the view", func(t *testing.T) {
		in := connectInput(connectLimit, tx1, tx2, tx3, tx4)
		utxosOf(in)[fundB].Height = connHeight - consensus.CoinbaseMaturity + 1
		wantTx(t, in, 2, consensus.ErrImmatureCoinbase)
	})
	t.Run("missing input", func(t *testing.T) {
		in := connectInput(connectLimit, tx1, tx2, tx3, tx4)
		delete(utxosOf(in), fundC)
		wantTx(t, in, 4, consensus.ErrMissingInputs)
	})
	t.Run("non-final height lock", func(t *testing.T) {
		tx := sign(transfer([]types.TxInput{input(fundB, bob)}, pay(4_800, carol)), regtestMagic, bob)
		tx.LockTime = connHeight
		sign(tx, regtestMagic, bob)
		wantTx(t, connectInput(connectLimit, tx1, tx, tx3, tx4), 2, consensus.ErrNonFinal)
		tx.LockTime = connHeight - 1
		sign(tx, regtestMagic, bob)
		noErr(t, second(consensus.CheckBlockConnect(connectInput(connectLimit, tx1, tx, tx3, tx4))))
	})
	t.Run("non-final time lock", func(t *testing.T) {
		tx := transfer([]types.TxInput{input(fundB, bob)}, pay(4_800, carol))
		tx.LockTime = connMTP
		sign(tx, regtestMagic, bob)
		wantTx(t, connectInput(connectLimit, tx1, tx, tx3, tx4), 2, consensus.ErrNonFinal)
		tx.LockTime = connMTP - 1
		sign(tx, regtestMagic, bob)
		noErr(t, second(consensus.CheckBlockConnect(connectInput(connectLimit, tx1, tx, tx3, tx4))))
	})
	t.Run("non-final coinbase", func(t *testing.T) {
		in := connectInput(connectLimit, tx1, tx2, tx3, tx4)
		in.Block.Transactions[0].LockTime = connHeight + 10
		fix(in.Block)
		in.TxIDs = in.Block.TxIDs()
		wantTx(t, in, 0, consensus.ErrNonFinal)
	})
	t.Run("bad signature in the third transaction", func(t *testing.T) {
		// The third transaction of the block (index 2, tx2) and the third transfer (index 3, tx3).
		for _, pos := range []int{2, 3} {
			for _, w := range []int{0, 1, 2, 8} {
				in := connectInput(connectLimit, tx1, tx2, tx3, tx4)
				bad := *in.Block.Transactions[pos]
				bad.Inputs = slices.Clone(bad.Inputs)
				bad.Inputs[0].Signature[0] ^= 1
				in.Block.Transactions[pos] = &bad
				if bad.TxID() != in.TxIDs[pos] {
					t.Fatal("a signature changed the txid")
				}
				in.SigWorkers = w
				wantTx(t, in, pos, consensus.ErrBadSignature)
				// Callers that verified the signatures already may skip them.
				in.SkipSignatures = true
				noErr(t, second(consensus.CheckBlockConnect(in)))
			}
		}
	})
	t.Run("lowest bad signature wins in parallel", func(t *testing.T) {
		in := bigConnectInput(t, 100)
		for _, i := range []int{70, 30} {
			bad := *in.Block.Transactions[i]
			bad.Inputs = slices.Clone(bad.Inputs)
			bad.Inputs[0].Signature[63] ^= 0x10
			in.Block.Transactions[i] = &bad
		}
		for _, w := range []int{0, 1, 2, 8} {
			for run := 0; run < 5; run++ {
				in.SigWorkers = w
				wantTx(t, in, 30, consensus.ErrBadSignature)
			}
		}
	})
	t.Run("signature for another network", func(t *testing.T) {
		in := connectInput(connectLimit, tx1, tx2, tx3, tx4)
		in.Magic = [4]byte{'T', 'C', 'O', 'N'}
		wantTx(t, in, 1, consensus.ErrBadSignature)
	})
	t.Run("pubkey mismatch", func(t *testing.T) {
		tx := sign(transfer([]types.TxInput{input(fundC, alice)}, pay(2_950, alice)), regtestMagic, alice)
		wantTx(t, connectInput(connectLimit, tx1, tx2, tx3, tx), 4, consensus.ErrPubKeyMismatch)
	})
	t.Run("insufficient funds", func(t *testing.T) {
		tx := sign(transfer([]types.TxInput{input(fundC, carol)}, pay(3_001, alice)), regtestMagic, carol)
		wantTx(t, connectInput(connectLimit, tx1, tx2, tx3, tx), 4, consensus.ErrInsufficientFunds)
	})
	t.Run("coinbase height", func(t *testing.T) {
		in := connectInput(connectLimit, tx1, tx2, tx3, tx4)
		in.Height++
		_, err := consensus.CheckBlockConnect(in)
		wantKind(t, err, consensus.ErrBadCoinbaseHeight)
		in = connectInput(connectLimit, tx1, tx2, tx3, tx4)
		in.Block.Transactions[0].Payload = nil
		_, err = consensus.CheckBlockConnect(in)
		wantKind(t, err, consensus.ErrBadCoinbasePayload)
	})
	t.Run("coinbase in second position", func(t *testing.T) {
		// CheckBlockSanity rejects this first; CheckBlockConnect still refuses it.
		wantTx(t, connectInput(connectLimit, coinbase(connHeight, pay(1, miner)), tx1), 1, consensus.ErrUnexpectedCoinbase)
	})
	t.Run("value model above nominal is capped", func(t *testing.T) {
		in := connectInput(1, tx2, tx4)
		withValues(&in, hugeModel{})
		eff, err := consensus.CheckBlockConnect(in)
		if err == nil && eff.DecayPaid != 0 {
			t.Fatalf("decay %d from a model above nominal", eff.DecayPaid)
		}
	})
	t.Run("storage error passes through", func(t *testing.T) {
		in := connectInput(connectLimit, tx1, tx2, tx3, tx4)
		in.View = consensus.ValuedView{Utxos: errView{}}
		_, err := consensus.CheckBlockConnect(in)
		if err != errStorage || consensus.IsRuleError(err) {
			t.Fatalf("got %v, want the storage error unchanged", err)
		}
	})
}

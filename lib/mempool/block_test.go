package mempool

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/cointoolkit/coin/lib/consensus"
	"github.com/cointoolkit/coin/lib/types"
)

func TestBlockConnected(t *testing.T) {
	f := newFixture(t, Options{})
	a := f.transfer(f.take(1), 5_000, 2)
	aChild := f.transfer([]coin{out(a, 0)}, 5_000, 1)
	c := f.transfer(f.take(1), 5_000, 1)
	dIn := f.take(1)
	d := f.transfer(dIn, 5_000, 2)
	dChild := f.transfer([]coin{out(d, 1)}, 5_000, 1)
	dGrandchild := f.transfer([]coin{out(dChild, 0), out(aChild, 0)}, 5_000, 1)
	f.mustAccept(a, aChild, c, d, dChild, dGrandchild)
	f.expect(a, aChild, c, d, dChild, dGrandchild)

	// The block mines a and spends d's input in another transaction.
	rival := f.transfer(dIn, 9_000, 1)
	f.mine(a, rival)
	// a is gone (mined), d and its descendants are gone (conflict); aChild and c stay.
	f.expect(aChild, c)
	if e, _ := f.pool.Get(aChild.TxID()); len(e.parents) != 0 {
		t.Fatal("aChild still links to its mined parent")
	}
	for _, in := range []coin{dIn[0], out(d, 1), out(dChild, 0)} {
		if _, ok := f.pool.SpentBy(in.Outpoint); ok {
			t.Fatalf("%s is still marked spent by the pool", in.Outpoint)
		}
	}
	if _, err := f.pool.Accept(context.Background(), a); !errors.Is(err, ErrAlreadyInChain) {
		t.Fatalf("mined transaction again: %v", err)
	}
	if _, err := f.pool.Accept(context.Background(), d); !errors.Is(err, consensus.ErrMissingInputs) {
		t.Fatalf("conflicted transaction again: %v", err)
	}
	sel := f.pool.Select(consensus.MaxBlockSize)
	checkSelect(t, f.pool, sel, consensus.MaxBlockSize)

	// Mining everything empties the pool.
	f.mine(aChild, c)
	f.expect()
	// A block unrelated to the pool changes nothing.
	e := f.transfer(f.take(1), 5_000, 1)
	f.mustAccept(e)
	f.mine()
	f.expect(e)
}

func TestReorganized(t *testing.T) {
	f := newFixture(t, Options{})
	fork := f.tipBlock()
	tx1 := f.transfer(f.take(1), 7_000, 2)
	tx1Child := f.transfer([]coin{out(tx1, 0)}, 3_000, 1) // in the block too
	in2 := f.take(1)
	tx2 := f.transfer(in2, 6_000, 1)
	f.mustAccept(tx1, tx1Child, tx2)
	blockA := f.mine(tx1, tx1Child, tx2)
	f.expect()

	// After A: a child of the confirmed tx2 and an independent transaction.
	tx3 := f.transfer([]coin{out(tx2, 0)}, 4_000, 1)
	tx4 := f.transfer(f.take(1), 8_000, 1)
	f.mustAccept(tx3, tx4)
	f.expect(tx3, tx4)

	// A competing branch: B1 spends tx2's input elsewhere, B2 makes it the longer chain.
	rival := f.transfer(in2, 11_000, 1)
	b1 := f.blockOn("b1", fork, rival)
	b2 := f.blockOn("b2", b1)
	if res := f.process(b1); res.IsTip {
		t.Fatal("b1 took the tip from A")
	}
	f.expect(tx3, tx4)
	res := f.process(b2)
	if len(res.Disconnected) != 1 || len(res.Connected) != 2 {
		t.Fatalf("reorganisation: %d disconnected, %d connected", len(res.Disconnected), len(res.Connected))
	}
	// tx1 and its child are back; tx2 conflicts with the rival and tx3 lost its input.
	f.expect(tx1, tx1Child, tx4)
	sel := f.pool.Select(consensus.MaxBlockSize)
	checkSelect(t, f.pool, sel, consensus.MaxBlockSize)
	if e, _ := f.pool.Get(tx1Child.TxID()); len(e.parents) != 1 {
		t.Fatal("tx1Child lost its link to tx1")
	}

	// Back to A's branch: A2, A3 on A. The rival goes back but now conflicts with tx2.
	a2 := f.blockOn("a2", blockA)
	a3 := f.blockOn("a3", a2)
	f.process(a2)
	f.expect(tx1, tx1Child, tx4)
	res = f.process(a3)
	if len(res.Disconnected) != 2 || len(res.Connected) != 3 {
		t.Fatalf("second reorganisation: %d disconnected, %d connected", len(res.Disconnected), len(res.Connected))
	}
	// A mined tx1, tx1Child and tx2 again; the rival is invalid; tx4 stays.
	f.expect(tx4)
	if _, err := f.pool.Accept(context.Background(), rival); !errors.Is(err, consensus.ErrMissingInputs) {
		t.Fatalf("rival after the second reorganisation: %v", err)
	}
	f.mustAccept(tx3)
	f.expect(tx3, tx4)
}

// TestReorganizedDropsSpendsOfDisconnectedCoinbase checks that a pool transaction spending
// the coinbase of a block that a reorganisation takes out of the main chain is dropped.
func TestReorganizedDropsSpendsOfDisconnectedCoinbase(t *testing.T) {
	f := newFixture(t, Options{})
	fork := f.tipBlock()
	a := f.mine()
	// 100 blocks on A make A's coinbase spendable in the next block.
	parent := a
	var branch []*types.Block
	for i := 0; i < 100; i++ {
		b := f.blockOn(fmt.Sprintf("r%d", i), parent)
		f.process(b)
		branch = append(branch, b)
		parent = b
	}
	spendA := f.transfer([]coin{out(a.Transactions[0], 0)}, 10_000, 1)
	other := f.transfer(f.take(1), 10_000, 1)
	f.mustAccept(spendA, other)
	f.expect(spendA, other)
	// A longer branch from the fork point replaces A and everything after it.
	parent = fork
	for i := 0; i < 102; i++ {
		b := f.blockOn(fmt.Sprintf("alt%d", i), parent)
		if i < 101 {
			if _, err := f.chain.ProcessBlock(context.Background(), b); err != nil {
				t.Fatal(err)
			}
		} else {
			res := f.process(b)
			if len(res.Disconnected) != 101 {
				t.Fatalf("%d blocks disconnected, want 101", len(res.Disconnected))
			}
		}
		parent = b
	}
	f.expect(other)
}

package chainstate

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/cointoolkit/coin/lib/chaingen"
	"github.com/cointoolkit/coin/lib/consensus"
	"github.com/cointoolkit/coin/lib/params"
	"github.com/cointoolkit/coin/lib/types"
)

// TestScenario runs the scenario with each block written as it connects, and in bulk mode,
// where connected blocks stay in the write cache until a disconnect, a scan or Close writes
// them.
func TestScenario(t *testing.T) {
	for _, bulk := range []bool{false, true} {
		t.Run(fmt.Sprintf("bulk=%v", bulk), func(t *testing.T) { testScenario(t, bulk) })
	}
}

// txs is a transaction list, to keep the table short.
func txs(list ...*types.Transaction) []*types.Transaction { return list }

func testScenario(t *testing.T, bulk bool) {
	g0 := params.Regtest.GenesisBlock().Header.Timestamp
	now := int64(g0) + 86_400
	s := newScenario(t, params.Regtest, now)
	if err := s.c.SetBulk(bulk); err != nil {
		t.Fatal(err)
	}
	limit := params.Regtest.PowLimit
	var burnedBefore uint64
	type G = chaingen.Generator
	accept, reject := chaingen.Accept, chaingen.Reject

	var all []scenarioStep
	add := func(st ...scenarioStep) { all = append(all, st...) }

	add(steps(chaingen.Extend("a", 1, 5, "genesis")...)...)
	add(steps(
		// Unknown parent: the caller may keep it as an orphan; nothing is stored.
		chaingen.Orphan("orphan", "a5").Built(func(g *G) {
			g.Next("orphan", "a5", nil, chaingen.Parent(types.Blake3([]byte("nowhere"))))
		}),
	)...)
	add(resubmit("a5", consensus.ErrDuplicateBlock, "a5"), resubmit("a2", consensus.ErrDuplicateBlock, "a5"))
	add(steps(
		reject("bad-merkle", consensus.ErrBadMerkleRoot, "a5").Built(func(g *G) {
			g.Next("bad-merkle", "a5", nil, chaingen.BadMerkleRoot)
		}),
		reject("high-hash", consensus.ErrBadProofOfWork, "a5").Built(func(g *G) {
			chaingen.Unsolve(g.Next("high-hash", "a5", nil), limit)
		}),
		// A target below the limit but not the expected one.
		reject("bits-low", consensus.ErrWrongDifficulty, "a5").Built(func(g *G) {
			g.Next("bits-low", "a5", nil, chaingen.Target(0x207ffffe))
		}),
		// Targets above the limit, negative, zero or overflowing are bad in themselves.
		reject("bits-above-limit", consensus.ErrBadTarget, "a5").Built(func(g *G) {
			g.Next("bits-above-limit", "a5", nil, chaingen.Target(0x2100ffff))
		}),
		reject("bits-negative", consensus.ErrBadTarget, "a5").Built(func(g *G) {
			g.Next("bits-negative", "a5", nil).Header.DifficultyTarget = 0x20800001
		}),
		reject("bits-zero", consensus.ErrBadTarget, "a5").Built(func(g *G) {
			g.Next("bits-zero", "a5", nil).Header.DifficultyTarget = 0
		}),
		reject("bits-overflow", consensus.ErrBadTarget, "a5").Built(func(g *G) {
			g.Next("bits-overflow", "a5", nil).Header.DifficultyTarget = 0xff123456
		}),
		reject("version2", consensus.ErrBadBlockVersion, "a5").Built(func(g *G) {
			g.Next("version2", "a5", nil, chaingen.Version(2))
		}),
		reject("no-txs", consensus.ErrNoTransactions, "a5").Built(func(g *G) {
			g.Next("no-txs", "a5", nil, chaingen.NoTransactions)
		}),
		// Timestamps: equal to the median time past is too old, one more is fine even though
		// it is before the parent's.
		reject("time-mtp", consensus.ErrTimeTooOld, "a5").Built(func(g *G) {
			g.Next("time-mtp", "a5", nil, chaingen.Timestamp(s.mtp("a5")))
		}),
		accept("a6", "a6").Built(func(g *G) {
			g.Next("a6", "a5", nil, chaingen.Timestamp(s.mtp("a5")+1))
			if g.Block("a6").Header.Timestamp >= g.Block("a5").Header.Timestamp {
				t.Fatal("a6 should be earlier than its parent")
			}
		}),
		reject("time-future", consensus.ErrTimeTooNew, "a6").Built(func(g *G) {
			g.Next("time-future", "a6", nil, chaingen.Timestamp(uint64(now)+params.Regtest.MaxFutureDrift+1))
		}),
	)...)
	add(steps(chaingen.Extend("a", 7, 7, "a6")...)...)
	add(
		// Coinbase rules, checked on connect: the block is kept, marked invalid.
		invalid(reject("cb-height", consensus.ErrBadCoinbaseHeight, "a7").Built(func(g *G) {
			g.Next("cb-height", "a7", nil, chaingen.CoinbaseHeight(9))
		})),
		invalid(reject("cb-value", consensus.ErrBadCoinbaseValue, "a7").Built(func(g *G) {
			g.Next("cb-value", "a7", nil, chaingen.CoinbaseValue(consensus.Subsidy(8)+1))
		})),
		// Paying less than allowed burns the difference.
		step(accept("a8", "a8").Built(func(g *G) {
			burnedBefore = s.c.Stats().Burned
			g.Next("a8", "a7", nil, chaingen.CoinbaseValue(consensus.Subsidy(8)-1234))
		}).Checked(func(*G) {
			if got := s.c.Stats().Burned - burnedBefore; got != 1234 {
				t.Fatalf("burned grew by %d, want 1234", got)
			}
		})),
		step(reject("on-invalid", consensus.ErrInvalidAncestor, "a8").Built(func(g *G) {
			g.Next("on-invalid", "cb-height", nil)
		})),
		resubmit("cb-value", consensus.ErrKnownInvalid, "a8"),
	)
	add(steps(chaingen.Extend("a", 9, 99, "a8")...)...)
	add(
		// The coinbase of height 1 is spendable from height 101.
		invalid(reject("immature", consensus.ErrImmatureCoinbase, "a99").Built(func(g *G) {
			g.Next("immature", "a99", txs(s.spendTx("s1", "a1", 0, 1000, 2)))
		})),
		step(accept("a100", "a100").Built(func(g *G) { g.Next("a100", "a99", nil) })),
		step(accept("a101", "a101").Built(func(g *G) {
			g.Next("a101", "a100", txs(g.Tx("s1")))
		}).Checked(func(g *G) {
			if s.unspent(g.Coinbase("a1").Outpoint) {
				t.Fatal("spent coinbase still unspent")
			}
		})),
		// Two transactions of one block spending the same output.
		invalid(reject("double-in-block", consensus.ErrDoubleSpend, "a101").Built(func(g *G) {
			g.Next("double-in-block", "a101", txs(s.spendTx("d1", "a2", 0, 1000, 1), s.spendTx("d2", "a2", 0, 2000, 1)))
		})),
		// An output spent in an earlier block is gone.
		invalid(reject("double-earlier", consensus.ErrMissingInputs, "a101").Built(func(g *G) {
			g.Next("double-earlier", "a101", txs(s.spendTx("d3", "a1", 0, 5000, 1)))
		})),
		// Spending an output created earlier in the same block.
		step(accept("a102", "a102").Built(func(g *G) {
			t1 := s.spendTx("t1", "a2", 0, 1000, 2)
			g.Next("a102", "a101", txs(t1, s.spendTx("t2", "t1", 0, 0, 1)))
		}).Checked(func(g *G) {
			t1, t2 := g.Tx("t1").TxID(), g.Tx("t2").TxID()
			if s.unspent(types.Outpoint{TxID: t1, Index: 0}) || !s.unspent(types.Outpoint{TxID: t1, Index: 1}) ||
				!s.unspent(types.Outpoint{TxID: t2, Index: 0}) {
				t.Fatal("in-block spend: wrong outputs unspent")
			}
			if loc, err := s.c.TxLocation(t2); err != nil || loc.Height != 102 || loc.Position != 2 {
				t.Fatal(loc, err)
			}
		})),
	)
	add(steps(
		// A signature flipped in a copy of a valid block: the hash is the same (signatures
		// are not part of the txid), so the copy must not poison the valid block.
		reject("a103-badsig", consensus.ErrBadSignature, "a102").Built(func(g *G) {
			good := g.Next("a103", "a102", txs(s.spendTx("s3", "a3", 0, 1000, 1)))
			bad := g.Clone("a103-badsig", "a103")
			bad.Transactions[1].Inputs[0].Signature[5] ^= 0x40
			if bad.Hash() != good.Hash() {
				t.Fatal("a signature changed the block hash")
			}
		}),
		accept("a103", "a103"),
		// Signed for another network: a bad signature (no cross-network replay).
		reject("wrong-magic", consensus.ErrBadSignature, "a103").Built(func(g *G) {
			tx := g.Spend(g.Coinbase("a4")).Fee(1000).Magic(params.Testnet.Magic).Name("s4x").Tx()
			g.Next("wrong-magic", "a103", txs(tx))
		}),
		// A valid signature by a key that does not own the output.
		reject("a104-otherkey", consensus.ErrPubKeyMismatch, "a103").Built(func(g *G) {
			good := g.Next("a104", "a103", txs(s.spendTx("s4", "a4", 0, 1000, 1)))
			bad := g.Clone("a104-otherkey", "a104")
			g.Wallet("other").Sign(bad.Transactions[1], g.Network().Magic)
			if bad.Hash() != good.Hash() || consensus.VerifySignatures(bad.Transactions[1], bad.Transactions[1].TxID(), g.Network().Magic) != nil {
				t.Fatal("re-signed copy should keep the hash and verify")
			}
		}),
		accept("a104", "a104"),
	)...)
	add(
		// Height lock: lock_time 105 is final from height 106.
		invalid(reject("nonfinal-height", consensus.ErrNonFinal, "a104").Built(func(g *G) {
			tx := g.Spend(g.Coinbase("a5")).Fee(1000).LockTime(105).Name("l1").Tx()
			g.Next("nonfinal-height", "a104", txs(tx))
		})),
		step(accept("a105", "a105").Built(func(g *G) { g.Next("a105", "a104", nil) })),
		step(accept("a106", "a106").Built(func(g *G) { g.Next("a106", "a105", txs(g.Tx("l1"))) })),
		// Time lock: final once the median time past of the block's predecessors is past it.
		invalid(reject("nonfinal-time", consensus.ErrNonFinal, "a106").Built(func(g *G) {
			tx := g.Spend(g.Coinbase("a6")).Fee(1000).LockTime(s.mtp("a106")).Name("l2").Tx()
			g.Next("nonfinal-time", "a106", txs(tx))
		})),
		step(accept("a107", "a107").Built(func(g *G) { g.Next("a107", "a106", nil) })),
		step(accept("a108", "a108").Built(func(g *G) {
			if s.mtp("a107") <= g.Tx("l2").LockTime {
				t.Fatal("median time past did not pass the lock time")
			}
			g.Next("a108", "a107", txs(g.Tx("l2")))
		})),
	)
	add(steps(
		// Block structure.
		reject("two-coinbases", consensus.ErrMultipleCoinbases, "a108").Built(func(g *G) {
			g.Next("two-coinbases", "a108", txs(types.NewCoinbase(109, g.Miner().PKH, 1, []byte("second"))))
		}),
		reject("first-not-coinbase", consensus.ErrFirstTxNotCoinbase, "a108").Built(func(g *G) {
			g.Next("first-not-coinbase", "a108", txs(s.spendTx("f1", "a7", 0, 1000, 1)), chaingen.SwapTxs(0, 1))
		}),
		reject("bad-stake", consensus.ErrBadStake, "a108").Built(func(g *G) {
			tx := g.Spend(g.Coinbase("a7")).Fee(1000).Kind(types.KindAgentRegister, nil).Name("g1").Tx()
			g.Next("bad-stake", "a108", txs(tx))
		}),
		reject("dup-tx", consensus.ErrDuplicateTx, "a108").Built(func(g *G) {
			tx := s.spendTx("u1", "a7", 0, 1000, 1)
			g.Next("dup-tx", "a108", txs(tx, tx))
		}),
		reject("zero-output", consensus.ErrZeroOutput, "a108").Built(func(g *G) {
			tx := s.spendTx("z1", "a7", 0, 1000, 2)
			tx.Outputs[1].Value, tx.Outputs[0].Value = tx.Outputs[0].Value+tx.Outputs[1].Value, 0
			g.Next("zero-output", "a108", txs(g.Sign(tx)))
		}),
	)...)
	add(invalid(reject("overspend", consensus.ErrInsufficientFunds, "a108").Built(func(g *G) {
		tx := s.spendTx("o1", "a7", 0, 0, 1)
		tx.Outputs[0].Value++
		g.Next("overspend", "a108", txs(g.Sign(tx)))
	})))
	// Size: coinbases of a10..a39 into 1,000 outputs each make a block above 1 MiB; trimmed
	// to exactly 1 MiB the same spends are valid.
	add(steps(chaingen.Extend("a", 109, 139, "a108")...)...)
	var bigFrom []string
	for i := 10; i <= 39; i++ {
		bigFrom = append(bigFrom, fmt.Sprintf("a%d", i))
	}
	add(steps(
		reject("too-big", consensus.ErrBlockTooLarge, "a139").Built(func(g *G) {
			b := g.Next("too-big", "a139", s.bigBlockTxs(bigFrom))
			if b.SerializeSize() <= consensus.MaxBlockSize {
				t.Fatalf("block is only %d bytes", b.SerializeSize())
			}
		}),
		reject("too-big-by-one", consensus.ErrBlockTooLarge, "a139").Built(func(g *G) {
			g.Next("too-big-by-one", "a139", s.bigBlockTxs(bigFrom), func(b *types.Block) {
				sizeTo(t, s, b, consensus.MaxBlockSize+1)
			})
		}),
		accept("a140", "a140").Built(func(g *G) {
			g.Next("a140", "a139", s.bigBlockTxs(bigFrom), func(b *types.Block) { sizeTo(t, s, b, consensus.MaxBlockSize) })
		}).Checked(func(*G) {
			if n := s.c.Tip(); n.size != consensus.MaxBlockSize {
				t.Fatalf("tip size %d", n.size)
			}
		}),
		// The clock's edge: regtest's two hours ahead is allowed.
		accept("a141", "a141").Built(func(g *G) {
			g.Next("a141", "a140", nil, chaingen.Timestamp(uint64(now)+params.Regtest.MaxFutureDrift))
		}),
		reject("a142", consensus.ErrTimeTooNew, "a141").Built(func(g *G) { g.Next("a142", "a141", nil) }),
		// A minute later by the clock the same block is fine.
		accept("a142", "a142").Built(func(*G) { s.now.Add(60) }),
	)...)
	s.run(all)

	if err := sameSet(utxoSet(t, s.c), replaySet(t, s.c)); err != nil {
		t.Fatal("replay:", err)
	}
	stats := s.c.Stats()
	s.c.Close()
	c, err := Open(context.Background(), s.dir, params.Regtest, Options{Now: func() time.Time { return time.Unix(now+60, 0) }})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	s.c = c
	if c.Stats() != stats || c.Tip().Hash != s.Block("a142").Hash() {
		t.Fatal("reopen lost state")
	}
	for _, name := range []string{"cb-height", "immature", "nonfinal-time", "overspend"} {
		if n := c.NodeByHash(s.Block(name).Hash()); n == nil || n.status != StatusInvalid {
			t.Fatalf("%s: invalid mark lost on reopen: %+v", name, n)
		}
	}
	s.reject("cb-height", consensus.ErrKnownInvalid, "a142")
}

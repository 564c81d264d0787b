package chainstate

import (
	"bytes"
	"crypto/ed25519"
	"errors"
	"fmt"
	"math/big"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cointoolkit/coin/lib/consensus"
	"github.com/cointoolkit/coin/lib/miner"
	"github.com/cointoolkit/coin/lib/params"
	"github.com/cointoolkit/coin/lib/pow"
	"github.com/cointoolkit/coin/lib/types"
	"github.com/syndtr/goleveldb/leveldb/util"
)

// This file is a table-driven scenario in the manner of btcd's fullblocktests: every step
// builds (or re-submits) one named block and says what ProcessBlock must do with it and
// which block must be the tip afterwards. After every rejection the test checks that nothing
// but, for a block that failed on connect, its own data and invalid mark was written.

// stored says what a rejected block leaves in the database.
type stored int

const (
	storedNothing       stored = iota // sanity, header-context and witness failures: nothing at all
	storedInvalid                     // connect failures: the block, marked invalid
	storedAsIs                        // a block already known (duplicate, known invalid): no change
	storedInvalidParent               // a block whose reorg failed at an ancestor (named in marks)
)

type scenarioStep struct {
	block string            // the block to submit
	build func(s *scenario) // builds s.blocks[block]; nil re-submits a block built earlier
	err   consensus.ErrorKind
	tip   string
	store stored // for rejections
	// forgets names blocks stored earlier that the rejection removes (a tampered side
	// branch found out on a reorg attempt).
	forgets []string
	// marks names stored blocks the rejection marks invalid (storedInvalidParent).
	marks []string
	check func(s *scenario)
}

type scenario struct {
	*harness
	now   atomic.Int64 // the chain's clock, unix seconds
	other ed25519.PrivateKey
	txs   map[string]*types.Transaction
}

func newScenario(t *testing.T, net *params.Network, now int64) *scenario {
	s := &scenario{txs: map[string]*types.Transaction{}, other: ed25519.NewKeyFromSeed(bytes.Repeat([]byte{7}, 32))}
	s.now.Store(now)
	dir := t.TempDir()
	c, err := Open(dir, net, Options{Now: func() time.Time { return time.Unix(s.now.Load(), 0) }})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	g := newGenerator(t)
	g.net = net
	s.harness = &harness{generator: g, c: c, dir: dir}
	return s
}

// run plays the steps in order.
func (s *scenario) run(steps []scenarioStep) {
	t := s.t.(*testing.T)
	for i, st := range steps {
		if st.build != nil {
			st.build(s)
		}
		b, ok := s.blocks[st.block]
		if !ok {
			t.Fatalf("step %d: no block %q", i, st.block)
		}
		if st.err == "" {
			if _, err := s.c.ProcessBlock(b); err != nil {
				t.Fatalf("step %d: block %s rejected: %v", i, st.block, err)
			}
			s.expectTip(st.tip)
		} else {
			s.rejectStep(i, st, b)
		}
		if st.check != nil {
			st.check(s)
		}
	}
}

func (s *scenario) rejectStep(i int, st scenarioStep, b *types.Block) {
	t := s.t.(*testing.T)
	t.Helper()
	hash := b.Hash()
	known := s.c.NodeByHash(hash) != nil
	stats, tip := s.c.Stats(), s.c.Tip()
	before := dbSnapshot(t, s.c)
	res, err := s.c.ProcessBlock(b)
	if !errors.Is(err, st.err) {
		t.Fatalf("step %d: block %s: got %v, want %s", i, st.block, err, st.err)
	}
	if !consensus.IsRuleError(err) {
		t.Fatalf("step %d: block %s: %v is not a consensus.RuleError", i, st.block, err)
	}
	if res != nil {
		// A failed reorg attempt reconnects what it disconnected, in reverse order.
		ok := !res.IsTip && len(res.Connected) == len(res.Disconnected)
		for j := 0; ok && j < len(res.Connected); j++ {
			ok = res.Connected[j].Hash == res.Disconnected[len(res.Disconnected)-1-j].Hash
		}
		if !ok {
			t.Fatalf("step %d: block %s: rejected block moved the chain: %+v", i, st.block, res)
		}
	}
	s.expectTip(st.tip)
	if s.c.Tip() != tip || s.c.Stats() != stats {
		t.Fatalf("step %d: block %s: tip or stats changed by a rejected block", i, st.block)
	}
	after := dbSnapshot(t, s.c)
	// A block that failed on connect keeps its data and its index record (marked invalid).
	allowed := map[string]bool{}
	switch st.store {
	case storedNothing:
		if n := s.c.NodeByHash(hash); n != nil {
			t.Fatalf("step %d: block %s was stored (status %s)", i, st.block, n.Status)
		}
		if _, err := s.c.Block(hash); !errors.Is(err, ErrNotFound) {
			t.Fatalf("step %d: block %s: data stored (%v)", i, st.block, err)
		}
	case storedInvalid:
		n := s.c.NodeByHash(hash)
		if n == nil || n.Status != StatusInvalid {
			t.Fatalf("step %d: block %s: want it stored as invalid, got %+v", i, st.block, n)
		}
		if known {
			t.Fatalf("step %d: block %s was known before", i, st.block)
		}
		allowed[string(hashKey(pfxBlock, hash))] = true
		allowed[string(hashKey(pfxIndex, hash))] = true
	case storedInvalidParent:
		if n := s.c.NodeByHash(hash); n == nil || n.Status != StatusInvalidParent || known {
			t.Fatalf("step %d: block %s: want it stored as invalid-parent, got %+v", i, st.block, n)
		}
		allowed[string(hashKey(pfxBlock, hash))] = true
		allowed[string(hashKey(pfxIndex, hash))] = true
		for _, name := range st.marks {
			if n := s.c.NodeByHash(s.blocks[name].Hash()); n == nil || n.Status != StatusInvalid {
				t.Fatalf("step %d: block %s: %s not marked invalid: %+v", i, st.block, name, n)
			}
			allowed[string(hashKey(pfxIndex, s.blocks[name].Hash()))] = true
		}
	case storedAsIs:
		if !known {
			t.Fatalf("step %d: block %s was not known before", i, st.block)
		}
	}
	for k, v := range after {
		if old, ok := before[k]; (!ok || old != v) && !allowed[k] {
			t.Fatalf("step %d: block %s: rejection wrote key %x", i, st.block, k)
		}
	}
	for _, name := range st.forgets {
		h := s.blocks[name].Hash()
		if s.c.NodeByHash(h) != nil {
			t.Fatalf("step %d: block %s: %s still indexed", i, st.block, name)
		}
		delete(before, string(hashKey(pfxBlock, h)))
		delete(before, string(hashKey(pfxIndex, h)))
	}
	for k := range before {
		if _, ok := after[k]; !ok {
			t.Fatalf("step %d: block %s: rejection deleted key %x", i, st.block, k)
		}
	}
}

// dbSnapshot is every key and value of the database, after writing the write cache.
func dbSnapshot(t testing.TB, c *Chain) map[string]string {
	t.Helper()
	flushForTest(t, c)
	out := map[string]string{}
	it := c.db.NewIterator(&util.Range{}, nil)
	defer it.Release()
	for it.Next() {
		out[string(it.Key())] = string(it.Value())
	}
	if err := it.Error(); err != nil {
		t.Fatal(err)
	}
	return out
}

// fixMerkle recomputes the merkle root after a mutation of the transactions.
func fixMerkle(b *types.Block) { b.Header.MerkleRoot = types.MerkleRoot(b.TxIDs()) }

// cloneBlock deep-copies a block (header included, so the hash stays the same).
func cloneBlock(t testing.TB, b *types.Block) *types.Block {
	c, err := types.DecodeBlock(b.Bytes())
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// mtp is the median time past a child of the named block must exceed.
func (s *scenario) mtp(name string) uint64 {
	return medianTimePast(s.c.NodeByHash(s.blocks[name].Hash()))
}

// tx builds and remembers a transfer of output idx of the named transaction or block coinbase.
func (s *scenario) spendTx(name, from string, idx uint32, fee uint64, outputs int) *types.Transaction {
	prev, ok := s.txs[from]
	if !ok {
		prev = s.blocks[from].Transactions[0]
	}
	tx := s.spendOutput(prev, idx, fee, outputs)
	s.txs[name] = tx
	return tx
}

// signed re-signs tx after a change to its fields with key.
func (s *scenario) signed(tx *types.Transaction, key ed25519.PrivateKey, magic [4]byte) *types.Transaction {
	types.SignInputs(tx, key, magic)
	return tx
}

func (s *scenario) unspent(op types.Outpoint) bool {
	_, ok, err := s.c.Utxo(op)
	if err != nil {
		s.t.Fatal(err)
	}
	return ok
}

// plain is a step that builds an empty block name on parent and expects it as the new tip.
func plain(name, parent string) scenarioStep {
	return scenarioStep{block: name, build: func(s *scenario) { s.next(name, parent, nil) }, tip: name}
}

// plainChain is steps building prefix<from>..prefix<to> on parent, each the new tip.
func plainChain(prefix string, from, to int, parent string) []scenarioStep {
	var out []scenarioStep
	for i := from; i <= to; i++ {
		name := fmt.Sprintf("%s%d", prefix, i)
		out = append(out, plain(name, parent))
		parent = name
	}
	return out
}

// resubmit is a step that submits an already built block again.
func resubmit(name string, kind consensus.ErrorKind, tip string) scenarioStep {
	return scenarioStep{block: name, err: kind, tip: tip, store: storedAsIs}
}

// solveAbove changes the nonce until the hash is above the target (about half the nonces
// fail at the regtest limit).
func solveAbove(b *types.Block, limit *big.Int) {
	for pow.CheckProofOfWork(b.Hash(), b.Header.DifficultyTarget, limit) == nil {
		b.Header.Nonce++
	}
}

// bigBlockTxs returns transfers of the coinbases of the named blocks into as many 1,000-subunit
// outputs as make the block at least size bytes with an empty coinbase extra; the change of
// the last one absorbs the rest.
func (s *scenario) bigBlockTxs(from []string) []*types.Transaction {
	var txs []*types.Transaction
	for _, name := range from {
		cb := s.blocks[name].Transactions[0]
		tx := &types.Transaction{Version: 1, Kind: types.KindTransfer,
			Inputs: []types.TxInput{{PrevTxID: cb.TxID()}}}
		left := cb.Outputs[0].Value
		for i := 0; i < consensus.MaxTxOutputs-1; i++ {
			tx.Outputs = append(tx.Outputs, types.TxOutput{Value: 1000, PubKeyHash: s.pkh})
			left -= 1000
		}
		tx.Outputs = append(tx.Outputs, types.TxOutput{Value: left, PubKeyHash: s.pkh})
		txs = append(txs, s.signed(tx, s.key, s.net.Magic))
	}
	return txs
}

// sizeTo trims outputs off the last transaction and pads the coinbase extra until the block
// is exactly size bytes; it keeps the block valid (the change output takes what is trimmed).
func sizeTo(t testing.TB, s *scenario, b *types.Block, size int) {
	t.Helper()
	cb := b.Transactions[0]
	p, err := types.DecodeCoinbasePayload(cb.Payload)
	if err != nil {
		t.Fatal(err)
	}
	p.Extra = nil
	cb.Payload = p.Bytes()
	last := b.Transactions[len(b.Transactions)-1]
	for b.SerializeSize() > size {
		n := len(last.Outputs)
		last.Outputs[n-1].Value += last.Outputs[n-2].Value
		last.Outputs = append(last.Outputs[:n-2], last.Outputs[n-1])
	}
	p.Extra = make([]byte, size-b.SerializeSize())
	cb.Payload = p.Bytes()
	if got := b.SerializeSize(); got != size || len(p.Extra) > types.MaxCoinbaseExtra {
		t.Fatalf("block is %d bytes (extra %d), want %d", got, len(p.Extra), size)
	}
	s.signed(last, s.key, s.net.Magic)
	fixMerkle(b)
}

// TestScenario runs the scenario with each block written as it connects, and in bulk mode,
// where connected blocks stay in the write cache until a disconnect, a scan or Close writes
// them.
func TestScenario(t *testing.T) {
	for _, bulk := range []bool{false, true} {
		t.Run(fmt.Sprintf("bulk=%v", bulk), func(t *testing.T) { testScenario(t, bulk) })
	}
}

func testScenario(t *testing.T, bulk bool) {
	g0 := params.Regtest.GenesisBlock().Header.Timestamp
	now := int64(g0) + 86_400
	s := newScenario(t, params.Regtest, now)
	if err := s.c.SetBulk(bulk); err != nil {
		t.Fatal(err)
	}
	limit := params.Regtest.PowLimit
	var burnedBefore uint64

	var steps []scenarioStep
	add := func(st ...scenarioStep) { steps = append(steps, st...) }

	add(plainChain("a", 1, 5, "genesis")...)
	add(
		// Unknown parent: the caller may keep it as an orphan; nothing is stored.
		scenarioStep{block: "orphan", err: consensus.ErrUnknownParent, tip: "a5", build: func(s *scenario) {
			s.next("orphan", "a5", nil, func(b *types.Block) { b.Header.PrevHash = types.Blake3([]byte("nowhere")) })
		}},
		resubmit("a5", consensus.ErrDuplicateBlock, "a5"),
		resubmit("a2", consensus.ErrDuplicateBlock, "a5"),
		scenarioStep{block: "bad-merkle", err: consensus.ErrBadMerkleRoot, tip: "a5", build: func(s *scenario) {
			s.next("bad-merkle", "a5", nil, func(b *types.Block) { b.Header.MerkleRoot[0] ^= 1 })
		}},
		scenarioStep{block: "high-hash", err: consensus.ErrHighHash, tip: "a5", build: func(s *scenario) {
			solveAbove(s.next("high-hash", "a5", nil), limit)
		}},
		// A target below the limit but not the expected one.
		scenarioStep{block: "bits-low", err: consensus.ErrWrongDifficulty, tip: "a5", build: func(s *scenario) {
			s.next("bits-low", "a5", nil, func(b *types.Block) { b.Header.DifficultyTarget = 0x207ffffe })
		}},
		// Targets above the limit, negative, zero or overflowing are bad in themselves.
		scenarioStep{block: "bits-above-limit", err: consensus.ErrBadTarget, tip: "a5", build: func(s *scenario) {
			s.next("bits-above-limit", "a5", nil, func(b *types.Block) { b.Header.DifficultyTarget = 0x2100ffff })
		}},
		scenarioStep{block: "bits-negative", err: consensus.ErrBadTarget, tip: "a5", build: func(s *scenario) {
			s.next("bits-negative", "a5", nil).Header.DifficultyTarget = 0x20800001
		}},
		scenarioStep{block: "bits-zero", err: consensus.ErrBadTarget, tip: "a5", build: func(s *scenario) {
			s.next("bits-zero", "a5", nil).Header.DifficultyTarget = 0
		}},
		scenarioStep{block: "bits-overflow", err: consensus.ErrBadTarget, tip: "a5", build: func(s *scenario) {
			s.next("bits-overflow", "a5", nil).Header.DifficultyTarget = 0xff123456
		}},
		scenarioStep{block: "version2", err: consensus.ErrBlockVersion, tip: "a5", build: func(s *scenario) {
			s.next("version2", "a5", nil, func(b *types.Block) { b.Header.Version = 2 })
		}},
		scenarioStep{block: "no-txs", err: consensus.ErrNoTransactions, tip: "a5", build: func(s *scenario) {
			s.next("no-txs", "a5", nil, func(b *types.Block) { b.Transactions = nil })
		}},
		// Timestamps: equal to the median time past is too old, one more is fine even though
		// it is before the parent's.
		scenarioStep{block: "time-mtp", err: consensus.ErrTimeTooOld, tip: "a5", build: func(s *scenario) {
			mtp := s.mtp("a5")
			s.next("time-mtp", "a5", nil, func(b *types.Block) { b.Header.Timestamp = mtp })
		}},
		scenarioStep{block: "a6", tip: "a6", build: func(s *scenario) {
			mtp := s.mtp("a5")
			s.next("a6", "a5", nil, func(b *types.Block) { b.Header.Timestamp = mtp + 1 })
			if b := s.blocks["a6"]; b.Header.Timestamp >= s.blocks["a5"].Header.Timestamp {
				t.Fatal("a6 should be earlier than its parent")
			}
		}},
		scenarioStep{block: "time-future", err: consensus.ErrTimeTooNew, tip: "a6", build: func(s *scenario) {
			s.next("time-future", "a6", nil, func(b *types.Block) { b.Header.Timestamp = uint64(now) + 15*60 + 1 })
		}},
		plain("a7", "a6"),
		// Coinbase rules, checked on connect: the block is kept, marked invalid.
		scenarioStep{block: "cb-height", err: consensus.ErrBadCoinbaseHeight, tip: "a7", store: storedInvalid, build: func(s *scenario) {
			s.next("cb-height", "a7", nil, func(b *types.Block) {
				b.Transactions[0].Payload = types.CoinbasePayload{Height: 9, Extra: []byte("cb-height")}.Bytes()
				fixMerkle(b)
			})
		}},
		scenarioStep{block: "cb-value", err: consensus.ErrBadCoinbaseValue, tip: "a7", store: storedInvalid, build: func(s *scenario) {
			s.next("cb-value", "a7", nil, func(b *types.Block) {
				b.Transactions[0].Outputs[0].Value = consensus.Subsidy(8) + 1
				fixMerkle(b)
			})
		}},
		// Paying less than allowed burns the difference.
		scenarioStep{block: "a8", tip: "a8", build: func(s *scenario) {
			burnedBefore = s.c.Stats().Burned
			s.next("a8", "a7", nil, func(b *types.Block) {
				b.Transactions[0].Outputs[0].Value = consensus.Subsidy(8) - 1234
				fixMerkle(b)
			})
		}, check: func(s *scenario) {
			if got := s.c.Stats().Burned - burnedBefore; got != 1234 {
				t.Fatalf("burned grew by %d, want 1234", got)
			}
		}},
		scenarioStep{block: "on-invalid", err: consensus.ErrInvalidAncestor, tip: "a8", build: func(s *scenario) {
			s.next("on-invalid", "cb-height", nil)
		}},
		resubmit("cb-value", consensus.ErrKnownInvalid, "a8"),
	)
	add(plainChain("a", 9, 99, "a8")...)
	add(
		// The coinbase of height 1 is spendable from height 101.
		scenarioStep{block: "immature", err: consensus.ErrImmatureCoinbase, tip: "a99", store: storedInvalid, build: func(s *scenario) {
			s.next("immature", "a99", []*types.Transaction{s.spendTx("s1", "a1", 0, 1000, 2)})
		}},
		plain("a100", "a99"),
		scenarioStep{block: "a101", tip: "a101", build: func(s *scenario) {
			s.next("a101", "a100", []*types.Transaction{s.txs["s1"]})
		}, check: func(s *scenario) {
			if s.unspent(types.Outpoint{TxID: s.blocks["a1"].Transactions[0].TxID()}) {
				t.Fatal("spent coinbase still unspent")
			}
		}},
		// Two transactions of one block spending the same output.
		scenarioStep{block: "double-in-block", err: consensus.ErrDoubleSpend, tip: "a101", store: storedInvalid, build: func(s *scenario) {
			s.next("double-in-block", "a101", []*types.Transaction{
				s.spendTx("d1", "a2", 0, 1000, 1), s.spendTx("d2", "a2", 0, 2000, 1)})
		}},
		// An output spent in an earlier block is gone.
		scenarioStep{block: "double-earlier", err: consensus.ErrMissingInputs, tip: "a101", store: storedInvalid, build: func(s *scenario) {
			s.next("double-earlier", "a101", []*types.Transaction{s.spendTx("d3", "a1", 0, 5000, 1)})
		}},
		// Spending an output created earlier in the same block.
		scenarioStep{block: "a102", tip: "a102", build: func(s *scenario) {
			t1 := s.spendTx("t1", "a2", 0, 1000, 2)
			s.next("a102", "a101", []*types.Transaction{t1, s.spendTx("t2", "t1", 0, 0, 1)})
		}, check: func(s *scenario) {
			t1, t2 := s.txs["t1"].TxID(), s.txs["t2"].TxID()
			if s.unspent(types.Outpoint{TxID: t1, Index: 0}) || !s.unspent(types.Outpoint{TxID: t1, Index: 1}) ||
				!s.unspent(types.Outpoint{TxID: t2, Index: 0}) {
				t.Fatal("in-block spend: wrong outputs unspent")
			}
			if loc, err := s.c.TxLocation(t2); err != nil || loc.Height != 102 || loc.Position != 2 {
				t.Fatal(loc, err)
			}
		}},
		// A signature flipped in a copy of a valid block: the hash is the same (signatures
		// are not part of the txid), so the copy must not poison the valid block.
		scenarioStep{block: "a103-badsig", err: consensus.ErrBadSignature, tip: "a102", build: func(s *scenario) {
			good := s.next("a103", "a102", []*types.Transaction{s.spendTx("s3", "a3", 0, 1000, 1)})
			bad := cloneBlock(t, good)
			bad.Transactions[1].Inputs[0].Signature[5] ^= 0x40
			if bad.Hash() != good.Hash() {
				t.Fatal("a signature changed the block hash")
			}
			s.blocks["a103-badsig"] = bad
		}},
		scenarioStep{block: "a103", tip: "a103"},
		// Signed for another network: a bad signature (no cross-network replay).
		scenarioStep{block: "wrong-magic", err: consensus.ErrBadSignature, tip: "a103", build: func(s *scenario) {
			tx := s.signed(s.spendTx("s4x", "a4", 0, 1000, 1), s.key, params.Testnet.Magic)
			s.next("wrong-magic", "a103", []*types.Transaction{tx})
		}},
		// A valid signature by a key that does not own the output.
		scenarioStep{block: "a104-otherkey", err: consensus.ErrPubKeyMismatch, tip: "a103", build: func(s *scenario) {
			good := s.next("a104", "a103", []*types.Transaction{s.spendTx("s4", "a4", 0, 1000, 1)})
			bad := cloneBlock(t, good)
			s.signed(bad.Transactions[1], s.other, s.net.Magic)
			if bad.Hash() != good.Hash() || consensus.VerifySignatures(bad.Transactions[1], bad.Transactions[1].TxID(), s.net.Magic) != nil {
				t.Fatal("re-signed copy should keep the hash and verify")
			}
			s.blocks["a104-otherkey"] = bad
		}},
		scenarioStep{block: "a104", tip: "a104"},
		// Height lock: lock_time 105 is final from height 106.
		scenarioStep{block: "nonfinal-height", err: consensus.ErrNonFinal, tip: "a104", store: storedInvalid, build: func(s *scenario) {
			tx := s.spendTx("l1", "a5", 0, 1000, 1)
			tx.LockTime = 105
			s.next("nonfinal-height", "a104", []*types.Transaction{s.signed(tx, s.key, s.net.Magic)})
		}},
		plain("a105", "a104"),
		scenarioStep{block: "a106", tip: "a106", build: func(s *scenario) {
			s.next("a106", "a105", []*types.Transaction{s.txs["l1"]})
		}},
		// Time lock: final once the median time past of the block's predecessors is past it.
		scenarioStep{block: "nonfinal-time", err: consensus.ErrNonFinal, tip: "a106", store: storedInvalid, build: func(s *scenario) {
			tx := s.spendTx("l2", "a6", 0, 1000, 1)
			tx.LockTime = s.mtp("a106")
			s.next("nonfinal-time", "a106", []*types.Transaction{s.signed(tx, s.key, s.net.Magic)})
		}},
		plain("a107", "a106"),
		scenarioStep{block: "a108", tip: "a108", build: func(s *scenario) {
			if s.mtp("a107") <= s.txs["l2"].LockTime {
				t.Fatal("median time past did not pass the lock time")
			}
			s.next("a108", "a107", []*types.Transaction{s.txs["l2"]})
		}},
		// Block structure.
		scenarioStep{block: "two-coinbases", err: consensus.ErrMultipleCoinbases, tip: "a108", build: func(s *scenario) {
			s.next("two-coinbases", "a108", []*types.Transaction{miner.Coinbase(109, s.pkh, 1, []byte("second"))})
		}},
		scenarioStep{block: "first-not-coinbase", err: consensus.ErrFirstTxNotCoinbase, tip: "a108", build: func(s *scenario) {
			s.next("first-not-coinbase", "a108", []*types.Transaction{s.spendTx("f1", "a7", 0, 1000, 1)}, func(b *types.Block) {
				b.Transactions[0], b.Transactions[1] = b.Transactions[1], b.Transactions[0]
				fixMerkle(b)
			})
		}},
		scenarioStep{block: "agent-kind", err: consensus.ErrAgentNotEnabled, tip: "a108", build: func(s *scenario) {
			tx := s.spendTx("g1", "a7", 0, 1000, 1)
			tx.Kind = types.KindAgentRegister
			s.next("agent-kind", "a108", []*types.Transaction{s.signed(tx, s.key, s.net.Magic)})
		}},
		scenarioStep{block: "dup-tx", err: consensus.ErrDuplicateTx, tip: "a108", build: func(s *scenario) {
			tx := s.spendTx("u1", "a7", 0, 1000, 1)
			s.next("dup-tx", "a108", []*types.Transaction{tx, tx})
		}},
		scenarioStep{block: "zero-output", err: consensus.ErrZeroOutput, tip: "a108", build: func(s *scenario) {
			tx := s.spendTx("z1", "a7", 0, 1000, 2)
			tx.Outputs[1].Value, tx.Outputs[0].Value = tx.Outputs[0].Value+tx.Outputs[1].Value, 0
			s.next("zero-output", "a108", []*types.Transaction{s.signed(tx, s.key, s.net.Magic)})
		}},
		scenarioStep{block: "overspend", err: consensus.ErrInsufficientFunds, tip: "a108", store: storedInvalid, build: func(s *scenario) {
			tx := s.spendTx("o1", "a7", 0, 0, 1)
			tx.Outputs[0].Value++
			s.next("overspend", "a108", []*types.Transaction{s.signed(tx, s.key, s.net.Magic)})
		}},
	)
	// Size: coinbases of a10..a39 into 1,000 outputs each make a block above 1 MiB; trimmed
	// to exactly 1 MiB the same spends are valid.
	add(plainChain("a", 109, 139, "a108")...)
	var bigFrom []string
	for i := 10; i <= 39; i++ {
		bigFrom = append(bigFrom, fmt.Sprintf("a%d", i))
	}
	add(
		scenarioStep{block: "too-big", err: consensus.ErrBlockTooLarge, tip: "a139", build: func(s *scenario) {
			b := s.next("too-big", "a139", s.bigBlockTxs(bigFrom))
			if b.SerializeSize() <= consensus.MaxBlockSize {
				t.Fatalf("block is only %d bytes", b.SerializeSize())
			}
		}},
		scenarioStep{block: "too-big-by-one", err: consensus.ErrBlockTooLarge, tip: "a139", build: func(s *scenario) {
			s.next("too-big-by-one", "a139", s.bigBlockTxs(bigFrom), func(b *types.Block) {
				sizeTo(t, s, b, consensus.MaxBlockSize+1)
			})
		}},
		scenarioStep{block: "a140", tip: "a140", build: func(s *scenario) {
			s.next("a140", "a139", s.bigBlockTxs(bigFrom), func(b *types.Block) { sizeTo(t, s, b, consensus.MaxBlockSize) })
		}, check: func(s *scenario) {
			if n := s.c.Tip(); n.Size != consensus.MaxBlockSize {
				t.Fatalf("tip size %d", n.Size)
			}
		}},
		// The clock's edge: 15 minutes ahead is allowed.
		scenarioStep{block: "a141", tip: "a141", build: func(s *scenario) {
			s.next("a141", "a140", nil, func(b *types.Block) { b.Header.Timestamp = uint64(now) + 15*60 })
		}},
		scenarioStep{block: "a142", err: consensus.ErrTimeTooNew, tip: "a141", build: func(s *scenario) {
			s.next("a142", "a141", nil)
		}},
		// A minute later by the clock the same block is fine.
		scenarioStep{block: "a142", tip: "a142", build: func(s *scenario) { s.now.Add(60) }},
	)
	s.run(steps)

	if err := sameSet(utxoSet(t, s.c), replaySet(t, s.c)); err != nil {
		t.Fatal("replay:", err)
	}
	stats := s.c.Stats()
	s.c.Close()
	c, err := Open(s.dir, params.Regtest, Options{Now: func() time.Time { return time.Unix(now+60, 0) }})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	s.c = c
	if c.Stats() != stats || c.Tip().Hash != s.blocks["a142"].Hash() {
		t.Fatal("reopen lost state")
	}
	for _, name := range []string{"cb-height", "immature", "nonfinal-time", "overspend"} {
		if n := c.NodeByHash(s.blocks[name].Hash()); n == nil || n.Status != StatusInvalid {
			t.Fatalf("%s: invalid mark lost on reopen: %+v", name, n)
		}
	}
	s.reject("cb-height", consensus.ErrKnownInvalid, "a142")
}

// TestScenarioRetarget runs regtest's genesis with retargeting switched on: fast blocks (10 s
// apart) make the target drop at heights 60 and 120, and only the computed target is accepted.
func TestScenarioRetarget(t *testing.T) {
	net := *params.Regtest
	net.Retarget = true
	g0 := net.GenesisBlock().Header.Timestamp
	s := newScenario(t, &net, int64(g0)+86_400)

	bits := func(name string) uint32 { return s.blocks[name].Header.DifficultyTarget }
	// fast builds name on parent 10 s later with the given target.
	fast := func(name, parent string, target uint32) *types.Block {
		return s.next(name, parent, nil, func(b *types.Block) {
			b.Header.Timestamp = s.blocks[parent].Header.Timestamp + 10
			b.Header.DifficultyTarget = target
		})
	}
	fastChain := func(from, to int, parent string) []scenarioStep {
		var out []scenarioStep
		for i := from; i <= to; i++ {
			name, p := fmt.Sprintf("r%d", i), parent
			out = append(out, scenarioStep{block: name, tip: name, build: func(s *scenario) { fast(name, p, bits(p)) }})
			parent = name
		}
		return out
	}
	expected := func(h uint64, parent, windowStart string) uint32 {
		p := s.blocks[parent].Header
		return pow.NextCompact(h, p.DifficultyTarget, p.Timestamp, s.blocks[windowStart].Header.Timestamp, net.PowLimit, true)
	}
	checkTemplate := func(want func() uint32) func(s *scenario) {
		return func(s *scenario) {
			if got := s.c.NextBlock().Target; got != want() {
				t.Fatalf("template target 0x%08x, want 0x%08x", got, want())
			}
		}
	}
	var steps []scenarioStep
	steps = append(steps, fastChain(1, 59, "genesis")...)
	steps[len(steps)-1].check = checkTemplate(func() uint32 { return expected(60, "r59", "genesis") })
	steps = append(steps,
		scenarioStep{block: "r60-old", err: consensus.ErrWrongDifficulty, tip: "r59", build: func(s *scenario) {
			fast("r60-old", "r59", bits("r59"))
		}},
		scenarioStep{block: "r60", tip: "r60", build: func(s *scenario) {
			want := expected(60, "r59", "genesis")
			// 590 s of blocks is clamped to 900 s, a quarter of the 3,600 s timespan.
			quarter := new(big.Int).Quo(net.PowLimit, big.NewInt(4))
			if want != pow.BigToCompact(quarter) || want == bits("r59") {
				t.Fatalf("expected target 0x%08x, want a quarter of the limit 0x%08x", want, pow.BigToCompact(quarter))
			}
			fast("r60", "r59", want)
		}},
		// Between retargets a child keeps its parent's target, the old limit is wrong.
		scenarioStep{block: "r61-limit", err: consensus.ErrWrongDifficulty, tip: "r60", build: func(s *scenario) {
			fast("r61-limit", "r60", net.PowLimitBits)
		}},
	)
	steps = append(steps, fastChain(61, 119, "r60")...)
	steps[len(steps)-1].check = checkTemplate(func() uint32 { return expected(120, "r119", "r59") })
	steps = append(steps,
		scenarioStep{block: "r120-old", err: consensus.ErrWrongDifficulty, tip: "r119", build: func(s *scenario) {
			fast("r120-old", "r119", bits("r119"))
		}},
		// The window of height 120 starts at height 59: the target drops by four again.
		scenarioStep{block: "r120", tip: "r120", build: func(s *scenario) {
			want := expected(120, "r119", "r59")
			t120, _, _ := pow.CompactToBig(want)
			t60, _, _ := pow.CompactToBig(bits("r119"))
			if t120.Cmp(t60) >= 0 {
				t.Fatalf("target did not drop: 0x%08x after 0x%08x", want, bits("r119"))
			}
			fast("r120", "r119", want)
		}},
	)
	steps = append(steps, fastChain(121, 121, "r120")...)
	s.run(steps)
	if n := s.c.Tip(); n.Height != 121 || n.Header.DifficultyTarget != bits("r120") {
		t.Fatalf("tip %d bits 0x%08x", n.Height, n.Header.DifficultyTarget)
	}
	// More work per block now: the tip's cumulative work exceeds 122 blocks at the limit.
	atLimit := new(big.Int).Mul(pow.Work(net.PowLimitBits), big.NewInt(122))
	if s.c.Tip().Work.Cmp(atLimit) <= 0 {
		t.Fatal("harder blocks should carry more work")
	}
}

// TestScenarioRetargetCapped: slow blocks would raise the target above the limit, so it is
// capped at the limit and the parent's (limit) target is the right one.
func TestScenarioRetargetCapped(t *testing.T) {
	net := *params.Regtest
	net.Retarget = true
	g0 := net.GenesisBlock().Header.Timestamp
	s := newScenario(t, &net, int64(g0)+86_400*30)
	var steps []scenarioStep
	parent := "genesis"
	for i := 1; i <= 60; i++ {
		name, p := fmt.Sprintf("s%d", i), parent
		steps = append(steps, scenarioStep{block: name, tip: name, build: func(s *scenario) {
			s.next(name, p, nil, func(b *types.Block) { b.Header.Timestamp = s.blocks[p].Header.Timestamp + 1000 })
		}})
		parent = name
	}
	steps[58].check = func(s *scenario) {
		if got := s.c.NextBlock().Target; got != net.PowLimitBits {
			t.Fatalf("template target 0x%08x, want the limit", got)
		}
	}
	s.run(steps)
}

// TestScenarioTamperedSideBranch: a copy of a side-branch block with a broken signature is
// stored (nothing checks signatures before a connect); the reorg its child triggers fails, and
// the tampered block and its child are dropped rather than marked invalid, so the valid copy
// and the same child are accepted afterwards.
func TestScenarioTamperedSideBranch(t *testing.T) {
	g0 := params.Regtest.GenesisBlock().Header.Timestamp
	s := newScenario(t, params.Regtest, int64(g0)+86_400)
	steps := plainChain("a", 1, 102, "genesis")
	steps = append(steps,
		scenarioStep{block: "b102-bad", tip: "a102", build: func(s *scenario) {
			good := s.next("b102", "a101", []*types.Transaction{s.spendTx("s1", "a1", 0, 1000, 2)})
			bad := cloneBlock(t, good)
			bad.Transactions[1].Inputs[0].Signature[0] ^= 1
			s.blocks["b102-bad"] = bad
		}, check: func(s *scenario) {
			if n := s.c.NodeByHash(s.blocks["b102"].Hash()); n == nil || n.Status != StatusStored {
				t.Fatalf("b102 should be stored aside: %+v", n)
			}
		}},
		resubmit("b102", consensus.ErrDuplicateBlock, "a102"),
		scenarioStep{block: "b103", err: consensus.ErrBadSignature, tip: "a102", forgets: []string{"b102"},
			build: func(s *scenario) { s.next("b103", "b102", nil) }},
		scenarioStep{block: "b102", tip: "a102"},
		scenarioStep{block: "b103", tip: "b103", check: func(s *scenario) {
			if err := sameSet(utxoSet(t, s.c), replaySet(t, s.c)); err != nil {
				t.Fatal(err)
			}
		}},
		// A real (non-witness) failure on a side branch is still marked invalid.
		scenarioStep{block: "c103", tip: "b103", build: func(s *scenario) {
			s.next("c103", "a102", []*types.Transaction{s.spendTx("d1", "a2", 0, 1000, 1), s.spendTx("d2", "a2", 0, 2000, 1)})
		}},
		scenarioStep{block: "c104", err: consensus.ErrDoubleSpend, tip: "b103", build: func(s *scenario) {
			s.next("c104", "c103", nil)
		}, store: storedInvalidParent, marks: []string{"c103"}},
	)
	s.run(steps)
}

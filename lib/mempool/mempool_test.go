package mempool

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/cointoolkit/coin/lib/consensus"
	"github.com/cointoolkit/coin/lib/policy"
	"github.com/cointoolkit/coin/lib/reason"
	"github.com/cointoolkit/coin/lib/types"
)

func TestAcceptValidTransfer(t *testing.T) {
	f := newFixture(t, Options{})
	in := f.take(1)[0]
	tx := f.transfer([]coin{in}, 5_000, 3)
	f.mustAccept(tx)
	f.expect(tx)

	e, ok := f.pool.Get(tx.TxID())
	if !ok || e.Tx != tx || e.Height != f.chain.Tip().Height {
		t.Fatalf("Get: %+v %v", e, ok)
	}
	if id, ok := f.pool.SpentBy(in.Outpoint); !ok || id != tx.TxID() {
		t.Fatalf("SpentBy(%s) = %s %v, want %s", in.Outpoint, id, ok, tx.TxID())
	}
	if _, ok := f.pool.SpentBy(f.coins[0].Outpoint); ok {
		t.Fatal("SpentBy reports an output nobody spends")
	}
	outs := f.pool.OutputsTo(testPKH)
	if len(outs) != 3 {
		t.Fatalf("OutputsTo: %d outputs, want 3", len(outs))
	}
	for _, o := range outs {
		if o.Outpoint.TxID != tx.TxID() || o.Output != tx.Outputs[o.Outpoint.Index] || o.Spent {
			t.Fatalf("OutputsTo: %+v", o)
		}
	}
	if len(f.pool.OutputsTo(otherPKH)) != 0 {
		t.Fatal("OutputsTo lists outputs of another address")
	}

	// A child spending output 1 (paying the other address) marks it spent.
	child := f.transferTo([]coin{out(tx, 1)}, 2_000, 1, otherPKH, 0)
	f.mustAccept(child)
	f.expect(tx, child)
	spent := 0
	for _, o := range f.pool.OutputsTo(testPKH) {
		if o.Spent != (o.Outpoint == out(tx, 1).Outpoint) {
			t.Fatalf("OutputsTo: %+v", o)
		}
		if o.Spent {
			spent++
		}
	}
	if spent != 1 {
		t.Fatalf("%d outputs marked spent, want 1", spent)
	}
	if o := f.pool.OutputsTo(otherPKH); len(o) != 1 || o[0].Outpoint.TxID != child.TxID() || o[0].Spent {
		t.Fatalf("OutputsTo(other) = %+v", o)
	}
	if id, ok := f.pool.SpentBy(out(tx, 1).Outpoint); !ok || id != child.TxID() {
		t.Fatal("SpentBy does not see the child")
	}
}

func TestAcceptRejections(t *testing.T) {
	f := newFixture(t, Options{})
	base := f.transfer(f.take(1), 10_000, 2)
	f.mustAccept(base)

	t.Run("AlreadyInPool", func(t *testing.T) {
		f.mustReject(base, ErrAlreadyInMempool)
	})
	t.Run("Conflict", func(t *testing.T) {
		// Same input as base, different outputs (another txid).
		tx := f.transfer([]coin{{Outpoint: base.Inputs[0].Outpoint(), Value: base.Outputs[0].Value + base.Outputs[1].Value + 10_000}}, 50_000, 1)
		err := f.mustReject(tx, ErrConflict)
		if !strings.HasPrefix(err.Error(), "conflicts with a mempool transaction") {
			t.Fatalf("message %q", err)
		}
		// A second input does not hide the conflict.
		tx = f.transfer([]coin{f.coins[0], {Outpoint: base.Inputs[0].Outpoint(), Value: 5_000_000}}, 50_000, 1)
		f.mustReject(tx, ErrConflict)
		// Nor does spending a pool output that a pool transaction already spends.
		c1 := f.transfer([]coin{out(base, 0)}, 3_000, 1)
		f.mustAccept(c1)
		f.mustReject(f.transfer([]coin{out(base, 0)}, 4_000, 1), ErrConflict)
	})
	t.Run("InsufficientFee", func(t *testing.T) {
		in := f.take(1)
		size := f.transfer(in, 0, 1).SerializeSize()
		err := f.mustReject(f.transfer(in, uint64(size)-1, 1), ErrFeeTooLow)
		if !strings.HasPrefix(err.Error(), "insufficient fee") {
			t.Fatalf("message %q", err)
		}
		f.mustReject(f.transfer(in, 0, 1), ErrFeeTooLow)
		f.mustAccept(f.transfer(in, uint64(size), 1)) // exactly 1 subunit per byte
	})
	t.Run("Dust", func(t *testing.T) {
		in := f.take(1)
		tx := f.transfer(in, 10_000, 2)
		tx.Outputs[0].Value += tx.Outputs[1].Value - (policy.DustLimit - 1)
		tx.Outputs[1].Value = policy.DustLimit - 1
		types.SignInputs(tx, testKey, testNet.Magic)
		f.fees[tx.TxID()] = 10_000
		f.mustReject(tx, ErrDust)
		tx.Outputs[0].Value--
		tx.Outputs[1].Value = policy.DustLimit
		types.SignInputs(tx, testKey, testNet.Magic)
		f.fees[tx.TxID()] = 10_000
		f.mustAccept(tx)
	})
	t.Run("Coinbase", func(t *testing.T) {
		cb := types.NewCoinbase(f.chain.Tip().Height+1, testPKH, consensus.Subsidy(1), nil)
		f.mustReject(cb, ErrCoinbaseInMempool)
		// A mined coinbase too.
		f.mustReject(f.tipBlock().Transactions[0], ErrCoinbaseInMempool)
	})
	t.Run("MissingInputs", func(t *testing.T) {
		ghost := coin{Outpoint: types.Outpoint{TxID: types.Blake3([]byte("no such transaction")), Index: 0}, Value: 5_000_000}
		err := f.mustReject(f.transfer([]coin{ghost}, 10_000, 1), consensus.ErrMissingInputs)
		if !strings.HasPrefix(err.Error(), "missing inputs") {
			t.Fatalf("message %q", err)
		}
		// An index past the end of a pool transaction's outputs.
		f.mustReject(f.transfer([]coin{{Outpoint: types.Outpoint{TxID: base.TxID(), Index: 7}, Value: 1_000_000}}, 10_000, 1), consensus.ErrMissingInputs)
		// An index past the end of a confirmed transaction's outputs.
		beyond := coin{Outpoint: types.Outpoint{TxID: f.tipBlock().Transactions[0].TxID(), Index: 9}, Value: 1_000_000}
		f.mustReject(f.transfer([]coin{beyond}, 10_000, 1), consensus.ErrMissingInputs)
		// An output already spent in the chain.
		in := f.take(1)
		f.mine(f.transfer(in, 10_000, 1))
		f.mustReject(f.transfer(in, 20_000, 1), consensus.ErrMissingInputs)
	})
	t.Run("BadSignature", func(t *testing.T) {
		tx := f.transfer(f.take(1), 10_000, 1)
		tx.Inputs[0].Signature[5] ^= 0x40
		f.mustReject(tx, consensus.ErrBadSignature)
		// Signed for another network.
		tx = f.transfer(f.take(1), 10_000, 1)
		types.SignInputs(tx, testKey, [4]byte{'x', 'x', 'x', 'x'})
		f.mustReject(tx, consensus.ErrBadSignature)
	})
	t.Run("PubKeyMismatch", func(t *testing.T) {
		tx := f.transfer(f.take(1), 10_000, 1)
		types.SignInputs(tx, otherKey, testNet.Magic)
		f.mustReject(tx, consensus.ErrPubKeyMismatch)
	})
	t.Run("ImmatureCoinbase", func(t *testing.T) {
		// The tip's coinbase matures 100 blocks later.
		cb := f.tipBlock().Transactions[0]
		f.mustReject(f.transfer([]coin{out(cb, 0)}, 10_000, 1), consensus.ErrImmatureCoinbase)
	})
	t.Run("InsufficientFunds", func(t *testing.T) {
		in := f.take(1)[0]
		in.Value += 1_000_000 // claim more than the output holds
		f.mustReject(f.transfer([]coin{in}, 10_000, 1), consensus.ErrInsufficientFunds)
	})
	t.Run("NonFinal", func(t *testing.T) {
		next := f.chain.Tip().Height + 1
		_, mtp := f.chain.NextBlockInfo()
		for _, lt := range []uint64{next, next + 1, mtp, mtp + 1} {
			err := f.mustReject(f.transferTo(f.take(1), 10_000, 1, testPKH, lt), consensus.ErrNonFinal)
			if !strings.HasPrefix(err.Error(), "non-final transaction") {
				t.Fatalf("message %q", err)
			}
		}
		f.mustAccept(f.transferTo(f.take(1), 10_000, 1, testPKH, next-1))
		f.mustAccept(f.transferTo(f.take(1), 10_000, 1, testPKH, mtp-1))
	})
	t.Run("Sanity", func(t *testing.T) {
		tx := f.transfer(f.take(1), 10_000, 1)
		tx.Version = 2
		types.SignInputs(tx, testKey, testNet.Magic)
		f.mustReject(tx, consensus.ErrBadTxVersion)
		tx = f.transfer(f.take(1), 10_000, 1)
		tx.Inputs = append(tx.Inputs, tx.Inputs[0])
		types.SignInputs(tx, testKey, testNet.Magic)
		f.mustReject(tx, consensus.ErrDuplicateInput)
	})
	t.Run("AlreadyInChain", func(t *testing.T) {
		tx := f.transfer(f.take(1), 10_000, 2)
		f.mine(tx) // straight into a block, never through the pool
		f.mustReject(tx, ErrAlreadyInChain)
	})
}

// TestRejectErrorMessages checks that a rejection reads well: the reason once, then details.
func TestRejectErrorMessages(t *testing.T) {
	f := newFixture(t, Options{})
	in := f.take(1)
	size := f.transfer(in, 0, 1).SerializeSize()
	_, err := f.pool.Accept(context.Background(), f.transfer(in, uint64(size)-1, 1))
	ghost := coin{Outpoint: types.Outpoint{TxID: types.Blake3([]byte("ghost"))}, Value: 5_000_000}
	_, err2 := f.pool.Accept(context.Background(), f.transfer([]coin{ghost}, 10_000, 1))
	for _, e := range []error{err, err2} {
		msg := e.Error()
		for _, reason := range []string{"insufficient fee", "missing inputs"} {
			if strings.Count(msg, reason) > 1 {
				t.Errorf("%q repeats %q", msg, reason)
			}
		}
	}
	if !errors.Is(err, ErrFeeTooLow) || !errors.Is(err2, consensus.ErrMissingInputs) {
		t.Fatal("sentinels lost")
	}
}

// TestRejectErrorText pins the text of every refusal, which the node's RPC sends as the
// error message (docs/rpc-errors.md): the kind's words, then the detail.
func TestRejectErrorText(t *testing.T) {
	f := newFixture(t, Options{})
	base := f.transfer(f.take(1), 10_000, 2)
	f.mustAccept(base)
	in := f.take(1)
	size := f.transfer(in, 0, 1).SerializeSize()
	cheap := f.transfer(in, uint64(size)-1, 1)
	conflict := f.transfer([]coin{{Outpoint: base.Inputs[0].Outpoint(), Value: base.Outputs[0].Value + base.Outputs[1].Value + 10_000}}, 50_000, 1)
	dust := f.transfer(f.take(1), 10_000, 2)
	dust.Outputs[0].Value += dust.Outputs[1].Value - (policy.DustLimit - 1)
	dust.Outputs[1].Value = policy.DustLimit - 1
	types.SignInputs(dust, testKey, testNet.Magic)
	mined := f.transfer(f.take(1), 10_000, 1)
	f.mine(mined)
	ghost := coin{Outpoint: types.Outpoint{TxID: types.Blake3([]byte("ghost"))}, Value: 5_000_000}
	next := f.chain.Tip().Height + 1
	badVersion := f.transfer(f.take(1), 10_000, 1)
	badVersion.Version = 2
	types.SignInputs(badVersion, testKey, testNet.Magic)
	cb := types.NewCoinbase(next, testPKH, consensus.Subsidy(1), nil)
	tests := []struct {
		name string
		tx   *types.Transaction
		want string
	}{
		{"AlreadyInMempool", base, "transaction already in mempool"},
		{"AlreadyInChain", mined, "transaction already in block chain"},
		{"Conflict", conflict, fmt.Sprintf("conflicts with a mempool transaction (input 0 is spent by %s)", base.TxID())},
		{"FeeTooLow", cheap, fmt.Sprintf("insufficient fee: fee %d is below the minimum relay fee %d (%d bytes at 1 per byte)",
			size-1, cheap.SerializeSize(), cheap.SerializeSize())},
		{"Dust", dust, fmt.Sprintf("dust output: output 1 of %d subunits is below %d", policy.DustLimit-1, policy.DustLimit)},
		{"CoinbaseInMempool", cb, "coinbase transaction not allowed in the mempool"},
		{"MissingInputs", f.transfer([]coin{ghost}, 10_000, 1), fmt.Sprintf("missing inputs: %s is not an unspent output", ghost.Outpoint)},
		{"NonFinal", f.transferTo(f.take(1), 10_000, 1, testPKH, next),
			fmt.Sprintf("non-final transaction: transaction is not final: lock_time %d at height %d", next, next)},
		{"Invalid", badVersion, "invalid transaction: "},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := f.pool.Accept(context.Background(), tc.tx)
			var re *RejectError
			if !errors.As(err, &re) {
				t.Fatalf("got %v, want a *RejectError", err)
			}
			got := err.Error()
			if tc.name == "Invalid" {
				var rule consensus.RuleError
				if !errors.As(err, &rule) {
					t.Fatalf("%v has no RuleError", err)
				}
				tc.want += rule.Description
			}
			if got != tc.want {
				t.Fatalf("text %q\nwant %q", got, tc.want)
			}
			if re.Kind.Reason() != reason.Of(err) || re.Kind.Reason() == "" {
				t.Fatalf("kind %v, reason.Of %q", re.Kind, reason.Of(err))
			}
		})
	}
	// The detail is there to read, not only in the text.
	detail := func(tx *types.Transaction) RejectError {
		t.Helper()
		var re *RejectError
		if _, err := f.pool.Accept(context.Background(), tx); !errors.As(err, &re) {
			t.Fatalf("got %v, want a *RejectError", err)
		}
		return *re
	}
	if got, want := detail(conflict), (RejectError{Kind: ErrConflict, Input: 0, SpentBy: base.TxID()}); got != want {
		t.Errorf("conflict: %+v, want %+v", got, want)
	}
	if got, want := detail(dust), (RejectError{Kind: ErrDust, Output: 1, Value: policy.DustLimit - 1}); got != want {
		t.Errorf("dust: %+v, want %+v", got, want)
	}
	feeWant := RejectError{Kind: ErrFeeTooLow, Fee: uint64(size) - 1, MinFee: uint64(cheap.SerializeSize()), Size: cheap.SerializeSize()}
	if got := detail(cheap); got != feeWant {
		t.Errorf("fee: %+v, want %+v", got, feeWant)
	}
	if got := detail(badVersion); got.Kind != consensus.ErrBadTxVersion || !errors.Is(got.Err, consensus.ErrBadTxVersion) {
		t.Errorf("bad version: %+v", got)
	}
}

// diskFailing is a chain whose UTXO reads fail, as a broken disk's would.
type diskFailing struct{ Chain }

var errDisk = errors.New("disk read failed")

func (diskFailing) Utxo(types.Outpoint) (*consensus.UtxoEntry, bool, error) {
	return nil, false, errDisk
}

// TestStorageFailureIsNoRefusal: a storage failure during the checks comes back as it is, not
// as a *RejectError, so the RPC answers it as an internal error and not as a refusal by a rule.
func TestStorageFailureIsNoRefusal(t *testing.T) {
	f := newFixture(t, Options{})
	pool := New(diskFailing{f.chain}, testNet.Magic, Options{})
	tx := f.transfer(f.take(1), 10_000, 1)
	_, err := pool.Accept(context.Background(), tx)
	var re *RejectError
	if !errors.Is(err, errDisk) || errors.As(err, &re) || consensus.IsRuleError(err) {
		t.Fatalf("Accept: %v (%T), want the storage error itself", err, err)
	}
	if _, _, _, err := pool.TestAccept(tx); !errors.Is(err, errDisk) || errors.As(err, &re) {
		t.Fatalf("TestAccept: %v (%T), want the storage error itself", err, err)
	}
	if pool.Info().Size != 0 {
		t.Fatal("a transaction entered the pool")
	}
}

package consensus_test

import (
	"crypto/ed25519"
	"fmt"
	"math"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/cointoolkit/coin/lib/amount"
	"github.com/cointoolkit/coin/lib/consensus"
	"github.com/cointoolkit/coin/lib/params"
	"github.com/cointoolkit/coin/lib/types"
)

// baseTransfer is a valid one-input, one-output transfer (unsigned: sanity does not look at
// signatures).
func baseTransfer() *types.Transaction {
	return transfer([]types.TxInput{input(op("a", 0), alice)}, pay(1000, bob))
}

// sizedTransfer is a sane transfer of exactly size serialized bytes (size ≥ 41 + 129×251),
// made of distinct inputs, some with a 3-byte prev_index to hit the size exactly. Transfers
// with different tags spend different outputs.
func sizedTransfer(t testing.TB, size int, tag string) *types.Transaction {
	t.Helper()
	const overhead = 41 // version, kind, 3-byte input count, output count, 33-byte output, lock time, payload length
	n := (size - overhead) / 129
	rem := size - overhead - 129*n
	if rem%2 == 1 {
		n--
		rem += 129
	}
	tx := transfer(nil, pay(1, bob))
	for i := 0; i < n; i++ {
		idx := uint32(0)
		if i < rem/2 {
			idx = 300 // varint 251 ‖ u16: two bytes more
		}
		tx.Inputs = append(tx.Inputs, input(op(fmt.Sprint(tag, i), idx), alice))
	}
	if got := tx.SerializeSize(); got != size || len(tx.Bytes()) != size {
		t.Fatalf("built %d (%d encoded) bytes, want %d", got, len(tx.Bytes()), size)
	}
	return tx
}

func checkSanity(tx *types.Transaction) error {
	return consensus.CheckTransactionSanity(tx, tx.SerializeSize())
}

func TestCheckTransactionSanityBase(t *testing.T) {
	noErr(t, checkSanity(baseTransfer()))
	noErr(t, checkSanity(coinbase(0, pay(1, miner))))
	noErr(t, checkSanity(coinbase(7, pay(amount.MaxMoney, miner))))
	// Boundaries that pass.
	tx := baseTransfer()
	tx.Outputs[0].Value = amount.MaxMoney
	noErr(t, checkSanity(tx))
	tx = baseTransfer()
	tx.Outputs = []types.TxOutput{pay(amount.MaxMoney-1, bob), pay(1, carol)}
	noErr(t, checkSanity(tx))
	tx = baseTransfer()
	tx.Outputs[0].Value = 1
	noErr(t, checkSanity(tx))
	tx = baseTransfer()
	tx.LockTime = math.MaxUint64
	noErr(t, checkSanity(tx))
	cb := coinbase(1)
	cb.Outputs = []types.TxOutput{pay(1, miner)}
	cb.Payload = types.CoinbasePayload{Height: math.MaxUint64, Extra: make([]byte, types.MaxCoinbaseExtra)}.Bytes()
	noErr(t, checkSanity(cb))
	cb.Payload = types.CoinbasePayload{Height: 1}.Bytes()
	noErr(t, checkSanity(cb))
}

func TestCheckTransactionSanityRules(t *testing.T) {
	many := func(n int, f func(i int) types.TxInput) []types.TxInput {
		ins := make([]types.TxInput, n)
		for i := range ins {
			ins[i] = f(i)
		}
		return ins
	}
	distinct := func(i int) types.TxInput { return input(op(fmt.Sprint("in", i), 0), alice) }
	tests := []struct {
		name   string
		base   func() *types.Transaction
		mutate func(tx *types.Transaction)
		want   consensus.ErrorKind
	}{
		{"version 0", baseTransfer, func(tx *types.Transaction) { tx.Version = 0 }, consensus.ErrBadTxVersion},
		{"version 2", baseTransfer, func(tx *types.Transaction) { tx.Version = 2 }, consensus.ErrBadTxVersion},
		{"coinbase version 2", func() *types.Transaction { return coinbase(1, pay(1, miner)) },
			func(tx *types.Transaction) { tx.Version = 2 }, consensus.ErrBadTxVersion},
		{"no inputs", baseTransfer, func(tx *types.Transaction) { tx.Inputs = nil }, consensus.ErrNoInputs},
		{"no outputs", baseTransfer, func(tx *types.Transaction) { tx.Outputs = nil }, consensus.ErrNoOutputs},
		{"coinbase no outputs", func() *types.Transaction { return coinbase(1, pay(1, miner)) },
			func(tx *types.Transaction) { tx.Outputs = nil }, consensus.ErrNoOutputs},
		{"1001 outputs", baseTransfer, func(tx *types.Transaction) {
			for len(tx.Outputs) < consensus.MaxTxOutputs+1 {
				tx.Outputs = append(tx.Outputs, pay(1, bob))
			}
		}, consensus.ErrTooManyOutputs},
		{"zero output", baseTransfer, func(tx *types.Transaction) {
			tx.Outputs = append(tx.Outputs, pay(0, carol))
		}, consensus.ErrZeroOutput},
		{"coinbase zero output", func() *types.Transaction { return coinbase(1, pay(1, miner)) },
			func(tx *types.Transaction) { tx.Outputs[0].Value = 0 }, consensus.ErrZeroOutput},
		{"output above MaxMoney", baseTransfer, func(tx *types.Transaction) {
			tx.Outputs[0].Value = amount.MaxMoney + 1
		}, consensus.ErrValueOverflow},
		{"output of 2^64-1", baseTransfer, func(tx *types.Transaction) {
			tx.Outputs[0].Value = math.MaxUint64
		}, consensus.ErrValueOverflow},
		{"output sum above MaxMoney", baseTransfer, func(tx *types.Transaction) {
			tx.Outputs = []types.TxOutput{pay(amount.MaxMoney, bob), pay(1, carol)}
		}, consensus.ErrValueOverflow},
		{"output sum of 1000 large outputs", baseTransfer, func(tx *types.Transaction) {
			tx.Outputs = nil
			for i := 0; i < consensus.MaxTxOutputs; i++ {
				tx.Outputs = append(tx.Outputs, pay(amount.MaxMoney, bob))
			}
		}, consensus.ErrValueOverflow},
		{"coinbase output sum above MaxMoney", func() *types.Transaction { return coinbase(1, pay(1, miner)) },
			func(tx *types.Transaction) { tx.Outputs = append(tx.Outputs, pay(amount.MaxMoney, miner)) },
			consensus.ErrValueOverflow},
		{"duplicate input", baseTransfer, func(tx *types.Transaction) {
			tx.Inputs = append(tx.Inputs, input(op("b", 0), alice), input(op("a", 0), bob))
		}, consensus.ErrDuplicateInput},
		{"coinbase with an input", func() *types.Transaction { return coinbase(1, pay(1, miner)) },
			func(tx *types.Transaction) { tx.Inputs = []types.TxInput{input(op("a", 0), alice)} },
			consensus.ErrBadCoinbaseInputs},
		{"coinbase empty payload", func() *types.Transaction { return coinbase(1, pay(1, miner)) },
			func(tx *types.Transaction) { tx.Payload = nil }, consensus.ErrBadCoinbasePayload},
		{"coinbase payload with trailing byte", func() *types.Transaction { return coinbase(1, pay(1, miner)) },
			func(tx *types.Transaction) { tx.Payload = append(tx.Payload, 0) }, consensus.ErrBadCoinbasePayload},
		{"coinbase payload truncated", func() *types.Transaction { return coinbase(1, pay(1, miner)) },
			func(tx *types.Transaction) { tx.Payload = tx.Payload[:len(tx.Payload)-1] }, consensus.ErrBadCoinbasePayload},
		{"coinbase payload non-minimal varint", func() *types.Transaction { return coinbase(1, pay(1, miner)) },
			func(tx *types.Transaction) { tx.Payload = []byte{251, 1, 0, 0} }, consensus.ErrBadCoinbasePayload},
		{"coinbase extra of 65 bytes", func() *types.Transaction { return coinbase(1, pay(1, miner)) },
			func(tx *types.Transaction) {
				tx.Payload = types.CoinbasePayload{Height: 1, Extra: make([]byte, types.MaxCoinbaseExtra+1)}.Bytes()
			}, consensus.ErrBadCoinbasePayload},
		{"transfer with payload", baseTransfer, func(tx *types.Transaction) { tx.Payload = []byte{0} },
			consensus.ErrBadTransferPayload},
		{"transfer with a coinbase payload", baseTransfer, func(tx *types.Transaction) {
			tx.Payload = types.CoinbasePayload{Height: 1}.Bytes()
		}, consensus.ErrBadTransferPayload},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tx := tc.base()
			noErr(t, checkSanity(tx))
			tc.mutate(tx)
			wantKind(t, checkSanity(tx), tc.want)
		})
	}

	t.Run("1001 inputs", func(t *testing.T) {
		tx := baseTransfer()
		tx.Inputs = many(consensus.MaxTxInputs, distinct)
		// 1,000 inputs are allowed by the count rule, but 1,000 × 129 bytes already break the
		// size rule, which is checked first: with real sizes the count rule is implied by it.
		wantKind(t, checkSanity(tx), consensus.ErrTxTooLarge)
		noErr(t, consensus.CheckTransactionSanity(tx, consensus.MaxTxSize))
		tx.Inputs = many(consensus.MaxTxInputs+1, distinct)
		wantKind(t, consensus.CheckTransactionSanity(tx, consensus.MaxTxSize), consensus.ErrTooManyInputs)
	})
	t.Run("1000 outputs", func(t *testing.T) {
		tx := baseTransfer()
		for len(tx.Outputs) < consensus.MaxTxOutputs {
			tx.Outputs = append(tx.Outputs, pay(amount.MaxMoney/2000, bob))
		}
		noErr(t, checkSanity(tx))
	})
	t.Run("too large", func(t *testing.T) {
		tx := sizedTransfer(t, consensus.MaxTxSize, "big")
		noErr(t, checkSanity(tx))
		tx = sizedTransfer(t, consensus.MaxTxSize+2, "big")
		wantKind(t, checkSanity(tx), consensus.ErrTxTooLarge)
		// The size argument is what counts.
		wantKind(t, consensus.CheckTransactionSanity(baseTransfer(), consensus.MaxTxSize+1), consensus.ErrTxTooLarge)
		noErr(t, consensus.CheckTransactionSanity(baseTransfer(), consensus.MaxTxSize))
		// A coinbase made too large by its payload fails on size before the payload is read.
		cb := coinbase(1, pay(1, miner))
		cb.Payload = make([]byte, consensus.MaxTxSize)
		wantKind(t, checkSanity(cb), consensus.ErrTxTooLarge)
	})
	t.Run("agent kinds", func(t *testing.T) {
		payloads := map[types.TxKind][]byte{
			types.KindAgentRegister:  nil,
			types.KindVouch:          types.VouchPayload{Target: bob.pkh}.Bytes(),
			types.KindContractCreate: types.ContractCreatePayload{Counterparty: bob.pkh, ExpiryBlocks: 10}.Bytes(),
			types.KindContractFulfil: types.ContractRefPayload{ContractID: types.Blake3([]byte("c"))}.Bytes(),
			types.KindContractRefund: types.ContractRefPayload{ContractID: types.Blake3([]byte("c"))}.Bytes(),
			types.KindReview:         types.ReviewPayload{ContractID: types.Blake3([]byte("c")), Subject: bob.pkh, Score: 5}.Bytes(),
		}
		for k := types.KindAgentRegister; k <= types.KindReview; k++ {
			t.Run(k.String(), func(t *testing.T) {
				p, ok := payloads[k]
				if !ok {
					t.Fatalf("no payload for kind %d", k)
				}
				// Every agent kind decodes its payload exactly: one byte more is refused.
				tx := baseTransfer()
				noErr(t, checkSanity(tx))
				tx.Kind = k
				tx.Payload = append(append([]byte(nil), p...), 0)
				err := checkSanity(tx)
				wantKind(t, err, consensus.ErrBadAgentPayload)
				wantKind(t, consensus.CheckAgentKind(tx), consensus.ErrBadAgentPayload)
			})
		}
	})
}

func TestIsFinal(t *testing.T) {
	at := func(lt uint64) *types.Transaction {
		tx := baseTransfer()
		tx.LockTime = lt
		return tx
	}
	const L = 1000
	const T = 1_767_300_000
	tests := []struct {
		name        string
		lockTime    uint64
		height, mtp uint64
		final       bool
	}{
		{"zero at genesis", 0, 0, 0, true},
		{"zero anywhere", 0, 5, 1, true},
		{"height lock at L", L, L, math.MaxUint64, false},
		{"height lock at L-1", L, L - 1, math.MaxUint64, false},
		{"height lock at L+1", L, L + 1, 0, true},
		{"largest height lock", consensus.LockTimeThreshold - 1, consensus.LockTimeThreshold - 1, math.MaxUint64, false},
		{"largest height lock passed", consensus.LockTimeThreshold - 1, consensus.LockTimeThreshold, 0, true},
		{"time lock at mtp", T, math.MaxUint64, T, false},
		{"time lock mtp-1", T, math.MaxUint64, T - 1, false},
		{"time lock mtp+1", T, 0, T + 1, true},
		{"threshold is a time", consensus.LockTimeThreshold, consensus.LockTimeThreshold + 1, consensus.LockTimeThreshold, false},
		{"threshold passed", consensus.LockTimeThreshold, 0, consensus.LockTimeThreshold + 1, true},
		{"max lock time", math.MaxUint64, math.MaxUint64, math.MaxUint64, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tx := at(tc.lockTime)
			if got := consensus.IsFinal(tx, tc.height, tc.mtp); got != tc.final {
				t.Fatalf("IsFinal = %v, want %v", got, tc.final)
			}
			err := consensus.CheckFinal(tx, tc.height, tc.mtp)
			if tc.final {
				noErr(t, err)
			} else {
				wantKind(t, err, consensus.ErrNonFinal)
			}
		})
	}
}

// inputsCase is a valid spend of one 1,000-subunit output of alice, paying 900 to bob.
func inputsCase() (*types.Transaction, mapView) {
	view := mapView{op("a", 0): {Value: 1000, PubKeyHash: alice.pkh, Height: 10, ClusterID: consensus.ClusterIDOf(alice.pkh)}}
	return transfer([]types.TxInput{input(op("a", 0), alice)}, pay(900, bob)), view
}

// decayModel takes a tenth of every entry and records the spend heights it is asked about.
type decayModel struct{ heights []uint64 }

func (m *decayModel) EffectiveValue(e *consensus.UtxoEntry, h uint64) uint64 {
	m.heights = append(m.heights, h)
	return e.Value - e.Value/10
}

// hugeModel values every output at 2^64-1.
type hugeModel struct{}

func (hugeModel) EffectiveValue(*consensus.UtxoEntry, uint64) uint64 { return math.MaxUint64 }

func TestCheckTransactionInputs(t *testing.T) {
	nominal := consensus.NominalValue{}
	t.Run("valid, exact fee", func(t *testing.T) {
		tx, view := inputsCase()
		res, err := consensus.CheckTransactionInputs(tx, 200, consensus.ValuedView{Utxos: view, Values: nominal})
		noErr(t, err)
		if res.Fee != 100 || res.InValue != 1000 || res.Nominal != 1000 || res.DecayPaid != 0 {
			t.Fatalf("result %+v", res)
		}
		if len(res.Spent) != 1 || res.Spent[0] != view[op("a", 0)] {
			t.Fatalf("spent %v", res.Spent)
		}
	})
	t.Run("two inputs, zero fee", func(t *testing.T) {
		tx, view := inputsCase()
		view[op("b", 3)] = &consensus.UtxoEntry{Value: 2500, PubKeyHash: bob.pkh, Height: 11}
		tx.Inputs = append(tx.Inputs, input(op("b", 3), bob))
		tx.Outputs = []types.TxOutput{pay(3000, carol), pay(500, alice)}
		res, err := consensus.CheckTransactionInputs(tx, 12, consensus.ValuedView{Utxos: view, Values: nominal})
		noErr(t, err)
		if res.Fee != 0 || res.InValue != 3500 || res.Nominal != 3500 {
			t.Fatalf("result %+v", res)
		}
		if res.Spent[0] != view[op("a", 0)] || res.Spent[1] != view[op("b", 3)] {
			t.Fatal("spent entries out of order")
		}
	})
	t.Run("missing input", func(t *testing.T) {
		tx, view := inputsCase()
		_, err := consensus.CheckTransactionInputs(tx, 200, consensus.ValuedView{Utxos: view, Values: nominal})
		noErr(t, err)
		delete(view, op("a", 0))
		_, err = consensus.CheckTransactionInputs(tx, 200, consensus.ValuedView{Utxos: view, Values: nominal})
		wantKind(t, err, consensus.ErrMissingInputs)
		// Same txid, other index: still missing.
		view[op("a", 1)] = &consensus.UtxoEntry{Value: 1000, PubKeyHash: alice.pkh}
		_, err = consensus.CheckTransactionInputs(tx, 200, consensus.ValuedView{Utxos: view, Values: nominal})
		wantKind(t, err, consensus.ErrMissingInputs)
	})
	t.Run("coinbase maturity", func(t *testing.T) {
		const H = 1234
		tx, view := inputsCase()
		view[op("a", 0)].Coinbase = true
		view[op("a", 0)].Height = H
		_, err := consensus.CheckTransactionInputs(tx, H+consensus.CoinbaseMaturity, consensus.ValuedView{Utxos: view, Values: nominal})
		noErr(t, err)
		_, err = consensus.CheckTransactionInputs(tx, H+99, consensus.ValuedView{Utxos: view, Values: nominal})
		wantKind(t, err, consensus.ErrImmatureCoinbase)
		_, err = consensus.CheckTransactionInputs(tx, H+100, consensus.ValuedView{Utxos: view, Values: nominal})
		noErr(t, err)
		// A non-coinbase output is spendable at once.
		view[op("a", 0)].Coinbase = false
		_, err = consensus.CheckTransactionInputs(tx, H, consensus.ValuedView{Utxos: view, Values: nominal})
		noErr(t, err)
	})
	t.Run("pubkey mismatch", func(t *testing.T) {
		tx, view := inputsCase()
		tx.Inputs[0].PublicKey = bob.pub
		_, err := consensus.CheckTransactionInputs(tx, 200, consensus.ValuedView{Utxos: view, Values: nominal})
		wantKind(t, err, consensus.ErrPubKeyMismatch)
	})
	t.Run("insufficient funds", func(t *testing.T) {
		tx, view := inputsCase()
		tx.Outputs[0].Value = 1000
		res, err := consensus.CheckTransactionInputs(tx, 200, consensus.ValuedView{Utxos: view, Values: nominal})
		noErr(t, err)
		if res.Fee != 0 {
			t.Fatalf("fee %d", res.Fee)
		}
		tx.Outputs[0].Value = 1001
		_, err = consensus.CheckTransactionInputs(tx, 200, consensus.ValuedView{Utxos: view, Values: nominal})
		wantKind(t, err, consensus.ErrInsufficientFunds)
	})
	t.Run("input sum overflow", func(t *testing.T) {
		tx, view := inputsCase()
		view[op("a", 0)].Value = amount.MaxMoney
		_, err := consensus.CheckTransactionInputs(tx, 200, consensus.ValuedView{Utxos: view, Values: nominal})
		noErr(t, err)
		view[op("b", 0)] = &consensus.UtxoEntry{Value: 1, PubKeyHash: alice.pkh}
		tx.Inputs = append(tx.Inputs, input(op("b", 0), alice))
		_, err = consensus.CheckTransactionInputs(tx, 200, consensus.ValuedView{Utxos: view, Values: nominal})
		wantKind(t, err, consensus.ErrValueOverflow)
	})
	t.Run("value model above nominal is capped", func(t *testing.T) {
		tx, view := inputsCase()
		res, err := consensus.CheckTransactionInputs(tx, 200, consensus.ValuedView{Utxos: view, Values: hugeModel{}})
		noErr(t, err)
		if res.InValue != res.Nominal || res.DecayPaid != 0 {
			t.Fatalf("effective value above nominal was not capped: %+v", res)
		}
	})
	t.Run("output overflow", func(t *testing.T) {
		tx, view := inputsCase()
		tx.Outputs[0].Value = amount.MaxMoney + 1
		_, err := consensus.CheckTransactionInputs(tx, 200, consensus.ValuedView{Utxos: view, Values: nominal})
		wantKind(t, err, consensus.ErrValueOverflow)
	})
	t.Run("value model", func(t *testing.T) {
		tx, view := inputsCase()
		view[op("b", 0)] = &consensus.UtxoEntry{Value: 2000, PubKeyHash: alice.pkh}
		tx.Inputs = append(tx.Inputs, input(op("b", 0), alice))
		tx.Outputs[0].Value = 2500
		m := &decayModel{}
		res, err := consensus.CheckTransactionInputs(tx, 321, consensus.ValuedView{Utxos: view, Values: m})
		noErr(t, err)
		if res.InValue != 2700 || res.Nominal != 3000 || res.DecayPaid != 300 || res.Fee != 200 {
			t.Fatalf("result %+v", res)
		}
		if len(m.heights) != 2 || m.heights[0] != 321 || m.heights[1] != 321 {
			t.Fatalf("model asked about heights %v", m.heights)
		}
		// The effective, not the nominal, value must cover the outputs.
		tx.Outputs[0].Value = 2701
		_, err = consensus.CheckTransactionInputs(tx, 321, consensus.ValuedView{Utxos: view, Values: m})
		wantKind(t, err, consensus.ErrInsufficientFunds)
	})
	t.Run("coinbase", func(t *testing.T) {
		_, view := inputsCase()
		_, err := consensus.CheckTransactionInputs(coinbase(5, pay(1, miner)), 200, consensus.ValuedView{Utxos: view, Values: nominal})
		wantKind(t, err, consensus.ErrUnexpectedCoinbase)
	})
	t.Run("storage error passes through", func(t *testing.T) {
		tx, _ := inputsCase()
		_, err := consensus.CheckTransactionInputs(tx, 200, consensus.ValuedView{Utxos: errView{}, Values: nominal})
		if err != errStorage {
			t.Fatalf("got %v, want the storage error itself", err)
		}
		if consensus.IsRuleError(err) {
			t.Fatal("a storage failure must not be a RuleError")
		}
	})
}

func TestClusterIDOf(t *testing.T) {
	a, b := consensus.ClusterIDOf(alice.pkh), consensus.ClusterIDOf(bob.pkh)
	if a == b || a == alice.pkh || a != consensus.ClusterIDOf(alice.pkh) {
		t.Fatal("cluster ids are not a function of the pubkey hash")
	}
	if a != types.Blake3(append([]byte("coin-cluster"), alice.pkh[:]...)) {
		t.Fatal("cluster id is not BLAKE3(\"coin-cluster\" ‖ pkh)")
	}
}

// signedPair is a two-input transfer signed by alice (input 0) and bob (input 1) for magic.
func signedPair(magic [4]byte) *types.Transaction {
	tx := transfer([]types.TxInput{input(op("a", 0), alice), input(op("b", 1), bob)}, pay(10, carol))
	return sign(tx, magic, alice, bob)
}

func TestVerifySignatures(t *testing.T) {
	tx := signedPair(regtestMagic)
	txid := tx.TxID()
	noErr(t, consensus.VerifySignatures(tx, txid, regtestMagic))

	t.Run("flipped bit", func(t *testing.T) {
		for _, in := range []int{0, 1} {
			for _, bit := range []int{0, 255, 511} {
				tx := signedPair(regtestMagic)
				tx.Inputs[in].Signature[bit/8] ^= 1 << (bit % 8)
				if tx.TxID() != txid {
					t.Fatal("the signature changed the txid")
				}
				err := consensus.VerifySignatures(tx, txid, regtestMagic)
				wantKind(t, err, consensus.ErrBadSignature)
				if !strings.Contains(err.Error(), txid.String()) || !strings.Contains(err.Error(), fmt.Sprintf("input %d", in)) {
					t.Fatalf("message %q does not name the txid and input", err)
				}
			}
		}
	})
	t.Run("cross-network replay", func(t *testing.T) {
		for _, from := range params.Networks {
			signed := signedPair(from.Magic)
			for _, to := range params.Networks {
				err := consensus.VerifySignatures(signed, txid, to.Magic)
				if from == to {
					noErr(t, err)
				} else {
					wantKind(t, err, consensus.ErrBadSignature)
				}
			}
		}
	})
	t.Run("signature over another txid", func(t *testing.T) {
		tx := signedPair(regtestMagic)
		other := baseTransfer().TxID()
		copy(tx.Inputs[1].Signature[:], ed25519.Sign(bob.priv, types.SigMessage(regtestMagic, other)))
		err := consensus.VerifySignatures(tx, txid, regtestMagic)
		wantKind(t, err, consensus.ErrBadSignature)
		if !strings.Contains(err.Error(), "input 1") {
			t.Fatalf("message %q does not name input 1", err)
		}
		// And a transaction changed after signing no longer verifies under its new txid.
		tx = signedPair(regtestMagic)
		tx.Outputs[0].Value++
		wantKind(t, consensus.VerifySignatures(tx, tx.TxID(), regtestMagic), consensus.ErrBadSignature)
	})
	t.Run("key of another owner", func(t *testing.T) {
		tx := signedPair(regtestMagic)
		tx.Inputs[0].PublicKey = bob.pub // alice's signature under bob's key
		wantKind(t, consensus.VerifySignatures(tx, txid, regtestMagic), consensus.ErrBadSignature)
	})
	t.Run("sig checks", func(t *testing.T) {
		checks := consensus.SigChecks(tx, txid, regtestMagic, nil)
		if len(checks) != 2 {
			t.Fatalf("%d checks", len(checks))
		}
		want := types.SigMessage(regtestMagic, txid)
		for i, c := range checks {
			if string(c.Message) != string(want) || c.TxID != txid || c.Input != i ||
				c.PublicKey != &tx.Inputs[i].PublicKey || c.Signature != &tx.Inputs[i].Signature {
				t.Fatalf("check %d: %+v", i, c)
			}
			noErr(t, c.Verify())
		}
		if !strings.HasPrefix(string(want), "COIN-TX-V1RCON") {
			t.Fatalf("message %q", want)
		}
		// Appends to dst.
		more := consensus.SigChecks(tx, txid, regtestMagic, checks)
		if len(more) != 4 {
			t.Fatalf("%d checks after appending", len(more))
		}
	})
}

// goodBatch is 200 valid signature checks over distinct messages, signed once.
var goodBatch = sync.OnceValue(func() []consensus.SigCheck {
	checks := make([]consensus.SigCheck, 200)
	for i := range checks {
		c := &checks[i]
		c.TxID = op(fmt.Sprint("batch", i), 0).TxID
		c.Message = types.SigMessage(regtestMagic, c.TxID)
		c.Input = i
		c.PublicKey = &alice.pub
		c.Signature = new([64]byte)
		copy(c.Signature[:], ed25519.Sign(alice.priv, c.Message))
	}
	return checks
})

// sigBatch is n (≤ 200) signature checks over distinct messages, bad at the given indices.
func sigBatch(n int, bad ...int) []consensus.SigCheck {
	checks := slices.Clone(goodBatch()[:n])
	for _, i := range bad {
		sig := *checks[i].Signature
		sig[10] ^= 0x40
		checks[i].Signature = &sig
	}
	return checks
}

func TestVerifyParallel(t *testing.T) {
	checks := sigBatch(200, 57, 150)
	want := checks[57].Verify()
	wantKind(t, want, consensus.ErrBadSignature)
	if !strings.Contains(want.Error(), "input 57") {
		t.Fatalf("reference error %q", want)
	}
	runs := 20
	if testing.Short() {
		runs = 3
	}
	for _, workers := range []int{0, 1, 2, 8} {
		for run := 0; run < runs; run++ {
			if err := consensus.VerifyParallel(checks, workers); err != want {
				t.Fatalf("workers %d, run %d: got %v, want the failure at index 57 (%v)", workers, run, err, want)
			}
		}
	}

	t.Run("single late failure", func(t *testing.T) {
		checks := sigBatch(200, 199)
		want := checks[199].Verify()
		for _, workers := range []int{0, 1, 2, 8, 64} {
			if err := consensus.VerifyParallel(checks, workers); err != want {
				t.Fatalf("workers %d: got %v", workers, err)
			}
		}
	})
	t.Run("first and last", func(t *testing.T) {
		checks := sigBatch(100, 0, 99)
		want := checks[0].Verify()
		for _, workers := range []int{0, 1, 2, 8} {
			if err := consensus.VerifyParallel(checks, workers); err != want {
				t.Fatalf("workers %d: got %v", workers, err)
			}
		}
	})
	t.Run("all good", func(t *testing.T) {
		checks := sigBatch(100)
		for _, workers := range []int{-1, 0, 1, 2, 8} {
			noErr(t, consensus.VerifyParallel(checks, workers))
		}
		noErr(t, consensus.VerifyParallel(nil, 0))
		noErr(t, consensus.VerifyParallel(checks[:3], 8))
	})
	t.Run("small batch", func(t *testing.T) {
		checks := sigBatch(5, 3)
		for _, workers := range []int{0, 1, 8} {
			wantKind(t, consensus.VerifyParallel(checks, workers), consensus.ErrBadSignature)
		}
	})
}

package wallet

import (
	"bytes"
	"context"
	"errors"
	"testing"

	"github.com/cointoolkit/coin/lib/amount"
	"github.com/cointoolkit/coin/lib/consensus"
	"github.com/cointoolkit/coin/lib/params"
	"github.com/cointoolkit/coin/lib/policy"
	"github.com/cointoolkit/coin/lib/types"
)

func testKeys(t *testing.T) (k0, k1 Key) {
	t.Helper()
	ring, err := KeyringFromMnemonic(testMnemonic, "", params.Regtest, 0)
	if err != nil {
		t.Fatal(err)
	}
	if k0, err = ring.Key(0); err != nil {
		t.Fatal(err)
	}
	if k1, err = ring.Key(1); err != nil {
		t.Fatal(err)
	}
	return k0, k1
}

// Every kind but the coinbase is built and signed the same way: the payload, the locked
// first output and the required first input land where the request puts them, the txid
// covers them, and every signature verifies.
func TestSelectAnyKind(t *testing.T) {
	k0, k1 := testKeys(t)
	net := params.Regtest
	funds := []Coin{
		{Outpoint: types.Outpoint{TxID: types.Blake3([]byte("f1")), Index: 1}, Value: 30 * amount.Coin, PKH: k0.PKH},
		{Outpoint: types.Outpoint{TxID: types.Blake3([]byte("f2"))}, Value: 40 * amount.Coin, PKH: k0.PKH},
	}
	escrow := Coin{Outpoint: types.Outpoint{TxID: types.Blake3([]byte("contract"))}, Value: 5 * amount.Coin, PKH: k1.PKH}
	refund := escrow
	refund.Signer = k0.PKH
	contract := escrow.Outpoint.TxID
	cases := []struct {
		name string
		req  Request
		keys []Key
	}{
		{"transfer", Request{Payments: []Payment{{k1.PKH, amount.Coin}}}, []Key{k0}},
		{"agent register", Request{Kind: types.KindAgentRegister, Locked: &Payment{k0.PKH, 50 * amount.Coin}}, []Key{k0}},
		{"vouch", Request{Kind: types.KindVouch, Payload: types.VouchPayload{Target: k1.PKH}.Bytes()}, []Key{k0}},
		{"contract create", Request{Kind: types.KindContractCreate, Locked: &Payment{k1.PKH, 5 * amount.Coin},
			Payload: types.ContractCreatePayload{Counterparty: k1.PKH, ExpiryBlocks: 1_440}.Bytes()}, []Key{k0}},
		{"contract fulfil", Request{Kind: types.KindContractFulfil, Inputs: []Coin{escrow},
			Payments: []Payment{{k1.PKH, 4 * amount.Coin}}, Change: k1.PKH,
			Payload: types.ContractRefPayload{ContractID: contract}.Bytes()}, []Key{k1}},
		{"contract refund", Request{Kind: types.KindContractRefund, Inputs: []Coin{refund},
			Payments: []Payment{{k0.PKH, 4 * amount.Coin}}, Change: k0.PKH,
			Payload: types.ContractRefPayload{ContractID: contract}.Bytes()}, []Key{k0}},
		{"review", Request{Kind: types.KindReview,
			Payload: types.ReviewPayload{ContractID: contract, Subject: k1.PKH, Score: 9}.Bytes()}, []Key{k0}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			req := c.req
			if req.Change == (types.Hash{}) {
				req.Change = k0.PKH
			}
			coins := funds
			if len(req.Inputs) > 0 {
				coins = nil // the escrow pays for itself
			}
			plan, err := Select(coins, req)
			if err != nil {
				t.Fatal(err)
			}
			if err := Sign(plan, c.keys, net.Magic); err != nil {
				t.Fatal(err)
			}
			tx := plan.Tx
			want := req.kind()
			if tx.Kind != want || !bytes.Equal(tx.Payload, req.Payload) {
				t.Fatalf("kind %v payload %x, want %v %x", tx.Kind, tx.Payload, want, req.Payload)
			}
			if req.Locked != nil && (tx.Outputs[0].PubKeyHash != req.Locked.PKH || tx.Outputs[0].Value != req.Locked.Value) {
				t.Fatalf("output 0 %+v, want the locked %+v", tx.Outputs[0], *req.Locked)
			}
			if len(req.Inputs) > 0 && tx.Inputs[0].Outpoint() != req.Inputs[0].Outpoint {
				t.Fatal("the required input is not input 0")
			}
			if plan.ChangeIndex != len(tx.Outputs)-1 || tx.Outputs[plan.ChangeIndex].PubKeyHash != req.Change ||
				plan.Fee != DefaultFeeRate*uint64(plan.Size) {
				t.Fatalf("change index %d fee %d size %d", plan.ChangeIndex, plan.Fee, plan.Size)
			}
			var in, out uint64
			for _, co := range plan.Coins {
				in += co.Value
			}
			for _, o := range tx.Outputs {
				out += o.Value
			}
			if in-out != plan.Fee {
				t.Fatalf("inputs−outputs %d, fee %d", in-out, plan.Fee)
			}
			// The bytes decode to the same transaction, whose id the plan and the signatures hold.
			dec, err := types.DecodeTransaction(tx.Bytes())
			if err != nil {
				t.Fatal(err)
			}
			if dec.TxID() != plan.TxID || tx.TxID() != plan.TxID || dec.Kind != want || len(tx.Bytes()) != plan.Size {
				t.Fatal("decoded transaction differs from the plan")
			}
			if err := consensus.VerifySignatures(dec, dec.TxID(), net.Magic); err != nil {
				t.Fatal(err)
			}
			for i, o := range plan.Coins {
				if got := types.Blake3(dec.Inputs[i].PublicKey[:]); got != o.signer() {
					t.Fatalf("input %d signed by %s, want %s", i, got, o.signer())
				}
			}
			// Every kind passes the context-free rules (the agent kinds' CheckAgentKind too).
			if err := consensus.CheckTransactionSanity(dec, plan.Size); err != nil {
				t.Fatalf("sanity: %v", err)
			}
			// The signatures cover the payload through the txid.
			if len(dec.Payload) > 0 {
				dec.Payload[0] ^= 1
				if err := consensus.VerifySignatures(dec, dec.TxID(), net.Magic); err == nil {
					t.Fatal("a signature survives a changed payload")
				}
			}
		})
	}
}

func TestSelectKindErrors(t *testing.T) {
	funds := []Coin{coin(1, 10*amount.Coin)}
	pay := []Payment{{types.Hash{9}, amount.Coin}}
	if _, err := Select(funds, Request{Kind: types.TxKind(99), Payments: pay}); !errors.Is(err, ErrBadKind) {
		t.Fatalf("unknown kind: %v", err)
	}
	if _, err := Select(funds, Request{Payments: pay, Payload: []byte{1}}); !errors.Is(err, ErrBadKind) {
		t.Fatalf("transfer with a payload: %v", err)
	}
	if _, err := Select(funds, Request{Kind: types.KindAgentRegister, Locked: &Payment{types.Hash{9}, policy.DustLimit - 1}}); !errors.Is(err, ErrDust) {
		t.Fatalf("dust locked output: %v", err)
	}
	// A vouch has no output but its change: coins that leave no change of at least the dust
	// limit do not make a transaction.
	vouch := Request{Kind: types.KindVouch, Payload: types.VouchPayload{Target: types.Hash{9}}.Bytes(), FeeRate: 1}
	if _, err := Select([]Coin{coin(1, 500)}, vouch); !errors.Is(err, ErrInsufficientFunds) {
		t.Fatalf("vouch without change: %v", err)
	}
	plan, err := Select([]Coin{coin(1, 500), coin(2, 2_000)}, vouch)
	if err != nil || len(plan.Tx.Outputs) != 1 || plan.ChangeIndex != 0 || plan.Change < policy.DustLimit {
		t.Fatalf("vouch: %v %+v", err, plan)
	}
	// A required input is spent once even when the coins offer it too.
	req := Request{Kind: types.KindContractFulfil, Inputs: []Coin{coin(3, 5*amount.Coin)}, Payments: pay}
	plan, err = Select([]Coin{coin(3, 5*amount.Coin), coin(4, amount.Coin)}, req)
	if err != nil || len(plan.Tx.Inputs) != 1 || plan.Tx.Inputs[0].Outpoint() != coin(3, 0).Outpoint {
		t.Fatalf("required input: %v %+v", err, plan)
	}
}

// Spend builds, signs and broadcasts any kind; a node that refuses it spends nothing and
// its error comes back as it was.
func TestSpendAgentKindRefused(t *testing.T) {
	t.Parallel()
	k0, k1 := testKeys(t)
	node := newQuietNode(t, 60*amount.Coin)
	node.fund(t, Payment{k0.PKH, 60 * amount.Coin})
	node.mine(t, 50) // 51 confirmations
	_, err := Spend(context.Background(), node, params.Regtest, []Key{k0}, Request{Kind: types.KindAgentRegister,
		Locked: &Payment{k0.PKH, 49 * amount.Coin}})
	if !errors.Is(err, consensus.ErrBadStake) || node.pool() != 0 {
		t.Fatalf("err %v, sent %d", err, node.pool())
	}
	plan, err := Spend(context.Background(), node, params.Regtest, []Key{k0}, Request{Payments: []Payment{{k1.PKH, amount.Coin}}})
	if err != nil || node.pool() != 1 || node.pooled(plan.TxID) == nil || plan.Tx.Outputs[plan.ChangeIndex].PubKeyHash != k0.PKH {
		t.Fatalf("transfer: %v", err)
	}
	// The coin was worth its nominal value: below the threshold nothing decays.
	if plan.DecayMargin != 0 || plan.Fee != DefaultFeeRate*uint64(plan.Size) {
		t.Fatalf("transfer: fee %d for %d bytes, margin %d", plan.Fee, plan.Size, plan.DecayMargin)
	}
}

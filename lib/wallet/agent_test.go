package wallet

import (
	"bytes"
	"context"
	"errors"
	"testing"

	"github.com/cointoolkit/coin/lib/amount"
	"github.com/cointoolkit/coin/lib/consensus"
	"github.com/cointoolkit/coin/lib/params"
	"github.com/cointoolkit/coin/lib/reason"
	"github.com/cointoolkit/coin/lib/rpcapi"
	"github.com/cointoolkit/coin/lib/types"
)

// agentCoins are coins of owner, and one of a stranger that no agent transaction may spend.
func agentCoins(owner types.Hash) []Coin {
	return []Coin{
		{Outpoint: types.Outpoint{TxID: types.Blake3([]byte("stranger"))}, Value: 500 * amount.Coin, PKH: types.Hash{0xee}},
		{Outpoint: types.Outpoint{TxID: types.Blake3([]byte("a1"))}, Value: 60 * amount.Coin, PKH: owner},
		{Outpoint: types.Outpoint{TxID: types.Blake3([]byte("a2")), Index: 3}, Value: 2 * amount.Coin, PKH: owner},
	}
}

// Every operation's request builds a transaction of its kind and payload, with its outputs,
// from the actor's coins only, that passes the context-free rules and is signed by the actor.
func TestAgentRequests(t *testing.T) {
	k0, k1 := testKeys(t)
	magic := params.Regtest.Magic
	contract := types.Blake3([]byte("contract"))
	escrow := Escrow{ContractID: contract, Value: 5 * amount.Coin, Initiator: k0.PKH, Counterparty: k1.PKH}
	must := func(r Request, err error) Request {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	cases := []struct {
		name    string
		key     Key
		req     Request
		kind    types.TxKind
		payload []byte
		locked  *Payment // output 0
	}{
		{"register", k0, RegisterRequest(k0.PKH), types.KindAgentRegister, nil, &Payment{k0.PKH, consensus.AgentStake}},
		{"vouch", k0, must(VouchRequest(k0.PKH, k1.PKH)), types.KindVouch, types.VouchPayload{Target: k1.PKH}.Bytes(), nil},
		{"contract create", k0, must(ContractCreateRequest(k0.PKH, k1.PKH, 3*amount.Coin, 0)), types.KindContractCreate,
			types.ContractCreatePayload{Counterparty: k1.PKH, ExpiryBlocks: consensus.DefaultExpiry}.Bytes(), &Payment{k1.PKH, 3 * amount.Coin}},
		{"contract create, 10 blocks", k0, must(ContractCreateRequest(k0.PKH, k1.PKH, consensus.MinEscrow, 10)), types.KindContractCreate,
			types.ContractCreatePayload{Counterparty: k1.PKH, ExpiryBlocks: 10}.Bytes(), &Payment{k1.PKH, consensus.MinEscrow}},
		{"fulfil", k1, FulfilRequest(escrow), types.KindContractFulfil, types.ContractRefPayload{ContractID: contract}.Bytes(), nil},
		{"refund", k0, RefundRequest(escrow), types.KindContractRefund, types.ContractRefPayload{ContractID: contract}.Bytes(), nil},
		{"review", k1, must(ReviewRequest(k1.PKH, contract, k0.PKH, 10)), types.KindReview,
			types.ReviewPayload{ContractID: contract, Subject: k0.PKH, Score: 10}.Bytes(), nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			plan, err := BuildAgent(agentCoins(c.key.PKH), c.req, c.key, magic)
			if err != nil {
				t.Fatal(err)
			}
			// SelectAgent builds the same transaction unsigned (the faucet's public_key form):
			// the key's one signature of its txid makes it BuildAgent's, byte for byte.
			unsigned, err := SelectAgent(agentCoins(c.key.PKH), c.req, c.key.PKH)
			if err != nil {
				t.Fatal(err)
			}
			for _, in := range unsigned.Tx.Inputs {
				if in.PublicKey != ([32]byte{}) || in.Signature != ([64]byte{}) {
					t.Fatal("an unsigned input has a key or signature")
				}
			}
			if unsigned.TxID != plan.TxID || unsigned.Fee != plan.Fee || unsigned.Size != plan.Size || unsigned.TxID != unsigned.Tx.TxID() {
				t.Fatalf("unsigned txid %s fee %d size %d, signed %s %d %d", unsigned.TxID, unsigned.Fee, unsigned.Size, plan.TxID, plan.Fee, plan.Size)
			}
			types.SignInputs(unsigned.Tx, c.key.Priv, magic)
			if !bytes.Equal(unsigned.Tx.Bytes(), plan.Tx.Bytes()) {
				t.Fatal("the unsigned transaction signed elsewhere differs from BuildAgent's")
			}
			tx := plan.Tx
			if tx.Kind != c.kind || !bytes.Equal(tx.Payload, c.payload) {
				t.Fatalf("kind %v payload %x, want %v %x", tx.Kind, tx.Payload, c.kind, c.payload)
			}
			if err := consensus.CheckTransactionSanity(tx, plan.Size); err != nil {
				t.Fatal(err)
			}
			if err := consensus.VerifySignatures(tx, plan.TxID, magic); err != nil {
				t.Fatal(err)
			}
			if consensus.Actor(tx) != c.key.PKH {
				t.Fatalf("actor %s, want %s", consensus.Actor(tx), c.key.PKH)
			}
			for i, co := range plan.Coins {
				if co.signer() != c.key.PKH || types.Blake3(tx.Inputs[i].PublicKey[:]) != c.key.PKH {
					t.Fatalf("input %d (%s) is not the actor's", i, co.Outpoint)
				}
			}
			if c.locked != nil && (tx.Outputs[0].PubKeyHash != c.locked.PKH || tx.Outputs[0].Value != c.locked.Value) {
				t.Fatalf("output 0 %+v, want %+v", tx.Outputs[0], *c.locked)
			}
			// Every output but the locked one is the actor's change.
			first := 0
			if c.locked != nil {
				first = 1
			}
			if len(tx.Outputs) != first+1 || plan.ChangeIndex != first || tx.Outputs[first].PubKeyHash != c.key.PKH {
				t.Fatalf("outputs %+v, change index %d", tx.Outputs, plan.ChangeIndex)
			}
			if plan.Fee != DefaultFeeRate*uint64(plan.Size) {
				t.Fatalf("fee %d for %d bytes", plan.Fee, plan.Size)
			}
		})
	}
}

// A fulfilment spends the escrow as input 0 and pays it, less the fee, to the
// counterparty: no other coin is needed. A refund does the same for the initiator, and all
// its outputs pay the initiator.
func TestFulfilAndRefundSpendTheEscrow(t *testing.T) {
	k0, k1 := testKeys(t)
	magic := params.Regtest.Magic
	e := Escrow{ContractID: types.Blake3([]byte("c")), Value: 5 * amount.Coin, Initiator: k0.PKH, Counterparty: k1.PKH}
	for _, c := range []struct {
		name string
		key  Key
		req  Request
	}{{"fulfil", k1, FulfilRequest(e)}, {"refund", k0, RefundRequest(e)}} {
		plan, err := BuildAgent(agentCoins(c.key.PKH), c.req, c.key, magic)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		tx := plan.Tx
		if len(tx.Inputs) != 1 || tx.Inputs[0].Outpoint() != (types.Outpoint{TxID: e.ContractID}) {
			t.Fatalf("%s: inputs %+v, want the escrow alone", c.name, tx.Inputs)
		}
		if len(tx.Outputs) != 1 || tx.Outputs[0].PubKeyHash != c.key.PKH || tx.Outputs[0].Value != e.Value-plan.Fee {
			t.Fatalf("%s: outputs %+v, fee %d: want the escrow less the fee to %s", c.name, tx.Outputs, plan.Fee, c.key.PKH)
		}
	}
	// An escrow too small to pay the fee and leave change takes more of the actor's coins;
	// the refund's outputs still all pay the initiator.
	small := e
	small.Value = consensus.MinEscrow
	plan, err := BuildAgent(agentCoins(k0.PKH), RefundRequest(small), k0, magic)
	if err != nil {
		t.Fatal(err)
	}
	if len(plan.Tx.Inputs) != 2 || plan.Tx.Inputs[0].Outpoint().TxID != e.ContractID {
		t.Fatalf("inputs %+v", plan.Tx.Inputs)
	}
	for j, o := range plan.Tx.Outputs {
		if o.PubKeyHash != k0.PKH {
			t.Fatalf("refund output %d pays %s, not the initiator", j, o.PubKeyHash)
		}
	}
	if err := consensus.CheckAgentKind(plan.Tx); err != nil {
		t.Fatal(err)
	}
	// The escrow read from a getcontract record.
	rec := &rpcapi.Contract{ContractID: e.ContractID.String(), Initiator: k0.Address, Counterparty: k1.Address, Value: e.Value}
	got, err := EscrowOf(rec, params.Regtest)
	if err != nil || got != e {
		t.Fatalf("EscrowOf: %+v %v, want %+v", got, err, e)
	}
	if _, err := EscrowOf(&rpcapi.Contract{ContractID: "xyz"}, params.Regtest); err == nil {
		t.Fatal("EscrowOf accepts a bad id")
	}
}

// The rules that need no chain are checked before anything is built, with the rule's kind,
// so the user reads the node's reason.
func TestAgentRequestLocalRules(t *testing.T) {
	k0, k1 := testKeys(t)
	id := types.Hash{7}
	e := Escrow{ContractID: id, Value: amount.Coin, Initiator: k0.PKH, Counterparty: k1.PKH}
	errOf := func(_ Request, err error) error { return err }
	buildErr := func(key Key, req Request) error {
		_, err := BuildAgent(agentCoins(key.PKH), req, key, params.Regtest.Magic)
		return err
	}
	cases := []struct {
		name string
		err  error
		kind reason.Reason
	}{
		{"review score 0", errOf(ReviewRequest(k0.PKH, id, k1.PKH, 0)), reason.InvalidScore},
		{"review score 11", errOf(ReviewRequest(k0.PKH, id, k1.PKH, 11)), reason.InvalidScore},
		{"review score 256", errOf(ReviewRequest(k0.PKH, id, k1.PKH, 256)), reason.InvalidScore},
		{"review of oneself", errOf(ReviewRequest(k0.PKH, id, k0.PKH, 5)), reason.SelfTarget},
		{"vouch for oneself", errOf(VouchRequest(k0.PKH, k0.PKH)), reason.SelfTarget},
		{"contract with oneself", errOf(ContractCreateRequest(k0.PKH, k0.PKH, amount.Coin, 0)), reason.SelfTarget},
		{"expiry 9", errOf(ContractCreateRequest(k0.PKH, k1.PKH, amount.Coin, 9)), reason.InvalidExpiry},
		{"expiry too far", errOf(ContractCreateRequest(k0.PKH, k1.PKH, amount.Coin, consensus.MaxExpiry+1)), reason.InvalidExpiry},
		{"escrow below the minimum", errOf(ContractCreateRequest(k0.PKH, k1.PKH, consensus.MinEscrow-1, 0)), reason.BadEscrow},
		{"fulfil by the initiator", buildErr(k0, FulfilRequest(e)), reason.NotCounterparty},
		{"refund by the counterparty", buildErr(k1, RefundRequest(e)), reason.NotInitiator},
	}
	for _, c := range cases {
		if !errors.Is(c.err, c.kind) || reason.Of(c.err) != c.kind {
			t.Errorf("%s: %v (reason %q), want %s", c.name, c.err, reason.Of(c.err), c.kind)
		}
	}
	if _, err := ReviewRequest(k0.PKH, id, k1.PKH, 1); err != nil {
		t.Error(err)
	}
	if _, err := ContractCreateRequest(k0.PKH, k1.PKH, consensus.MinEscrow, consensus.MaxExpiry); err != nil {
		t.Error(err)
	}
	// Not an agent kind; change to someone else.
	if err := buildErr(k0, Request{Payments: []Payment{{k1.PKH, amount.Coin}}}); !errors.Is(err, ErrBadKind) {
		t.Errorf("transfer through BuildAgent: %v", err)
	}
	req, _ := VouchRequest(k0.PKH, k1.PKH)
	req.Change = k1.PKH
	if err := buildErr(k0, req); !errors.Is(err, ErrBadKind) {
		t.Errorf("change to another address: %v", err)
	}
}

// Only the actor's coins pay: a stranger's coins, however large, are never selected.
func TestBuildAgentUsesOnlyTheActorsCoins(t *testing.T) {
	k0, k1 := testKeys(t)
	coins := []Coin{
		{Outpoint: types.Outpoint{TxID: types.Blake3([]byte("k1"))}, Value: 500 * amount.Coin, PKH: k1.PKH},
		{Outpoint: types.Outpoint{TxID: types.Blake3([]byte("k0"))}, Value: 10 * amount.Coin, PKH: k0.PKH},
	}
	_, err := BuildAgent(coins, RegisterRequest(k0.PKH), k0, params.Regtest.Magic)
	var ife *InsufficientFundsError
	if !errors.As(err, &ife) || ife.Have != 10*amount.Coin {
		t.Fatalf("register with 10 COIN of its own: %v", err)
	}
}

// Agent operations follow one another without a block: each spends the change of the one
// before, never a locked stake or escrow; a refused operation spends nothing.
func TestSpendAgentBackToBack(t *testing.T) {
	t.Parallel()
	k0, k1 := testKeys(t)
	ctx := context.Background()
	net := params.Regtest
	// The node marks stakes and escrows locked. k0 and k1 never spend together: two
	// clusters, the larger of 60 COIN.
	node := newQuietNode(t, 60*amount.Coin)
	node.fund(t, Payment{k0.PKH, 60 * amount.Coin}, Payment{k1.PKH, 51 * amount.Coin})
	node.mine(t, 50) // 51 confirmations
	// A contract's counterparty is an agent: k1 registers first, which leaves it about 1 COIN.
	if _, err := SpendAgent(ctx, node, net, k1, RegisterRequest(k1.PKH)); err != nil {
		t.Fatal(err)
	}
	reg, err := SpendAgent(ctx, node, net, k0, RegisterRequest(k0.PKH))
	if err != nil {
		t.Fatal(err)
	}
	if reg.DecayMargin != 0 {
		t.Fatalf("k0's 60 COIN decay: margin %d", reg.DecayMargin)
	}
	create, _ := ContractCreateRequest(k0.PKH, k1.PKH, 5*amount.Coin, 10)
	cre, err := SpendAgent(ctx, node, net, k0, create)
	if err != nil {
		t.Fatal(err)
	}
	if cre.Tx.Inputs[0].Outpoint() != (types.Outpoint{TxID: reg.TxID, Index: uint32(reg.ChangeIndex)}) || len(cre.Tx.Inputs) != 1 {
		t.Fatalf("the contract does not spend the registration's change alone: %+v", cre.Tx.Inputs)
	}
	// A second contract (a vouch needs a score of 700, which a new agent has not): it spends
	// the first one's change, never the stake or the escrow.
	second, _ := ContractCreateRequest(k0.PKH, k1.PKH, consensus.MinEscrow, 10)
	vo, err := SpendAgent(ctx, node, net, k0, second)
	if err != nil {
		t.Fatal(err)
	}
	if vo.Tx.Inputs[0].Outpoint() != (types.Outpoint{TxID: cre.TxID, Index: uint32(cre.ChangeIndex)}) {
		t.Fatalf("the second contract does not spend the first one's change: %+v", vo.Tx.Inputs)
	}
	for _, in := range vo.Tx.Inputs {
		if in.PrevIndex == 0 && (in.PrevTxID == reg.TxID || in.PrevTxID == cre.TxID) {
			t.Fatal("a locked output was spent as a coin")
		}
	}
	// The counterparty fulfils from the escrow alone.
	fu, err := SpendAgent(ctx, node, net, k1, FulfilRequest(Escrow{ContractID: cre.TxID, Value: 5 * amount.Coin,
		Initiator: k0.PKH, Counterparty: k1.PKH}))
	if err != nil {
		t.Fatal(err)
	}
	if len(fu.Tx.Inputs) != 1 || fu.Tx.Outputs[0].PubKeyHash != k1.PKH {
		t.Fatalf("fulfil %+v", fu.Tx)
	}
	// Not enough of its own: nothing is sent.
	sent := node.pool()
	if _, err := SpendAgent(ctx, node, net, k1, RegisterRequest(k1.PKH)); !errors.Is(err, ErrInsufficientFunds) || node.pool() != sent {
		t.Fatalf("register without 50 COIN: %v, %d sent", err, node.pool()-sent)
	}
}

package conductview_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/cointoolkit/coin/lib/amount"
	"github.com/cointoolkit/coin/lib/conductview"
	"github.com/cointoolkit/coin/lib/consensus"
	"github.com/cointoolkit/coin/lib/jsonrpc"
	"github.com/cointoolkit/coin/lib/node"
	"github.com/cointoolkit/coin/lib/node/nodetest"
	"github.com/cointoolkit/coin/lib/params"
	"github.com/cointoolkit/coin/lib/proctest"
	"github.com/cointoolkit/coin/lib/reason"
	"github.com/cointoolkit/coin/lib/rpcapi"
	"github.com/cointoolkit/coin/lib/types"
	"github.com/cointoolkit/coin/lib/wallet"
)

const mnemonic = "abandon abandon abandon abandon abandon abandon abandon abandon abandon abandon abandon about"

// realNode runs a regtest node in the process with RPC on a free port.
func realNode(t *testing.T) (*node.Node, *rpcapi.Client) {
	t.Helper()
	n, url := nodetest.Run(t, nodetest.Config(t, nil))
	cl := rpcapi.NewClient(url, jsonrpc.WithTimeout(time.Minute))
	t.Cleanup(cl.Close)
	return n, cl
}

// The view over a real node's RPC agrees with the chain's own conduct state, and a
// precheck against it refuses exactly as the node then does: same reason, same words (the
// node's message adds the mempool's "invalid transaction: ").
func TestViewAgreesWithTheNode(t *testing.T) {
	if testing.Short() {
		t.Skip("mines 110 regtest blocks")
	}
	n, cl := realNode(t)
	ctx := context.Background()
	net := params.Regtest
	ring, err := wallet.KeyringFromMnemonic(mnemonic, "", net, 0)
	if err != nil {
		t.Fatal(err)
	}
	var k [3]wallet.Key // a and b become agents, c never does
	for i := range k {
		if k[i], err = ring.Key(uint32(i)); err != nil {
			t.Fatal(err)
		}
	}
	a, b, c := k[0], k[1], k[2]
	mine := func(n int, addr string) {
		t.Helper()
		if _, err := cl.GenerateToAddress(ctx, n, addr); err != nil {
			t.Fatal(err)
		}
	}
	spend := func(key wallet.Key, req wallet.Request) *wallet.Plan {
		t.Helper()
		p, err := wallet.SpendAgent(ctx, cl, net, key, req)
		if err != nil {
			t.Fatal(err)
		}
		return p
	}
	mine(3, a.Address)
	mine(3, b.Address)
	mine(3, c.Address)
	mine(100, c.Address)
	spend(a, wallet.RegisterRequest(a.PKH))
	spend(b, wallet.RegisterRequest(b.PKH))
	mine(1, c.Address)
	create, err := wallet.ContractCreateRequest(a.PKH, b.PKH, amount.Coin, 10)
	if err != nil {
		t.Fatal(err)
	}
	id := spend(a, create).TxID
	mine(1, c.Address)

	view := conductview.New(ctx, cl, net)
	chain := n.Chain().Conduct()
	for _, key := range k {
		got, ok, err := view.Agent(key.PKH)
		want, wantOK, werr := chain.Agent(key.PKH)
		if err != nil || werr != nil || ok != wantOK {
			t.Fatalf("agent %s: %v %v, chain %v %v", key.Address, ok, err, wantOK, werr)
		}
		if !ok {
			continue
		}
		// The fields the profile shows (not the registration time, nor the review sum).
		w := *want
		w.RegisteredTime, w.ReviewScoreSum = 0, 0
		if *got != w {
			t.Fatalf("agent %s: %+v, chain %+v", key.Address, *got, w)
		}
	}
	got, ok, err := view.Contract(id)
	want, _, _ := chain.Contract(id)
	if err != nil || !ok || want == nil || *got != *want {
		t.Fatalf("contract: %+v %v %v, chain %+v", got, ok, err, want)
	}
	if _, ok, err := view.Contract(types.Blake3([]byte("none"))); ok || err != nil {
		t.Fatalf("an unknown contract: %v %v", ok, err)
	}
	if h, err := view.NextHeight(); err != nil || h != n.Chain().Tip().Height+1 {
		t.Fatalf("next height %d %v at tip %d", h, err, n.Chain().Tip().Height)
	}

	// Each refusal: the precheck's, then the node's for the same operation.
	escrow := wallet.Escrow{ContractID: id, Value: amount.Coin, Initiator: a.PKH, Counterparty: b.PKH}
	vouchAB, _ := wallet.VouchRequest(a.PKH, b.PKH)
	vouchCA, _ := wallet.VouchRequest(c.PKH, a.PKH)
	review, _ := wallet.ReviewRequest(a.PKH, id, b.PKH, 9)
	createAC, _ := wallet.ContractCreateRequest(a.PKH, c.PKH, amount.Coin, 10)
	for _, tc := range []struct {
		name string
		key  wallet.Key
		req  wallet.Request
		want consensus.ErrorKind
	}{
		{"register twice", a, wallet.RegisterRequest(a.PKH), consensus.ErrAlreadyRegistered},
		{"vouch with 500", a, vouchAB, consensus.ErrScoreTooLow},
		{"vouch by no agent", c, vouchCA, consensus.ErrNotAnAgent},
		{"contract with no agent", a, createAC, consensus.ErrAgentNotFound},
		{"review too early", a, review, consensus.ErrContractNotFulfilled},
		{"refund too early", a, wallet.RefundRequest(escrow), consensus.ErrContractNotExpired},
	} {
		t.Run(tc.name, func(t *testing.T) {
			pre := wallet.PrecheckAgent(ctx, cl, net, tc.req, tc.key.Pub)
			var re consensus.RuleError
			if !errors.As(pre, &re) || re.Err != tc.want {
				t.Fatalf("precheck: %v, want %s", pre, tc.want)
			}
			_, err := wallet.SpendAgent(ctx, cl, net, tc.key, tc.req)
			var rpcErr *jsonrpc.Error
			if !errors.As(err, &rpcErr) || reason.Of(err) != tc.want.Reason() {
				t.Fatalf("node: %v, want reason %s", err, tc.want.Reason())
			}
			if rpcErr.Message != "invalid transaction: "+pre.Error() {
				t.Fatalf("node says %q, the precheck %q", rpcErr.Message, pre.Error())
			}
		})
	}
	// The counterparty's fulfilment passes the precheck and the node.
	if err := wallet.PrecheckAgent(ctx, cl, net, wallet.FulfilRequest(escrow), b.Pub); err != nil {
		t.Fatal(err)
	}
	spend(b, wallet.FulfilRequest(escrow))
	// The pending view: the fulfilment is in the mempool, so the contract is closed.
	err = wallet.PrecheckAgent(ctx, cl, net, wallet.FulfilRequest(escrow), b.Pub)
	if !errors.Is(err, consensus.ErrContractNotOpen) || err.Error() != fmt.Sprintf("contract %s is fulfilled, not open", id) {
		t.Fatalf("a second fulfilment: %v", err)
	}
	if err := wallet.PrecheckAgent(ctx, cl, net, review, a.Pub); err != nil {
		t.Fatalf("review after the fulfilment: %v", err)
	}
}

// The node's failures come back as they are, never as a rule's refusal.
func TestNodeDown(t *testing.T) {
	cl := rpcapi.NewClient(fmt.Sprintf("http://127.0.0.1:%d", proctest.FreePort(t)), jsonrpc.WithTimeout(5*time.Second))
	defer cl.Close()
	tx := &types.Transaction{Version: consensus.TxVersion, Kind: types.KindAgentRegister,
		Inputs: []types.TxInput{{}}, Outputs: []types.TxOutput{{Value: consensus.AgentStake}}}
	tx.Outputs[0].PubKeyHash = types.Blake3(tx.Inputs[0].PublicKey[:])
	err := conductview.Check(context.Background(), cl, params.Regtest, tx)
	if err == nil || consensus.IsRuleError(err) || !jsonrpc.IsConnRefused(err) {
		t.Fatalf("%v", err)
	}
}

// Record reads every field of getcontract, and refuses what is not a contract.
func TestRecord(t *testing.T) {
	net := params.Regtest
	ring, _ := wallet.KeyringFromMnemonic(mnemonic, "", net, 0)
	a, _ := ring.Key(0)
	b, _ := ring.Key(1)
	id, closed := types.Blake3([]byte("c")), types.Blake3([]byte("f"))
	c := &rpcapi.Contract{ContractID: id.String(), Initiator: a.Address, Counterparty: b.Address, Value: 7_000, CreatedHeight: 5,
		ExpiresAt: 15, Status: "fulfilled", ClosedBy: closed.String(), ReviewedByCounterparty: true}
	r, err := conductview.Record(c, net)
	want := consensus.ContractRecord{ID: id, Initiator: a.PKH, Counterparty: b.PKH, Value: 7_000, CreatedHeight: 5, ExpiresAt: 15,
		Status: consensus.ContractFulfilled, ClosedBy: closed, Reviewed: consensus.ReviewedByCounterparty}
	if err != nil || *r != want {
		t.Fatalf("%+v %v, want %+v", r, err, want)
	}
	for _, bad := range []func(c *rpcapi.Contract){
		func(c *rpcapi.Contract) { c.Status = "closed" },
		func(c *rpcapi.Contract) { c.ContractID = "xyz" },
		func(c *rpcapi.Contract) { c.Initiator = "coin1qqq" },
		func(c *rpcapi.Contract) { c.ClosedBy = "ab" },
	} {
		cp := *c
		bad(&cp)
		if _, err := conductview.Record(&cp, net); err == nil {
			t.Fatalf("accepted %+v", cp)
		}
	}
}

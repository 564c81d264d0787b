package wallet

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/cointoolkit/coin/lib/amount"
	"github.com/cointoolkit/coin/lib/consensus"
	"github.com/cointoolkit/coin/lib/jsonrpc"
	"github.com/cointoolkit/coin/lib/params"
	"github.com/cointoolkit/coin/lib/reason"
	"github.com/cointoolkit/coin/lib/rpcapi"
	"github.com/cointoolkit/coin/lib/types"
)

// conductNode answers getagentprofile, getcontract and getblockcount from maps, with the
// node's errors (code -1 and a reason) for what it does not know.
type conductNode struct {
	height    uint64
	profiles  map[string]*rpcapi.AgentProfile
	contracts map[string]*rpcapi.Contract
	err       error // every call fails with it when set
	calls     int
}

func notFound(r reason.Reason, msg string) error {
	return rpcapi.DecodeError(&jsonrpc.Error{Code: -1, Message: msg, Data: map[string]any{"reason": string(r)}})
}

func (n *conductNode) GetAgentProfile(_ context.Context, addr string) (*rpcapi.AgentProfile, error) {
	n.calls++
	if n.err != nil {
		return nil, n.err
	}
	if p, ok := n.profiles[addr]; ok {
		return p, nil
	}
	return nil, notFound(reason.AgentNotFound, addr+" is not a registered agent")
}

func (n *conductNode) GetContract(_ context.Context, id string) (*rpcapi.Contract, error) {
	n.calls++
	if n.err != nil {
		return nil, n.err
	}
	if c, ok := n.contracts[id]; ok {
		return c, nil
	}
	return nil, notFound(reason.ContractNotFound, "no contract "+id)
}

func (n *conductNode) GetBlockCount(context.Context) (uint64, error) {
	n.calls++
	return n.height, n.err
}

// PrecheckAgent refuses what the node would refuse, with consensus's kind and words, before
// any coin is selected, and passes what the node would accept.
func TestPrecheckAgent(t *testing.T) {
	k0, k1 := testKeys(t)
	ctx := context.Background()
	net := params.Regtest
	id := types.Blake3([]byte("contract"))
	node := &conductNode{height: 99, profiles: map[string]*rpcapi.AgentProfile{
		k1.Address: {Address: k1.Address, ConductScore: 500, StakeTxID: types.Blake3([]byte("stake")).String()},
	}, contracts: map[string]*rpcapi.Contract{}}
	vouch, err := VouchRequest(k0.PKH, k1.PKH)
	if err != nil {
		t.Fatal(err)
	}
	check := func(key Key, req Request, kind consensus.ErrorKind, msg string) {
		t.Helper()
		err := PrecheckAgent(ctx, node, net, req, key.Pub)
		if kind == "" {
			if err != nil {
				t.Fatalf("%s: %v", req.Kind, err)
			}
			return
		}
		var re consensus.RuleError
		if !errors.As(err, &re) || re.Err != kind || err.Error() != msg || reason.Of(err) != kind.Reason() {
			t.Fatalf("%s: %v (%T), want %s %q", req.Kind, err, err, kind, msg)
		}
	}
	check(k0, vouch, consensus.ErrNotAnAgent, fmt.Sprintf("voucher %s is not a registered agent", k0.PKH))
	check(k0, RegisterRequest(k0.PKH), "", "")
	check(k1, RegisterRequest(k1.PKH), consensus.ErrAlreadyRegistered, fmt.Sprintf("%s is already a registered agent", k1.PKH))

	node.profiles[k0.Address] = &rpcapi.AgentProfile{Address: k0.Address, ConductScore: 699}
	check(k0, vouch, consensus.ErrScoreTooLow, "score 699 is below the 700 needed to vouch")
	node.profiles[k0.Address].ConductScore = 700
	check(k0, vouch, "", "")

	// A contract k0 → k1 expiring at height 110: the next block is 100.
	e := Escrow{ContractID: id, Value: amount.Coin, Initiator: k0.PKH, Counterparty: k1.PKH}
	check(k1, FulfilRequest(e), consensus.ErrContractNotFound, fmt.Sprintf("no contract %s", id))
	node.contracts[id.String()] = &rpcapi.Contract{ContractID: id.String(), Initiator: k0.Address, Counterparty: k1.Address,
		Value: amount.Coin, CreatedHeight: 90, ExpiresAt: 110, Status: "open"}
	check(k1, FulfilRequest(e), "", "")
	check(k0, FulfilRequest(e), consensus.ErrNotCounterparty, fmt.Sprintf("only the counterparty %s may fulfil contract %s", k1.PKH, id))
	check(k1, RefundRequest(e), consensus.ErrNotInitiator, fmt.Sprintf("only the initiator %s may take back the escrow of contract %s", k0.PKH, id))
	check(k0, RefundRequest(e), consensus.ErrContractNotExpired, fmt.Sprintf("contract %s expires at height 110; a refund is possible from then on", id))
	node.height = 109
	check(k0, RefundRequest(e), "", "")
	check(k1, FulfilRequest(e), consensus.ErrContractExpired, fmt.Sprintf("contract %s expired at height 110", id))
	review, _ := ReviewRequest(k1.PKH, id, k0.PKH, 9)
	check(k1, review, consensus.ErrContractNotFulfilled, fmt.Sprintf("contract %s is open; only a fulfilled contract can be reviewed", id))
	node.contracts[id.String()].Status, node.contracts[id.String()].ReviewedByCounterparty = "fulfilled", true
	check(k1, review, consensus.ErrAlreadyReviewed, fmt.Sprintf("%s has already reviewed contract %s", k1.PKH, id))
	check(k1, FulfilRequest(e), consensus.ErrContractNotOpen, fmt.Sprintf("contract %s is fulfilled, not open", id))
	create, _ := ContractCreateRequest(k0.PKH, types.Hash{9}, amount.Coin, 10)
	check(k0, create, consensus.ErrAgentNotFound, fmt.Sprintf("counterparty %s is not a registered agent", types.Hash{9}))

	// The node's own errors come back as they are, not as refusals.
	node.err = errors.New("connection refused")
	if err := PrecheckAgent(ctx, node, net, vouch, k0.Pub); err != node.err {
		t.Fatalf("node down: %v", err)
	}
	// A key that is not one.
	node.err, node.calls = nil, 0
	if err := PrecheckAgent(ctx, node, net, vouch, k0.Pub[:31]); err == nil || consensus.IsRuleError(err) || node.calls != 0 {
		t.Fatalf("short key: %v after %d calls", err, node.calls)
	}
}

// The constructors refuse with consensus's words.
func TestAgentRequestWords(t *testing.T) {
	k0, k1 := testKeys(t)
	_, err := ContractCreateRequest(k0.PKH, k1.PKH, consensus.MinEscrow-1, 0)
	if err == nil || err.Error() != "output 0 (the escrow) must pay at least 1000 subunits to the counterparty" {
		t.Fatalf("escrow: %v", err)
	}
	_, err = ReviewRequest(k0.PKH, types.Hash{}, k1.PKH, 300)
	if err == nil || err.Error() != "review score 300 is outside 1 to 10" {
		t.Fatalf("score 300: %v", err)
	}
}

// Package conductview is the Proof of Conduct state as a node's RPC shows it: a
// consensus.ConductView over getagentprofile and getcontract (the node's pending view,
// its mempool included), so that a client (coin-wallet, the faucet) runs consensus's own
// rule functions (consensus.CheckAgentTx) before it sends an agent transaction, and refuses
// with the rule's error, kind and words, instead of wording the rules again.
//
// Imports point one way: conductview uses lib/consensus and lib/rpcapi; lib/consensus
// knows nothing of RPC.
//
// The RPC answers what validity needs: who is an agent and with which score, and every
// field of a contract. It does not answer whether one agent has vouched for another, nor
// how often two agents completed contracts or reviewed each other: Vouched answers false
// (the node's own check refuses a second vouch, already_vouched), and the two counts 0,
// which change only the score a transaction would give, never whether it is valid.
package conductview

import (
	"context"
	"errors"
	"fmt"

	"github.com/cointoolkit/coin/lib/consensus"
	"github.com/cointoolkit/coin/lib/keys"
	"github.com/cointoolkit/coin/lib/params"
	"github.com/cointoolkit/coin/lib/reason"
	"github.com/cointoolkit/coin/lib/rpcapi"
	"github.com/cointoolkit/coin/lib/types"
)

// NodeClient is what the view asks of the node; *rpcapi.Client implements it.
type NodeClient interface {
	GetAgentProfile(ctx context.Context, address string) (*rpcapi.AgentProfile, error)
	GetContract(ctx context.Context, id string) (*rpcapi.Contract, error)
	GetBlockCount(ctx context.Context) (uint64, error)
}

var _ NodeClient = (*rpcapi.Client)(nil)

// View is a consensus.ConductView backed by a node's RPC. Its errors are the node's (or
// the transport's), never rule violations. A View holds the context of its calls: make one
// per operation.
type View struct {
	ctx  context.Context
	node NodeClient
	net  *params.Network
}

var _ consensus.ConductView = (*View)(nil)

// New is the view of node, a node of network net, for calls bounded by ctx.
func New(ctx context.Context, node NodeClient, net *params.Network) *View {
	return &View{ctx: ctx, node: node, net: net}
}

// Check runs consensus.CheckAgentTx on tx against node's pending view, for the next block:
// nil, a consensus.RuleError (the refusal the node would give), or the node's error.
func Check(ctx context.Context, node NodeClient, net *params.Network, tx *types.Transaction) error {
	v := New(ctx, node, net)
	height, err := v.NextHeight()
	if err != nil {
		return err
	}
	return consensus.CheckAgentTx(v, tx, height)
}

// NextHeight is the height of the next block, the one a transaction sent now is checked
// for (the mempool checks for it too).
func (v *View) NextHeight() (uint64, error) {
	n, err := v.node.GetBlockCount(v.ctx)
	if err != nil {
		return 0, err
	}
	if n == ^uint64(0) {
		return 0, fmt.Errorf("conductview: block count %d has no next height", n)
	}
	return n + 1, nil
}

// Agent reads the profile of pkh: false when the node says agent_not_found. Only what the
// profile shows is filled in (score, counters, registration, stake); the sum of review
// scores is left 0 (the profile shows only its average).
func (v *View) Agent(pkh types.Hash) (*consensus.AgentRecord, bool, error) {
	addr, err := keys.EncodeAddress(v.net.HRP, keys.PubKeyHash(pkh))
	if err != nil {
		return nil, false, err
	}
	p, err := v.node.GetAgentProfile(v.ctx, addr)
	if errors.Is(err, reason.AgentNotFound) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, err
	}
	a := &consensus.AgentRecord{Score: p.ConductScore, ContractsCompleted: p.ContractsCompleted, ContractsFailed: p.ContractsFailed,
		VouchesReceived: p.VouchesReceived, VouchesGiven: p.VouchesGiven, ReviewsReceived: p.ReviewsReceived}
	if p.RegisteredHeight != nil {
		a.RegisteredHeight = *p.RegisteredHeight
	}
	if p.StakeTxID != "" {
		id, err := types.ParseHash(p.StakeTxID)
		if err != nil {
			return nil, false, fmt.Errorf("conductview: stake_txid of %s: %w", addr, err)
		}
		a.Stake = types.Outpoint{TxID: id}
	}
	return a, true, nil
}

// Contract reads the contract id: false when the node says contract_not_found.
func (v *View) Contract(id types.Hash) (*consensus.ContractRecord, bool, error) {
	c, err := v.node.GetContract(v.ctx, id.String())
	if errors.Is(err, reason.ContractNotFound) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, err
	}
	r, err := Record(c, v.net)
	if err != nil {
		return nil, false, err
	}
	if r.ID != id {
		return nil, false, fmt.Errorf("conductview: asked for contract %s, the node answered %s", id, r.ID)
	}
	return r, true, nil
}

// Record is the consensus record of a getcontract answer of a node of network net.
func Record(c *rpcapi.Contract, net *params.Network) (*consensus.ContractRecord, error) {
	r := &consensus.ContractRecord{Value: c.Value, CreatedHeight: c.CreatedHeight, ExpiresAt: c.ExpiresAt}
	var err error
	if r.ID, err = types.ParseHash(c.ContractID); err != nil {
		return nil, fmt.Errorf("conductview: contract_id: %w", err)
	}
	if r.Initiator, err = address(c.Initiator, net); err != nil {
		return nil, fmt.Errorf("conductview: contract initiator: %w", err)
	}
	if r.Counterparty, err = address(c.Counterparty, net); err != nil {
		return nil, fmt.Errorf("conductview: contract counterparty: %w", err)
	}
	if r.Status, err = status(c.Status); err != nil {
		return nil, err
	}
	if c.ClosedBy != "" {
		if r.ClosedBy, err = types.ParseHash(c.ClosedBy); err != nil {
			return nil, fmt.Errorf("conductview: closed_by: %w", err)
		}
	}
	if c.ReviewedByInitiator {
		r.Reviewed |= consensus.ReviewedByInitiator
	}
	if c.ReviewedByCounterparty {
		r.Reviewed |= consensus.ReviewedByCounterparty
	}
	return r, nil
}

// Vouched is unknown to the RPC: false (see the package documentation).
func (v *View) Vouched(voucher, target types.Hash) (bool, error) { return false, nil }

// FulfilledBetween is unknown to the RPC: 0 (it changes scores, not validity).
func (v *View) FulfilledBetween(a, b types.Hash) (uint64, error) { return 0, nil }

// ReviewsOf is unknown to the RPC: 0 (it changes scores, not validity).
func (v *View) ReviewsOf(reviewer, subject types.Hash) (uint64, error) { return 0, nil }

func address(s string, net *params.Network) (types.Hash, error) {
	h, err := keys.DecodeAddress(s, net.HRP)
	return types.Hash(h), err
}

// status reads a contract's status as consensus.ContractStatus.String names it.
func status(s string) (consensus.ContractStatus, error) {
	for _, st := range []consensus.ContractStatus{consensus.ContractOpen, consensus.ContractFulfilled, consensus.ContractExpired} {
		if st.String() == s {
			return st, nil
		}
	}
	return 0, fmt.Errorf("conductview: unknown contract status %q", s)
}

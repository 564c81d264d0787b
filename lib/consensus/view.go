package consensus

import "github.com/cointoolkit/coin/lib/types"

// StateView is the chain state that transactions and blocks are checked against. Block
// connection (CheckBlockConnect) and mempool acceptance both check against one, and both
// ask it for input values, so the chain and the mempool can never price an input
// differently. The chain state implements it over its tables; the mempool layers its own
// transactions over the chain's view; CheckBlockConnect layers the block's earlier
// transactions over the view it is given.
//
// Errors from a StateView are storage failures, never rule violations.
type StateView interface {
	UtxoView
	// ClusterOf is the cluster the address pkh belongs to (protocol §8): a new address starts
	// its own, ClusterIDOf(pkh).
	ClusterOf(pkh types.Hash) (types.Hash, error)
	// InputValue is the effective value of the output e when it is spent in a block at
	// height (protocol §8): at most e.Value.
	InputValue(e *UtxoEntry, height uint64) (uint64, error)
	// Conduct is the Proof of Conduct state: agents and contracts (protocol §9).
	Conduct() ConductView
}

// ConductView is the agent and contract state of protocol §9.1.
type ConductView interface {
	// Agent is the record of the agent with address pkh, or false when it is no agent.
	Agent(pkh types.Hash) (*AgentRecord, bool, error)
	// Contract is the contract with the given id (its ContractCreate txid), or false.
	Contract(id types.Hash) (*ContractRecord, bool, error)
	// Vouched reports whether voucher has vouched for target.
	Vouched(voucher, target types.Hash) (bool, error)
	// FulfilledBetween counts the fulfilled contracts between a and b, in either direction
	// (protocol §9.2).
	FulfilledBetween(a, b types.Hash) (uint64, error)
	// ReviewsOf counts the reviews reviewer has given subject (protocol §9.2).
	ReviewsOf(reviewer, subject types.Hash) (uint64, error)
}

// AgentRecord is an agent's on-chain record (protocol §9.1).
type AgentRecord struct {
	Score              uint32
	ContractsCompleted uint64
	ContractsFailed    uint64
	VouchesReceived    uint64
	VouchesGiven       uint64
	ReviewsReceived    uint64
	ReviewScoreSum     uint64
	RegisteredHeight   uint64
	RegisteredTime     uint64
	Stake              types.Outpoint
}

// ContractStatus is the state of a contract.
type ContractStatus uint8

// Contract states.
const (
	ContractOpen ContractStatus = iota
	ContractFulfilled
	ContractExpired
)

// ContractRecord is a contract's on-chain record (protocol §9.1).
type ContractRecord struct {
	ID            types.Hash
	Initiator     types.Hash
	Counterparty  types.Hash
	Value         uint64
	CreatedHeight uint64
	ExpiresAt     uint64
	Status        ContractStatus
	ClosedBy      types.Hash
	Reviewed      uint8 // bit 0: the initiator reviewed, bit 1: the counterparty
}

// NoConduct is the ConductView of a chain without agents: every lookup finds nothing.
type NoConduct struct{}

// Agent finds no agent.
func (NoConduct) Agent(types.Hash) (*AgentRecord, bool, error) { return nil, false, nil }

// Contract finds no contract.
func (NoConduct) Contract(types.Hash) (*ContractRecord, bool, error) { return nil, false, nil }

// Vouched finds no vouch.
func (NoConduct) Vouched(types.Hash, types.Hash) (bool, error) { return false, nil }

// FulfilledBetween finds no contract.
func (NoConduct) FulfilledBetween(types.Hash, types.Hash) (uint64, error) { return 0, nil }

// ReviewsOf finds no review.
func (NoConduct) ReviewsOf(types.Hash, types.Hash) (uint64, error) { return 0, nil }

// ValuedView is a StateView made of a UTXO view and a value model, in which every address
// is its own cluster and there are no agents: the state of a chain before clusters merge and
// agents register. Tools and tests build views from it.
type ValuedView struct {
	Utxos  UtxoView
	Values ValueModel // nil: NominalValue
}

// Utxo looks op up in the UTXO view.
func (v ValuedView) Utxo(op types.Outpoint) (*UtxoEntry, bool, error) { return v.Utxos.Utxo(op) }

// ClusterOf is the address's own cluster.
func (ValuedView) ClusterOf(pkh types.Hash) (types.Hash, error) { return ClusterIDOf(pkh), nil }

// InputValue asks the value model.
func (v ValuedView) InputValue(e *UtxoEntry, height uint64) (uint64, error) {
	if v.Values == nil {
		return e.Value, nil
	}
	return v.Values.EffectiveValue(e, height), nil
}

// Conduct is NoConduct.
func (ValuedView) Conduct() ConductView { return NoConduct{} }

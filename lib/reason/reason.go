package reason

import "errors"

// Reason is the stable snake_case name of one kind of domain error.
type Reason string

// Error makes a Reason an error kind of its own, for the node's kinds that are only Reasons.
func (r Reason) Error() string { return string(r) }

// Reason returns r: a Reason is the Kind of itself.
func (r Reason) Reason() Reason { return r }

// Is reports whether target is a kind with the same reason, so that the node's kinds and the
// kinds of the consensus and mempool rules match one another by reason.
func (r Reason) Is(target error) bool { return Match(r, target) }

// Kind is an error kind that has a reason: consensus.ErrorKind, mempool.ErrorKind and Reason.
type Kind interface {
	error
	Reason() Reason
}

// Of returns the reason of the first error in err's chain that is a Kind, or "" when none
// is.
func Of(err error) Reason {
	var k Kind
	if errors.As(err, &k) {
		return k.Reason()
	}
	return ""
}

// Match reports whether target is a Kind whose reason is r (never for an empty r): the Is
// method of every Kind, and of the errors that carry a reason across the RPC.
func Match(r Reason, target error) bool {
	k, ok := target.(Kind)
	return ok && r != "" && k.Reason() == r
}

// The consensus rules' reasons (consensus.ErrorKind).
const (
	// Transactions, context-free.
	BadTxVersion       Reason = "bad_tx_version"
	TxTooLarge         Reason = "tx_too_large"
	NoInputs           Reason = "no_inputs"
	NoOutputs          Reason = "no_outputs"
	TooManyInputs      Reason = "too_many_inputs"
	TooManyOutputs     Reason = "too_many_outputs"
	ZeroOutput         Reason = "zero_output"
	ValueOverflow      Reason = "value_overflow"
	DuplicateInput     Reason = "duplicate_input"
	BadCoinbaseInputs  Reason = "bad_coinbase_inputs"
	BadCoinbasePayload Reason = "bad_coinbase_payload"
	BadTransferPayload Reason = "bad_transfer_payload"
	UnexpectedCoinbase Reason = "unexpected_coinbase"

	// Transactions against the chain.
	MissingInputs     Reason = "missing_inputs"
	ImmatureCoinbase  Reason = "immature_coinbase"
	PubKeyMismatch    Reason = "pubkey_mismatch"
	BadSignature      Reason = "bad_signature"
	InsufficientFunds Reason = "insufficient_funds"
	NonFinal          Reason = "non_final"
	LockedOutput      Reason = "locked_output"

	// Blocks, context-free.
	BadBlockVersion    Reason = "bad_block_version"
	BlockTooLarge      Reason = "block_too_large"
	NoTransactions     Reason = "no_transactions"
	FirstTxNotCoinbase Reason = "first_tx_not_coinbase"
	MultipleCoinbases  Reason = "multiple_coinbases"
	BadMerkleRoot      Reason = "bad_merkle_root"
	DuplicateTx        Reason = "duplicate_tx"
	BadTarget          Reason = "bad_target"
	BadProofOfWork     Reason = "bad_proof_of_work"

	// Blocks in context.
	BadCoinbaseHeight Reason = "bad_coinbase_height"
	BadCoinbaseValue  Reason = "bad_coinbase_value"
	DoubleSpend       Reason = "double_spend"
	WrongDifficulty   Reason = "wrong_difficulty"
	TimeTooOld        Reason = "time_too_old"
	TimeTooNew        Reason = "time_too_new"
	UnknownParent     Reason = "unknown_parent"
	InvalidAncestor   Reason = "invalid_ancestor"
	DuplicateBlock    Reason = "duplicate_block"
	KnownInvalid      Reason = "known_invalid"
)

// The Proof of Conduct rules' reasons (consensus.ErrorKind, protocol §9 and 9.4). The faucet's
// agent API sends the same names as its error codes.
const (
	// Context-free.
	BadAgentPayload Reason = "bad_agent_payload"
	ForeignInput    Reason = "foreign_input"
	InvalidScore    Reason = "invalid_score"
	InvalidExpiry   Reason = "invalid_expiry"
	SelfTarget      Reason = "self_target"
	BadStake        Reason = "bad_stake"
	BadEscrow       Reason = "bad_escrow"

	// Against the conduct state.
	NotAnAgent           Reason = "not_an_agent"
	AlreadyRegistered    Reason = "already_registered"
	ScoreTooLow          Reason = "score_too_low"
	AgentNotFound        Reason = "agent_not_found"
	AlreadyVouched       Reason = "already_vouched"
	ContractNotFound     Reason = "contract_not_found"
	ContractNotOpen      Reason = "contract_not_open"
	ContractExpired      Reason = "contract_expired"
	ContractNotExpired   Reason = "contract_not_expired"
	ContractNotFulfilled Reason = "contract_not_fulfilled"
	NotCounterparty      Reason = "not_counterparty"
	NotInitiator         Reason = "not_initiator"
	EscrowNotSpent       Reason = "escrow_not_spent"
	RefundOutputs        Reason = "refund_outputs"
	NotParticipant       Reason = "not_participant"
	AlreadyReviewed      Reason = "already_reviewed"
)

// The mempool policy's reasons (mempool.ErrorKind).
const (
	AlreadyInMempool  Reason = "already_in_mempool"
	AlreadyInChain    Reason = "already_in_chain"
	Conflict          Reason = "conflict"
	FeeTooLow         Reason = "fee_too_low"
	Dust              Reason = "dust"
	MempoolFull       Reason = "mempool_full"
	CoinbaseInMempool Reason = "coinbase_in_mempool"
)

// The node's own kinds: each Reason is the kind.
const (
	// HeightOutOfRange: no main-chain block at that height.
	HeightOutOfRange Reason = "height_out_of_range"
	// BlockNotFound: no valid block with that hash.
	BlockNotFound Reason = "block_not_found"
	// TxNotFound: the transaction is neither in the mempool nor in the main chain.
	TxNotFound Reason = "tx_not_found"
	// DecodeFailed: the hex decoded to no transaction or block.
	DecodeFailed Reason = "decode_failed"
	// InvalidAddress: not an address of the node's network.
	InvalidAddress Reason = "invalid_address"
	// Syncing: the node is catching up with its peers and refuses block templates.
	Syncing Reason = "syncing"
	// ClusterNotFound: no cluster has that id at the tip.
	ClusterNotFound Reason = "cluster_not_found"
	// StaleTemplate: a submitted block does not build on the tip.
	StaleTemplate Reason = "stale_template"
	// RegtestOnly: the method is served on regtest only.
	RegtestOnly Reason = "regtest_only"
	// UnknownCommand: help about a method that does not exist.
	UnknownCommand Reason = "unknown_command"
	// SolveFailed: generatetoaddress found no nonce for a block.
	SolveFailed Reason = "solve_failed"
	// TooLongChain: the transaction's chain of unconfirmed ancestors is longer than the
	// node relays. This node's mempool sets no such limit and never sends it; clients that
	// build long chains (the faucet) keep clear of the refused outputs when a node does.
	TooLongChain Reason = "too_long_mempool_chain"
	// P2PDisabled: a network method on a node without a P2P layer.
	P2PDisabled Reason = "p2p_disabled"
	// NodeNotConnected: disconnectnode named no connected peer.
	NodeNotConnected Reason = "node_not_connected"
	// NodeAlreadyAdded: addnode add for a node on the added list already (Core's code -23).
	NodeAlreadyAdded Reason = "node_already_added"
	// NodeNotAdded: addnode remove or getaddednodeinfo for a node not on the added list
	// (Core's code -24).
	NodeNotAdded Reason = "node_not_added"
	// InvalidSubnet: setban's subnet is neither an address nor a CIDR range.
	InvalidSubnet Reason = "invalid_subnet"
	// AlreadyBanned: setban add for a subnet banned already.
	AlreadyBanned Reason = "already_banned"
	// NotBanned: setban remove for a subnet that is not banned.
	NotBanned Reason = "not_banned"
	// ResultTooLarge: the whole answer would be larger than one call sends (getutxosbyaddress
	// without paging for an address of more than rpcapi.UtxoListMax outputs); the message
	// names the calls that get it in parts.
	ResultTooLarge Reason = "result_too_large"
)

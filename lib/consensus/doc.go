// Package consensus holds the coin's validity rules as pure functions: transaction and block
// sanity, header context (difficulty, timestamps), input checks against a UTXO view, coinbase
// maturity, lock time, signatures, subsidy and the coinbase limit.
//
// # Overview
//
// Each rule lives in exactly one function here and fails with its own ErrorKind. The chain
// state (lib/chainstate) and the mempool call these functions; they never touch storage
// themselves: what they need from the chain comes in through one StateView (view.go) and plain
// values (height, median time past, expected target).
//
// A StateView answers every question a rule may ask of the chain state: the unspent output
// at an outpoint, the cluster an address belongs to, what an input is worth at a height, and
// the agents and contracts of Proof of Conduct. Block connection and mempool acceptance ask
// the same questions of the same kind of view, so they cannot disagree. Concentration decay
// is decay.go (the arithmetic) and clusters.go (the merge rule and DecayedValue); the chain
// state values inputs with them. Proof of Conduct is conduct.go (the records, the score
// arithmetic and LockedSpender, who may spend a stake or an escrow) and conduct_rules.go,
// one checker per agent kind: CheckAgentKind runs its context-free part, CheckConduct its
// part against the agent and contract records (returning the records a transaction
// changes), and CheckAgentTx both, for a client's precheck against a view of the node's RPC
// (lib/conductview), so the wallet and the faucet refuse with the rule's own error.
//
// All arithmetic on amounts is uint64 with overflow checks; there is no floating point.
//
// # Errors
//
// Every rule violation is a RuleError whose Err is an ErrorKind, so callers test it with
// errors.Is(err, consensus.ErrBadProofOfWork) and tell it from a storage failure with
// errors.As(err, &consensus.RuleError{}). The RuleError's text is the message users see (for
// example through the node's RPC: "invalid proof of work: ..."). Each kind is its stable
// reason: ErrBadProofOfWork is ErrorKind(reason.BadProofOfWork), "bad_proof_of_work", which
// the node's RPC sends as error.data.reason; a kind matches the lib/reason value of its
// reason with errors.Is, as it matches the same error received by an RPC client (protocol
// §11).
package consensus

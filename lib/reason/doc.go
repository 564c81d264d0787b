// Package reason names the kinds of domain error the node reports: the stable snake_case
// string sent as error.data.reason in every domain error of the node's JSON-RPC (protocol §11),
// so that clients branch on the kind of a refusal and never on its message text.
//
// # Overview
//
// A Reason is one such name. Each rule has one name: a consensus rule's kind
// (consensus.ErrorKind) and a mempool policy rule's kind (mempool.ErrorKind) is its Reason,
// declared as ErrBadProofOfWork = ErrorKind(reason.BadProofOfWork), with no table between
// kind and reason, and implements Kind; the node's own kinds (a block that is not found, a
// stale template, a syncing node, ...) are Reasons themselves. Every reason is declared once
// here. reason_test.go fails when a rule kind is not made of a reason, when its Go name is
// not Err followed by the reason's, when two kinds share a reason, or when a reason is no
// rule's kind and not listed there as one of the node's own; its table pins the string of
// every reason, which clients see.
//
// The package sits below everything that uses it and imports nothing of the module, for the
// same reason as lib/policy: the node produces the reasons (lib/rpcserver), its clients read
// them (lib/rpcapi, the faucet, the wallet, the miner, coin-cli), and a client must not
// import the mempool or the chain to name the kind of an error it got over the network.
// Between the two sides, errors.Is does the matching:
//
//   - on the node, errors.Is(err, reason.MissingInputs) holds for a consensus.RuleError of
//     kind consensus.ErrMissingInputs, because the kinds match by reason (Kind's Is);
//   - on a client, lib/rpcapi turns a reply's error.data.reason into an error for which
//     errors.Is(err, consensus.ErrMissingInputs), errors.Is(err, mempool.ErrAlreadyInChain)
//     and errors.Is(err, reason.MissingInputs) all hold, while errors.As still finds the
//     *jsonrpc.Error with the code and message the node sent.
//
// A reason, once released, never changes: it is part of the RPC interface. New kinds get new
// reasons.
//
// # Errors
//
// A Reason is itself an error value (its Error is the reason), so the node's own kinds are
// used as errors.Is targets; Of finds the reason of an error chain.
package reason

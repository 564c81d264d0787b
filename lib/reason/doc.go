// Package reason names the kinds of domain error the node reports: the stable snake_case
// string sent as error.data.reason in every domain error of the node's JSON-RPC (protocol §11),
// so that clients branch on the kind of a refusal and never on its message text.
//
// # Overview
//
// A Reason is one such name. The consensus rules (consensus.ErrorKind) and the mempool's
// policy rules (mempool.ErrorKind) each map their kinds to a Reason in one table next to
// their declarations, and implement Kind; the node's own kinds (a block that is not found, a
// stale template, a syncing node, ...) are Reasons themselves. Every reason is declared once
// here, and one table test (reason_test.go) lists every kind of all three sets with its
// reason: it fails when a kind has none or two kinds share one.
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

// Package rpcapi is the node's JSON-RPC interface as data: every method with its typed
// parameters and help text (Methods), the result types with the spec's field names, and a
// typed Client over lib/jsonrpc.
//
// # Overview
//
// The node registers its handlers by these names and specs, coin-cli builds one subcommand per
// entry of Methods (converting arguments by each parameter's Type, like bitcoin-cli's
// vRPCConvertParams), and the miner, wallet and faucet call the node through Client. One table
// is the single source of names, parameter types and help, and a test checks that the server
// implements exactly these methods.
//
// # Errors
//
// Every domain error of the node (code -1) carries error.data = {"reason": "..."} (ErrorData,
// protocol §11), the stable name of its kind from lib/reason; the node builds these errors with
// DomainError and NewDomainError. Client methods (and Call, CallRaw) turn such an answer into
// a *NodeError: errors.Is matches it against the kinds by reason, so errors.Is(err,
// consensus.ErrMissingInputs), errors.Is(err, mempool.ErrAlreadyInChain) and errors.Is(err,
// reason.StaleTemplate) hold as they would on the node, and errors.As still gives the
// *jsonrpc.Error with the code and message as sent. Answers without a reason (protocol
// errors, an older node) come back as the *jsonrpc.Error itself; transport failures are
// returned wrapped (see jsonrpc.IsConnRefused).
//
// # Notifications
//
// stream.go is the client side of the node's notification stream (GET StreamPath on the RPC
// listener): the Event lines and Client.Follow, which follows it across reconnections,
// resuming from the sequence after the last event delivered and reporting an EventGap when
// some were missed.
//
// The package names kinds through lib/reason and imports neither lib/consensus nor
// lib/mempool: a client of the node must not depend on the node's mempool to tell one
// refusal from another. The kinds of those packages match a *NodeError all the same,
// because errors.Is asks the *NodeError, which compares reasons (see lib/reason).
package rpcapi

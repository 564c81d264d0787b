// Package rpcserver implements the node's JSON-RPC methods (lib/rpcapi.Methods) over what
// the node provides: the small interfaces of interface.go (Chain, Mempool, Backend), which
// lib/node satisfies with its chain state, mempool and itself.
//
// # Overview
//
// Register installs one handler per method of the catalogue on a lib/jsonrpc Server; a test
// checks that the two agree. Handlers are split by area: chain.go (blocks, transactions,
// statistics), address.go (an address's outputs, paged by getutxosbyaddress, summed by
// getaddressbalance), mempool.go, mining.go (templates, submission, generatetoaddress),
// util.go (addresses, help, stop), and Bitcoin Core's staples: staples.go (getbestblockhash,
// getdifficulty, getmininginfo, getnetworkhashps, getchaintips, getblockstats, uptime),
// mempool_staples.go (getmempoolentry, testmempoolaccept, decoderawtransaction,
// estimatesmartfee) and wait.go (waitfornewblock, waitforblockheight).
//
// notify.go is the node's notification stream (GET rpcapi.StreamPath on the listener, routed
// by Mux): the Notifier numbers the chain's and the mempool's events, keeps a backlog for
// clients that resume, and writes them as JSON lines to at most MaxStreams followers, dropping
// one that falls Buffer events behind.
//
// In front of the handlers, http.go and access.go are the node's RPC listener (Listen,
// HTTPConfig) and who may call it (protocol §11, docs/security.md): 403 for a Content-Type other
// than application/json, a foreign Origin or a rebound Host; HTTP Basic credentials
// (lib/rpcauth) required on a non-loopback address; connections capped. Handlers read the Chain and the Mempool and never write to the
// chain directly: blocks and transactions go through Backend.SubmitBlock and
// Backend.SubmitTransaction, which also update the mempool and relay to peers.
//
// # Errors
//
// Protocol errors come from lib/jsonrpc (-32700, -32600, -32601, -32602). Domain errors use
// code -1 with a precise message: "block not found", "transaction not found", "invalid
// address", "missing inputs", "insufficient fee", "conflicts with a mempool transaction",
// "stale block template", "invalid proof of work", ... Every domain error also carries
// error.data.reason, the stable name of its kind (protocol §11): a refused block or transaction
// gets the reason of its consensus or mempool rule (rejection, through reason.Of), the
// handlers' own refusals one of lib/reason's node kinds (rpcapi.DomainError). A storage
// failure is -32603 without details.
package rpcserver

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
// Client methods return *jsonrpc.Error for errors the node reports (code and message) and
// wrapped transport errors otherwise (see jsonrpc.IsConnRefused).
package rpcapi

// Package devnet runs a whole local COIN network from one command: regtest nodes, a miner
// that finds a block at a steady interval, and a faucet (page, MCP and event stream) whose
// wallet is funded and matured before it opens.
//
// # Overview
//
// Run starts the toolkit's own executables (coin-node, coin-miner, coin-wallet,
// coin-faucetd), found in one directory, as child processes, each with its data under one
// devnet directory, and talks to them only as a user would: through the node's JSON-RPC port
// and the faucet's HTTP port. The first start creates the faucet's and the example wallet's
// keys (files 0600 in the 0700 devnet directory) and mines their first coins with
// generatetoaddress; a later start finds them in state.json and resumes the same chain.
// The miner pays the faucet, so the faucet never runs dry. When the context ends (Ctrl-C),
// every process is stopped with SIGINT, then SIGKILL after a grace period; the data stays.
//
// Ports are fixed offsets from one base (docs/devnet.md), so the URLs printed on the screen
// are the same at every start and node 0 answers on regtest's default RPC port.
//
// # Errors
//
// A port that is taken is an error of kind ErrPortBusy naming the port and what it was for; a
// child that exits by itself stops the whole network with ErrChildExited naming it and the
// last lines of its log.
package devnet

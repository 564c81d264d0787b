// Package api holds the bodies of the faucet's HTTP API (endpoints 1 to 6 of
// docs/faucet.md#api, 7 to 13 and the contract refund and lookup of protocol §9.4): what coin-faucetd
// (lib/faucet) writes and reads, and what a client such as coin-faucet sends and decodes; and
// the faucet's operations as Go (service.go): the [Service] interface that lib/faucet's core
// implements and its doors (the HTTP API, lib/faucet/mcp, lib/faucet/web) call, and the
// [Error] with its [Kind] that every operation refuses with.
//
// # Overview
//
// The types are plain JSON structs with the spec's field names, in the order the server
// writes them; request numbers are [Number], a JSON number kept as its text (a string such as
// "1" is refused). The package imports only the standard library, so a client of the faucet depends on
// these types and not on the server's dependencies (the wallet, the node client, LevelDB);
// lib/faucet aliases them under their old names (faucet.ClaimResult, ...).
//
// # Errors
//
// Every error response has the body ErrorBody: {"error": {"code", "message"}}. An
// operation's refusal is an *[Error]; [Decode] refuses a malformed request with one.
package api

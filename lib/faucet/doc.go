// Package faucet is the core of coin-faucetd, the faucet and agent specification
// (docs/faucet.md; endpoints 1 to 6: wallet helpers, faucet claims, status, balances,
// transfers; endpoints 7 to 13: the Proof of Conduct agent operations), and its HTTP door.
//
// [Service] is the core: every operation as a Go method (api.Service) over the payout engine
// and claim store (lib/faucet/payout) and the node's RPC client ([NodeClient]), with the
// per-address, per-client and budget limits; it knows nothing of HTTP. Its doors translate
// their requests into Service calls and its errors into their own form, and none calls
// another: [Server], the HTTP API (httpapi.go); lib/faucet/mcp, the same operations as MCP
// tools at /mcp; lib/faucet/web, the Web pages. /.well-known/ discovery files point agents to
// the API and /mcp (docs/agents.md). lib/faucet/daemon runs it all as coin-faucetd.
//
// # Overview
//
// [Server] routes requests with net/http's ServeMux ("POST /api/faucet"), from its route
// table ([Route]). Every response is JSON; errors are {"error": {"code", "message"}}
// with a 4xx status for a bad request (malformed JSON, address, mnemonic or amount: 400;
// body over the limit: 413; unknown path: 404; wrong method: 405 with Allow), 429 with
// Retry-After for rate limits, and 5xx for the faucet's or the node's failures. Bodies are
// bounded; every endpoint is rate limited per client, those that take a mnemonic more; mnemonics are
// never logged, stored or echoed in errors; the access log has one record per request with
// the method, path (no query string), status, size and duration, never a body. The OpenAPI
// 3.1 document ([OpenAPI], openapi.json) is served at GET /openapi.json. The request and
// response bodies are declared in the subpackage lib/faucet/api, which imports nothing but
// the standard library, so that clients (coin-faucet) decode the same types without depending on
// the server's wallet, node client and LevelDB; this package keeps aliases of them
// ([ClaimResult], ...).
//
// Logging is log/slog (lib/logging's conventions): the engine and the server log under the
// subsystem "faucet", the access log under "http", so coin-faucetd's --log-level sets each.
//
// The agent endpoints (agents.go; protocol §9 and 9.4) act for the wallet whose mnemonic is in
// the body, like /api/wallet/send (account 0, index 0; the same per-IP limits; one operation
// at a time per address). Register, vouch, contract create, fulfil and refund (an extension,
// with GET /api/agent/contract) and review are built by lib/wallet's agent requests from the
// wallet's own coins in the node's pending view (unconfirmed change included, mempool-spent
// and locked outputs left out), signed and sent with sendrawtransaction, so dependent
// operations (register, create a contract, fulfil it, review) follow one another without
// waiting for a block. Before building, the handler reads the pending view (getagentprofile,
// getcontract, the height) to refuse with a message in addresses and numbers that says what
// to do; the node's answer is the authority. A refusal is 400 {"error": {"code",
// "message"}} whose code is the rule's reason (not_an_agent, score_too_low,
// not_counterparty, contract_not_expired, invalid_score, ...: docs/rpc-errors.md), or
// insufficient_balance when the wallet cannot pay, and nothing is broadcast. Profiles (404
// agent_not_found for no agent) and the directory (offset default 0, limit 1 to 100, default
// 20) are the node's pending view; new_conduct_score is read from it right after the node
// accepted the review.
//
// Each of those operations, and /api/wallet/send, takes public_key in place of mnemonic
// (unsigned.go, protocol §9.5): the same checks and the same transaction, answered
// unsigned instead of broadcast; POST /api/tx/submit (txsubmit.go) puts the client's key and
// signature in every input, checks them and the inputs' owner, broadcasts, and answers what
// the mnemonic form of the transaction's kind answers.
//
// The transactions the handlers build for a caller (the agent operations, /api/wallet/send
// and their MCP tools) get the claims' promise too (agentjournal.go): each is journaled,
// synced, in the claim database before it is sent, and [Service.RunTxJournal] sends it again
// whenever the node lacks it until it is payout.FinalConfirmations deep or definitively refused. The
// node's already_in_mempool for that very transaction (another faucet built the identical
// one) answers the operation's result. Event streams are bounded per client and in all
// (streams.go), keeping connections for ordinary requests.
//
// Beyond the spec's per-address limit, the server limits each client (the socket's peer,
// or the address the last Config.TrustedProxies X-Forwarded-For hops name; counted per
// IPv4 address or IPv6 /64): a token bucket on every request (Config.RequestRate), a
// stricter one on the endpoints that take a mnemonic (Config.IPRate), and at most
// Config.ClaimsPerClient claims per hour; and the whole faucet to Config.BudgetPerHour
// claims per hour. Refusals are 429 with Retry-After and the code of the limit:
// address_rate_limited, client_rate_limited, budget_exhausted. The per-client and budget
// counts are kept in memory and counted again at start from the claims of the last hour,
// which the claim store lists by time with their client networks (the per-address limit is
// on disk).
//
// # Errors
//
// Every operation of the [Service] returns its result or an *[Error] (api.Error): a kind
// (invalid, not found, limited, upstream, unavailable, ...) and the API's code and message.
// toAPIError (respond.go) maps the errors of the parts below by their kinds, never by their
// text: lib/faucet/payout's (payout.ErrRateLimited, matched by *payout.RateLimitError,
// payout.ErrFaucetEmpty, payout.ErrBusy, payout.ErrNodeUnavailable, payout.ErrStopped,
// *payout.RejectedError, which unwraps to the node's error), the wallet's and the node's RPC
// errors (lib/reason). A door maps the kind to its own form: the HTTP API to a status (see
// openapi.json), the MCP door to a tool error with the same status, the Web door to an error
// page.
package faucet

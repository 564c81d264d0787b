// Package faucet is the core of coin-faucetd, the faucet and agent specification
// (docs/faucet.md; endpoints 1 to 6: wallet helpers, faucet claims, status, balances,
// transfers; endpoints 7 to 13: the Proof of Conduct agent operations).
//
// [Service] is the core: every operation as a Go method (api.Service) over the payout engine
// and claim store (lib/faucet/payout) and the node's RPC client ([NodeClient]), with the
// per-address, per-client and budget limits; it knows nothing of HTTP. Its doors translate
// their requests into Service calls and its errors into their own form, and none calls
// another: lib/faucet/httpapi, the HTTP API (with /.well-known/ discovery files and the
// event streams); lib/faucet/mcp, the same operations as MCP tools at /mcp;
// lib/faucet/web, the Web pages. lib/faucet/daemon runs it all as coin-faucetd. The request
// and response types are declared in lib/faucet/api, which imports nothing of the server
// (its wallet, node client and LevelDB), so that clients (coin-faucet) decode the same
// types; this package keeps aliases of them ([ClaimResult], ...).
//
// Logging is log/slog (lib/logging's conventions): the service logs under the subsystem
// "faucet".
//
// The agent operations (agents.go; protocol §9 and 9.4) act for the wallet whose mnemonic
// is in the request, like Send (account 0, index 0; the same per-client limits; one
// operation at a time per address). Register, vouch, contract create, fulfil and refund
// (an extension, with Contract) and review are built by lib/wallet's agent requests from
// the wallet's own coins in the node's pending view (unconfirmed change included,
// mempool-spent and locked outputs left out), signed and sent with sendrawtransaction, so
// dependent operations (register, create a contract, fulfil it, review) follow one another
// without waiting for a block. Before selecting coins, an operation runs consensus's own
// rules of its kind against the node's pending view (wallet.PrecheckAgent: the rule
// functions of lib/consensus over lib/conductview), so no rule is written again here; the
// node's answer is the authority. A refusal is an invalid-kind *Error whose code is the
// rule's reason (not_an_agent, score_too_low, not_counterparty, contract_not_expired,
// invalid_score, ...: docs/rpc-errors.md) and whose message is the rule's words, with
// addresses for the pubkey hashes the rule names; or insufficient_balance when the wallet
// cannot pay; nothing is broadcast. The doors append the advice of a reason (httpapi.Hint).
// Profiles (agent_not_found for no agent) and the directory (offset default 0, limit 1 to
// 100, default 20) are the node's pending view; new_conduct_score is read from it right
// after the node accepted the review.
//
// Each of those operations, and Send, takes public_key in place of mnemonic (unsigned.go,
// protocol §9.5): the same checks and the same transaction, answered unsigned instead of
// broadcast; TxSubmit (txsubmit.go) puts the client's key and signature in every input,
// checks them, the inputs' owner and the rules of a contract's fulfilment or refund,
// broadcasts, and answers what the mnemonic form of the transaction's kind answers.
//
// The transactions the service builds for a caller (the agent operations and Send) get the
// claims' promise too (agentjournal.go): each is journaled, synced, in the claim database
// before it is sent, and [Service.RunTxJournal] sends it again whenever the node lacks it
// until it is payout.FinalConfirmations deep or definitively refused. The node's
// already_in_mempool for that very transaction (another faucet built the identical one)
// answers the operation's result.
//
// Beyond the spec's per-address limit, the service limits each client (api.Caller: the
// client network a door names, IPv4 address or IPv6 /64): a token bucket on every request
// (Config.RequestRate, [Service.Admit]), a stricter one on the operations that take a
// mnemonic (Config.IPRate), and at most Config.ClaimsPerClient claims per hour; and the
// whole faucet to Config.BudgetPerHour claims per hour. Refusals are of the limited kind
// with a retry delay and the code of the limit: address_rate_limited, client_rate_limited,
// budget_exhausted. The per-client and budget counts are kept in memory and counted again
// at start from the claims of the last hour, which the claim store lists by time with their
// client networks (the per-address limit is on disk).
//
// # Errors
//
// Every operation of the [Service] returns its result or an *[Error] (api.Error): a kind
// (invalid, not found, limited, upstream, unavailable, ...) and the API's code and message.
// [Service.AsError] (respond.go) maps the errors of the parts below by their kinds, never by
// their text: lib/faucet/payout's (payout.ErrRateLimited, matched by
// *payout.RateLimitError, payout.ErrFaucetEmpty, payout.ErrBusy, payout.ErrNodeUnavailable,
// payout.ErrStopped, *payout.RejectedError, which unwraps to the node's error), the
// wallet's and the node's RPC errors (lib/reason). A door maps the kind to its own form:
// the HTTP API to a status (see lib/faucet/httpapi/openapi.json), the MCP door to a tool
// error with the same status, the Web door to an error page.
package faucet

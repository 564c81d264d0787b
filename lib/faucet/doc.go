// Package faucet is the behaviour of coin-faucetd: the HTTP/JSON API of the faucet and agent
// specification (docs/faucet.md; endpoints 1 to 6: wallet helpers, faucet claims, status,
// balances, transfers; endpoints 7 to 13: the Proof of Conduct agent operations), the claim
// store and payout journal that pay a claim answered 200 exactly once, the per-address,
// per-client and budget limits, and the engine that spends the faucet's outputs. The same
// operations are MCP tools at /mcp (subpackage mcp, which serves each tool through this
// package's route handlers), and /.well-known/ discovery files point agents to both
// (docs/agents.md).
//
// # Overview
//
// [Server] routes requests through a route table ([Route]). Every response is JSON; errors are {"error": {"code", "message"}}
// with a 4xx status for a bad request (malformed JSON, address, mnemonic or amount: 400;
// body over the limit: 413; unknown path: 404; wrong method: 405 with Allow), 429 with
// Retry-After for rate limits, and 5xx for the faucet's or the node's failures. Bodies are
// bounded; every endpoint is rate limited per client, those that take a mnemonic more; mnemonics are
// never logged, stored or echoed in errors; the access log has one record per request with
// the method, path (no query string), status, size and duration, never a body. The OpenAPI
// 3.1 document ([OpenAPI], openapi.json) is served at GET /openapi.json. The request and
// response bodies are declared in the subpackage lib/faucet/api, which imports nothing but
// encoding/json, so that clients (coin-faucet) decode the same types without depending on
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
// [ClaimStore] keeps the last claim of each address in LevelDB, and is the engine's
// [Journal] of payouts (protocol §14). A claim is reserved (refused with a *payout.RateLimitError while
// the address is within its cooldown or has a claim in flight); then the signed transaction
// that pays it is journaled ([Payout]) in the same synced write as the claim's record,
// before it is broadcast, and a claim is answered 200 only after that write. The journal
// keeps a payout until it is mined payout.FinalConfirmations deep: on start, after every block,
// when the node answers again after it did not, and every ResendInterval, the engine asks
// the node about each journaled payout, oldest first, and sends again those it does not
// have. One that can never be mined because another mined transaction spent an input (or
// its parent payout is such) is provably conflicted: a new transaction pays its claims, and
// the write that journals it also removes the old one and records it as conflicted, so a
// claim is paid again at most once per conflict and never twice. New payouts never spend
// the inputs of journaled ones, so the faucet makes no conflict itself. A payout the node
// refuses at its first broadcast is forgotten with its claims' records (they were never
// answered 200); a lost answer keeps it journaled and answers 200. So a claim answered
// 200 is paid exactly once whatever crashes, and the design does not depend on the node
// keeping its mempool.
//
// The transactions the handlers build for a caller (the agent operations, /api/wallet/send
// and their MCP tools) get the claims' promise too (agentjournal.go): each is journaled,
// synced, in the claim database before it is sent, and [Server.RunTxJournal] sends it again
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
// [Engine] owns the faucet's outputs in one goroutine, so no two transactions spend the same
// output. It pays claims by group commit: whenever it is free it takes every claim that is
// waiting (up to MaxBatch) and pays them all with one transaction that spends its largest
// outputs, often the unconfirmed change of its previous transaction. One claim alone is
// paid at once by its own transaction; many concurrent claims share a transaction. So the
// faucet's throughput is bounded by the node's round trip per transaction rather than per
// claim; a batched claim costs a block 41 bytes (one output) instead of about 217 (a
// transaction of its own), so a block carries about five times more claims; and the chain
// of unconfirmed change grows per round, not per claim. No claim waits for a
// block. The faucet's coins usually decay (protocol §8: its cluster holds more than 0.1% of
// the supply): the engine counts each output it spends for its effective value at the next
// block, decayed DecayMargin blocks more at its cluster's rate (getclusterinfo), so a payout
// still covers its outputs and the relay fee if it waits that long in the mempool, which
// drops it otherwise; its Status (/api/status's faucet_balance) is the effective value at
// the next block, what it can pay out. /api/wallet/balance gives an address's nominal
// balance and, as spendable, its effective value. The engine tracks the depth of its unconfirmed chains, avoids outputs at
// MaxChainDepth, follows new blocks to forget confirmed transactions and re-reads the
// faucet's outputs from the node after every block and whenever the node's answer shows
// its view was stale (for example after a node restart emptied the mempool). It reads the
// node's answers by their kind (error.data.reason, lib/reason), never by their text: missing
// or spent inputs mean a stale view; a transaction the node already has, in its mempool or
// in the chain, pays its claims.
//
// # Errors
//
// [payout.ErrRateLimited] (matched by *payout.RateLimitError), [payout.ErrFaucetEmpty], [payout.ErrBusy],
// [payout.ErrNodeUnavailable], [payout.ErrStopped], *payout.RejectedError (the node refused the faucet's
// transaction; it unwraps to the node's error, so errors.Is matches the refusal's kind, such
// as reason.FeeTooLow) and [ErrDataDirInUse]. The Server maps them to HTTP statuses and
// codes (see openapi.json).
package faucet

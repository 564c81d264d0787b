// Package payout pays the faucet's claims exactly once: the engine that spends the faucet's
// outputs, the claim store, and the journal of payouts (protocol §14). lib/faucet's Service
// calls it for POST /api/faucet (and its MCP tool and the claim form).
//
// # Overview
//
// [ClaimStore] keeps the last claim of each address in LevelDB, and is the engine's
// [Journal] of payouts (protocol §14). A claim is reserved (refused with a *RateLimitError while
// the address is within its cooldown or has a claim in flight); then the signed transaction
// that pays it is journaled ([Payout]) in the same synced write as the claim's record,
// before it is broadcast, and a claim is answered 200 only after that write. The journal
// keeps a payout until it is mined FinalConfirmations deep: on start, after every block,
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
// [ErrRateLimited] (matched by *RateLimitError), [ErrFaucetEmpty], [ErrBusy],
// [ErrNodeUnavailable], [ErrStopped], *RejectedError (the node refused the faucet's
// transaction; it unwraps to the node's error, so errors.Is matches the refusal's kind, such
// as reason.FeeTooLow) and [ErrDataDirInUse]. lib/faucet maps them to the API's
// error kinds and codes.
package payout

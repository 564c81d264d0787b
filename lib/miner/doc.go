// Package miner is the CPU miner behind coin-miner: it turns a node's block template into a
// block, shares the nonce space between hashing threads, watches the node for a new tip or a
// changed mempool, rolls the timestamp, submits solutions and keeps statistics.
//
// # Overview
//
// NewWork checks a getblocktemplate result and builds the block it describes:
// transactions[0] is the coinbase (it must pay the mining address), the other entries' data
// are hex bincode transactions, every txid must match its data and the merkle root computed
// from the txids must equal the template's merkle_root. A template the miner cannot
// reproduce exactly is refused, so it never hashes a header the node would reject.
//
// A Miner runs one controller goroutine and Threads hashing goroutines. The controller
// publishes a job (a Work with a timestamp); every hashing goroutine takes chunks of
// ChunkSize nonces from the job's shared counter, so the threads cover the 64-bit nonce space
// without overlap and without coordination per hash. The kernel is lib/sha256d's Scanner
// (SHA-NI, several interleaved streams, midstate reuse).
//
// The controller polls the node: getblockcount and getblockhash every TipPoll (250 ms) to
// notice a new tip, getmempoolinfo every MempoolPoll (2 s) to notice a changed mempool, and
// it moves to a fresh template when either changes. Every TimeRoll (30 s), and whenever the
// nonce space of a job is used up, the job's timestamp moves to the current time (at least
// one second on), which restarts the nonce space.
//
// All templates built on the same parent form a round; the first thread that finds a
// solution in a round claims it (compare-and-swap), so one round submits at most one block,
// however many threads find a solution at the same moment. A round whose parent is no longer
// the tip is marked stale and its solutions are dropped, never submitted. Each solution is
// checked again with crypto/sha256 before it is sent.
//
// An unreachable node (or one that cannot give a template yet, for example while it syncs)
// is retried with exponential backoff up to MaxBackoff, with a warning per attempt; the
// miner never exits because of it.
//
// Assembling a block from a template for the node and for test chains is lib/types'
// (NewBlock, SolveBlock), so that packages below the miner can build blocks too.
//
// Benchmark runs the same hashing goroutines on a fixed header without a node, and
// OpenSSLReference measures the one-stream SHA-256 speed of `openssl speed` for comparison.
//
// # Errors
//
// ParseAddress returns keys.ErrBadAddress (and its precise sentinels) for a malformed
// address and ErrUnknownHRP for an address of no known network. NewWork returns an error
// wrapping ErrBadTemplate when a template is inconsistent. Run returns an error only for
// problems retrying cannot fix: ErrWrongNetwork when the node runs a network the address
// does not belong to, and ErrNodeRefused when the node rejects the mining address or does
// not know getblocktemplate.
package miner

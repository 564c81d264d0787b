// Package mempool holds the valid unconfirmed transactions of a node.
//
// # Overview
//
// Accept validates a transaction completely against the chain's UTXO set plus the outputs of
// transactions already in the pool (so chains of unconfirmed transactions are accepted), and
// rejects conflicts (no replacement), non-final transactions, dust outputs and fees below the
// minimum relay fee. The pool is bounded in bytes: when it is full, the transactions with the
// lowest fee rate are evicted together with their descendants.
//
// BlockConnected removes what a block mined and what conflicts with it; after a reorganisation,
// Reorganized puts back the transactions of disconnected blocks and revalidates the pool.
// Select orders transactions for a block template by fee rate, parents before children.
//
// Save and Load keep the pool across restarts (persist.go, protocol §11): Save writes
// mempool.dat atomically (a versioned header, then each transaction's bincode with its
// arrival time, in arrival order); Load offers every transaction to Accept against the
// current chain, drops the refused ones with a log line and reads what it can of a
// truncated or damaged file, logging it; it stops between two transactions when its context
// ends, leaving the file unchanged. DecodeSnapshot, which reads bytes from disk, has a
// fuzz target (FuzzDecodeSnapshot).
//
// # Errors
//
// Rejections are *RejectError values: Kind is the rule that refused the transaction, a
// policy rule's ErrorKind (ErrConflict, ErrFeeTooLow, ..., errors.go) or the consensus.ErrorKind
// of the consensus.RuleError in Err, and the other fields are the rule's detail (the
// conflicting input and transaction, the dust output, the fee and the minimum). Callers
// branch with errors.Is/As on the kind. Every kind is its stable reason (ErrFeeTooLow is
// ErrorKind(reason.FeeTooLow)), which the node's RPC sends as error.data.reason (lib/reason,
// protocol §11); the message, sent as is, reads "missing inputs: ...", "insufficient fee:
// ...", "conflicts with a mempool transaction (...)". A storage failure during a check is
// returned as it is, not as a rejection. DecodeSnapshot's errors match ErrSnapshotFormat
// (not a mempool.dat of this version and network) or ErrSnapshotCorrupt (damaged after the
// header; the entries before were read).
package mempool

// Package chainstate keeps the chain in one goleveldb database (the header index with
// cumulative work and status, the main-chain height index, the UTXO set with its address and
// cluster indexes, the transaction index and the chain statistics: tip, supply, decay pool,
// burned and issued coins) and the blocks and their undo data in flat files beside it
// (blocks/blkNNNNN.dat, revNNNNN.dat; blockstore.go, lib/blockfile).
//
// # Overview
//
// Open loads the header index into memory and resumes at the stored tip. ProcessBlock checks a
// block with lib/consensus, stores it, and moves the tip to the chain with the most cumulative
// work, disconnecting and connecting blocks as needed.
//
// Every kind of state beside the blocks is a table of the keyed state journal (journal.go,
// tables.go): a key prefix and a codec. Connecting a block stages keyed puts and deletes and
// commits them to the write cache (cache.go); the block's undo data is every touched key's
// previous value, so disconnecting replays it for every table alike and no kind of state has
// an inverse of its own. The cache is written as one atomic leveldb.Batch that carries every
// table, the positions of the undo data (appended to the rev files just before) and the new
// tip together: at the end of each ProcessBlock, or in bulk
// mode (SetBulk, while a node catches up) across many blocks. A crash (kill -9 at any point)
// leaves the database at the consistent tip of the last write, and Open connects the stored
// blocks past it again. Reads go through the write cache, the pending background write
// (bgwrite.go), the clean cache of cluster records (readcache.go) and the coin cache of stored
// outputs (coincache.go, outside the Go heap; every database write is replayed into it, so it
// never holds what the database does not) before the database itself.
// The chain answers consensus.StateView (view.go) for connecting blocks
// and, through the mempool, for accepting transactions. A block that fails on a
// new branch is marked invalid with all its descendants and the best valid chain stays; one that
// fails only on a signature or public key, which its hash does not commit to, is dropped with
// its descendants instead, so a tampered copy cannot make the node refuse the valid block.
//
// Headers-first sync hands headers to ProcessBlockHeaders, which checks them with the rules
// of a block's header and keeps them in the block index as header-only nodes (headers.go).
// Header-only nodes live in memory only (a restart asks peers for them again), at most
// Options.MaxHeaders of them; they are never a candidate tip, a block is stored only on a
// stored parent, and ProcessBlock on a block whose header is known fills its node in. The
// chain reports the best header, a locator from it and the blocks to fetch toward it, so
// lib/p2p only schedules downloads.
//
// Key layout (one-byte prefixes): 'B' where a block is in the blk files, 'U' where its undo
// data is in the rev files, "Fb" and "Fr" the end of each kind of file, 'i' header index
// record, 'h' main-chain height, 'u' UTXO, 'a' address index (an address and an outpoint;
// before, a copy of the UTXO entry too), 'c' cluster balance, 't' transaction index, 's'
// chain statistics, and the conduct and cluster-forest tables (tables.go, conduct.go,
// clusters.go). Databases written before the block files hold blocks under 'b' and undo data
// under 'j' ('r' in the format before the journal, legacy.go), which are read there.
//
// Supply invariant, which tests check after every connect and disconnect:
// UtxoTotal + Pool + Burned = Issued (Σ subsidies of the connected blocks above genesis).
//
// # Errors
//
// Rule violations come back as consensus.RuleError (errors.Is with the consensus kinds, for
// example consensus.ErrUnknownParent for a block whose parent is unknown). Storage failures
// come back as *StorageError, so callers can tell a disk problem from an invalid block.
// Open fails with ErrLocked when another process holds the data directory.
// ProcessBlockHeaders fails with ErrTooManyHeaders, not a rule error, when the header-only
// nodes are at their bound.
package chainstate

// Package node wires a full node together: the chain state, the mempool, the JSON-RPC server
// and the peer-to-peer network, with logging, a disk-space guard and clean shutdown.
//
// # Overview
//
// New opens <data-dir>/db, builds the mempool (restoring <data-dir>/mempool.dat, each
// transaction accepted again against the chain: mempool.go; a signal meanwhile stops New
// and leaves the file as it was) and, when Config.P2P is set, the
// P2P layer (lib/p2p) on them (network.go); Run starts the RPC server (only when an RPC bind address is
// set), the P2P layer and the disk monitor, and blocks until its context ends, the stop RPC is
// called or the disk runs low; then it shuts everything down in order, writes mempool.dat (also written
// every MempoolSaveInterval, so a crash loses at most that much of the pool) and closes the
// database. All block processing goes through one lock, so the mempool always matches the
// chain tip. The node passes its chain state, mempool and itself to lib/p2p and lib/rpcserver
// as the small interfaces each declares, checked at compile time, and converts the P2P
// layer's peer statistics for RPC.
//
// Operators watch it two ways. While it catches up, the node logs "sync: progress" every
// SyncLogInterval (progress.go: height, target, percent, blocks_per_sec smoothed over the
// intervals, eta), and getsyncstatus adds target_height and progress (SyncTarget). With
// Config.MetricsBind it serves Prometheus metrics (metrics.go, lib/metrics): gauges read at
// each scrape, RPC durations by method (each handler timed as Run registers it) and
// rejected blocks and transactions by reason (SubmitBlock, SubmitTransaction).
//
// Programs learn of changes without polling (docs/operations.md, "Notifications"): every
// block connected or disconnected (published by SubmitBlock before the mempool catches up)
// and every transaction entering or leaving the mempool (mempool.Options.OnChange) goes to
// the node's rpcserver.Notifier, which numbers them for the stream on the RPC listener and
// wakes waitfornewblock; Config.BlockNotify runs a command for each new tip
// (blocknotify.go, as Bitcoin Core's -blocknotify).
//
// # Errors
//
// New fails when the data directory is locked by another process (chainstate.ErrLocked) or
// unreadable, or when the RPC or metrics address cannot be bound. Run returns ErrDiskLow
// when it stopped because less than the configured share of the disk was free.
package node

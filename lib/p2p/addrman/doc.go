// Package addrman keeps the node's known peer addresses, persisted in
// <data-dir>/peers.json. Bans are not here: lib/p2p's ban manager keeps them (banlist.json).
//
// # Overview
//
// An address is learned from a peer's addr message (SourceAddr) or a DNS seed (SourceDNS),
// given with --connect, --addnode or --seednode (SourceConnect, SourceAddnode,
// SourceSeednode), or recorded when an outbound connection completes its handshake
// (SourceOutbound). Learned addresses live in two tables after Bitcoin Core's (table.go):
// the new table, bucketed by a keyed hash of the source group (the network group of the
// peer that told us) and the address's own network group, and the tried table of addresses
// we connected to, bucketed by their group. A bucket holds BucketSize entries and drops its
// worst when full, so one range, or one peer flooding addresses, fills few buckets and the
// total is bounded. Operator-given addresses are pinned outside the tables. Candidates
// draws outbound peers of distinct network groups (netgroup.go: IPv4 /16, IPv6 /32,
// loopback by address and port); Sample draws addresses for getaddr answers and
// getnodeaddresses. A Policy says which addresses a network takes: routable only (mainnet)
// or also private and loopback ones (testnet, regtest).
//
// Each entry remembers when it was last seen, last connected and last tried, and how many
// attempts failed since the last success; the wait before the next attempt doubles with
// each failure (BackoffBase up to BackoffMax, or ConnectBackoffMax for pinned addresses),
// so a restarted node reconnects to what it knew without hammering peers that are gone.
//
// peers.json is {"version": 1, "peers": [Entry...]}, written atomically (temporary file and
// rename) by Save when something changed. Load fills the tables again, tried entries first;
// the bucket key is random per process. The "bans" list of older files is ignored.
//
// # Errors
//
// Load returns ErrCorrupt (wrapped) for a file that does not parse, leaving the manager
// empty; other errors are I/O errors of the file system. Pin returns ErrInvalidAddr for an
// address that is not host:port. ErrAlreadyAdded, ErrNotAdded, ErrTooManyAdded,
// ErrBadCommand and ErrNoNetwork are the P2P layer's errors about its added nodes, defined
// here so that the RPC layer tells them apart without importing it.
package addrman

// Package addrman keeps the node's known peer addresses, persisted in
// <data-dir>/peers.json. Bans are not here: lib/p2p's ban manager keeps them (banlist.json).
//
// # Overview
//
// An address is learned from a peer's addr message (SourceAddr), given with --connect
// (SourceConnect) or recorded when an outbound connection completes its handshake
// (SourceOutbound). Each entry remembers when it was last seen, last connected and last
// tried, and how many attempts failed since the last success; the wait before the next
// attempt doubles with each failure (BackoffBase up to BackoffMax, or ConnectBackoffMax for
// --connect addresses), so a restarted node reconnects to what it knew without hammering
// peers that are gone. The number of addresses is bounded; the least useful go first.
//
// peers.json is {"version": 1, "peers": [Entry...]}, written atomically (temporary file and
// rename) by Save when something changed. The "bans" list of older files is ignored.
//
// # Errors
//
// Load returns ErrCorrupt (wrapped) for a file that does not parse, leaving the manager
// empty; other errors are I/O errors of the file system.
package addrman

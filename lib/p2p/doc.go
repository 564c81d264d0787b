// Package p2p is the node's peer-to-peer layer (DESIGN 12): it listens on the P2P port,
// keeps outbound connections up, syncs the chain headers-first from its peers, relays new
// blocks and mempool transactions, and drops and bans peers that misbehave. Server
// implements the node's Network interface; everything that changes the chain or the mempool
// goes through the Backend (the node's SubmitBlock and SubmitTransaction).
//
// # Overview
//
// The layers, each its own package: wire (frames and messages, pure and fuzzed), peer (one
// connection: handshake, deadlines, bounded send queue, ban score), addrman (known addresses,
// bans, backoff, peers.json) and this package, which ties them to the node:
//
//   - Connections: inbound up to MaxInbound (banned IPs closed at accept); outbound to the
//     Connect peers only when given, else to known addresses, up to MaxOutbound, each with its
//     backoff. The handshake refuses other networks (magic, genesis), our own nonce (self
//     connections), a node already connected and old protocol versions, logging which.
//   - Sync (sync.go): validated headers are kept in memory ahead of the chain; the blocks to the
//     most-work header are requested in a sliding window across peers, at most
//     MaxInFlightPerPeer per peer, and handed to SubmitBlock in height order by one processor
//     goroutine; peers that stall the window or do not answer are dropped. Syncing is true
//     exactly while a peer is known to be ahead and we are fetching from the network.
//   - Relay (relay.go): new tips are announced by header, mempool transactions by batched inv;
//     bounded known-inventory sets keep announcements from repeating; orphan transactions and
//     blocks wait in bounded pools.
//
// Every queue, map and pool is bounded and every read has a deadline; docs/p2p.md lists them
// with the wire format and the ban scores.
//
// # Errors
//
// New fails without a network; Start fails when it cannot listen. A peer's misbehaviour is
// not an error of the server: it adds ban score (peer.Peer.AddBanScore), and at the threshold
// the peer is dropped and its IP banned (addrman).
package p2p

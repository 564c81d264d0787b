// Package p2p is the node's peer-to-peer layer (protocol §12): it listens on the P2P port,
// keeps outbound connections up, syncs the chain headers-first from its peers, relays new
// blocks and mempool transactions, and drops and bans peers that misbehave. Server
// implements the node's Network interface. It declares what it needs of the node
// (interface.go): Chain (the chain state's reads, its header index and bulk mode), Mempool,
// and Backend, through which everything that changes the chain or the mempool goes (the
// node's SubmitBlock and SubmitTransaction).
//
// # Overview
//
// The layers, each its own package: wire (frames and messages, pure and fuzzed), peer (one
// connection: handshake, deadlines, bounded send queue, ban score), addrman (known addresses
// in bucketed new and tried tables, network groups, bans, backoff, peers.json) and this package, which ties them to the node:
//
//   - Connections: inbound up to MaxInbound (banned IPs closed at accept); outbound
//     (outbound.go) to the Connect peers only when given, else to the AddNodes peers (slots
//     of their own), the SeedNodes (asked for addresses, then left), the network's DNS seeds
//     when nearly nothing is known, and up to MaxOutbound known addresses of distinct network
//     groups, each with its backoff. Address gossip (addrs.go): getaddr to new outbound
//     peers, a random sample in answer, self-announcement after the handshake, fresh
//     addresses passed on to two random peers, a per-peer token bucket on incoming addr.
//     The AddNode, AddedNodeInfo and NodeAddresses methods serve the RPCs of the same
//     names. The handshake refuses other networks (magic, genesis), our own nonce (self
//     connections), a node already connected and old protocol versions, logging which.
//   - Connections (conn.go): handshakes, ban score, disconnection, message dispatch.
//   - Sync: headers from peers go to the chain, which keeps them in its block index with the
//     rules of a block's header (headers.go; lib/chainstate ProcessBlockHeaders); the chain's
//     blocks to fetch toward its best header are requested in a sliding window across peers,
//     at most MaxInFlightPerPeer per peer (download.go), and handed to SubmitBlock in height
//     order by one processor goroutine (process.go); peers that stall the window or do not
//     answer are dropped (timers.go). Syncing is true exactly while a peer is known to be
//     ahead and we are fetching from the network; meanwhile the chain writes in bulk
//     (syncstate.go). The P2P layer has no consensus rules of its own beyond a block's proof
//     of work.
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

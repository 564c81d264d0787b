// Package p2p is the node's peer-to-peer layer (protocol §12): it listens on the P2P port,
// keeps outbound connections up, syncs the chain headers-first from its peers, relays new
// blocks and mempool transactions, and drops and discourages peers that misbehave. Server
// implements the node's Network interface. It declares what it needs of the node
// (interface.go): Chain (the chain state's reads, its header index and bulk mode), Mempool,
// and Backend, through which everything that changes the chain or the mempool goes (the
// node's SubmitBlock and SubmitTransaction).
//
// # Overview
//
// The layers, each its own package: wire (frames and messages, pure and fuzzed), peer (one
// connection: handshake, deadlines, bounded send queue, ban score), addrman (known addresses
// in bucketed new and tried tables, network groups, backoff, peers.json) and this package,
// which ties them to the node:
//
//   - Connections: the connection manager (connmgr.go, in the manner of btcd's connmgr) owns
//     the table of open connections and its rules: inbound up to MaxInbound with eviction and
//     a per-address bound; outbound slots by kind (MaxOutbound full-relay or Connect ones, 8
//     for added nodes); handshake stalls; self and duplicate connections; network activity
//     and byte totals. The ban manager (banman.go) keeps the operator's bans (subnets,
//     banlist.json) and the node's discouragement (addresses, in memory, 24 h), exempting
//     loopback and Whitelist. conn.go runs the sockets: listeners (ListenAddr, ListenAddrs),
//     handshake (refusing other networks, our own nonce, a node already connected and old
//     protocol versions, logging which; bytes that are not our protocol only close the
//     connection), message dispatch. netapi.go is what the network RPCs call.
//   - Finding peers (outbound.go): the Connect peers only when given, else the AddNodes
//     peers (slots of their own), the SeedNodes (asked for addresses, then left), the
//     network's DNS seeds when nearly nothing is known, and up to MaxOutbound known
//     addresses of distinct network groups, each with its backoff. Address gossip
//     (addrs.go): getaddr to new outbound peers, a random sample in answer, self-announcement
//     after the handshake (our listening or --externalip address), fresh addresses passed on
//     to two random peers, a per-peer token bucket on incoming addr. The AddNode,
//     AddedNodeInfo and NodeAddresses methods serve the RPCs of the same names.
//   - Sync, owned by the sync manager (syncmgr.go, apart from the connections and with its
//     own mutex, in the manner of btcd's netsync): headers from peers go to the chain, which
//     keeps them in its block index with the rules of a block's header (headers.go;
//     lib/chainstate ProcessBlockHeaders), each peer's headers sync continuing from the last
//     header it sent; the blocks to fetch toward the target (the most-work header the chain
//     or a peer has, but a chain a peer left undelivered) are requested in a sliding window
//     across peers, at most MaxInFlightPerPeer per peer (download.go), and handed to
//     SubmitBlock in height order by one processor goroutine (process.go); peers that stall
//     the window or do not answer are dropped (timers.go). Syncing is true exactly while a peer is known to be
//     ahead and we are fetching from the network; meanwhile the chain writes in bulk
//     (syncstate.go). The P2P layer has no consensus rules of its own beyond a block's proof
//     of work.
//   - Relay (relay.go, txrequest.go): new tips are announced by header, mempool transactions
//     by batched inv, requested per peer within bounds (5,000 announcements tracked, 100 in
//     flight); bounded known-inventory sets keep announcements from repeating; orphan
//     transactions and blocks wait in bounded pools.
//
// Every queue, map and pool is bounded and every read has a deadline; docs/p2p.md lists them
// with the wire format and the ban scores.
//
// # Errors
//
// New fails without a network; Start fails when it cannot listen. A peer's misbehaviour is
// not an error of the server: it adds ban score (peer.Peer.AddBanScore), and at the threshold
// the peer is dropped and its address discouraged (BanManager). The network controls return
// errors with reasons (ErrP2PDisabled, ErrNodeNotConnected, ErrAlreadyBanned, ErrNotBanned;
// lib/reason); BanManager.Load returns ErrBanlistCorrupt for a banlist.json that does not
// parse.
package p2p

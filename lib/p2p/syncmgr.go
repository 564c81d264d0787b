package p2p

import (
	"context"
	"log/slog"
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	"github.com/cointoolkit/coin/lib/chainstate"
	"github.com/cointoolkit/coin/lib/p2p/peer"
	"github.com/cointoolkit/coin/lib/p2p/wire"
	"github.com/cointoolkit/coin/lib/params"
	"github.com/cointoolkit/coin/lib/types"
)

// The sync manager (in the manner of btcd's netsync.SyncManager) owns everything the node
// does to follow the network's chain and mempool: the headers sync with each peer
// (headers.go), the block download and its processing (download.go, process.go), the sync
// state (syncstate.go), block and transaction relay and the transaction requests (relay.go,
// txrequest.go), the orphan pools (orphans.go) and their timers (timers.go). Its state is
// guarded by its own mutex, apart from the server's connections and their policy (conn.go,
// Server.mu): the server hands it each connected peer (peerConnected), the sync messages
// of each peer (HandleMessage) and each disconnection (peerGone); the sync manager asks the
// server only to charge a peer for what it sent (syncPolicy).

// syncPolicy is what the sync manager asks of the connection side: ban score, the flood
// allowance of unrequested messages, and the peer's usefulness for eviction.
type syncPolicy interface {
	misbehave(ps *peerState, score int, reason string)
	unrequested(ps *peerState, what string) bool
	noteUseful(ps *peerState, block bool)
}

// peerSync is the sync manager's view of one peer, guarded by syncManager.mu.
type peerSync struct {
	best *chainstate.BlockNode // the most-work header known to be on the peer's chain
	// toldTip is our tip when we sent the peer our version message (its height in it).
	toldTip types.Hash
	// unavail is a header whose chain the peer was asked for and did not deliver: the
	// download does not head for it, nor for what extends it, from this peer (download.go).
	unavail *chainstate.BlockNode

	headersPending bool
	headersSent    time.Time
	headersAsked   time.Time
	unconnecting   int
	hdrs           hdrSync // where the next getheaders continues from (headers.go)

	inflight  int // blocks requested and not delivered
	blocks    int // blocks received as requested
	notFound  *peer.KnownSet
	pendingTx []types.Hash // transactions to announce (relay.go)

	// High-bandwidth relay (push.go).
	pushTo   bool // the peer asked us to push our new tips to it
	pushFrom bool // we asked the peer to push its new tips to us (outbound, or in syncManager.hb)
	offChain int  // unrequested blocks in a row stored off our best chain
}

// syncManager owns the sync; see above.
type syncManager struct {
	cfg    *Config
	b      Backend
	chain  Chain
	pool   Mempool
	net    *params.Network
	log    *slog.Logger
	policy syncPolicy
	ctx    context.Context // set by Start, before any peer connects

	mu              sync.Mutex
	peers           map[*peerState]struct{} // the connected peers, from peerConnected to peerGone
	tip             tipInfo
	best            *chainstate.BlockNode   // the last block of the path when it was loaded (nil: path empty)
	path            []*chainstate.BlockNode // blocks to download, lowest first (download.go)
	pathDirty       bool                    // path must be loaded again (refreshPath)
	pathGen         uint64                  // counts markPathDirty calls
	bodyFailures    map[types.Hash]int      // blocks of a header that failed without being stored
	inflight        map[types.Hash]*blockReq
	received        map[types.Hash]*recvBlock
	receivedBytes   int
	processing      int
	orphanBlocks    *orphanBlocks
	wasSyncing      bool
	syncFrom        uint64
	syncStart       time.Time
	announcePending bool
	wakeProc        chan struct{}
	hb              []*peerState        // our high-bandwidth peers, most recent deliverer first (push.go)
	pushing         map[types.Hash]bool // unrequested blocks being validated now

	bulkMu sync.Mutex // serialises setBulk
	bulk   bool       // the chain is in bulk mode (bulkMu)

	// Transaction relay state (relay.go, txrequest.go), guarded by txMu.
	txMu          sync.Mutex
	txReqs        *txRequests
	recentRejects *peer.KnownSet
	orphanTxs     *orphanTxs
	flushPending  bool
	preverifyQ    chan preverifyJob // blocks whose signatures preverifyLoop checks ahead

	// announceQueue holds the new tips to announce (RelayBlock), in order, at most
	// maxAnnounceQueue: the node calls RelayBlock from inside SubmitBlock, which the
	// processor calls, so the announcing is done by announceLoop, not inside that call.
	announceMu    sync.Mutex
	announceQueue []types.Hash
	announceWake  chan struct{}

	headersRequests atomic.Int64 // getheaders sent (tests bound round trips with it)
	blockRequests   atomic.Int64 // blocks asked for with getdata
	blocksPushed    atomic.Int64 // new tips pushed whole to high-bandwidth peers
}

func newSyncManager(cfg *Config, chain Chain, pool Mempool, b Backend, log *slog.Logger, policy syncPolicy) *syncManager {
	s := &syncManager{cfg: cfg, b: b, chain: chain, pool: pool, net: cfg.Network, log: log, policy: policy,
		peers: make(map[*peerState]struct{}), bodyFailures: make(map[types.Hash]int),
		inflight: make(map[types.Hash]*blockReq), received: make(map[types.Hash]*recvBlock), pushing: make(map[types.Hash]bool),
		orphanBlocks: newOrphanBlocks(64, 32<<20), wakeProc: make(chan struct{}, 1),
		txReqs: newTxRequests(), recentRejects: peer.NewKnownSet(20_000), orphanTxs: newOrphanTxs(100),
		preverifyQ: make(chan preverifyJob, 1024), announceWake: make(chan struct{}, 1)}
	t := chain.Tip()
	s.tip = tipInfo{node: t, hash: t.Hash, height: t.Height, work: t.WorkBig()}
	return s
}

// start runs the sync's goroutines with run (Server.goRun) until ctx ends.
func (s *syncManager) start(ctx context.Context, run func(func())) {
	s.ctx = ctx
	run(s.processLoop)
	run(s.announceLoop)
	if s.chain.SigCache() != nil {
		for i := 0; i < runtime.GOMAXPROCS(0); i++ {
			run(s.preverifyLoop)
		}
	}
}

func (s *syncManager) misbehave(ps *peerState, score int, reason string) {
	if ps != nil {
		s.policy.misbehave(ps, score, reason)
	}
}

func (s *syncManager) unrequested(ps *peerState, what string) bool {
	return s.policy.unrequested(ps, what)
}

// peerConnected registers a peer that finished its handshake and starts the headers sync
// with it when it claims more than we know.
func (s *syncManager) peerConnected(ps *peerState) {
	s.mu.Lock()
	if ps.notFound == nil {
		ps.notFound = peer.NewKnownSet(1024)
	}
	s.peers[ps] = struct{}{}
	ahead := ps.p.Height() > s.knownHeightLocked()
	// A tip that moved after our version message was announced while the peer was not yet
	// here to be told: announce it now (it goes to this peer only, as the others know it).
	// While syncing, announcements wait for the end of the sync, which announces the tip.
	missed := s.tip.hash != ps.toldTip && !s.syncingLocked()
	tip := s.tip.hash
	s.mu.Unlock()
	s.hbConnected(ps)
	if ahead {
		s.requestHeaders(ps, types.ZeroHash)
	}
	if missed {
		s.announce(tip)
	}
}

// peerGone forgets a disconnected peer: its block requests go to other peers, its
// transaction requests to the transactions' other announcers.
func (s *syncManager) peerGone(ps *peerState) {
	s.mu.Lock()
	delete(s.peers, ps)
	for h, r := range s.inflight {
		if r.ps == ps {
			delete(s.inflight, h)
		}
	}
	ps.inflight = 0
	ps.headersPending = false
	s.scheduleLocked()
	next := s.hbGoneLocked(ps)
	s.mu.Unlock()
	if next != nil {
		setHB([]*peerState{next}, nil)
	}
	s.txPeerGone(ps)
}

// peerList is a snapshot of the connected peers.
func (s *syncManager) peerList() []*peerState {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]*peerState, 0, len(s.peers))
	for ps := range s.peers {
		out = append(out, ps)
	}
	return out
}

// tipNow is the tip's hash and height as the sync last saw it (for the version message).
func (s *syncManager) tipNow() (types.Hash, uint64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.tip.hash, s.tip.height
}

// The server's side: the sync's messages go to the sync manager, and its part of the node's
// Network interface.

func (s *Server) onHeaders(ps *peerState, m *wire.MsgHeaders)       { s.sync.onHeaders(ps, m) }
func (s *Server) onGetHeaders(ps *peerState, m *wire.MsgGetHeaders) { s.sync.onGetHeaders(ps, m) }
func (s *Server) onInv(ps *peerState, m *wire.MsgInv)               { s.sync.onInv(ps, m) }
func (s *Server) onGetData(ps *peerState, m *wire.MsgGetData)       { s.sync.onGetData(ps, m) }
func (s *Server) onNotFound(ps *peerState, m *wire.MsgNotFound)     { s.sync.onNotFound(ps, m) }
func (s *Server) onBlock(ps *peerState, b *types.Block, size int)   { s.sync.onBlock(ps, b, size) }
func (s *Server) onTx(ps *peerState, tx *types.Transaction)         { s.sync.onTx(ps, tx) }

// Syncing reports whether some peer is known to be ahead of our tip while we fetch headers
// or blocks from peers (the node's Network interface; getblocktemplate refuses meanwhile).
func (s *Server) Syncing() bool { return s.sync.Syncing() }

// SyncProgress reports the sync state with the height the node is catching up to.
func (s *Server) SyncProgress() SyncProgress { return s.sync.SyncProgress() }

// RelayBlock announces a new tip (the node calls it after a block became the tip).
func (s *Server) RelayBlock(hash types.Hash) { s.sync.RelayBlock(hash) }

// RelayTransaction queues an inv of a mempool transaction for every peer not known to have
// it (the node calls it after accepting one).
func (s *Server) RelayTransaction(txid types.Hash) { s.sync.RelayTransaction(txid) }

func (s *syncManager) noteUseful(ps *peerState, block bool) { s.policy.noteUseful(ps, block) }

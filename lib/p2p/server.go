package p2p

import (
	"context"
	"crypto/rand"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math/big"
	"net"
	"net/netip"
	"path/filepath"
	"runtime"
	"sort"
	"sync"
	"sync/atomic"
	"time"

	"github.com/cointoolkit/coin/lib/chainstate"
	"github.com/cointoolkit/coin/lib/mempool"
	"github.com/cointoolkit/coin/lib/p2p/addrman"
	"github.com/cointoolkit/coin/lib/p2p/peer"
	"github.com/cointoolkit/coin/lib/p2p/wire"
	"github.com/cointoolkit/coin/lib/params"
	"github.com/cointoolkit/coin/lib/rpcapi"
	"github.com/cointoolkit/coin/lib/types"
)

// Backend is what the P2P layer needs from the node. The node owns every change to the chain
// and the mempool: blocks and transactions from peers go through SubmitBlock and
// SubmitTransaction like those from RPC.
type Backend interface {
	Chain() *chainstate.Chain
	Mempool() *mempool.Pool
	SubmitBlock(b *types.Block) (*chainstate.Result, error)
	SubmitTransaction(tx *types.Transaction) (types.Hash, error)
}

// Config configures a Server. Zero values take the defaults noted.
type Config struct {
	Network *params.Network
	// ListenAddr is the P2P listen address (host:port); empty: no listener.
	ListenAddr string
	// Connect lists the peers to keep connected to. When it is not empty the node makes no
	// other outbound connections (like bitcoind's -connect); when it is, it fills its
	// outbound slots from the addresses it knows (peers.json).
	Connect     []string
	MaxOutbound int // default 16; negative: none
	MaxInbound  int // default 64; negative: none
	// DataDir holds peers.json; empty keeps addresses and bans in memory.
	DataDir   string
	Logger    *slog.Logger
	UserAgent string

	BanDuration    time.Duration // default 24 h
	BlockTimeout   time.Duration // default 60 s: a requested block must arrive within it
	StallTimeout   time.Duration // default 10 s: the peer holding up the download window is replaced
	HeadersTimeout time.Duration // default 30 s: a headers request must be answered within it
	RelayDelay     time.Duration // default 50 ms: transaction announcements are batched this long

	// Window is how many blocks past the next one to connect may be requested (default 1,024).
	Window int
	// MaxInFlightPerPeer bounds the blocks requested from one peer (default 16).
	MaxInFlightPerPeer int
	// MaxHeaders bounds the headers kept ahead of the chain (default 100,000).
	MaxHeaders int
	// MaxBufferedBytes bounds downloaded blocks waiting for their turn (default 64 MiB).
	MaxBufferedBytes int

	// Peer tunes each connection (timeouts, queue bounds); Magic and Genesis are set from
	// Network.
	Peer peer.Config
	// Addrman tunes the address manager; Path is set from DataDir.
	Addrman addrman.Config
}

func (c *Config) setDefaults() {
	def := func(d *time.Duration, v time.Duration) {
		if *d <= 0 {
			*d = v
		}
	}
	defInt := func(i *int, v int) {
		if *i == 0 {
			*i = v
		}
	}
	defInt(&c.MaxOutbound, 16)
	defInt(&c.MaxInbound, 64)
	c.MaxOutbound, c.MaxInbound = max(c.MaxOutbound, 0), max(c.MaxInbound, 0)
	def(&c.BanDuration, 24*time.Hour)
	def(&c.BlockTimeout, 60*time.Second)
	def(&c.StallTimeout, 10*time.Second)
	def(&c.HeadersTimeout, 30*time.Second)
	def(&c.RelayDelay, 50*time.Millisecond)
	defInt(&c.Window, 1024)
	defInt(&c.MaxInFlightPerPeer, 16)
	defInt(&c.MaxHeaders, 100_000)
	defInt(&c.MaxBufferedBytes, 64<<20)
	if c.Logger == nil {
		c.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	if c.UserAgent == "" {
		c.UserAgent = "coin-node"
	}
	c.Peer.Magic = c.Network.Magic
	c.Peer.Genesis = c.Network.GenesisHash
	if c.Peer.Logger == nil {
		c.Peer.Logger = c.Logger
	}
	if c.DataDir != "" {
		c.Addrman.Path = filepath.Join(c.DataDir, "peers.json")
	}
}

// Errors of the handshake decided by the server.
var (
	errSelf      = errors.New("connected to ourselves (same node nonce)")
	errDuplicate = errors.New("already connected to this node")
)

// peerState is the server's view of one connected peer; its fields are guarded by Server.mu.
type peerState struct {
	p          *peer.Peer
	dialAddr   string // outbound: the address dialled
	listenAddr string // inbound: the address it listens on, if it said

	bestHash types.Hash // the best header known to be on the peer's chain
	bestWork *big.Int

	headersPending bool
	headersSent    time.Time
	headersAsked   time.Time
	unconnecting   int

	inflight  int
	blocks    int // blocks received as requested
	notFound  *peer.KnownSet
	bucket    bucket
	answered  bool // getaddr answered
	pendingTx []types.Hash
}

// Server is the P2P layer: it implements the node's Network interface.
type Server struct {
	cfg   Config
	b     Backend
	chain *chainstate.Chain
	pool  *mempool.Pool
	net   *params.Network
	log   *slog.Logger
	addrs *addrman.Manager
	nonce uint64

	ctx    context.Context
	cancel context.CancelFunc
	wg     sync.WaitGroup
	ln     net.Listener
	port   atomic.Uint32

	mu       sync.Mutex
	conns    map[net.Conn]struct{} // every open connection, handshaking or not
	peers    map[*peer.Peer]*peerState
	nonces   map[uint64]*peerState
	outbound int // connected and dialling
	inbound  int // connected and handshaking
	dialing  map[string]bool
	outLocal map[string]string // local address of an outbound connection → the address dialled
	self     map[string]bool
	wakeConn chan struct{}

	// Sync state (sync.go), guarded by mu.
	tip             tipInfo
	tree            map[types.Hash]*hnode
	best            *hnode
	path            []*hnode
	pathDirty       bool
	inflight        map[types.Hash]*blockReq
	received        map[types.Hash]*recvBlock
	receivedBytes   int
	processing      int
	orphanBlocks    *orphanBlocks
	wasSyncing      bool
	bulkMu          sync.Mutex // serialises setBulk
	bulk            bool       // the chain is in bulk mode (bulkMu)
	syncFrom        uint64
	syncStart       time.Time
	announcePending bool
	lastPrune       time.Time
	wakeProc        chan struct{}

	// Transaction relay state (relay.go), guarded by txMu.
	txMu          sync.Mutex
	txInflight    map[types.Hash]txReq
	recentRejects *peer.KnownSet
	orphanTxs     *orphanTxs
	flushPending  bool
	preverifyQ    chan preverifyJob // blocks whose signatures preverifyLoop checks ahead
}

// New builds a server; Start runs it.
func New(cfg Config, b Backend) (*Server, error) {
	if cfg.Network == nil {
		return nil, errors.New("p2p: no network")
	}
	cfg.setDefaults()
	var nb [8]byte
	if _, err := rand.Read(nb[:]); err != nil {
		return nil, err
	}
	s := &Server{cfg: cfg, b: b, chain: b.Chain(), pool: b.Mempool(), net: cfg.Network,
		log: cfg.Logger.With("sys", "p2p"), addrs: addrman.New(cfg.Addrman), nonce: binary.LittleEndian.Uint64(nb[:]) | 1,
		conns: make(map[net.Conn]struct{}), peers: make(map[*peer.Peer]*peerState), nonces: make(map[uint64]*peerState), dialing: make(map[string]bool),
		outLocal: make(map[string]string), self: make(map[string]bool), wakeConn: make(chan struct{}, 1),
		tree: make(map[types.Hash]*hnode), inflight: make(map[types.Hash]*blockReq), received: make(map[types.Hash]*recvBlock),
		orphanBlocks: newOrphanBlocks(64, 32<<20), wakeProc: make(chan struct{}, 1),
		txInflight: make(map[types.Hash]txReq), recentRejects: peer.NewKnownSet(20_000), orphanTxs: newOrphanTxs(100),
		preverifyQ: make(chan preverifyJob, 1024)}
	s.cfg.Peer.Logger = s.log
	s.cfg.Peer.OnBan = s.banIP
	t := s.chain.Tip()
	s.tip = tipInfo{hash: t.Hash, height: t.Height, work: t.Work}
	return s, nil
}

// Addrman is the server's address manager (known peers and bans).
func (s *Server) Addrman() *addrman.Manager { return s.addrs }

// ListenPort is the port the server listens on (0 before Start or without a listener).
func (s *Server) ListenPort() uint16 { return uint16(s.port.Load()) }

// Start loads peers.json, listens and starts connecting. It returns once the listener is up.
func (s *Server) Start(ctx context.Context) error {
	if err := s.addrs.Load(); err != nil {
		s.log.Warn("peers.json not loaded; starting with no known peers", "err", err)
	}
	s.ctx, s.cancel = context.WithCancel(ctx)
	if s.cfg.ListenAddr != "" {
		ln, err := net.Listen("tcp", s.cfg.ListenAddr)
		if err != nil {
			s.cancel()
			return fmt.Errorf("listen on %s: %w", s.cfg.ListenAddr, err)
		}
		s.ln = ln
		if ta, ok := ln.Addr().(*net.TCPAddr); ok {
			s.port.Store(uint32(ta.Port))
		}
		s.log.Info("p2p listening", "addr", ln.Addr().String(), "network", s.net.Name)
		s.goRun(s.acceptLoop)
	}
	for _, a := range s.cfg.Connect {
		s.addrs.Add(a, addrman.SourceConnect, time.Now())
	}
	s.goRun(s.connectLoop)
	s.goRun(s.processLoop)
	s.goRun(s.tickLoop)
	if s.chain.SigCache() != nil {
		for i := 0; i < runtime.GOMAXPROCS(0); i++ {
			s.goRun(s.preverifyLoop)
		}
	}
	return nil
}

// preverifyLoop checks the signatures of received blocks ahead of their turn and records them
// in the chain's signature cache, so that while one block connects (storage work that uses one
// core) the next blocks' signatures are verified on the others.
func (s *Server) preverifyLoop() {
	cache := s.chain.SigCache()
	for {
		select {
		case <-s.ctx.Done():
			return
		case job := <-s.preverifyQ:
			cache.Preverify(job.block, s.net.Magic, 1)
			close(job.done)
		}
	}
}

type preverifyJob struct {
	block *types.Block
	done  chan struct{}
}

// preverify queues a received block for preverifyLoop and returns a channel closed when it is
// done, or nil when nothing was queued (no cache, or the queue is full: the block's connect
// then verifies its own signatures).
func (s *Server) preverify(b *types.Block) chan struct{} {
	if s.chain.SigCache() == nil || len(b.Transactions) < 2 {
		return nil
	}
	job := preverifyJob{b, make(chan struct{})}
	select {
	case s.preverifyQ <- job:
		return job.done
	default:
		return nil
	}
}

func (s *Server) goRun(f func()) {
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		f()
	}()
}

// Stop closes every connection, waits for the server's goroutines and saves peers.json.
func (s *Server) Stop() {
	if s.cancel == nil {
		return
	}
	s.cancel()
	if s.ln != nil {
		s.ln.Close()
	}
	s.mu.Lock()
	for p := range s.peers {
		p.Disconnect(errors.New("shutting down"))
	}
	for c := range s.conns { // handshakes in progress
		c.Close()
	}
	s.mu.Unlock()
	s.wg.Wait()
	if err := s.addrs.Save(); err != nil {
		s.log.Warn("saving peers.json", "err", err)
	}
}

func (s *Server) acceptLoop() {
	for {
		conn, err := s.ln.Accept()
		if err != nil {
			if s.ctx.Err() != nil {
				return
			}
			s.log.Warn("accept failed", "err", err)
			select {
			case <-time.After(100 * time.Millisecond):
			case <-s.ctx.Done():
				return
			}
			continue
		}
		ip := remoteIP(conn)
		if ban, ok := s.addrs.Banned(ip); ok {
			s.log.Debug("refused connection from banned address", "peer", conn.RemoteAddr().String(),
				"until", time.Unix(ban.Until, 0).UTC().Format(time.RFC3339), "reason", ban.Reason)
			conn.Close()
			continue
		}
		s.mu.Lock()
		if s.inbound >= s.cfg.MaxInbound {
			s.mu.Unlock()
			s.log.Debug("refused inbound connection: inbound slots full", "peer", conn.RemoteAddr().String(), "max_inbound", s.cfg.MaxInbound)
			conn.Close()
			continue
		}
		s.inbound++
		s.mu.Unlock()
		s.goRun(func() {
			s.handleConn(conn, true, "")
			s.mu.Lock()
			s.inbound--
			s.mu.Unlock()
		})
	}
}

func remoteIP(c net.Conn) netip.Addr {
	if ap, err := netip.ParseAddrPort(c.RemoteAddr().String()); err == nil {
		return ap.Addr().Unmap()
	}
	return netip.Addr{}
}

// connectLoop keeps the outbound connections up: to the --connect peers, or else to known
// addresses, each with the address manager's backoff.
func (s *Server) connectLoop() {
	t := time.NewTicker(250 * time.Millisecond)
	defer t.Stop()
	for {
		s.connectMore()
		select {
		case <-s.ctx.Done():
			return
		case <-t.C:
		case <-s.wakeConn:
		}
	}
}

func (s *Server) connectMore() {
	s.mu.Lock()
	free := s.cfg.MaxOutbound - s.outbound
	s.mu.Unlock()
	if free <= 0 {
		return
	}
	skip := func(a string) bool {
		if ap, err := netip.ParseAddrPort(a); err == nil {
			if _, banned := s.addrs.Banned(ap.Addr()); banned {
				return true
			}
		}
		s.mu.Lock()
		defer s.mu.Unlock()
		return s.dialing[a] || s.self[a]
	}
	var targets []string
	if len(s.cfg.Connect) > 0 {
		now := time.Now()
		for _, a := range s.cfg.Connect {
			if len(targets) < free && !skip(a) && !now.Before(s.addrs.NextAttempt(a)) {
				targets = append(targets, a)
			}
		}
	} else {
		targets = s.addrs.Candidates(free, skip)
	}
	for _, a := range targets {
		s.mu.Lock()
		if s.dialing[a] || s.outbound >= s.cfg.MaxOutbound {
			s.mu.Unlock()
			continue
		}
		s.dialing[a] = true
		s.outbound++
		s.mu.Unlock()
		s.goRun(func() {
			s.dial(a)
			s.mu.Lock()
			delete(s.dialing, a)
			s.outbound--
			s.mu.Unlock()
			select {
			case s.wakeConn <- struct{}{}:
			default:
			}
		})
	}
}

func (s *Server) dial(addr string) {
	s.addrs.Attempt(addr)
	d := net.Dialer{Timeout: 5 * time.Second}
	conn, err := d.DialContext(s.ctx, "tcp", addr)
	if err != nil {
		if s.ctx.Err() == nil {
			s.log.Debug("connection failed", "peer", addr, "err", err)
		}
		return
	}
	if ban, ok := s.addrs.Banned(remoteIP(conn)); ok {
		s.log.Debug("not connecting to banned address", "peer", addr, "reason", ban.Reason)
		conn.Close()
		return
	}
	s.handleConn(conn, false, addr)
}

func (s *Server) versionMsg() *wire.MsgVersion {
	s.mu.Lock()
	h := s.tip.height
	s.mu.Unlock()
	return &wire.MsgVersion{ProtocolVersion: wire.ProtocolVersion, Magic: s.net.Magic, Genesis: s.net.GenesisHash,
		BestHeight: h, ListenPort: s.ListenPort(), Nonce: s.nonce, UserAgent: s.cfg.UserAgent}
}

func (s *Server) verifyVersion(v *wire.MsgVersion) error {
	if v.Nonce == s.nonce {
		return errSelf
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if other, ok := s.nonces[v.Nonce]; ok {
		return fmt.Errorf("%w (as %s)", errDuplicate, other.p.Addr())
	}
	return nil
}

// handleConn runs one connection from handshake to disconnection.
func (s *Server) handleConn(conn net.Conn, inbound bool, dialAddr string) {
	s.mu.Lock()
	if s.ctx.Err() != nil {
		s.mu.Unlock()
		conn.Close()
		return
	}
	s.conns[conn] = struct{}{}
	s.mu.Unlock()
	defer func() {
		s.mu.Lock()
		delete(s.conns, conn)
		s.mu.Unlock()
	}()
	p := peer.New(conn, inbound, s.cfg.Peer)
	if !inbound {
		s.mu.Lock()
		s.outLocal[conn.LocalAddr().String()] = dialAddr
		s.mu.Unlock()
		defer func() {
			s.mu.Lock()
			delete(s.outLocal, conn.LocalAddr().String())
			s.mu.Unlock()
		}()
	}
	err := p.Handshake(s.versionMsg(), s.verifyVersion)
	if err != nil {
		s.rejected(p, dialAddr, err)
		p.Disconnect(err)
		return
	}
	v := p.Version()
	ps := &peerState{p: p, dialAddr: dialAddr, notFound: peer.NewKnownSet(1024), bucket: newBucket(100, 500)}
	if inbound && v.ListenPort != 0 && p.IP().IsValid() {
		ps.listenAddr = netip.AddrPortFrom(p.IP(), v.ListenPort).String()
	}
	s.mu.Lock()
	if other, ok := s.nonces[v.Nonce]; ok {
		s.mu.Unlock()
		err := fmt.Errorf("%w (as %s)", errDuplicate, other.p.Addr())
		s.rejected(p, dialAddr, err)
		p.Disconnect(err)
		return
	}
	s.peers[p] = ps
	s.nonces[v.Nonce] = ps
	s.mu.Unlock()
	if !inbound {
		s.addrs.Good(dialAddr, addrman.SourceOutbound)
	}
	s.log.Info("peer connected", "peer", p.Addr(), "inbound", inbound, "height", v.BestHeight,
		"version", v.ProtocolVersion, "agent", v.UserAgent)
	s.onConnect(ps)
	err = p.Run(s)
	s.onDisconnect(ps, err)
}

// rejected logs a failed handshake and bans when the peer was at fault.
func (s *Server) rejected(p *peer.Peer, dialAddr string, err error) {
	reason := err.Error()
	switch {
	case errors.Is(err, errSelf):
		// The inbound end of a self-connection sees our nonce; the outbound end is the
		// connection from that local address.
		s.mu.Lock()
		if dialAddr == "" {
			dialAddr = s.outLocal[p.Addr()]
		}
		if dialAddr != "" {
			s.self[dialAddr] = true
		}
		s.mu.Unlock()
		if dialAddr != "" {
			s.addrs.Remove(dialAddr)
		}
		s.log.Info("peer rejected: self-connection", "peer", p.Addr(), "reason", reason)
		return
	case errors.Is(err, errDuplicate):
		s.log.Debug("peer rejected: duplicate connection", "peer", p.Addr(), "reason", reason)
		return
	case errors.Is(err, peer.ErrObsolete):
		s.log.Info("peer rejected: old protocol version", "peer", p.Addr(), "reason", reason)
		return
	case errors.Is(err, peer.ErrWrongNetwork), errors.Is(err, wire.ErrBadMagic):
		s.log.Info("peer rejected: wrong network", "peer", p.Addr(), "reason", reason)
	case errors.Is(err, peer.ErrWrongGenesis):
		s.log.Info("peer rejected: wrong genesis hash", "peer", p.Addr(), "reason", reason)
	default:
		s.log.Info("peer rejected: handshake failed", "peer", p.Addr(), "reason", reason)
	}
	if peer.Misbehaviour(err) {
		p.AddBanScore(s.banThreshold(), reason)
	}
}

func (s *Server) banThreshold() int {
	if s.cfg.Peer.BanThreshold > 0 {
		return s.cfg.Peer.BanThreshold
	}
	return 100
}

func (s *Server) banIP(p *peer.Peer, reason string) {
	if !p.IP().IsValid() {
		return
	}
	s.addrs.Ban(p.IP(), s.cfg.BanDuration, reason)
	s.log.Warn("peer banned", "peer", p.Addr(), "ip", p.IP().String(), "for", s.cfg.BanDuration.String(), "reason", reason)
}

// misbehave adds ban score; at the threshold the peer is dropped and its IP banned (by
// the peer's OnBan, banIP).
func (s *Server) misbehave(ps *peerState, score int, reason string) {
	if ps != nil {
		ps.p.AddBanScore(score, reason)
	}
}

func (s *Server) onDisconnect(ps *peerState, err error) {
	p := ps.p
	s.mu.Lock()
	delete(s.peers, p)
	if v := p.Version(); v != nil && s.nonces[v.Nonce] == ps {
		delete(s.nonces, v.Nonce)
	}
	for h, r := range s.inflight {
		if r.ps == ps {
			delete(s.inflight, h)
		}
	}
	ps.inflight = 0
	ps.headersPending = false
	s.scheduleLocked()
	s.mu.Unlock()
	s.txMu.Lock()
	for h, r := range s.txInflight {
		if r.peer == p.ID() {
			delete(s.txInflight, h)
		}
	}
	s.txMu.Unlock()
	if s.ctx.Err() == nil {
		s.log.Info("peer disconnected", "peer", p.Addr(), "inbound", p.Inbound(), "reason", err)
	}
	select {
	case s.wakeConn <- struct{}{}:
	default:
	}
}

// HandleMessage dispatches a peer's message (peer.Handler).
func (s *Server) HandleMessage(p *peer.Peer, m wire.Message, size int) {
	s.mu.Lock()
	ps := s.peers[p]
	s.mu.Unlock()
	if ps == nil {
		return
	}
	switch m := m.(type) {
	case *wire.MsgGetAddr:
		s.onGetAddr(ps)
	case *wire.MsgAddr:
		s.onAddr(ps, m)
	case *wire.MsgInv:
		s.onInv(ps, m)
	case *wire.MsgGetData:
		s.onGetData(ps, m)
	case *wire.MsgNotFound:
		s.onNotFound(ps, m)
	case *wire.MsgGetHeaders:
		s.onGetHeaders(ps, m)
	case *wire.MsgHeaders:
		s.onHeaders(ps, m)
	case *wire.MsgBlock:
		s.onBlock(ps, m.Block, size)
	case *wire.MsgTx:
		s.onTx(ps, m.Tx)
	}
}

// Peers lists the connected peers (the node's Network interface).
func (s *Server) Peers() []rpcapi.Peer {
	s.mu.Lock()
	list := make([]*peer.Peer, 0, len(s.peers))
	for p := range s.peers {
		list = append(list, p)
	}
	s.mu.Unlock()
	sort.Slice(list, func(i, j int) bool { return list[i].ID() < list[j].ID() })
	out := make([]rpcapi.Peer, 0, len(list))
	for _, p := range list {
		st := p.Stats()
		out = append(out, rpcapi.Peer{Addr: st.Addr, Inbound: st.Inbound, Height: st.Height, Version: st.Version,
			BanScore: st.BanScore, ConnTime: st.ConnTime.Unix(), BytesSent: st.BytesSent, BytesRecv: st.BytesRecv})
	}
	return out
}

// peerList is a snapshot of the connected peers.
func (s *Server) peerList() []*peerState {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]*peerState, 0, len(s.peers))
	for _, ps := range s.peers {
		out = append(out, ps)
	}
	return out
}

// bucket is a token bucket bounding the unrequested messages a peer may send.
type bucket struct {
	tokens, rate, burst float64
	last                time.Time
}

func newBucket(rate, burst float64) bucket {
	return bucket{tokens: burst, rate: rate, burst: burst, last: time.Now()}
}

func (b *bucket) take() bool {
	now := time.Now()
	b.tokens = min(b.burst, b.tokens+now.Sub(b.last).Seconds()*b.rate)
	b.last = now
	if b.tokens < 1 {
		return false
	}
	b.tokens--
	return true
}

// unrequested charges ps for a message it sent unasked; a flood adds ban score.
func (s *Server) unrequested(ps *peerState, what string) bool {
	s.mu.Lock()
	ok := ps.bucket.take()
	s.mu.Unlock()
	if !ok {
		s.misbehave(ps, 10, "flood of unrequested "+what)
	}
	return ok
}

package p2p

import (
	"context"
	"crypto/rand"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/netip"
	"path/filepath"
	"runtime"
	"sort"
	"sync"
	"sync/atomic"
	"time"

	"github.com/cointoolkit/coin/lib/chainstate"
	"github.com/cointoolkit/coin/lib/p2p/addrman"
	"github.com/cointoolkit/coin/lib/p2p/peer"
	"github.com/cointoolkit/coin/lib/params"
	"github.com/cointoolkit/coin/lib/types"
)

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
	// MaxInboundPerIP bounds the inbound connections (handshaking or not) from one IP
	// address (default 4; negative: no bound). When all MaxInbound slots are taken a new
	// connection evicts the least useful inbound peer, if any (conn.go, evictionVictim).
	MaxInboundPerIP int
	// HandshakeStallScore is the ban score an IP earns each time an inbound connection from
	// it lets the handshake time out (default 25, so the fourth stall within
	// HandshakeStallMemory bans it; negative: none). The score it has gathered is added to
	// the ban score of its next connection too.
	HandshakeStallScore int
	// HandshakeStallMemory is how long an IP's stalls are remembered after its last one
	// (default 1 h).
	HandshakeStallMemory time.Duration
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
	// MaxBufferedBytes bounds downloaded blocks waiting for their turn (default 64 MiB).
	MaxBufferedBytes int

	// Peer tunes each connection (timeouts, queue bounds); Magic and Genesis are set from
	// Network.
	Peer peer.Config
	// Addrman tunes the address manager; Path is set from DataDir, Policy from Network.
	Addrman addrman.Config

	// Finding peers (outbound.go, addrs.go). AddNodes are kept connected besides the other
	// outbound connections (--addnode); SeedNodes are asked for addresses and then left
	// (--seednode). NoDNSSeed: the network's DNS seeds are never asked (--dnsseed=false);
	// DNSSeedDelay, when set, replaces Core's delay before asking them (negative: none);
	// Resolver looks them up (default net.DefaultResolver). AddrRate and AddrBurst are the
	// per-peer token bucket of incoming addresses (defaults 0.1/s and 1,000).
	AddNodes     []string
	SeedNodes    []string
	NoDNSSeed    bool
	DNSSeedDelay time.Duration
	Resolver     *net.Resolver
	AddrRate     float64
	AddrBurst    int
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
	defInt(&c.MaxInboundPerIP, 4)
	defInt(&c.HandshakeStallScore, 25)
	def(&c.HandshakeStallMemory, time.Hour)
	def(&c.BanDuration, 24*time.Hour)
	def(&c.BlockTimeout, 60*time.Second)
	def(&c.StallTimeout, 10*time.Second)
	def(&c.HeadersTimeout, 30*time.Second)
	def(&c.RelayDelay, 50*time.Millisecond)
	defInt(&c.Window, 1024)
	defInt(&c.MaxInFlightPerPeer, 16)
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
	c.Addrman.Policy = addrman.Policy{AllowLocal: c.Network.LocalAddrs}
}

// peerState is the server's view of one connected peer; its fields are guarded by Server.mu.
type peerState struct {
	p          *peer.Peer
	dialAddr   string // outbound: the address dialled
	listenAddr string // inbound: the address it listens on, if it said

	best *chainstate.Node // the most-work header known to be on the peer's chain

	headersPending bool
	headersSent    time.Time
	headersAsked   time.Time
	unconnecting   int

	inflight  int
	blocks    int // blocks received as requested
	notFound  *peer.KnownSet
	bucket    bucket
	answered  bool      // getaddr answered
	addrs     peerAddrs // address gossip (addrs.go)
	pendingTx []types.Hash

	// For inbound eviction (conn.go): when the peer last sent a block or a transaction new
	// to us, and whether it was chosen to make room already.
	lastBlock time.Time
	lastTx    time.Time
	evicted   bool
}

// Server is the P2P layer: it implements the node's Network interface.
type Server struct {
	cfg   Config
	b     Backend
	chain Chain
	pool  Mempool
	net   *params.Network
	log   *slog.Logger
	addrs *addrman.Manager
	disc  *discovery // finding peers (outbound.go)
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
	// inboundIP counts inbound connections (handshaking or not) per remote IP; stalls
	// remembers the IPs whose inbound handshakes timed out (conn.go).
	inboundIP map[netip.Addr]int
	stalls    map[netip.Addr]*stallRecord
	dialing   map[string]bool
	outLocal  map[string]string // local address of an outbound connection → the address dialled
	self      map[string]bool
	wakeConn  chan struct{}

	// Sync state (syncstate.go, download.go, process.go), guarded by mu.
	tip             tipInfo
	best            *chainstate.Node   // the best header when path was loaded (nil: path empty)
	path            []*chainstate.Node // blocks to download, lowest first (download.go)
	pathDirty       bool               // path must be loaded again (refreshPath)
	pathGen         uint64             // counts markPathDirty calls
	bodyFailures    map[types.Hash]int // blocks of a header that failed without being stored
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
	wakeProc        chan struct{}

	// Transaction relay state (relay.go), guarded by txMu.
	txMu          sync.Mutex
	txInflight    map[types.Hash]txReq
	recentRejects *peer.KnownSet
	orphanTxs     *orphanTxs
	flushPending  bool
	preverifyQ    chan preverifyJob // blocks whose signatures preverifyLoop checks ahead
}

// New builds a server on the node's chain state, mempool and block and transaction
// submission; Start runs it.
func New(cfg Config, chain Chain, pool Mempool, b Backend) (*Server, error) {
	if cfg.Network == nil {
		return nil, errors.New("p2p: no network")
	}
	cfg.setDefaults()
	var nb [8]byte
	if _, err := rand.Read(nb[:]); err != nil {
		return nil, err
	}
	s := &Server{cfg: cfg, b: b, chain: chain, pool: pool, net: cfg.Network,
		log: cfg.Logger.With("sys", "p2p"), addrs: addrman.New(cfg.Addrman), disc: newDiscovery(&cfg), nonce: binary.LittleEndian.Uint64(nb[:]) | 1,
		inboundIP: make(map[netip.Addr]int), stalls: make(map[netip.Addr]*stallRecord),
		conns: make(map[net.Conn]struct{}), peers: make(map[*peer.Peer]*peerState), nonces: make(map[uint64]*peerState), dialing: make(map[string]bool),
		outLocal: make(map[string]string), self: make(map[string]bool), wakeConn: make(chan struct{}, 1),
		bodyFailures: make(map[types.Hash]int), inflight: make(map[types.Hash]*blockReq), received: make(map[types.Hash]*recvBlock),
		orphanBlocks: newOrphanBlocks(64, 32<<20), wakeProc: make(chan struct{}, 1),
		txInflight: make(map[types.Hash]txReq), recentRejects: peer.NewKnownSet(20_000), orphanTxs: newOrphanTxs(100),
		preverifyQ: make(chan preverifyJob, 1024)}
	s.cfg.Peer.Logger = s.log
	s.cfg.Peer.OnBan = s.banIP
	t := s.chain.Tip()
	s.tip = tipInfo{hash: t.Hash, height: t.Height, work: t.WorkBig()}
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
	s.startDiscovery()
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

// Peers lists the connected peers, oldest connection first (the node's Network interface).
func (s *Server) Peers() []peer.Stats {
	s.mu.Lock()
	list := make([]*peer.Peer, 0, len(s.peers))
	for p := range s.peers {
		list = append(list, p)
	}
	s.mu.Unlock()
	sort.Slice(list, func(i, j int) bool { return list[i].ID() < list[j].ID() })
	out := make([]peer.Stats, 0, len(list))
	for _, p := range list {
		out = append(out, p.Stats())
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

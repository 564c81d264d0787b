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
	"sort"
	"sync"
	"sync/atomic"
	"time"

	"github.com/cointoolkit/coin/lib/logging"
	"github.com/cointoolkit/coin/lib/p2p/addrman"
	"github.com/cointoolkit/coin/lib/p2p/peer"
	"github.com/cointoolkit/coin/lib/params"
)

// DefaultUserAgent is the user agent a server sends when Config.UserAgent is empty.
const DefaultUserAgent = "/coin-node:0.1.0/"

// ClientVersion is the node's version as getnetworkinfo reports it, encoded as Bitcoin
// Core does (10000·major + 100·minor + patch): 0.1.0.
const ClientVersion = 100

// Config configures a Server. Zero values take the defaults noted.
type Config struct {
	Network *params.Network
	// ListenAddr is a P2P listen address (host:port); ListenAddrs are more. The server
	// listens on each (--p2p-bind); none: no inbound connections (--listen=false).
	ListenAddr  string
	ListenAddrs []string
	// ExternalIPs are the addresses this node is reachable at from outside (--externalip):
	// getnetworkinfo's localaddresses, with the listen port.
	ExternalIPs []netip.Addr
	// Whitelist lists the ranges whose peers are never discouraged automatically
	// (--whitelist), besides loopback.
	Whitelist []netip.Prefix
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
	// HandshakeStallMemory discourages it; negative: none). The score it has gathered is
	// added to the ban score of its next connection too.
	HandshakeStallScore int
	// HandshakeStallMemory is how long an IP's stalls are remembered after its last one
	// (default 1 h).
	HandshakeStallMemory time.Duration
	// DataDir holds peers.json (known addresses) and banlist.json (manual bans); empty
	// keeps both in memory.
	DataDir   string
	Logger    *slog.Logger
	UserAgent string

	// DiscourageDuration is how long a misbehaving peer's address stays discouraged
	// (default 24 h, in memory).
	DiscourageDuration time.Duration
	BlockTimeout       time.Duration // default 60 s: a requested block must arrive within it
	StallTimeout       time.Duration // default 10 s: the peer holding up the download window is replaced
	HeadersTimeout     time.Duration // default 30 s: a headers request must be answered within it
	RelayDelay         time.Duration // default 50 ms: transaction announcements are batched this long

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
	def(&c.DiscourageDuration, 24*time.Hour)
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
		c.UserAgent = DefaultUserAgent
	}
	if c.Peer.BanThreshold <= 0 {
		c.Peer.BanThreshold = 100
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
	// node is the remote node's nonce (its version message): two connections with the same
	// one, one each way, are to the same node (connmgr.go, nonceKey).
	node uint64

	peerSync // the sync manager's part (syncmgr.go), guarded by syncManager.mu

	bucket   bucket
	answered bool      // getaddr answered
	addrs    peerAddrs // address gossip (addrs.go)
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
	// Connections and their policy: the connection table, limits and eviction (cm), bans
	// and discouragement (bans), each under its own lock.
	cm    *connManager
	bans  *BanManager
	disc  *discovery // finding peers (outbound.go)
	nonce uint64

	ctx    context.Context
	cancel context.CancelFunc
	wg     sync.WaitGroup
	lns    []net.Listener
	port   atomic.Uint32

	mu    sync.Mutex
	peers map[*peer.Peer]*peerState // the established peers, with their sync state

	// sync owns header sync, block download and relay (syncmgr.go).
	sync *syncManager
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
	log := cfg.Logger.With(logging.SubsystemKey, "p2p")
	banPath := ""
	if cfg.DataDir != "" {
		banPath = filepath.Join(cfg.DataDir, "banlist.json")
	}
	bans := NewBanManager(banPath, cfg.Whitelist, cfg.DiscourageDuration, log)
	s := &Server{cfg: cfg, b: b, chain: chain, pool: pool, net: cfg.Network,
		log: log, addrs: addrman.New(cfg.Addrman), disc: newDiscovery(&cfg), nonce: binary.LittleEndian.Uint64(nb[:]) | 1,
		bans: bans, peers: make(map[*peer.Peer]*peerState)}
	s.cm = newConnManager(&s.cfg, bans, log)
	s.cfg.Peer.Logger = s.log
	s.cfg.Peer.OnMisbehaving = s.onMisbehaving
	s.sync = newSyncManager(&s.cfg, chain, pool, b, s.log, s)
	return s, nil
}

// Addrman is the server's address manager (known peers).
func (s *Server) Addrman() *addrman.Manager { return s.addrs }

// Bans is the server's ban manager (manual bans and discouragement).
func (s *Server) Bans() *BanManager { return s.bans }

// ListenPort is the port the server listens on, the first listener's when several (0 before
// Start or without a listener).
func (s *Server) ListenPort() uint16 { return uint16(s.port.Load()) }

// listenAddrs is every address to listen on, without repeats.
func (s *Server) listenAddrs() []string {
	var out []string
	seen := map[string]bool{}
	for _, a := range append([]string{s.cfg.ListenAddr}, s.cfg.ListenAddrs...) {
		if a != "" && !seen[a] {
			seen[a] = true
			out = append(out, a)
		}
	}
	return out
}

// Start loads peers.json and banlist.json, listens and starts connecting. It returns once
// the listeners are up.
func (s *Server) Start(ctx context.Context) error {
	if err := s.addrs.Load(); err != nil {
		s.log.Warn("peers.json not loaded; starting with no known peers", "err", err)
	}
	if err := s.bans.Load(); err != nil {
		s.log.Warn("banlist.json not loaded; starting with no bans", "err", err)
	}
	s.ctx, s.cancel = context.WithCancel(ctx)
	for _, a := range s.listenAddrs() {
		ln, err := net.Listen("tcp", a)
		if err != nil {
			for _, l := range s.lns {
				l.Close()
			}
			s.cancel()
			return fmt.Errorf("listen on %s: %w", a, err)
		}
		s.lns = append(s.lns, ln)
		if ta, ok := ln.Addr().(*net.TCPAddr); ok {
			s.port.CompareAndSwap(0, uint32(ta.Port))
		}
		s.log.Info("p2p listening", "addr", ln.Addr().String(), "network", s.net.Name)
	}
	if len(s.lns) == 0 {
		s.log.Info("p2p not listening: no inbound connections", "network", s.net.Name)
	}
	// The sync manager first: a connection's first message may reach it at once.
	s.sync.start(s.ctx, s.goRun)
	for _, ln := range s.lns {
		s.goRun(func() { s.acceptLoop(ln) })
	}
	s.startDiscovery()
	s.goRun(s.connectLoop)
	s.goRun(s.tickLoop)
	return nil
}

func (s *Server) goRun(f func()) {
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		f()
	}()
}

// Stop closes every connection, waits for the server's goroutines and saves peers.json and
// banlist.json.
func (s *Server) Stop() {
	if s.cancel == nil {
		return
	}
	s.cancel()
	for _, ln := range s.lns {
		ln.Close()
	}
	s.cm.closeAll(errors.New("shutting down"))
	s.wg.Wait()
	if err := s.addrs.Save(); err != nil {
		s.log.Warn("saving peers.json", "err", err)
	}
	if err := s.bans.Save(); err != nil {
		s.log.Warn("saving banlist.json", "err", err)
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

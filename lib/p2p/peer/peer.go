package peer

import (
	"bufio"
	"crypto/rand"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/netip"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"github.com/cointoolkit/coin/lib/p2p/wire"
	"github.com/cointoolkit/coin/lib/types"
)

// Handshake and protocol errors.
var (
	// ErrWrongNetwork: the version message names another network's magic.
	ErrWrongNetwork = errors.New("wrong network")
	// ErrWrongGenesis: same magic, another genesis block.
	ErrWrongGenesis = errors.New("wrong genesis block")
	// ErrObsolete: the peer's protocol version is below the minimum.
	ErrObsolete = errors.New("obsolete protocol version")
	// ErrProtocol: a message out of order (anything but version first, then verack).
	ErrProtocol = errors.New("protocol violation")
	// ErrTimeout: a read deadline passed (handshake, idle link, slow payload, unanswered ping).
	ErrTimeout = errors.New("timed out")
	// ErrMisbehaving: the peer's ban score reached the threshold (the owner decides what
	// follows: lib/p2p discourages the address).
	ErrMisbehaving = errors.New("misbehaving")
	// ErrClosed: the connection was closed on our side.
	ErrClosed = errors.New("disconnected")
)

// NotOurProtocol reports whether err, ending a connection, means the other side does not
// speak this protocol or this network at all: bytes without our magic (an HTTP request, a
// TLS hello, another coin), a frame that does not parse, or a version of another network.
// Such a connection is closed and nothing else: a stray client is no attacker, and in
// Bitcoin Core none of these discourages either.
func NotOurProtocol(err error) bool {
	for _, e := range []error{wire.ErrBadMagic, wire.ErrBadCommand, wire.ErrOversize, wire.ErrBadChecksum,
		wire.ErrMalformed, ErrWrongNetwork, ErrWrongGenesis, ErrProtocol} {
		if errors.Is(err, e) {
			return true
		}
	}
	return false
}

// Config tunes a peer. Zero durations and sizes take the defaults.
type Config struct {
	Magic              [4]byte
	Genesis            types.Hash
	MinProtocolVersion uint32        // default wire.MinProtocolVersion
	HandshakeTimeout   time.Duration // default 10 s: version and verack must both arrive within it
	IdleTimeout        time.Duration // default 30 s: a frame must start within it (pings keep a link busy)
	PayloadTimeout     time.Duration // default 30 s: a started frame must be complete within it
	WriteTimeout       time.Duration // default 30 s per write
	PingInterval       time.Duration // default 10 s; a ping unanswered for IdleTimeout while no byte arrived ends the link
	MaxQueueMsgs       int           // default 1,024 frames waiting to be written
	MaxQueueBytes      int           // default 8 MiB waiting to be written
	BanThreshold       int           // default 100
	Logger             *slog.Logger
	// OnMisbehaving is called once when the ban score reaches the threshold, before the
	// connection closes (the owner discourages the address there, so a reconnection is
	// treated as such at once).
	OnMisbehaving func(p *Peer, reason string)
}

func (c *Config) setDefaults() {
	def := func(d *time.Duration, v time.Duration) {
		if *d <= 0 {
			*d = v
		}
	}
	def(&c.HandshakeTimeout, 10*time.Second)
	def(&c.IdleTimeout, 30*time.Second)
	def(&c.PayloadTimeout, 30*time.Second)
	def(&c.WriteTimeout, 30*time.Second)
	def(&c.PingInterval, 10*time.Second)
	if c.MinProtocolVersion == 0 {
		c.MinProtocolVersion = wire.MinProtocolVersion
	}
	if c.MaxQueueMsgs <= 0 {
		c.MaxQueueMsgs = 1024
	}
	if c.MaxQueueBytes <= 0 {
		c.MaxQueueBytes = 8 << 20
	}
	if c.BanThreshold <= 0 {
		c.BanThreshold = 100
	}
	if c.Logger == nil {
		c.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
}

// Handler receives a peer's messages after the handshake, on the peer's read goroutine, in
// the order they arrived. size is the payload length. Ping, pong and repeated handshake
// messages are handled by the peer itself.
type Handler interface {
	HandleMessage(p *Peer, m wire.Message, size int)
}

var peerIDs atomic.Uint64

// Peer is one connection.
type Peer struct {
	id       uint64
	cfg      Config
	conn     net.Conn
	br       *bufio.Reader
	addr     string
	ip       netip.Addr
	inbound  bool
	connTime time.Time
	remote   *wire.MsgVersion
	q        *sendQueue

	quit      chan struct{}
	closeOnce sync.Once
	errMu     sync.Mutex
	err       error

	banScore atomic.Int64

	bytesSent atomic.Uint64
	bytesRecv atomic.Uint64
	lastRecv  atomic.Int64 // unix nanoseconds of the last byte read from the connection
	height    atomic.Uint64
	pingNonce atomic.Uint64
	pingSent  atomic.Int64
	pingRTT   atomic.Int64
	minPing   atomic.Int64

	knownBlocks *KnownSet
	knownTxs    *KnownSet
}

// New wraps a connection. Call Handshake, then Run.
func New(conn net.Conn, inbound bool, cfg Config) *Peer {
	cfg.setDefaults()
	p := &Peer{id: peerIDs.Add(1), cfg: cfg, conn: conn,
		addr: conn.RemoteAddr().String(), inbound: inbound, connTime: time.Now(),
		q: newSendQueue(cfg.MaxQueueMsgs, cfg.MaxQueueBytes), quit: make(chan struct{}),
		knownBlocks: NewKnownSet(4096), knownTxs: NewKnownSet(50_000)}
	p.br = bufio.NewReaderSize(liveReader{conn, &p.lastRecv}, 64<<10)
	p.lastRecv.Store(p.connTime.UnixNano())
	if ap, err := netip.ParseAddrPort(p.addr); err == nil {
		p.ip = ap.Addr().Unmap()
	}
	return p
}

// ID is a number unique to this connection in the process.
func (p *Peer) ID() uint64 { return p.id }

// Addr is the remote address (host:port).
func (p *Peer) Addr() string { return p.addr }

// IP is the remote IP.
func (p *Peer) IP() netip.Addr { return p.ip }

// Inbound reports whether the peer connected to us.
func (p *Peer) Inbound() bool { return p.inbound }

// Version is the peer's version message (nil before the handshake).
func (p *Peer) Version() *wire.MsgVersion { return p.remote }

// Height is the best height the peer is known to have.
func (p *Peer) Height() uint64 { return p.height.Load() }

// SetHeight raises the peer's known height.
func (p *Peer) SetHeight(h uint64) {
	for {
		old := p.height.Load()
		if h <= old || p.height.CompareAndSwap(old, h) {
			return
		}
	}
}

// KnownBlocks are the blocks the peer is known to have (bounded).
func (p *Peer) KnownBlocks() *KnownSet { return p.knownBlocks }

// KnownTxs are the transactions the peer is known to have (bounded).
func (p *Peer) KnownTxs() *KnownSet { return p.knownTxs }

// Done is closed when the connection ends.
func (p *Peer) Done() <-chan struct{} { return p.quit }

// Err is why the connection ended (nil while it runs).
func (p *Peer) Err() error {
	p.errMu.Lock()
	defer p.errMu.Unlock()
	return p.err
}

// Disconnect closes the connection; the first reason given is kept.
func (p *Peer) Disconnect(reason error) {
	if reason == nil {
		reason = ErrClosed
	}
	p.closeOnce.Do(func() {
		p.errMu.Lock()
		p.err = reason
		p.errMu.Unlock()
		close(p.quit)
		p.conn.Close()
	})
}

// AddBanScore adds n to the peer's ban score. When the score reaches the threshold the
// owner hears of it (OnMisbehaving), the peer is disconnected with ErrMisbehaving and
// AddBanScore returns true.
func (p *Peer) AddBanScore(n int, reason string) bool {
	if n <= 0 {
		return false
	}
	score := p.banScore.Add(int64(n))
	p.cfg.Logger.Debug("peer misbehaving", "peer", p.addr, "score", score, "added", n, "reason", reason)
	if score >= int64(p.cfg.BanThreshold) && score-int64(n) < int64(p.cfg.BanThreshold) {
		if p.cfg.OnMisbehaving != nil {
			p.cfg.OnMisbehaving(p, reason)
		}
		p.Disconnect(fmt.Errorf("%w: %s", ErrMisbehaving, reason))
		return true
	}
	return score >= int64(p.cfg.BanThreshold)
}

// BanScore is the peer's ban score.
func (p *Peer) BanScore() int { return int(p.banScore.Load()) }

// Stats is a snapshot of the connection.
type Stats struct {
	ID        uint64
	Addr      string
	Inbound   bool
	Version   uint32
	UserAgent string
	Height    uint64
	BanScore  int
	ConnTime  time.Time
	BytesSent uint64
	BytesRecv uint64
	PingRTT   time.Duration // the last ping's round trip (0: none answered yet)
	MinPing   time.Duration // the shortest round trip seen (0: none answered yet)
	LocalAddr string        // our end of the connection (host:port)
}

// Stats returns a snapshot of the connection.
func (p *Peer) Stats() Stats {
	s := Stats{ID: p.id, Addr: p.addr, Inbound: p.inbound, Height: p.Height(), BanScore: p.BanScore(),
		ConnTime: p.connTime, BytesSent: p.bytesSent.Load(), BytesRecv: p.bytesRecv.Load(),
		PingRTT: time.Duration(p.pingRTT.Load()), MinPing: time.Duration(p.minPing.Load()),
		LocalAddr: p.conn.LocalAddr().String()}
	if v := p.remote; v != nil {
		s.Version, s.UserAgent = v.ProtocolVersion, v.UserAgent
	}
	return s
}

// readMessage reads one frame with the idle deadline for its header and the payload
// deadline for the rest, and decodes it. Frame errors add the full ban score. During the
// handshake (bounded) the payload must also arrive within the header's deadline, so the
// whole handshake keeps HandshakeTimeout; after it, the payload has PayloadTimeout from
// its header whenever that came.
func (p *Peer) readMessage(headerDeadline time.Time, bounded bool) (wire.Message, int, error) {
	p.conn.SetReadDeadline(headerDeadline)
	var hb [wire.HeaderSize]byte
	if _, err := io.ReadFull(p.br, hb[:]); err != nil {
		return nil, 0, readErr(err, "waiting for a message")
	}
	p.bytesRecv.Add(wire.HeaderSize)
	h, err := wire.ParseHeader(hb[:], p.cfg.Magic)
	if err != nil {
		return nil, 0, err // not our protocol (NotOurProtocol): the connection closes, no ban score
	}
	if d := time.Now().Add(p.cfg.PayloadTimeout); !bounded || d.Before(headerDeadline) || headerDeadline.IsZero() {
		p.conn.SetReadDeadline(d)
	}
	payload, err := wire.ReadPayload(p.br, h.Length)
	p.bytesRecv.Add(uint64(len(payload)))
	if err != nil {
		return nil, 0, readErr(err, "reading a "+h.Command+" payload")
	}
	if err := wire.VerifyChecksum(h, payload); err != nil {
		return nil, 0, err
	}
	m, err := wire.Decode(h.Command, payload)
	if err != nil {
		if errors.Is(err, wire.ErrUnknownCommand) {
			return nil, len(payload), err
		}
		return nil, 0, err
	}
	return m, len(payload), nil
}

func readErr(err error, doing string) error {
	if errors.Is(err, os.ErrDeadlineExceeded) {
		return fmt.Errorf("%w %s", ErrTimeout, doing)
	}
	if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
		return fmt.Errorf("connection closed by peer while %s", doing)
	}
	return err
}

// writeNow writes a message directly (handshake only, before the write loop runs).
func (p *Peer) writeNow(m wire.Message) error {
	f := wire.Encode(p.cfg.Magic, m)
	n, err := p.conn.Write(f)
	p.bytesSent.Add(uint64(n))
	return err
}

// Handshake exchanges version and verack within HandshakeTimeout: an outbound peer sends its
// version first, an inbound one answers. The remote version must carry our magic and genesis
// hash and at least the minimum protocol version; verify may refuse it too (self or
// duplicate connections).
func (p *Peer) Handshake(ours *wire.MsgVersion, verify func(*wire.MsgVersion) error) error {
	deadline := time.Now().Add(p.cfg.HandshakeTimeout)
	p.conn.SetDeadline(deadline)
	defer p.conn.SetDeadline(time.Time{})
	if !p.inbound {
		if err := p.writeNow(ours); err != nil {
			return err
		}
	}
	m, _, err := p.readMessage(deadline, true)
	if err != nil {
		if errors.Is(err, wire.ErrUnknownCommand) {
			err = fmt.Errorf("%w: %v before version", ErrProtocol, err)
		}
		return err
	}
	v, ok := m.(*wire.MsgVersion)
	if !ok {
		return fmt.Errorf("%w: %s before version", ErrProtocol, m.Command())
	}
	switch {
	case v.Magic != p.cfg.Magic:
		return fmt.Errorf("%w: version names network magic %q, ours is %q", ErrWrongNetwork, wire.Printable(v.Magic[:]), wire.Printable(p.cfg.Magic[:]))
	case v.Genesis != p.cfg.Genesis:
		return fmt.Errorf("%w: genesis hash %s, ours is %s", ErrWrongGenesis, v.Genesis, p.cfg.Genesis)
	case v.ProtocolVersion < p.cfg.MinProtocolVersion:
		return fmt.Errorf("%w %d: the minimum is %d", ErrObsolete, v.ProtocolVersion, p.cfg.MinProtocolVersion)
	}
	if verify != nil {
		if err := verify(v); err != nil {
			return err
		}
	}
	p.remote = v
	p.height.Store(v.BestHeight)
	if p.inbound {
		if err := p.writeNow(ours); err != nil {
			return err
		}
	}
	if err := p.writeNow(&wire.MsgVerack{}); err != nil {
		return err
	}
	m, _, err = p.readMessage(deadline, true)
	if err != nil {
		if errors.Is(err, wire.ErrUnknownCommand) {
			err = fmt.Errorf("%w: %v before verack", ErrProtocol, err)
		}
		return err
	}
	if _, ok := m.(*wire.MsgVerack); !ok {
		return fmt.Errorf("%w: %s before verack", ErrProtocol, m.Command())
	}
	return nil
}

// Run serves the connection after the handshake: it starts the write and ping loops and
// reads messages until the connection ends, passing them to h. It returns why it ended.
func (p *Peer) Run(h Handler) error {
	go p.writeLoop()
	go p.pingLoop()
	for {
		m, size, err := p.readMessage(time.Now().Add(p.cfg.IdleTimeout), false)
		select {
		case <-p.quit:
			return p.Err()
		default:
		}
		if err != nil {
			if errors.Is(err, wire.ErrUnknownCommand) {
				p.cfg.Logger.Debug("ignoring unknown message", "peer", p.addr, "err", err)
				continue
			}
			p.Disconnect(err)
			return p.Err()
		}
		switch m := m.(type) {
		case *wire.MsgPing:
			p.TrySend(&wire.MsgPong{Nonce: m.Nonce})
		case *wire.MsgPong:
			if m.Nonce != 0 && p.pingNonce.CompareAndSwap(m.Nonce, 0) {
				rtt := max(time.Now().UnixNano()-p.pingSent.Load(), 1)
				p.pingRTT.Store(rtt)
				for {
					old := p.minPing.Load()
					if (old != 0 && old <= rtt) || p.minPing.CompareAndSwap(old, rtt) {
						break
					}
				}
			}
		case *wire.MsgVersion, *wire.MsgVerack:
			p.AddBanScore(10, "repeated "+m.Command())
		default:
			h.HandleMessage(p, m, size)
		}
		select {
		case <-p.quit:
			return p.Err()
		default:
		}
	}
}

func (p *Peer) writeLoop() {
	bw := bufio.NewWriterSize(p.conn, 64<<10)
	for {
		f, more, ok := p.q.pop(p.quit)
		if !ok {
			return
		}
		p.conn.SetWriteDeadline(time.Now().Add(p.cfg.WriteTimeout))
		n, err := bw.Write(f)
		if err == nil && !more {
			err = bw.Flush()
		}
		p.bytesSent.Add(uint64(n))
		if err != nil {
			if errors.Is(err, os.ErrDeadlineExceeded) {
				err = fmt.Errorf("%w writing: the peer does not read", ErrTimeout)
			}
			p.Disconnect(err)
			return
		}
	}
}

// Liveness. A connection through a black hole (a cut link, a peer that vanished without a
// reset) sees no error: TCP only backs its retransmissions off, up to minutes apart, and the
// connection holds a slot meanwhile. So every PingInterval the peer is pinged, and the
// connection ends when no frame started within IdleTimeout (the read deadline), or when a
// ping has waited IdleTimeout for its pong while no byte at all arrived meanwhile (a pong
// may wait behind a large block the peer is sending us; its bytes keep the link alive).
// Bitcoin Core pings every 2 minutes and waits 20 for the pong; our 10 s and 30 s find a
// dead link within half a minute, for a ping of 32 bytes each way every 10 s.

// liveReader notes the time of every read that returned bytes (Peer.lastRecv).
type liveReader struct {
	r    io.Reader
	last *atomic.Int64
}

func (l liveReader) Read(b []byte) (int, error) {
	n, err := l.r.Read(b)
	if n > 0 {
		l.last.Store(time.Now().UnixNano())
	}
	return n, err
}

func (p *Peer) pingLoop() {
	t := time.NewTicker(p.cfg.PingInterval)
	defer t.Stop()
	for {
		select {
		case <-p.quit:
			return
		case <-t.C:
		}
		if p.pingNonce.Load() != 0 && time.Since(time.Unix(0, p.pingSent.Load())) > p.cfg.IdleTimeout &&
			time.Since(time.Unix(0, p.lastRecv.Load())) > p.cfg.IdleTimeout {
			p.Disconnect(fmt.Errorf("%w: no pong and no data for %s", ErrTimeout, p.cfg.IdleTimeout))
			return
		}
		p.Ping()
	}
}

// Ping sends a ping unless one is already waiting for its pong; the pong's round trip is
// the peer's ping time (Stats). The ping loop calls it every PingInterval, the ping RPC at
// once.
func (p *Peer) Ping() {
	var b [8]byte
	rand.Read(b[:])
	nonce := binary.LittleEndian.Uint64(b[:]) | 1
	if p.pingNonce.Load() != 0 {
		return
	}
	p.pingSent.Store(time.Now().UnixNano())
	if !p.pingNonce.CompareAndSwap(0, nonce) {
		return
	}
	p.TrySend(&wire.MsgPing{Nonce: nonce})
}

// TrySend queues m unless the send queue is full (then m is dropped and TrySend reports
// false). For announcements and requests from other goroutines.
func (p *Peer) TrySend(m wire.Message) bool {
	return p.q.push(wire.Encode(p.cfg.Magic, m), false, p.quit)
}

// Send queues m, waiting while the queue is full: the sender (the peer's own read loop,
// answering its requests) is slowed down to the pace the peer reads at.
func (p *Peer) Send(m wire.Message) error {
	return p.SendRaw(m.Command(), wire.Payload(m))
}

// SendRaw is Send for an already encoded payload (a stored block).
func (p *Peer) SendRaw(cmd string, payload []byte) error {
	if !p.q.push(wire.EncodeFrameRaw(p.cfg.Magic, cmd, payload), true, p.quit) {
		return ErrClosed
	}
	return nil
}

// TrySendRaw is TrySend for an already encoded payload (a stored block pushed to a peer).
func (p *Peer) TrySendRaw(cmd string, payload []byte) bool {
	return p.q.push(wire.EncodeFrameRaw(p.cfg.Magic, cmd, payload), false, p.quit)
}

// QueueLen is the number of frames and bytes waiting to be written.
func (p *Peer) QueueLen() (frames, bytes int) { return p.q.len() }

// LocalAddr is our end of the connection: the address the peer reached us at (inbound) or
// the one we left from (outbound).
func (p *Peer) LocalAddr() netip.AddrPort {
	ap, _ := netip.ParseAddrPort(p.conn.LocalAddr().String())
	return netip.AddrPortFrom(ap.Addr().Unmap(), ap.Port())
}

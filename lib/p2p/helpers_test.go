package p2p

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cointoolkit/coin/lib/chaingen"
	"github.com/cointoolkit/coin/lib/consensus"
	"github.com/cointoolkit/coin/lib/p2p/wire"
	"github.com/cointoolkit/coin/lib/params"
	"github.com/cointoolkit/coin/lib/types"
)

// logBuf collects a node's log for assertions.
type logBuf struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *logBuf) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *logBuf) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

func (l *logBuf) Contains(s string) bool { return strings.Contains(l.String(), s) }

// tnode is an in-process node with its P2P server on loopback.
type tnode struct {
	t      testing.TB
	name   string
	n      *testNode
	s      *Server
	dir    string
	log    *logBuf
	cancel context.CancelFunc
	done   chan error
	once   sync.Once
	// started is when Run was called (after the database was opened).
	started time.Time
}

type nodeOpts struct {
	connect []string
	dir     string
	listen  string
	tweak   func(*Config)
	quiet   bool // info level instead of debug
	discard bool // no log at all
	// hostileLoopback: loopback peers are discouraged like any other, so that tests can
	// play hostile peers from 127.0.0.0/8 (the exemption itself is tested apart).
	hostileLoopback bool
}

// noDial keeps a node from dialling the addresses it learns by gossip, so that a test's
// topology is the one it sets up (the node still accepts connections).
func noDial(c *Config) { c.MaxOutbound = -1 }

func startNode(t testing.TB, name string, o nodeOpts) *tnode {
	t.Helper()
	if o.dir == "" {
		o.dir = t.TempDir()
	}
	if o.listen == "" {
		o.listen = "127.0.0.1:0"
	}
	lb := &logBuf{}
	level := slog.LevelDebug
	if o.quiet {
		level = slog.LevelInfo
	}
	var out io.Writer = lb
	if o.discard {
		out = io.Discard
	}
	logger := slog.New(slog.NewTextHandler(out, &slog.HandlerOptions{Level: level}))
	n, err := newTestNode(params.Regtest, o.dir, logger)
	if err != nil {
		t.Fatal(err)
	}
	cfg := Config{Network: params.Regtest, ListenAddr: o.listen, Connect: o.connect, DataDir: o.dir, Logger: logger,
		StallTimeout: 2 * time.Second, BlockTimeout: 10 * time.Second, HeadersTimeout: 10 * time.Second}
	cfg.Addrman.BackoffBase = 100 * time.Millisecond
	cfg.Addrman.ConnectBackoffMax = time.Second
	if o.tweak != nil {
		o.tweak(&cfg)
	}
	s, err := New(cfg, n.Chain(), n.Mempool(), n)
	if err != nil {
		t.Fatal(err)
	}
	if o.hostileLoopback {
		s.bans.exemptLoopback = false
	}
	n.SetNetwork(s)
	ctx, cancel := context.WithCancel(context.Background())
	tn := &tnode{t: t, name: name, n: n, s: s, dir: o.dir, log: lb, cancel: cancel, done: make(chan error, 1),
		started: time.Now()}
	go func() { tn.done <- n.Run(ctx) }()
	t.Cleanup(func() {
		tn.stop()
		if t.Failed() {
			t.Logf("---- log of %s ----\n%s", name, lb.String())
		}
	})
	waitFor(t, 5*time.Second, name+" listening", func() bool { return s.ListenPort() != 0 })
	return tn
}

func (tn *tnode) addr() string { return fmt.Sprintf("127.0.0.1:%d", tn.s.ListenPort()) }

func (tn *tnode) stop() {
	tn.once.Do(func() {
		tn.cancel()
		if err := <-tn.done; err != nil {
			tn.t.Errorf("%s: Run: %v", tn.name, err)
		}
	})
}

func (tn *tnode) height() uint64  { return tn.n.Chain().Tip().Height }
func (tn *tnode) tip() types.Hash { return tn.n.Chain().Tip().Hash }

func (tn *tnode) peerCount() int { return len(tn.s.Peers()) }

func waitFor(t testing.TB, d time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(d)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %s waiting for %s", d, what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// wallet is a test key with the lib/chaingen generator that builds its blocks and transfers.
type wallet struct {
	*chaingen.Wallet
	pkh types.Hash
	gen *chaingen.Generator
}

func newWallet(seed byte) wallet {
	s := make([]byte, 32)
	s[0] = seed
	w := chaingen.WalletFromSeed(fmt.Sprintf("wallet%d", seed), s)
	g := chaingen.New(nil, params.Regtest) // no test to report to: a failure panics
	g.SetMiner(w)
	return wallet{Wallet: w, pkh: w.PKH, gen: g}
}

// spend pays the output prev:idx, less fee, to w (signed by w).
func (w wallet) spend(prev *types.Transaction, idx uint32, fee uint64) *types.Transaction {
	return w.gen.Spend(chaingen.OutputOf(prev, int(idx))).Fee(fee).Change(w.pkh, 1).SignedBy(w.Wallet).Tx()
}

// nextBlock builds and solves a block on the node's tip with the mempool's transactions
// (as getblocktemplate does) plus extra, paying w all it may claim.
func (tn *tnode) nextBlock(w wallet, extra ...*types.Transaction) *types.Block {
	next := tn.n.Chain().NextBlock()
	var txs []*types.Transaction
	var fees uint64
	for _, e := range tn.n.Mempool().Select(consensus.MaxBlockSize - 2000) {
		txs = append(txs, e.Tx)
		fees += e.Fee
	}
	txs = append(txs, extra...)
	ts := max(uint64(time.Now().Unix()), next.MinTimestamp)
	reward, _ := consensus.MaxCoinbaseValue(next.Height, fees, next.Pool)
	return w.gen.NextOn("", chaingen.Template{Parent: next.Parent, Height: next.Height, Target: next.Target,
		Timestamp: ts, Pool: next.Pool}, txs, chaingen.CoinbaseValue(reward), chaingen.Extra([]byte(tn.name)))
}

// mine mines count blocks on the node's tip.
func (tn *tnode) mine(w wallet, count int) []*types.Block {
	tn.t.Helper()
	var out []*types.Block
	for i := 0; i < count; i++ {
		b := tn.nextBlock(w)
		if _, err := tn.n.SubmitBlock(context.Background(), b); err != nil {
			tn.t.Fatalf("%s: mining: %v", tn.name, err)
		}
		out = append(out, b)
	}
	return out
}

// rawPeer speaks the wire protocol by hand, for hostile and fake peers.
type rawPeer struct {
	t  testing.TB
	c  net.Conn
	br *bufio.Reader
}

func dialRaw(t testing.TB, target, localIP string) (*rawPeer, error) {
	d := net.Dialer{Timeout: 2 * time.Second}
	if localIP != "" {
		d.LocalAddr = &net.TCPAddr{IP: net.ParseIP(localIP)}
	}
	c, err := d.Dial("tcp", target)
	if err != nil {
		return nil, err
	}
	t.Cleanup(func() { c.Close() })
	return &rawPeer{t: t, c: c, br: bufio.NewReader(c)}, nil
}

func (r *rawPeer) write(b []byte) error {
	r.c.SetWriteDeadline(time.Now().Add(5 * time.Second))
	_, err := r.c.Write(b)
	return err
}

func (r *rawPeer) send(m wire.Message) error { return r.write(wire.Encode(params.Regtest.Magic, m)) }

// recv reads the next message, answering pings.
func (r *rawPeer) recv(d time.Duration) (wire.Message, error) {
	for {
		r.c.SetReadDeadline(time.Now().Add(d))
		h, payload, err := wire.ReadFrame(r.br, params.Regtest.Magic)
		if err != nil {
			return nil, err
		}
		m, err := wire.Decode(h.Command, payload)
		if err != nil {
			return nil, err
		}
		if p, ok := m.(*wire.MsgPing); ok {
			r.send(&wire.MsgPong{Nonce: p.Nonce})
			continue
		}
		return m, nil
	}
}

func rawVersion(height uint64, nonce uint64) *wire.MsgVersion {
	return &wire.MsgVersion{ProtocolVersion: wire.ProtocolVersion, Magic: params.Regtest.Magic,
		Genesis: params.Regtest.GenesisHash, BestHeight: height, Nonce: nonce, UserAgent: "rawpeer"}
}

// handshake runs the outbound side of the handshake.
func (r *rawPeer) handshake(v *wire.MsgVersion) error {
	if err := r.send(v); err != nil {
		return err
	}
	gotVersion, gotVerack := false, false
	for !gotVersion || !gotVerack {
		m, err := r.recv(5 * time.Second)
		if err != nil {
			return err
		}
		switch m.(type) {
		case *wire.MsgVersion:
			gotVersion = true
		case *wire.MsgVerack:
			gotVerack = true
		}
	}
	return r.send(&wire.MsgVerack{})
}

// closed reports whether the other side closes the connection within d (reading and
// discarding whatever comes first).
func (r *rawPeer) closed(d time.Duration) bool {
	r.c.SetReadDeadline(time.Now().Add(d))
	_, err := io.Copy(io.Discard, r.br)
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		return false
	}
	return true
}

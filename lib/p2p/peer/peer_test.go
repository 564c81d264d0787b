package peer

import (
	"errors"
	"io"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cointoolkit/coin/lib/p2p/wire"
	"github.com/cointoolkit/coin/lib/params"
	"github.com/cointoolkit/coin/lib/types"
)

func pair(t *testing.T) (net.Conn, net.Conn) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	ch := make(chan net.Conn, 1)
	go func() {
		c, _ := ln.Accept()
		ch <- c
	}()
	out, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	in := <-ch
	t.Cleanup(func() { out.Close(); in.Close() })
	return out, in
}

func cfg() Config {
	return Config{Magic: params.Regtest.Magic, Genesis: params.Regtest.GenesisHash, HandshakeTimeout: 2 * time.Second}
}

func version(nonce uint64) *wire.MsgVersion {
	return &wire.MsgVersion{ProtocolVersion: wire.ProtocolVersion, Magic: params.Regtest.Magic,
		Genesis: params.Regtest.GenesisHash, BestHeight: 5, ListenPort: 1, Nonce: nonce}
}

type recorder struct {
	mu   sync.Mutex
	msgs []wire.Message
}

func (r *recorder) HandleMessage(_ *Peer, m wire.Message, _ int) {
	r.mu.Lock()
	r.msgs = append(r.msgs, m)
	r.mu.Unlock()
}

func (r *recorder) count() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.msgs)
}

func handshakePair(t *testing.T, c1, c2 Config, v1, v2 *wire.MsgVersion) (*Peer, *Peer, error, error) {
	out, in := pair(t)
	po, pi := New(out, false, c1), New(in, true, c2)
	var wg sync.WaitGroup
	var eo, ei error
	wg.Add(2)
	run := func(p *Peer, v *wire.MsgVersion, err *error) {
		defer wg.Done()
		if *err = p.Handshake(v, nil); *err != nil {
			p.Disconnect(*err) // as the server does: the other end sees the close at once
		}
	}
	go run(po, v1, &eo)
	go run(pi, v2, &ei)
	wg.Wait()
	return po, pi, eo, ei
}

func TestHandshakeAndMessages(t *testing.T) {
	po, pi, eo, ei := handshakePair(t, cfg(), cfg(), version(1), version(2))
	if eo != nil || ei != nil {
		t.Fatalf("handshake: %v / %v", eo, ei)
	}
	if po.Version().Nonce != 2 || pi.Version().Nonce != 1 || po.Height() != 5 {
		t.Fatalf("versions %+v %+v", po.Version(), pi.Version())
	}
	rec := &recorder{}
	go pi.Run(rec)
	go po.Run(&recorder{})
	for i := 0; i < 100; i++ {
		if !po.TrySend(&wire.MsgInv{Inv: []wire.InvVect{{Type: wire.InvTx, Hash: types.Hash{byte(i)}}}}) {
			t.Fatal("queue full")
		}
	}
	deadline := time.Now().Add(5 * time.Second)
	for rec.count() < 100 && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
	}
	if rec.count() != 100 {
		t.Fatalf("received %d messages", rec.count())
	}
	// The sender counts a write when it returns, possibly after the receiver counted it.
	var sent, recv uint64
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(5 * time.Millisecond) {
		sent, recv = po.Stats().BytesSent, pi.Stats().BytesRecv
		if sent != 0 && recv == sent || time.Now().After(deadline) {
			break
		}
	}
	if sent == 0 || recv != sent {
		t.Fatalf("byte counts sent %d received %d", sent, recv)
	}
	po.Disconnect(nil)
	select {
	case <-pi.Done():
	case <-time.After(5 * time.Second):
		t.Fatal("remote end did not notice the disconnection")
	}
}

func TestHandshakeRejects(t *testing.T) {
	// The inbound side checks the version the outbound side sends.
	cases := []struct {
		name string
		v    *wire.MsgVersion
		want error
	}{
		{"magic", func() *wire.MsgVersion { v := version(1); v.Magic = params.Testnet.Magic; return v }(), ErrWrongNetwork},
		{"genesis", func() *wire.MsgVersion { v := version(1); v.Genesis = types.Hash{9}; return v }(), ErrWrongGenesis},
		{"version", func() *wire.MsgVersion { v := version(1); v.ProtocolVersion = 0; return v }(), ErrObsolete},
	}
	for _, c := range cases {
		_, _, _, ei := handshakePair(t, cfg(), cfg(), c.v, version(2))
		if !errors.Is(ei, c.want) {
			t.Errorf("%s: inbound error %v, want %v", c.name, ei, c.want)
		}
	}
	// A frame of another network's magic fails at the frame level, with no ban score.
	out, in := pair(t)
	pi := New(in, true, cfg())
	go out.Write(wire.Encode(params.Mainnet.Magic, version(1)))
	err := pi.Handshake(version(2), nil)
	if !errors.Is(err, wire.ErrBadMagic) || pi.BanScore() != 0 || !NotOurProtocol(err) {
		t.Fatalf("err %v score %d", err, pi.BanScore())
	}
	// verify refuses (self-connection).
	errSelf := errors.New("self")
	out, in = pair(t)
	po, pi := New(out, false, cfg()), New(in, true, cfg())
	go po.Handshake(version(7), nil)
	if err := pi.Handshake(version(7), func(v *wire.MsgVersion) error { return errSelf }); !errors.Is(err, errSelf) {
		t.Fatalf("verify: %v", err)
	}
	// Anything before version is a protocol violation.
	out, in = pair(t)
	pi = New(in, true, cfg())
	go out.Write(wire.Encode(params.Regtest.Magic, &wire.MsgPing{Nonce: 1}))
	if err := pi.Handshake(version(2), nil); !errors.Is(err, ErrProtocol) {
		t.Fatalf("ping first: %v", err)
	}
}

func TestDeadlines(t *testing.T) {
	// Silent during the handshake.
	_, in := pair(t)
	c := cfg()
	c.HandshakeTimeout = 100 * time.Millisecond
	start := time.Now()
	if err := New(in, true, c).Handshake(version(2), nil); !errors.Is(err, ErrTimeout) {
		t.Fatalf("silent peer: %v", err)
	}
	if time.Since(start) > 2*time.Second {
		t.Fatal("handshake deadline not kept")
	}
	// Idle after the handshake, and a payload that never completes.
	c.IdleTimeout = 200 * time.Millisecond
	c.PayloadTimeout = 200 * time.Millisecond
	c.PingInterval = time.Hour
	po, pi, eo, ei := handshakePair(t, cfg(), c, version(1), version(2))
	if eo != nil || ei != nil {
		t.Fatal(eo, ei)
	}
	done := make(chan error, 1)
	go func() { done <- pi.Run(&recorder{}) }()
	select {
	case err := <-done:
		if !errors.Is(err, ErrTimeout) {
			t.Fatalf("idle: %v", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("idle deadline not kept")
	}
	_ = po
	po, pi, _, _ = handshakePair(t, cfg(), c, version(1), version(2))
	go func() { done <- pi.Run(&recorder{}) }()
	frame := wire.Encode(params.Regtest.Magic, &wire.MsgPing{Nonce: 3})
	po.conn.Write(frame[:wire.HeaderSize]) // header only: the payload never comes
	select {
	case err := <-done:
		if !errors.Is(err, ErrTimeout) {
			t.Fatalf("slow payload: %v", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("payload deadline not kept")
	}
}

func TestSendQueueBound(t *testing.T) {
	out, _ := pair(t) // nobody reads the other end
	c := cfg()
	c.MaxQueueMsgs = 4
	c.MaxQueueBytes = 1 << 20
	p := New(out, false, c)
	big := &wire.MsgTx{Tx: params.Regtest.GenesisBlock().Transactions[0]}
	n := 0
	for i := 0; i < 10; i++ {
		if p.TrySend(big) {
			n++
		}
	}
	if n != 4 {
		t.Fatalf("queued %d of 10 with a bound of 4", n)
	}
	// Send waits for room and gives up when the peer goes away.
	errc := make(chan error, 1)
	go func() { errc <- p.Send(big) }()
	select {
	case <-errc:
		t.Fatal("Send did not wait for room")
	case <-time.After(100 * time.Millisecond):
	}
	p.Disconnect(nil)
	if err := <-errc; !errors.Is(err, ErrClosed) {
		t.Fatalf("Send after disconnect: %v", err)
	}
}

func TestWriteDeadline(t *testing.T) {
	out, _ := pair(t) // the other end never reads: the kernel buffers fill
	c := cfg()
	c.WriteTimeout = 200 * time.Millisecond
	c.PingInterval = time.Hour
	p := New(out, false, c)
	go p.writeLoop()
	payload := make([]byte, wire.MaxBlockPayload)
	for i := 0; i < 64; i++ {
		if p.SendRaw(wire.CmdBlock, payload) != nil {
			break
		}
	}
	select {
	case <-p.Done():
		if !errors.Is(p.Err(), ErrTimeout) {
			t.Fatalf("err %v", p.Err())
		}
	case <-time.After(10 * time.Second):
		t.Fatal("a peer that does not read was not dropped")
	}
}

func TestBanScore(t *testing.T) {
	out, _ := pair(t)
	p := New(out, false, cfg())
	if p.AddBanScore(60, "a") || p.BanScore() != 60 {
		t.Fatal("banned early")
	}
	if !p.AddBanScore(40, "b") {
		t.Fatal("not banned at 100")
	}
	<-p.Done()
	if !errors.Is(p.Err(), ErrMisbehaving) || NotOurProtocol(p.Err()) {
		t.Fatalf("err %v", p.Err())
	}
}

func TestKnownSet(t *testing.T) {
	s := NewKnownSet(3)
	for i := 0; i < 5; i++ {
		if !s.Add(types.Hash{byte(i)}) {
			t.Fatal("new hash not added")
		}
	}
	if s.Len() != 3 || s.Has(types.Hash{0}) || s.Has(types.Hash{1}) || !s.Has(types.Hash{4}) {
		t.Fatalf("set holds %d", s.Len())
	}
	if s.Add(types.Hash{4}) {
		t.Fatal("duplicate added")
	}
	s.Reset()
	if s.Len() != 0 || s.Has(types.Hash{4}) || !s.Add(types.Hash{4}) {
		t.Fatal("reset")
	}
}

// TestLiveness: a ping left unanswered ends the link once no byte arrived for IdleTimeout,
// even while a frame is only half read (the payload deadline is far off: a link through a
// black hole sees no error), but not while bytes keep arriving (a pong may wait behind a
// large block the peer is sending).
func TestLiveness(t *testing.T) {
	c := cfg()
	c.IdleTimeout = 400 * time.Millisecond
	c.PingInterval = 100 * time.Millisecond
	c.PayloadTimeout = time.Minute
	po, pi, eo, ei := handshakePair(t, cfg(), c, version(1), version(2))
	if eo != nil || ei != nil {
		t.Fatal(eo, ei)
	}
	go io.Copy(io.Discard, po.conn) // the remote end reads our pings and never answers
	done := make(chan error, 1)
	go func() { done <- pi.Run(&recorder{}) }()
	// One frame whose payload trickles in, a byte every 50 ms for 1.5 s: alive.
	frame := wire.Encode(params.Regtest.Magic, &wire.MsgTx{Tx: params.Regtest.GenesisBlock().Transactions[0]})
	po.conn.Write(frame[:wire.HeaderSize])
	for i := 0; i < 30; i++ {
		select {
		case err := <-done:
			t.Fatalf("ended while bytes kept arriving: %v", err)
		case <-time.After(50 * time.Millisecond):
		}
		po.conn.Write(frame[wire.HeaderSize+i : wire.HeaderSize+i+1])
	}
	// Then silence: the unanswered ping ends it within about IdleTimeout plus a ping interval.
	start := time.Now()
	select {
	case err := <-done:
		if !errors.Is(err, ErrTimeout) || !strings.Contains(err.Error(), "no pong and no data") {
			t.Fatalf("silent: %v", err)
		}
		if took := time.Since(start); took > 2*time.Second {
			t.Fatalf("took %s to notice a silent link", took)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("a silent link with an unanswered ping was kept")
	}
}

package netlab

import (
	"context"
	"crypto/rand"
	"encoding/binary"
	"fmt"
	"net"
	"net/netip"
	"sync"
	"sync/atomic"
	"time"

	"github.com/cointoolkit/coin/lib/consensus"
	"github.com/cointoolkit/coin/lib/keys"
	"github.com/cointoolkit/coin/lib/miner"
	"github.com/cointoolkit/coin/lib/p2p/wire"
	"github.com/cointoolkit/coin/lib/params"
	"github.com/cointoolkit/coin/lib/rpcapi"
	"github.com/cointoolkit/coin/lib/types"
)

// rawPeer is the attacker's side of one P2P connection, opened from one of the attacker
// namespace's addresses.
type rawPeer struct {
	c      net.Conn
	closed atomic.Bool
	done   chan struct{}
}

// dialRaw connects from the attacker address from to node n and completes the handshake;
// it then reads (and answers pings) until the node closes the connection.
func (l *Lab) dialRaw(ctx context.Context, from netip.Addr, n *Node) (*rawPeer, error) {
	c, err := DialIn(l.AtkNS, &net.TCPAddr{IP: from.AsSlice()})(ctx, "tcp", n.Addr())
	if err != nil {
		return nil, err
	}
	return handshake(c, attackerVersion())
}

// attackerVersion is the version message of an attacker connection.
func attackerVersion() *wire.MsgVersion {
	var nonce [8]byte
	rand.Read(nonce[:])
	return &wire.MsgVersion{ProtocolVersion: wire.ProtocolVersion, Magic: params.Regtest.Magic, Genesis: params.Regtest.GenesisHash,
		ListenPort: P2PPort, Nonce: binary.LittleEndian.Uint64(nonce[:]), UserAgent: "/netlab-attacker/"}
}

// handshake sends v, waits for the other side's version and verack (answering its version
// with a verack), then reads on in the background, answering pings, until the connection
// closes.
func handshake(c net.Conn, v *wire.MsgVersion) (*rawPeer, error) {
	magic := params.Regtest.Magic
	c.SetDeadline(time.Now().Add(10 * time.Second))
	if _, err := c.Write(wire.Encode(magic, v)); err != nil {
		c.Close()
		return nil, err
	}
	gotVersion, gotVerack := false, false
	for !gotVersion || !gotVerack {
		h, _, err := wire.ReadFrame(c, magic)
		if err != nil {
			c.Close()
			return nil, fmt.Errorf("handshake: %w", err)
		}
		switch h.Command {
		case wire.CmdVersion:
			gotVersion = true
			c.Write(wire.Encode(magic, &wire.MsgVerack{}))
		case wire.CmdVerack:
			gotVerack = true
		}
	}
	c.SetDeadline(time.Time{})
	p := &rawPeer{c: c, done: make(chan struct{})}
	go func() {
		defer close(p.done)
		for {
			h, payload, err := wire.ReadFrame(c, magic)
			if err != nil {
				p.closed.Store(true)
				return
			}
			if h.Command == wire.CmdPing {
				if m, err := wire.Decode(h.Command, payload); err == nil {
					c.Write(wire.Encode(magic, &wire.MsgPong{Nonce: m.(*wire.MsgPing).Nonce}))
				}
			}
		}
	}()
	return p, nil
}

// attackerPorts is how many ports per attacker address the addr flood names (and the
// attacker listens on): 50 addresses × 20 ports = 1,000, one full addr message.
const attackerPorts = 20

// listenAttacker makes the attacker answer on every address it advertises: a victim that
// dials one gets a handshake and an idle peer (what an eclipse needs), counted in dialled.
func (l *Lab) listenAttacker(ctx context.Context, dialled *atomic.Int64) (stop func(), err error) {
	var lns []net.Listener
	err = InNetns(l.AtkNS, func() error {
		for k := 0; k < attackerPorts; k++ {
			ln, err := net.Listen("tcp", fmt.Sprintf("0.0.0.0:%d", P2PPort+k))
			if err != nil {
				return err
			}
			lns = append(lns, ln)
		}
		return nil
	})
	var mu sync.Mutex
	var conns []net.Conn
	stop = func() {
		for _, ln := range lns {
			ln.Close()
		}
		mu.Lock()
		for _, c := range conns {
			c.Close()
		}
		mu.Unlock()
	}
	if err != nil {
		stop()
		return nil, err
	}
	for _, ln := range lns {
		go func() {
			for {
				c, err := ln.Accept()
				if err != nil {
					return
				}
				mu.Lock()
				conns = append(conns, c)
				mu.Unlock()
				go func() {
					if _, err := handshake(c, attackerVersion()); err == nil {
						dialled.Add(1)
					}
				}()
			}
		}()
	}
	return stop, nil
}

// closedWithin reports whether the node closed the connection within d.
func (p *rawPeer) closedWithin(d time.Duration) bool {
	select {
	case <-p.done:
		return true
	case <-time.After(d):
		return false
	}
}

func (p *rawPeer) Close() { p.c.Close(); <-p.done }

// peersOf is node n's peers split into honest outbound, attacker outbound and attacker
// inbound connections.
func (l *Lab) peersOf(ctx context.Context, n *Node) (honestOut, atkOut, atkIn, honestIn int, err error) {
	var pi rpcapi.PeerInfo
	c, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	if err := n.RPC.Call(c, "getpeerinfo", nil, &pi); err != nil {
		return 0, 0, 0, 0, err
	}
	for _, p := range pi.Peers {
		ap, err := netip.ParseAddrPort(p.Addr)
		atk := err == nil && l.Attacker != nil && isAttacker(ap.Addr().Unmap())
		switch {
		case !p.Inbound && !atk:
			honestOut++
		case !p.Inbound:
			atkOut++
		case atk:
			atkIn++
		default:
			honestIn++
		}
	}
	return honestOut, atkOut, atkIn, honestIn, nil
}

func isAttacker(a netip.Addr) bool {
	b := a.As4()
	return a.Is4() && b[0] == 10 && b[1] == 77 && b[2] == 99
}

// Eclipse: an attacker holding the attacker namespace's addresses (one /24) opens as many
// connections to the victim as it takes and floods it with addr messages naming its own
// /24, while blocks flow; halfway the victim restarts (and must choose its outbound peers
// again). The victim must keep at least two honest outbound peers and keep receiving blocks.
func (l *Lab) Eclipse(ctx context.Context, victim *Node, interval, dur time.Duration) *Result {
	r := &Result{Name: "eclipse attempt", Values: map[string]float64{}}
	if l.Attacker == nil {
		r.fail("the lab has no attacker namespace")
		return r
	}
	since := time.Now()
	w := NewWallet()
	f := l.StartFlow(ctx, interval, 0, w, nil, nil)
	actx, stop := context.WithCancel(ctx)
	var mu sync.Mutex
	var peers []*rawPeer
	var accepted, refused, addrMsgs, dialled atomic.Int64
	stopListen, err := l.listenAttacker(actx, &dialled)
	if err != nil {
		r.fail("attacker listeners: %v", err)
		stop()
		f.Stop()
		return r
	}
	defer stopListen()
	attack := func() {
		var wg sync.WaitGroup
		for _, a := range l.Attacker.Addrs {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for k := 0; k < 4 && actx.Err() == nil; k++ {
					p, err := l.dialRaw(actx, a, victim)
					if err != nil {
						refused.Add(1)
						continue
					}
					accepted.Add(1)
					mu.Lock()
					peers = append(peers, p)
					mu.Unlock()
					// addr flood: 1,000 addresses of the attacker's /24 per message.
					var msg wire.MsgAddr
					for i := 0; i < wire.MaxAddrs; i++ {
						ip := netip.AddrFrom4([4]byte{10, 77, 99, byte(1 + i%len(l.Attacker.Addrs))})
						msg.Addrs = append(msg.Addrs, wire.NewNetAddress(netip.AddrPortFrom(ip, uint16(P2PPort+(i/len(l.Attacker.Addrs))%attackerPorts)), uint64(time.Now().Unix())))
					}
					frame := wire.Encode(params.Regtest.Magic, &msg)
					for j := 0; j < 5; j++ {
						if _, err := p.c.Write(frame); err != nil {
							break
						}
						addrMsgs.Add(1)
					}
				}
			}()
		}
		wg.Wait()
	}
	_, _, _, honestIn0, _ := l.peersOf(ctx, victim)
	minHonest, maxAtkIn, maxAtkOut, minHonestIn := 1<<30, 0, 0, 1<<30
	sample := func() {
		h, ao, ai, hi, err := l.peersOf(ctx, victim)
		if err != nil {
			return
		}
		minHonest, maxAtkIn, maxAtkOut = min(minHonest, h), max(maxAtkIn, ai), max(maxAtkOut, ao)
		minHonestIn = min(minHonestIn, hi)
	}
	attack()
	deadline := time.Now().Add(dur / 2)
	for time.Now().Before(deadline) && ctx.Err() == nil {
		sample()
		time.Sleep(time.Second)
	}
	// Restart the victim while the attacker keeps at it.
	l.Kill(victim, false)
	mu.Lock()
	for _, p := range peers {
		p.c.Close()
	}
	peers = nil
	mu.Unlock()
	restartErr := l.Start(ctx, victim)
	go attack()
	time.Sleep(5 * time.Second) // the restarted victim dials its outbound peers
	afterHonest := 1 << 30
	deadline = time.Now().Add(dur / 2)
	for time.Now().Before(deadline) && ctx.Err() == nil {
		h, ao, ai, hi, err := l.peersOf(ctx, victim)
		if err == nil {
			afterHonest = min(afterHonest, h)
			maxAtkIn, maxAtkOut = max(maxAtkIn, ai), max(maxAtkOut, ao)
			minHonestIn = min(minHonestIn, hi)
		}
		time.Sleep(time.Second)
	}
	stop()
	mu.Lock()
	for _, p := range peers {
		p.Close()
	}
	mu.Unlock()
	f.Stop()
	r.add("attacker: %d addresses in 10.77.99.0/24; %d connections accepted by the victim (node %d), %d refused; %d addr messages of 1,000 addresses sent",
		len(l.Attacker.Addrs), accepted.Load(), victim.Index, refused.Load(), addrMsgs.Load())
	r.add("the victim dialled the attacker's advertised addresses %d times", dialled.Load())
	r.add("honest inbound peers of the victim: %d before the attack, at least %d during it (the attacker's connections compete for the same inbound slots)", honestIn0, minHonestIn)
	r.add("victim's honest outbound peers: at least %d during the flood, at least %d after its restart under attack; attacker held up to %d inbound and %d outbound slots",
		minHonest, afterHonest, maxAtkIn, maxAtkOut)
	if restartErr != nil {
		r.fail("victim restart: %v", restartErr)
	}
	if min(minHonest, afterHonest) < 2 {
		r.fail("the victim fell below two honest outbound peers")
	}
	r.Values["honest_out"] = float64(min(minHonest, afterHonest))
	r.goal("eclipse: the victim's honest outbound peers", "≥ 2", fmt.Sprint(min(minHonest, afterHonest)), min(minHonest, afterHonest) >= 2)
	if _, err := l.Settle(ctx, w.Addr); err != nil {
		r.fail("after the attack: %v", err)
	}
	time.Sleep(300 * time.Millisecond)
	mined, _ := f.Rec.Snapshot()
	ev := l.ReadEvents(since)
	st := l.blockStats(ctx, mined, ev, l.Nodes[0], []int{victim.Index}, nil)
	r.add("blocks mined during the attack: %d; the victim got each after a median %s (p99 %s); %d never reached it", st.Blocks+st.Stale, ms(p(st.T100, 50)), ms(p(st.T100, 99)), st.Unreached)
	if st.Unreached > 0 {
		r.fail("%d blocks never reached the victim", st.Unreached)
	}
	r.Series = []Series{{"blocks to the victim during the attack", st.All}}
	return r
}

// invalidBlock is a block on n's tip with a valid proof of work whose coinbase pays more
// than allowed: consensus-invalid.
func invalidBlock(ctx context.Context, n *Node) (*types.Block, error) {
	w := NewWallet()
	t, err := n.RPC.GetBlockTemplate(ctx, w.Addr)
	if err != nil {
		return nil, err
	}
	pkh, _ := keys.DecodeAddress(w.Addr, params.Regtest.HRP)
	work, err := miner.NewWork(t, pkh, params.Regtest.PowLimit)
	if err != nil {
		return nil, err
	}
	txs := append([]*types.Transaction(nil), work.Transactions...)
	cb := *txs[0]
	cb.Outputs = append([]types.TxOutput(nil), cb.Outputs...)
	cb.Outputs[0].Value += 1_000_000_000_000
	txs[0] = &cb
	h := work.Header
	var ids []types.Hash
	for _, tx := range txs {
		ids = append(ids, tx.TxID())
	}
	h.MerkleRoot = types.MerkleRoot(ids)
	for h.Nonce = 0; ; h.Nonce++ {
		if consensus.CheckProofOfWork(&h, h.Hash(), params.Regtest.PowLimit) == nil {
			break
		}
	}
	return &types.Block{Header: h, Transactions: txs}, nil
}

// BadPeer: from an attacker address, one connection sends garbage after the handshake and
// another a block with a valid proof of work but an oversized coinbase. Each must be
// dropped, the block refused, and the network must carry on (the next blocks reach every
// node).
func (l *Lab) BadPeer(ctx context.Context, target *Node, interval time.Duration) *Result {
	r := &Result{Name: "bad peer", Values: map[string]float64{}}
	if l.Attacker == nil {
		r.fail("the lab has no attacker namespace")
		return r
	}
	from := l.Attacker.Addrs[len(l.Attacker.Addrs)-1]
	tipBefore := target.Best(ctx)
	// Garbage.
	if p, err := l.dialRaw(ctx, from, target); err != nil {
		r.fail("handshake for the garbage test: %v", err)
	} else {
		junk := make([]byte, 4096)
		rand.Read(junk)
		p.c.Write(junk)
		if p.closedWithin(15 * time.Second) {
			r.add("4 KB of random bytes after the handshake: the node closed the connection")
		} else {
			r.fail("the node kept a connection that sent 4 KB of garbage")
		}
		p.Close()
	}
	// An invalid block.
	b, err := invalidBlock(ctx, target)
	if err != nil {
		r.fail("building the invalid block: %v", err)
		return r
	}
	var from2 = l.Attacker.Addrs[len(l.Attacker.Addrs)-2]
	if p, err := l.dialRaw(ctx, from2, target); err != nil {
		r.fail("handshake for the invalid block: %v", err)
	} else {
		p.c.Write(wire.Encode(params.Regtest.Magic, &wire.MsgBlock{Block: b}))
		if p.closedWithin(15 * time.Second) {
			r.add("a block with a valid proof of work and a coinbase 10,000 COIN too large: the node closed the connection")
		} else {
			r.fail("the node kept the peer that sent an invalid block")
		}
		p.Close()
		if q, err := l.dialRaw(ctx, from2, target); err != nil {
			r.add("reconnecting from the same address afterwards: refused (%v)", shortErr(err))
		} else {
			r.add("reconnecting from the same address afterwards: accepted")
			q.Close()
		}
	}
	if best := target.Best(ctx); best == b.Hash().String() {
		r.fail("the node took the invalid block as its tip")
	} else if best == tipBefore {
		r.add("the node's tip is unchanged by the invalid block")
	}
	// The network carries on.
	since := time.Now()
	f := l.StartFlow(ctx, interval/2, 0, NewWallet(), nil, nil)
	deadline := time.Now().Add(3 * interval)
	for time.Now().Before(deadline) && ctx.Err() == nil {
		if m, _ := f.Rec.Snapshot(); len(m) >= 3 {
			break
		}
		time.Sleep(200 * time.Millisecond)
	}
	f.Stop()
	if _, err := l.Settle(ctx, NewWallet().Addr); err != nil {
		r.fail("after the bad peer: %v", err)
	}
	time.Sleep(300 * time.Millisecond)
	mined, _ := f.Rec.Snapshot()
	st := l.blockStats(ctx, mined, l.ReadEvents(since), l.Nodes[0], nil, nil)
	r.add("afterwards %d blocks reached every node after a median %s (p99 %s); %d did not", st.Blocks, ms(p(st.T100, 50)), ms(p(st.T100, 99)), st.Unreached)
	if st.Unreached > 0 || st.Blocks == 0 {
		r.fail("blocks after the bad peer did not reach every node")
	}
	r.goal("bad peer: dropped, network unaffected", "yes", map[bool]string{true: "yes", false: "no"}[len(r.Failed) == 0], len(r.Failed) == 0)
	r.Series = []Series{{"blocks after the bad peer", st.All}}
	return r
}

func shortErr(err error) string {
	s := err.Error()
	if len(s) > 80 {
		s = s[:80] + "…"
	}
	return s
}

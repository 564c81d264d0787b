package p2p

import (
	"time"

	"github.com/cointoolkit/coin/lib/types"
)

// Transaction requests, per peer (in the manner of Bitcoin Core's TxRequestTracker): which
// peers announced which transactions we lack, which of them each was asked for, and when.
// One peer can hold back only what it announced: it has at most maxPeerTxAnnounced
// announcements tracked and maxPeerTxInflight requests in flight; the rest of its
// announcements wait in its own queue, and further ones are ignored. A transaction is asked
// of one announcer at a time, preferring one with a free request slot; when that one does
// not deliver (notfound, txRequestTimeout, disconnection), the next announcer is asked. So a
// peer announcing many transactions it never delivers delays only its own, and another
// peer's announcement of the same transaction at most by txRequestTimeout.
// Guarded by Server.txMu.

const (
	// maxPeerTxAnnounced bounds the announcements tracked per peer (Core: 5,000).
	maxPeerTxAnnounced = 5_000
	// maxPeerTxInflight bounds the transactions requested from one peer and not yet
	// answered (Core: 100).
	maxPeerTxInflight = 100
)

// txReq is a transaction request in flight.
type txReq struct {
	peer  *peerState
	sent  time.Time
	burst *txBurst // the getdata it was asked in
}

// txWant is one transaction we lack: the peers that announced it, and the request in flight.
type txWant struct {
	announcers []*peerState // in announcement order; the one asked included
	req        *txReq       // nil: not requested yet
}

// txPeer is one peer's share of the requests.
type txPeer struct {
	announced int                   // txids for which it is among the announcers
	inflight  map[types.Hash]*txReq // requested from it, unanswered
	queue     []types.Hash          // announced, waiting for a free request slot
}

// txRequests is the transaction request state of the server.
type txRequests struct {
	wants map[types.Hash]*txWant
	peers map[*peerState]*txPeer
}

func newTxRequests() *txRequests {
	return &txRequests{wants: make(map[types.Hash]*txWant), peers: make(map[*peerState]*txPeer)}
}

func (t *txRequests) peer(ps *peerState) *txPeer {
	tp := t.peers[ps]
	if tp == nil {
		tp = &txPeer{inflight: make(map[types.Hash]*txReq)}
		t.peers[ps] = tp
	}
	return tp
}

// announce records that ps announced the transactions ids (all of them lacked), and returns
// those to ask ps for now, each marked in flight from ps. Announcements past ps's bound are
// ignored.
func (t *txRequests) announce(ps *peerState, ids []types.Hash, now time.Time) []types.Hash {
	tp := t.peer(ps)
	for _, id := range ids {
		w := t.wants[id]
		if w == nil {
			w = &txWant{}
			t.wants[id] = w
		}
		known := false
		for _, a := range w.announcers {
			known = known || a == ps
		}
		if known || tp.announced >= maxPeerTxAnnounced {
			if len(w.announcers) == 0 {
				delete(t.wants, id)
			}
			continue
		}
		w.announcers = append(w.announcers, ps)
		tp.announced++
		if w.req == nil {
			tp.queue = append(tp.queue, id)
		}
	}
	return t.take(ps, tp, now)
}

// take pops the transactions to ask ps for now from its queue, up to its free request
// slots, and marks them in flight.
func (t *txRequests) take(ps *peerState, tp *txPeer, now time.Time) []types.Hash {
	var out []types.Hash
	burst := &txBurst{}
	for len(tp.queue) > 0 && len(tp.inflight) < maxPeerTxInflight {
		id := tp.queue[0]
		tp.queue = tp.queue[1:]
		w := t.wants[id]
		if w == nil || w.req != nil || !w.has(ps) {
			continue // delivered, asked of another announcer, or ps gave up on it
		}
		if burst.waiting == maxTxBurst {
			burst = &txBurst{}
		}
		burst.waiting++
		r := &txReq{peer: ps, sent: now, burst: burst}
		w.req = r
		tp.inflight[id] = r
		out = append(out, id)
	}
	if len(tp.queue) == 0 {
		tp.queue = nil
	}
	return out
}

func (w *txWant) has(ps *peerState) bool {
	for _, a := range w.announcers {
		if a == ps {
			return true
		}
	}
	return false
}

// requested reports whether id is in flight from ps.
func (t *txRequests) requested(ps *peerState, id types.Hash) (*txReq, bool) {
	w := t.wants[id]
	if w == nil || w.req == nil || w.req.peer != ps {
		return nil, false
	}
	return w.req, true
}

// have forgets id: the transaction arrived (from anyone) or is no longer wanted. It returns
// the request that was in flight, if any.
func (t *txRequests) have(id types.Hash) *txReq {
	w := t.wants[id]
	if w == nil {
		return nil
	}
	delete(t.wants, id)
	for _, a := range w.announcers {
		if tp := t.peers[a]; tp != nil {
			tp.announced--
		}
	}
	if r := w.req; r != nil {
		if tp := t.peers[r.peer]; tp != nil {
			delete(tp.inflight, id)
		}
	}
	return w.req
}

// failed ends the request for id from ps (notfound or timed out): ps is no longer an
// announcer of it, and the next announcer with a free slot is asked, else the first in line
// has it queued. It returns the request ended and the peer to ask now (nil: none).
func (t *txRequests) failed(ps *peerState, id types.Hash, now time.Time) (*txReq, *peerState) {
	w := t.wants[id]
	if w == nil || w.req == nil || w.req.peer != ps {
		return nil, nil
	}
	r := w.req
	w.req = nil
	if tp := t.peers[ps]; tp != nil {
		delete(tp.inflight, id)
	}
	t.dropAnnouncer(id, w, ps)
	return r, t.reassign(id, w, now)
}

func (t *txRequests) dropAnnouncer(id types.Hash, w *txWant, ps *peerState) {
	for i, a := range w.announcers {
		if a == ps {
			w.announcers = append(w.announcers[:i], w.announcers[i+1:]...)
			if tp := t.peers[ps]; tp != nil {
				tp.announced--
			}
			break
		}
	}
	if len(w.announcers) == 0 {
		delete(t.wants, id)
	}
}

// reassign asks the next announcer of an unrequested want: the first with a free request
// slot (returned, with the request marked in flight), else it waits in the first one's
// queue.
func (t *txRequests) reassign(id types.Hash, w *txWant, now time.Time) *peerState {
	if len(w.announcers) == 0 {
		return nil
	}
	for _, a := range w.announcers {
		tp := t.peer(a)
		if len(tp.inflight) < maxPeerTxInflight {
			r := &txReq{peer: a, sent: now, burst: &txBurst{waiting: 1}}
			w.req = r
			tp.inflight[id] = r
			return a
		}
	}
	tp := t.peer(w.announcers[0])
	tp.queue = append(tp.queue, id)
	return nil
}

// expire ends the requests older than timeout. It returns the requests ended (for their
// bursts) and, per peer, the transactions to ask it for now.
func (t *txRequests) expire(now time.Time, timeout time.Duration) ([]*txReq, map[*peerState][]types.Hash) {
	var ended []*txReq
	ask := make(map[*peerState][]types.Hash)
	for ps, tp := range t.peers {
		for id, r := range tp.inflight {
			if now.Sub(r.sent) > timeout {
				r2, next := t.failed(ps, id, now)
				if r2 != nil {
					ended = append(ended, r2)
				}
				if next != nil {
					ask[next] = append(ask[next], id)
				}
			}
		}
	}
	for ps, tp := range t.peers {
		if ids := t.take(ps, tp, now); len(ids) > 0 {
			ask[ps] = append(ask[ps], ids...)
		}
		if tp.announced <= 0 && len(tp.inflight) == 0 && len(tp.queue) == 0 {
			delete(t.peers, ps) // nothing left (also of a peer that announced after it left)
		}
	}
	return ended, ask
}

// more is what to ask ps for now that it has free request slots.
func (t *txRequests) more(ps *peerState, now time.Time) []types.Hash {
	tp := t.peers[ps]
	if tp == nil {
		return nil
	}
	return t.take(ps, tp, now)
}

// removePeer forgets a disconnected peer: its announcements, and its requests in flight,
// which go to the next announcers (returned per peer to ask now). The bursts of its requests
// are dropped with it.
func (t *txRequests) removePeer(ps *peerState, now time.Time) map[*peerState][]types.Hash {
	tp := t.peers[ps]
	if tp == nil {
		return nil
	}
	ask := make(map[*peerState][]types.Hash)
	for id := range tp.inflight {
		if _, next := t.failed(ps, id, now); next != nil {
			ask[next] = append(ask[next], id)
		}
	}
	for _, id := range tp.queue {
		if w := t.wants[id]; w != nil {
			t.dropAnnouncer(id, w, ps)
		}
	}
	// Announcements neither queued nor in flight (asked of another peer meanwhile).
	if tp.announced > 0 {
		for id, w := range t.wants {
			if w.has(ps) {
				t.dropAnnouncer(id, w, ps)
			}
		}
	}
	delete(t.peers, ps)
	return ask
}

// room is how many more announcements of ps are tracked.
func (t *txRequests) room(ps *peerState) int {
	if tp := t.peers[ps]; tp != nil {
		return max(maxPeerTxAnnounced-tp.announced, 0)
	}
	return maxPeerTxAnnounced
}

// inflightCount is the requests in flight from ps (for tests).
func (t *txRequests) inflightCount(ps *peerState) int {
	if tp := t.peers[ps]; tp != nil {
		return len(tp.inflight)
	}
	return 0
}

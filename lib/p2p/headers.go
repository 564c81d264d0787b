package p2p

import (
	"errors"
	"fmt"
	"time"

	"github.com/cointoolkit/coin/lib/chainstate"
	"github.com/cointoolkit/coin/lib/consensus"
	"github.com/cointoolkit/coin/lib/p2p/wire"
	"github.com/cointoolkit/coin/lib/types"
)

// Headers: getheaders and headers, both ways. The headers peers send are handed to the chain
// (chainstate.Chain.ProcessBlockHeaders), which keeps them in its block index with the rules
// a block's header meets; the chain's best header then decides the blocks to download
// (download.go). We answer getheaders from the main chain.

// onHeaders handles a headers message: the answer to our getheaders or an announcement.
func (s *syncManager) onHeaders(ps *peerState, m *wire.MsgHeaders) {
	hs := m.Headers
	for i := 1; i < len(hs); i++ {
		if hs[i].PrevHash != hs[i-1].Hash() {
			s.misbehave(ps, 100, "headers do not form a chain")
			return
		}
	}
	s.mu.Lock()
	requested := ps.headersPending
	ps.headersPending = false
	s.mu.Unlock()
	// Announcements of new headers are welcome at any rate (each costs its proof of work);
	// unrequested headers that bring nothing new count against the peer's flood allowance.
	if len(hs) == 0 {
		if !requested {
			s.unrequested(ps, "headers")
		}
		return
	}
	if s.chain.HeaderState(hs[0].PrevHash).Node == nil {
		s.mu.Lock()
		ps.unconnecting++
		count := ps.unconnecting
		ps.hdrs.next = nil // ask from the best header
		s.mu.Unlock()
		if !requested && !s.unrequested(ps, "headers") {
			return
		}
		s.log.Debug("headers do not connect; asking for the missing ones", "peer", ps.p.Addr(), "first", hs[0].Hash())
		if count%10 == 0 {
			s.misbehave(ps, 20, "headers that do not connect")
		}
		s.requestHeaders(ps, types.ZeroHash)
		return
	}

	res, err := s.chain.ProcessBlockHeaders(hs)
	if err != nil && res.Done < len(hs) {
		err = fmt.Errorf("header %s: %w", hs[res.Done].Hash(), err)
	}
	fault, stopped := "", false
	switch {
	case err == nil:
	case errors.Is(err, chainstate.ErrTooManyHeaders), errors.Is(err, consensus.ErrTimeTooNew):
		s.log.Debug("headers not accepted for now", "peer", ps.p.Addr(), "reason", err)
		stopped = true
	case errors.Is(err, consensus.ErrKnownInvalid):
		fault = "header of invalid block: " + err.Error()
	case errors.Is(err, consensus.ErrInvalidAncestor):
		fault = "headers build on invalid block: " + err.Error()
	case errors.Is(err, consensus.ErrUnknownParent):
		// The parent was dropped from the header-only nodes meanwhile: ask again.
		stopped = true
	case consensus.IsRuleError(err):
		fault = "invalid header: " + err.Error()
	default:
		s.log.Error("headers not processed", "peer", ps.p.Addr(), "err", err)
		stopped = true
	}

	s.mu.Lock()
	ps.unconnecting = 0
	if last := res.Last; last != nil {
		s.setPeerBestLocked(ps, last)
		ps.p.SetHeight(last.Height)
		ps.p.KnownBlocks().Add(last.Hash)
	}
	if res.New > 0 && res.Best != s.best {
		s.markPathDirtyLocked()
	}
	full := requested && len(hs) == wire.MaxHeaders && fault == ""
	more := full && !stopped
	repeats := 0
	if requested {
		repeats = ps.hdrs.answered(res.Last, full, stopped)
		if repeats >= maxRepeatedHeaders {
			more = false
		}
	}
	// A full answer that brought new headers is followed up whatever other requests are
	// pending (as Core does): announcements from other peers must not pause a long catch-up
	// or a deep fork's resolution. One that brought nothing new is followed up only when no
	// other peer is being asked, so that peers do not all send the same headers.
	if more && res.New == 0 {
		for o := range s.peers {
			if o != ps && o.headersPending {
				more = false
			}
		}
	}
	s.mu.Unlock()
	s.schedule()
	if fault != "" {
		s.misbehave(ps, 100, fault)
		return
	}
	if repeats >= maxRepeatedHeaders {
		reason := fmt.Sprintf("%d full headers answers in a row that do not advance", repeats)
		s.log.Info("dropping peer", "peer", ps.p.Addr(), "reason", reason)
		ps.p.Disconnect(errors.New(reason))
		return
	}
	if !requested && res.New == 0 {
		s.unrequested(ps, "headers")
	}
	if more {
		s.requestHeaders(ps, types.ZeroHash)
	}
}

// maxRepeatedHeaders bounds the full headers answers in a row that bring the peer's headers
// no further; the peer is dropped at the bound.
const maxRepeatedHeaders = 3

// hdrSync is where the headers sync with one peer stands (guarded by Server.mu). A full
// answer (wire.MaxHeaders) means the peer has more: the next getheaders continues from the
// last header it sent, as Bitcoin Core does, not from our best header. A locator of the best
// header never moves while the peer's branch has less work than ours so far, and the same
// headers would come back forever (a fork deeper than one headers message).
type hdrSync struct {
	next     *chainstate.BlockNode // the next getheaders continues from it (nil: the best header)
	asked    *chainstate.BlockNode // the header the pending getheaders continued from
	lastFull types.Hash            // the last header of the previous full answer
	repeats  int                   // full answers in a row that did not advance
}

// answered notes the answer to our getheaders whose last accepted header is last, and
// returns how many full answers in a row did not advance past where we continued from.
func (h *hdrSync) answered(last *chainstate.BlockNode, full, stopped bool) int {
	switch {
	case full && last != nil:
		advanced := last.Hash != h.lastFull && (h.asked == nil || last.Height > h.asked.Height)
		h.lastFull = last.Hash
		if advanced {
			h.repeats, h.next = 0, last
		} else {
			// No further than before (a peer that ignores the locator, or one that moved to
			// another branch): ask from the best header next, and count it.
			h.repeats, h.next = h.repeats+1, nil
		}
	case stopped && last != nil:
		h.next = last // resumed later (maybeRequestHeaders) from where it stopped
	case !stopped:
		h.next, h.lastFull, h.repeats = nil, types.Hash{}, 0 // the peer has no more
	}
	return h.repeats
}

// requestHeaders sends getheaders to ps, unless a request to it is pending, with the locator
// of where its headers sync continues (hdrSync), or else of the chain's best header.
func (s *syncManager) requestHeaders(ps *peerState, stop types.Hash) {
	s.mu.Lock()
	if ps.headersPending {
		s.mu.Unlock()
		return
	}
	ps.headersPending = true
	ps.headersSent = time.Now()
	ps.headersAsked = ps.headersSent
	from := ps.hdrs.next
	ps.hdrs.asked = from
	s.mu.Unlock()
	s.headersRequests.Add(1)
	var loc []types.Hash
	if from != nil {
		loc = s.chain.LocatorFrom(from.Hash) // nil once the header was dropped
	}
	if loc == nil {
		loc = s.chain.HeaderLocator()
	}
	if len(loc) > wire.MaxLocator {
		loc = append(loc[:wire.MaxLocator-1], loc[len(loc)-1])
	}
	if !ps.p.TrySend(&wire.MsgGetHeaders{Locator: loc, Stop: stop}) {
		s.mu.Lock()
		ps.headersPending = false
		s.mu.Unlock()
	}
}

// maybeRequestHeaders asks a peer that claims more than we know for headers when no headers
// request is pending (after the chain's header-only nodes filled up, or a peer that announced
// by height).
func (s *syncManager) maybeRequestHeaders() {
	count, limit := s.chain.HeaderCount()
	s.mu.Lock()
	known := s.knownHeightLocked()
	var ask *peerState
	if count < limit*3/4 {
		pending := false
		for ps := range s.peers {
			pending = pending || ps.headersPending
		}
		for ps := range s.peers {
			if !pending && ps.p.Height() > known && time.Since(ps.headersAsked) > 5*time.Second {
				ask = ps
				break
			}
		}
	}
	s.mu.Unlock()
	if ask != nil {
		s.requestHeaders(ask, types.ZeroHash)
	}
}

// onGetHeaders answers with our main-chain headers after the peer's locator.
func (s *syncManager) onGetHeaders(ps *peerState, m *wire.MsgGetHeaders) {
	hs := s.chain.HeadersAfter(m.Locator, m.Stop, wire.MaxHeaders)
	if len(hs) > 0 {
		ps.p.KnownBlocks().Add(hs[len(hs)-1].Hash())
	}
	ps.p.Send(&wire.MsgHeaders{Headers: hs})
}

// onConnect starts the conversation with a new peer: the sync manager takes it over.
func (s *Server) onConnect(ps *peerState) {
	s.greetAddrs(ps) // addrs.go: ask an outbound peer for addresses, announce ours
	s.sync.peerConnected(ps)
}

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
func (s *Server) onHeaders(ps *peerState, m *wire.MsgHeaders) {
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
		if ps.best == nil || last.Work.Cmp(ps.best.Work) > 0 {
			ps.best = last
		}
		ps.p.SetHeight(last.Height)
		ps.p.KnownBlocks().Add(last.Hash)
	}
	if res.New > 0 && res.Best != s.best {
		s.markPathDirtyLocked()
	}
	more := requested && len(hs) == wire.MaxHeaders && fault == "" && !stopped
	if more {
		for _, o := range s.peers {
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
	if !requested && res.New == 0 {
		s.unrequested(ps, "headers")
	}
	if more {
		s.requestHeaders(ps, types.ZeroHash)
	}
}

// requestHeaders sends getheaders to ps with the locator of the chain's best header, unless
// a request to it is pending.
func (s *Server) requestHeaders(ps *peerState, stop types.Hash) {
	s.mu.Lock()
	if ps.headersPending {
		s.mu.Unlock()
		return
	}
	ps.headersPending = true
	ps.headersSent = time.Now()
	ps.headersAsked = ps.headersSent
	s.mu.Unlock()
	loc := s.chain.HeaderLocator()
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
func (s *Server) maybeRequestHeaders() {
	count, limit := s.chain.HeaderCount()
	s.mu.Lock()
	known := s.knownHeightLocked()
	var ask *peerState
	if count < limit*3/4 {
		pending := false
		for _, ps := range s.peers {
			pending = pending || ps.headersPending
		}
		for _, ps := range s.peers {
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
func (s *Server) onGetHeaders(ps *peerState, m *wire.MsgGetHeaders) {
	hs := s.chain.HeadersAfter(m.Locator, m.Stop, wire.MaxHeaders)
	if len(hs) > 0 {
		ps.p.KnownBlocks().Add(hs[len(hs)-1].Hash())
	}
	ps.p.Send(&wire.MsgHeaders{Headers: hs})
}

// onConnect starts the conversation with a new peer.
func (s *Server) onConnect(ps *peerState) {
	s.greetAddrs(ps) // addrs.go
	s.mu.Lock()
	ahead := ps.p.Height() > s.knownHeightLocked()
	s.mu.Unlock()
	if ahead {
		s.requestHeaders(ps, types.ZeroHash)
	}
}

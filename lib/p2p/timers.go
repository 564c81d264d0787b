package p2p

import (
	"errors"
	"fmt"
	"time"
)

// Timers: the periodic work of the server, and the peers dropped for not delivering.

// tickLoop runs the periodic work: the sync manager's (tick) and saving peers.json.
func (s *Server) tickLoop() {
	t := time.NewTicker(250 * time.Millisecond)
	defer t.Stop()
	lastSave := time.Now()
	for {
		select {
		case <-s.ctx.Done():
			return
		case <-t.C:
		}
		s.sync.tick()
		if time.Since(lastSave) > 10*time.Second {
			lastSave = time.Now()
			if err := s.addrs.Save(); err != nil {
				s.log.Warn("saving peers.json", "err", err)
			}
		}
	}
}

// tick is the sync's periodic work: timeouts, stalls, header requests, scheduling and
// expiry.
func (s *syncManager) tick() {
	s.refreshTip()
	s.checkTimeouts()
	s.maybeRequestHeaders()
	s.refreshPath()
	s.mu.Lock()
	s.orphanBlocks.expire(time.Now().Add(-10 * time.Minute))
	s.scheduleLocked()
	announce, ok := s.checkSyncLocked()
	syncing := s.wasSyncing
	s.mu.Unlock()
	s.afterSyncCheck(announce, ok, syncing)
	s.expireTxState()
}

// checkTimeouts drops peers that do not deliver: a block request older than BlockTimeout, the
// block holding up the window for StallTimeout while another peer could send it, or a
// headers request unanswered for HeadersTimeout.
func (s *syncManager) checkTimeouts() {
	now := time.Now()
	drop := make(map[*peerState]string)
	s.mu.Lock()
	for h, r := range s.inflight {
		if now.Sub(r.sent) > s.cfg.BlockTimeout {
			drop[r.ps] = fmt.Sprintf("block %s not delivered within %s", h, s.cfg.BlockTimeout)
		}
	}
	if len(s.path) > 0 {
		head := s.path[0]
		if r := s.inflight[head.Hash]; r != nil && now.Sub(r.sent) > s.cfg.StallTimeout {
			for o := range s.peers {
				if o != r.ps && !o.notFound.Has(head.Hash) && s.servableLocked(o) > 0 {
					drop[r.ps] = fmt.Sprintf("stalling the block download: block %s not delivered within %s", head.Hash, s.cfg.StallTimeout)
					break
				}
			}
			// Nobody else serves this chain: give it up from this peer and head for the
			// best chain the others serve (it is dropped when BlockTimeout passes).
			if drop[r.ps] == "" && s.best != nil && r.ps.unavail != s.best {
				r.ps.unavail = s.best
				s.markPathDirtyLocked()
				s.log.Info("sync: peer does not deliver the blocks of its chain; heading for the best chain others serve",
					"peer", r.ps.p.Addr(), "block", head.Hash, "chain_tip", s.best.Hash, "height", s.best.Height, "after", s.cfg.StallTimeout)
			}
		}
	}
	for ps := range s.peers {
		if ps.headersPending && now.Sub(ps.headersSent) > s.cfg.HeadersTimeout {
			drop[ps] = fmt.Sprintf("headers request unanswered for %s", s.cfg.HeadersTimeout)
		}
	}
	s.mu.Unlock()
	for ps, reason := range drop {
		s.log.Info("dropping slow peer", "peer", ps.p.Addr(), "reason", reason)
		ps.p.Disconnect(errors.New(reason))
	}
}

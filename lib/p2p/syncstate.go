package p2p

import (
	"context"
	"log/slog"
	"math/big"
	"time"

	"github.com/cointoolkit/coin/lib/chainstate"
	"github.com/cointoolkit/coin/lib/types"
)

// Sync state: whether the node is catching up (Syncing, and its log lines), how far
// (SyncProgress), the tip as the server last saw it, and the chain's bulk mode while
// catching up. Guarded by Server.mu,
// except the bulk mode (bulkMu).

type tipInfo struct {
	node   *chainstate.BlockNode
	hash   types.Hash
	height uint64
	work   *big.Int
}

// Syncing reports whether some peer is known to be ahead of our tip while we fetch headers
// or blocks from peers (the node's Network interface; getblocktemplate refuses meanwhile).
func (s *syncManager) Syncing() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.syncingLocked()
}

func (s *syncManager) syncingLocked() bool {
	behind := false
	for ps := range s.peers {
		if ps.p.Height() > s.tip.height {
			behind = true
			break
		}
	}
	if !behind {
		return false
	}
	if s.processing > 0 || len(s.received) > 0 {
		return true
	}
	// Requests off the path (a chain given up on, still awaiting its blocks' timeout) do not
	// count: they are not what the node heads for.
	for _, r := range s.inflight {
		if s.onPathLocked(r.node) {
			return true
		}
	}
	// Nor do headers asked of a peer whose chain was given up on (it claims a height it does
	// not deliver).
	for ps := range s.peers {
		if ps.headersPending && ps.p.Height() > s.tip.height && !ps.undeliveredLocked() {
			return true
		}
	}
	return false
}

// refreshTip records the chain tip (read outside the lock).
func (s *syncManager) refreshTip() {
	t := s.chain.Tip()
	s.mu.Lock()
	s.setTipLocked(t)
	s.mu.Unlock()
}

// setTipLocked records a new tip. The download path stays valid when the tip is its first
// block (the processor moves past it); any other move reloads it.
func (s *syncManager) setTipLocked(t *chainstate.BlockNode) {
	if t.Hash == s.tip.hash {
		return
	}
	progress := len(s.path) > 0 && s.path[0].Hash == t.Hash
	s.tip = tipInfo{node: t, hash: t.Hash, height: t.Height, work: t.WorkBig()}
	if !progress {
		s.markPathDirtyLocked()
	}
}

// SyncProgress is how far the node has caught up, for getsyncstatus and the node's progress
// log (lib/node): the tip's height against the height it is syncing toward.
type SyncProgress struct {
	Syncing bool
	Height  uint64 // the chain tip
	// TargetHeight is the highest of the tip, the best header the download path leads to
	// and, while syncing, the heights the peers announced (before their headers arrive).
	TargetHeight uint64
}

// Progress is Height / TargetHeight in [0, 1] (1 at the target or with nothing to sync).
func (p SyncProgress) Progress() float64 {
	if p.TargetHeight == 0 || p.Height >= p.TargetHeight {
		return 1
	}
	return float64(p.Height) / float64(p.TargetHeight)
}

// SyncProgress reports the sync state with the height the node is catching up to.
func (s *syncManager) SyncProgress() SyncProgress {
	s.mu.Lock()
	defer s.mu.Unlock()
	p := SyncProgress{Syncing: s.syncingLocked(), Height: s.tip.height, TargetHeight: s.knownHeightLocked()}
	if p.Syncing {
		for ps := range s.peers {
			p.TargetHeight = max(p.TargetHeight, ps.p.Height())
		}
	}
	return p
}

// knownHeightLocked is the height of the best header the path leads to, or the tip's.
func (s *syncManager) knownHeightLocked() uint64 {
	known := s.tip.height
	if s.best != nil {
		known = max(known, s.best.Height)
	}
	return known
}

// checkSyncLocked logs the start and end of a sync and, when it ended, returns the tip to
// announce if announcements were held back meanwhile.
func (s *syncManager) checkSyncLocked() (types.Hash, bool) {
	now := s.syncingLocked()
	if now != s.wasSyncing {
		s.wasSyncing = now
		// Following a peer block by block is routine (debug); a real catch-up is logged.
		if now {
			var ph uint64
			for ps := range s.peers {
				ph = max(ph, ps.p.Height())
			}
			s.syncFrom, s.syncStart = s.tip.height, time.Now()
			level := slog.LevelDebug
			if ph >= s.tip.height+100 {
				level = slog.LevelInfo
			}
			s.log.Log(context.Background(), level, "sync: catching up", "height", s.tip.height, "peer_height", ph)
		} else {
			level := slog.LevelDebug
			if s.tip.height >= s.syncFrom+100 || time.Since(s.syncStart) > 5*time.Second {
				level = slog.LevelInfo
			}
			s.log.Log(context.Background(), level, "sync: caught up", "height", s.tip.height, "tip", s.tip.hash,
				"blocks", int64(s.tip.height)-int64(s.syncFrom), "took", time.Since(s.syncStart).Round(time.Millisecond).String())
		}
	}
	if !now && s.announcePending {
		s.announcePending = false
		return s.tip.hash, true
	}
	return types.Hash{}, false
}

// afterSyncCheck applies what checkSyncLocked decided, outside the lock: the bulk mode and
// the held-back announcement.
func (s *syncManager) afterSyncCheck(announce types.Hash, ok, syncing bool) {
	s.setBulk(syncing)
	if ok {
		s.announce(announce)
	}
}

// setBulk keeps the chain in bulk mode while the node catches up, so that the blocks it
// connects are written to the database together instead of one batch each (the chain state
// bounds that by size and age), and has the chain write them as soon as the node has caught
// up.
func (s *syncManager) setBulk(on bool) {
	s.bulkMu.Lock()
	defer s.bulkMu.Unlock()
	if s.bulk == on {
		return
	}
	s.bulk = on
	if err := s.chain.SetBulk(on); err != nil {
		s.log.Error("writing the chain state", "err", err)
	}
}

// flushChain has a chain in bulk mode write its cache now.
func (s *syncManager) flushChain() {
	s.bulkMu.Lock()
	defer s.bulkMu.Unlock()
	if !s.bulk {
		return
	}
	if err := s.chain.Flush(s.ctx); err != nil && s.ctx.Err() == nil {
		s.log.Error("writing the chain state", "err", err)
	}
}

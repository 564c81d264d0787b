package node

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/cointoolkit/coin/lib/logging"
	"github.com/cointoolkit/coin/lib/p2p"
)

// DefaultSyncLogInterval is how often a syncing node logs its progress.
const DefaultSyncLogInterval = 5 * time.Second

// progressMeter turns samples of the sync state into the progress log line: the rate in
// blocks per second over the last interval, smoothed, and the time left at that rate.
type progressMeter struct {
	syncing bool
	last    time.Time
	height  uint64
	rate    float64 // blocks/s, smoothed; 0 before the second sample
}

// sample takes the state at now and returns the level and attributes of a progress line,
// or nil when the node is not syncing. The first sample of a sync has no rate yet but is
// logged, so that a sync shorter than an interval still says how far it goes; at debug
// level when it is a few blocks only (following a peer block by block is routine).
func (m *progressMeter) sample(now time.Time, p p2p.SyncProgress) (slog.Level, []any) {
	if !p.Syncing {
		m.syncing, m.rate = false, 0
		return 0, nil
	}
	if !m.syncing || now.Sub(m.last) <= 0 {
		m.syncing, m.last, m.height, m.rate = true, now, p.Height, 0
		level := slog.LevelInfo
		if p.TargetHeight < p.Height+10 {
			level = slog.LevelDebug
		}
		return level, progressAttrs(p, -1)
	}
	inst := float64(int64(p.Height)-int64(m.height)) / now.Sub(m.last).Seconds()
	inst = max(inst, 0)
	if m.rate == 0 {
		m.rate = inst
	} else {
		m.rate = 0.5*m.rate + 0.5*inst
	}
	m.last, m.height = now, p.Height
	return slog.LevelInfo, progressAttrs(p, m.rate)
}

// progressAttrs are the line's attributes; rate < 0: not measured yet.
func progressAttrs(p p2p.SyncProgress, rate float64) []any {
	attrs := []any{"height", p.Height, "target", p.TargetHeight, "percent", fmt.Sprintf("%.2f", 100*p.Progress())}
	left := p.TargetHeight - min(p.Height, p.TargetHeight)
	switch {
	case rate < 0:
		attrs = append(attrs, "blocks_per_sec", "-", "eta", "-")
	case rate == 0:
		attrs = append(attrs, "blocks_per_sec", "0.0", "eta", "unknown")
	default:
		eta := time.Duration(float64(left) / rate * float64(time.Second)).Round(time.Second)
		attrs = append(attrs, "blocks_per_sec", fmt.Sprintf("%.1f", rate), "eta", eta.String())
	}
	return attrs
}

// logProgress logs "sync: progress" every interval while the node catches up (under the p2p
// subsystem, like the sync's other lines), until ctx ends.
func (n *Node) logProgress(ctx context.Context, interval time.Duration, done chan<- struct{}) {
	defer close(done)
	if interval <= 0 {
		return
	}
	log := n.log.With(logging.SubsystemKey, "p2p")
	t := time.NewTicker(interval)
	defer t.Stop()
	var m progressMeter
	for {
		select {
		case <-ctx.Done():
			return
		case now := <-t.C:
			if level, attrs := m.sample(now, n.SyncProgress()); attrs != nil {
				log.Log(ctx, level, "sync: progress", attrs...)
			}
		}
	}
}

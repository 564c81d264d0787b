package node

import (
	"context"
	"path/filepath"
	"time"
)

// The mempool outlives a restart (protocol §11): New loads <data-dir>/mempool.dat, every
// transaction going through the pool's acceptance against the chain as it is then; Run
// writes the file every MempoolSaveInterval and at a clean stop. lib/mempool owns the
// format and the atomic write (persist.go).

// MempoolFile is the mempool's file in the data directory.
const MempoolFile = "mempool.dat"

// DefaultMempoolSaveInterval is how often a running node writes mempool.dat.
const DefaultMempoolSaveInterval = 5 * time.Minute

func (n *Node) mempoolPath() string { return filepath.Join(n.cfg.DataDir, MempoolFile) }

// loadMempool restores the pool of the last run. A damaged file is logged by the pool and
// never stops the node. When ctx ends during the load (a signal while the node starts), the
// load stops between two transactions and its error is returned, for New to stop: the
// node never runs, so the partial pool is never saved over the file, which still holds
// every transaction for the next start.
func (n *Node) loadMempool(ctx context.Context) error {
	start := time.Now()
	res, err := n.pool.Load(ctx, n.mempoolPath())
	if err != nil {
		return err
	}
	if res.Read == 0 && res.Err == nil {
		return nil
	}
	n.log.Info("mempool loaded", "file", n.mempoolPath(), "read", res.Read, "accepted", res.Accepted,
		"dropped", res.Dropped, "damaged", res.Err != nil, "took", time.Since(start).Round(time.Millisecond).String())
	return nil
}

// saveMempool writes mempool.dat; a failure is logged (the pool is a cache).
func (n *Node) saveMempool() {
	count, err := n.pool.Save(n.mempoolPath())
	if err != nil {
		n.log.Error("mempool not saved", "file", n.mempoolPath(), "err", err)
		return
	}
	n.log.Debug("mempool saved", "file", n.mempoolPath(), "txs", count)
}

// saveMempoolEvery writes mempool.dat every MempoolSaveInterval until ctx ends, so a crash
// loses at most that much of the pool.
func (n *Node) saveMempoolEvery(ctx context.Context, done chan<- struct{}) {
	defer close(done)
	if n.cfg.MempoolSaveInterval < 0 {
		return
	}
	t := time.NewTicker(n.cfg.MempoolSaveInterval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			n.saveMempool()
		}
	}
}

package node

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"path/filepath"
	"sync"
	"syscall"
	"time"

	"github.com/cointoolkit/coin/lib/chainstate"
	"github.com/cointoolkit/coin/lib/consensus"
	"github.com/cointoolkit/coin/lib/jsonrpc"
	"github.com/cointoolkit/coin/lib/logging"
	"github.com/cointoolkit/coin/lib/mempool"
	"github.com/cointoolkit/coin/lib/metrics"
	"github.com/cointoolkit/coin/lib/p2p"
	"github.com/cointoolkit/coin/lib/params"
	"github.com/cointoolkit/coin/lib/rpcserver"
	"github.com/cointoolkit/coin/lib/types"
)

// ErrDiskLow is returned by Run when the node stopped for lack of disk space.
var ErrDiskLow = errors.New("disk space low")

// Config is the node's configuration.
type Config struct {
	Network *params.Network
	DataDir string
	// RPC configures the JSON-RPC server and who may call it (nil: no RPC server). RPCBind is
	// a shorthand for an RPC of loopback defaults on that address.
	RPC     *rpcserver.HTTPConfig
	RPCBind string
	// P2P configures the peer-to-peer layer (network.go); nil runs the node without one.
	P2P    *p2p.Config
	Logger *slog.Logger
	// MinFreeDiskPercent stops the node when less of the data dir's disk is free.
	MinFreeDiskPercent float64
	DiskCheckInterval  time.Duration
	MempoolMaxBytes    int
	// CoinCacheMiB sizes the chain's cache of stored unspent outputs
	// (chainstate.Options.CoinCacheMiB: 0 default, negative none).
	CoinCacheMiB int
	// MempoolSaveInterval is how often the mempool is written to <data-dir>/mempool.dat
	// while the node runs (default 5 minutes; negative: only at a clean stop).
	MempoolSaveInterval time.Duration
	// MetricsBind, when set, serves Prometheus metrics at http://MetricsBind/metrics (lib/metrics;
	// a bare port binds loopback).
	MetricsBind string
	// SyncLogInterval is how often a syncing node logs its progress (default
	// DefaultSyncLogInterval; negative: never).
	SyncLogInterval time.Duration
	// BlockNotify, when set, is run through the shell for each new tip with every %s
	// replaced by the tip's hash (--blocknotify, blocknotify.go).
	BlockNotify string
	// Notify bounds the notification stream of the RPC listener (rpcserver.Notifier).
	Notify rpcserver.NotifierConfig
	// Values, when set, replaces protocol §8's decay as the value model of spent outputs: for
	// tests of other concerns that build transactions at nominal value. coin-node never sets
	// it.
	Values consensus.ValueModel
}

// Node is a running full node.
type Node struct {
	cfg   Config
	log   *slog.Logger
	chain *chainstate.Chain
	pool  *mempool.Pool
	net   Network

	rpc *rpcserver.HTTPServer // nil: no RPC server
	// metrics and metricsSrv: nil without Config.MetricsBind (metrics.go).
	metrics    *metrics.Node
	metricsSrv *metrics.Server
	// proc serialises block processing with mempool updates: a one-slot semaphore rather
	// than a mutex, so that a SubmitBlock waiting behind a long reorganisation gives up when
	// its context ends (lockProc).
	proc chan struct{}
	// life is the node's lifetime: Run's shutdown ends it (endLife), and the chain's work
	// in SubmitBlock runs under it (see there).
	life    context.Context
	endLife context.CancelFunc
	// notify numbers the chain's and the mempool's events for the stream and the waitfor
	// methods; blockNotify runs Config.BlockNotify (nil without).
	notify      *rpcserver.Notifier
	blockNotify *blockNotifier
	started     time.Time // New's time, for uptime
	stopOnce    sync.Once
	stopCh      chan struct{}
}

var (
	_ rpcserver.Backend = (*Node)(nil)
	_ rpcserver.Chain   = (*chainstate.Chain)(nil)
	_ rpcserver.Mempool = (*mempool.Pool)(nil)
	_ mempool.Chain     = (*chainstate.Chain)(nil)
)

// New opens the node's database and builds its mempool. ctx bounds the opening (loading the
// block index, finishing a reorganisation a crash interrupted, loading mempool.dat): a
// signal during it stops New cleanly with ctx's error (wrapped), the database consistent and
// mempool.dat as it was for the next start.
func New(ctx context.Context, cfg Config) (*Node, error) {
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	if cfg.MinFreeDiskPercent == 0 {
		cfg.MinFreeDiskPercent = 20
	}
	if cfg.DiskCheckInterval == 0 {
		cfg.DiskCheckInterval = 10 * time.Second
	}
	if cfg.MempoolSaveInterval == 0 {
		cfg.MempoolSaveInterval = DefaultMempoolSaveInterval
	}
	if cfg.SyncLogInterval == 0 {
		cfg.SyncLogInterval = DefaultSyncLogInterval
	}
	if cfg.RPC == nil && cfg.RPCBind != "" {
		cfg.RPC = &rpcserver.HTTPConfig{Bind: cfg.RPCBind}
	}

	if err := privateDataDir(cfg.DataDir, cfg.Logger); err != nil {
		return nil, fmt.Errorf("data directory: %w", err)
	}
	// The RPC listener first: a bind that may not serve (a non-loopback address without
	// credentials, a port in use) fails before the database is opened.
	var hs *rpcserver.HTTPServer
	if cfg.RPC != nil {
		rc := *cfg.RPC
		if rc.Logger == nil {
			rc.Logger = cfg.Logger.With(logging.SubsystemKey, "rpc")
		}
		var err error
		if hs, err = rpcserver.Listen(rc); err != nil {
			return nil, fmt.Errorf("rpc: listen on %s: %w", rc.Bind, err)
		}
	}
	n := &Node{cfg: cfg, log: cfg.Logger, net: noNetwork{}, stopCh: make(chan struct{}), rpc: hs, proc: make(chan struct{}, 1),
		notify: rpcserver.NewNotifier(notifierConfig(cfg)), started: time.Now()}
	n.life, n.endLife = context.WithCancel(context.Background())
	// The metrics listener too (Config.MetricsBind), before the database.
	if cfg.MetricsBind != "" {
		n.metrics = metrics.NewNode(metricsSource{n})
		ms, err := metrics.Listen(cfg.MetricsBind, n.metrics.Registry(), cfg.Logger)
		if err != nil {
			n.closeListeners()
			return nil, err
		}
		n.metricsSrv = ms
	}
	sigs := consensus.NewSigCache(0)
	chainstate.SetCorruptionLog(cfg.Logger) // corruption the chain finds is logged (docs/security.md)
	chain, err := chainstate.Open(ctx, filepath.Join(cfg.DataDir, "db"), cfg.Network, chainstate.Options{SigCache: sigs, Values: cfg.Values,
		CoinCacheMiB: cfg.CoinCacheMiB})
	if err != nil {
		n.closeListeners()
		return nil, err
	}
	tightenDataFiles(cfg.DataDir, cfg.Logger) // goleveldb's new files
	n.chain = chain
	n.pool = mempool.New(chain, cfg.Network.Magic, mempool.Options{MaxBytes: cfg.MempoolMaxBytes, SigCache: sigs,
		Logger: cfg.Logger.With(logging.SubsystemKey, "mempool"), OnChange: n.notify.MempoolChanged})
	if err := n.loadMempool(ctx); err != nil {
		chain.Close()
		n.closeListeners()
		return nil, err
	}
	if cfg.P2P != nil {
		srv, err := n.newNetwork(*cfg.P2P)
		if err != nil {
			chain.Close()
			n.closeListeners()
			return nil, fmt.Errorf("p2p: %w", err)
		}
		n.net = srv
	}
	if cfg.BlockNotify != "" {
		n.blockNotify = newBlockNotifier(cfg.BlockNotify, cfg.Logger.With(logging.SubsystemKey, "blocknotify"))
	}
	tip := chain.Tip()
	n.log.Info("chain loaded", "network", cfg.Network.Name, "height", tip.Height, "tip", tip.Hash, "datadir", cfg.DataDir)
	return n, nil
}

// notifierConfig is Config.Notify with the RPC listener's stream bound.
func notifierConfig(cfg Config) rpcserver.NotifierConfig {
	nc := cfg.Notify
	if nc.MaxStreams <= 0 && cfg.RPC != nil {
		nc.MaxStreams = cfg.RPC.MaxStreams
	}
	return nc
}

// StartTime is when the node was created (uptime).
func (n *Node) StartTime() time.Time { return n.started }

// Notifier is the node's event numbering (the RPC listener's stream, waitfornewblock).
func (n *Node) Notifier() *rpcserver.Notifier { return n.notify }

// Chain is the node's chain state.
func (n *Node) Chain() *chainstate.Chain { return n.chain }

// Mempool is the node's mempool.
func (n *Node) Mempool() *mempool.Pool { return n.pool }

// Network is the node's network parameters.
func (n *Node) Network() *params.Network { return n.cfg.Network }

// RequestStop asks Run to return.
func (n *Node) RequestStop() { n.stopOnce.Do(func() { close(n.stopCh) }) }

// lockProc takes the block-processing slot, or returns ctx's error when ctx ends first.
func (n *Node) lockProc(ctx context.Context) error {
	select {
	case n.proc <- struct{}{}:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

func (n *Node) unlockProc() { <-n.proc }

// SubmitBlock processes a block, updates the mempool and relays the new tip. ctx bounds the
// waits for the block-processing slot and for the chain's lock (a caller that gives up does
// not queue behind a long reorganisation or a long flush), and so does shutdown. The chain's
// work itself runs under the node's lifetime, not ctx: a caller that stops waiting (an RPC
// client's timeout) must not leave a reorganisation half done, while shutdown stops it
// between blocks (chainstate.Chain.ProcessBlock), the mempool following what was done, and
// its error is returned.
func (n *Node) SubmitBlock(ctx context.Context, b *types.Block) (*chainstate.Result, error) {
	if err := n.lockProc(ctx); err != nil {
		return nil, err
	}
	// The wait for the chain's lock ends with ctx or with the node's life; the work only
	// with the node's life.
	wait, stopWait := context.WithCancel(ctx)
	stopLife := context.AfterFunc(n.life, stopWait)
	res, err := n.chain.ProcessBlockWaiting(wait, n.life, b)
	gaveUp := res == nil && err != nil && wait.Err() != nil && errors.Is(err, wait.Err())
	stopLife()
	stopWait()
	if res != nil {
		n.afterBlock(res)
	}
	n.unlockProc()
	if gaveUp {
		return nil, err // stopped waiting for the chain: nothing changed, nothing was refused
	}
	if tip, moved := tipAfter(res); moved && n.blockNotify != nil {
		n.blockNotify.notify(tip)
	}
	if err != nil {
		n.rejected(metrics.KindBlock, err)
		n.log.Debug("block rejected", "hash", b.Hash(), "err", err)
		return res, err
	}
	if res.IsTip {
		n.net.RelayBlock(res.Hash)
	}
	return res, nil
}

// tipAfter is the tip ProcessBlock left, read from its result (not from the chain, whose
// lock another writer may hold by now), and whether it moved.
func tipAfter(res *chainstate.Result) (types.Hash, bool) {
	switch {
	case res == nil:
		return types.Hash{}, false
	case len(res.Connected) > 0:
		return res.Connected[len(res.Connected)-1].Hash, true
	case len(res.Disconnected) > 0:
		return res.Disconnected[len(res.Disconnected)-1].Block.Header.PrevHash, true
	}
	return types.Hash{}, false
}

// afterBlock brings the mempool in line with the chain after ProcessBlock (proc held).
func (n *Node) afterBlock(res *chainstate.Result) {
	// The blocks' events first, then the mempool's changes they cause.
	for _, d := range res.Disconnected {
		n.notify.BlockDisconnected(d.Hash, d.Height)
	}
	for _, c := range res.Connected {
		n.notify.BlockConnected(c.Hash, c.Height)
	}
	n.pool.ChainChanged(res)
	for _, d := range res.Disconnected {
		n.log.Info("block disconnected", "height", d.Height, "hash", d.Hash)
	}
	for _, c := range res.Connected {
		n.log.Info("block connected", "height", c.Height, "hash", c.Hash, "txs", len(c.TxIDs))
	}
	if len(res.Disconnected) > 0 {
		n.log.Info("chain reorganised", "disconnected", len(res.Disconnected), "connected", len(res.Connected),
			"mempool", n.pool.Info().Size)
	}
}

// SubmitTransaction adds a transaction to the mempool and relays it.
func (n *Node) SubmitTransaction(ctx context.Context, tx *types.Transaction) (types.Hash, error) {
	txid, err := n.pool.Accept(ctx, tx)
	if err != nil {
		n.rejected(metrics.KindTransaction, err)
		n.log.Debug("transaction rejected", "txid", txid, "err", err)
		return txid, err
	}
	n.log.Debug("transaction accepted", "txid", txid)
	n.net.RelayTransaction(txid)
	return txid, nil
}

// Run serves until ctx ends, stop is requested or the disk runs low, then shuts down.
func (n *Node) Run(ctx context.Context) (err error) {
	defer func() {
		if cerr := n.chain.Close(); cerr != nil && err == nil {
			err = cerr
		}
		tightenDataFiles(n.cfg.DataDir, n.log)
		n.log.Info("node stopped")
	}()
	if err := n.checkDisk(); err != nil {
		n.closeListeners()
		return err
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()

	// P2P first: it loads peers.json and banlist.json, which RPC methods (listbanned,
	// getnodeaddresses) answer from. The RPC listener is bound already, so a client that
	// connects meanwhile waits in its backlog rather than being refused.
	if err := n.net.Start(ctx); err != nil {
		n.closeListeners()
		return fmt.Errorf("p2p: %w", err)
	}
	if n.rpc != nil {
		rpc := jsonrpc.NewServer(jsonrpc.Options{Logger: n.log.With(logging.SubsystemKey, "rpc"), MaxConcurrent: 64})
		n.registerRPC(rpc, func(s *jsonrpc.Server) { rpcserver.Register(s, n.chain, n.pool, n) })
		go func() {
			if err := n.rpc.Serve(rpcserver.Mux(rpc, n.notify)); err != nil {
				n.log.Error("rpc server failed", "err", err)
				n.RequestStop()
			}
		}()
		n.log.Info("rpc server listening", "addr", n.rpc.Addr().String())
	} else {
		n.log.Info("rpc server disabled (no --rpc-bind)")
	}
	if n.metricsSrv != nil {
		go func() {
			if err := n.metricsSrv.Serve(); err != nil {
				n.log.Error("metrics server failed", "err", err)
			}
		}()
		n.log.Info("metrics server listening", "addr", "http://"+n.metricsSrv.Addr().String()+metrics.Path)
	}
	if n.blockNotify != nil {
		defer n.blockNotify.close()
	}
	progressDone := make(chan struct{})
	go n.logProgress(ctx, n.cfg.SyncLogInterval, progressDone)

	diskErr := make(chan error, 1)
	go n.monitorDisk(ctx, diskErr)
	saverDone := make(chan struct{})
	go n.saveMempoolEvery(ctx, saverDone)

	select {
	case <-ctx.Done():
		n.log.Info("shutting down", "reason", "signal")
	case <-n.stopCh:
		n.log.Info("shutting down", "reason", "stop requested")
	case err = <-diskErr:
		n.log.Error("shutting down", "reason", "disk space low", "err", err)
	}
	cancel()
	n.endLife() // a reorganisation in progress stops at its next block
	// The RPC server stops first (calls in progress finish, streams end), so no call reads a
	// closed chain.
	n.notify.Close()
	if n.rpc != nil {
		sctx, scancel := context.WithTimeout(context.Background(), 5*time.Second)
		n.rpc.Shutdown(sctx)
		scancel()
	}
	if n.metricsSrv != nil {
		n.metricsSrv.Close()
	}
	n.net.Stop()
	<-saverDone
	<-progressDone
	// Wait for any block being processed (cancelled above: it stops at the next block), then
	// keep the mempool for the next start.
	n.proc <- struct{}{}
	n.saveMempool()
	n.unlockProc()
	return err
}

// closeListeners closes the RPC and metrics listeners (New's and Run's failures).
func (n *Node) closeListeners() {
	if n.rpc != nil {
		n.rpc.Close()
	}
	if n.metricsSrv != nil {
		n.metricsSrv.Close()
	}
}

// freeDiskPercent is the share of the data dir's file system available to us.
func freeDiskPercent(dir string) (float64, error) {
	var st syscall.Statfs_t
	if err := syscall.Statfs(dir, &st); err != nil {
		return 0, err
	}
	if st.Blocks == 0 {
		return 100, nil
	}
	return float64(st.Bavail) * 100 / float64(st.Blocks), nil
}

func (n *Node) checkDisk() error {
	free, err := freeDiskPercent(n.cfg.DataDir)
	if err != nil {
		return fmt.Errorf("disk check: %w", err)
	}
	if free < n.cfg.MinFreeDiskPercent {
		err := fmt.Errorf("%w: %.1f%% of the disk holding %s is free, below the %.1f%% minimum", ErrDiskLow, free, n.cfg.DataDir, n.cfg.MinFreeDiskPercent)
		n.log.Error("disk space low", "free_percent", fmt.Sprintf("%.1f", free), "min_percent", n.cfg.MinFreeDiskPercent, "datadir", n.cfg.DataDir)
		return err
	}
	return nil
}

func (n *Node) monitorDisk(ctx context.Context, out chan<- error) {
	t := time.NewTicker(n.cfg.DiskCheckInterval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			if err := n.checkDisk(); err != nil {
				out <- err
				return
			}
		}
	}
}

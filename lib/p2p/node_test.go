package p2p

import (
	"context"
	"log/slog"
	"path/filepath"
	"sync"

	"github.com/cointoolkit/coin/lib/chainstate"
	"github.com/cointoolkit/coin/lib/consensus"
	"github.com/cointoolkit/coin/lib/mempool"
	"github.com/cointoolkit/coin/lib/params"
	"github.com/cointoolkit/coin/lib/types"
)

// testNode stands in for lib/node, which builds on this package and so cannot be imported by
// its tests: the chain state and mempool of a data directory, block and transaction
// submission that keeps the mempool in line with the chain and relays through the server,
// and Run. It does what node.Node does for the P2P layer; cmd/coin-node's end-to-end tests
// run the real node.
type testNode struct {
	chain  *chainstate.Chain
	pool   *mempool.Pool
	net    *Server
	log    *slog.Logger
	procMu sync.Mutex // serialises block processing with mempool updates
}

var _ Backend = (*testNode)(nil)

func newTestNode(net *params.Network, dataDir string, logger *slog.Logger) (*testNode, error) {
	sigs := consensus.NewSigCache(0)
	chain, err := chainstate.Open(context.Background(), filepath.Join(dataDir, "db"), net, chainstate.Options{SigCache: sigs, Values: consensus.NominalValue{}})
	if err != nil {
		return nil, err
	}
	n := &testNode{chain: chain, log: logger}
	n.pool = mempool.New(chain, net.Magic, mempool.Options{SigCache: sigs})
	return n, nil
}

func (n *testNode) Chain() *chainstate.Chain { return n.chain }
func (n *testNode) Mempool() *mempool.Pool   { return n.pool }
func (n *testNode) SetNetwork(s *Server)     { n.net = s }

// Run serves until ctx ends, then stops the server and closes the chain.
func (n *testNode) Run(ctx context.Context) error {
	if err := n.net.Start(ctx); err != nil {
		n.chain.Close()
		return err
	}
	<-ctx.Done()
	n.net.Stop()
	n.procMu.Lock()
	defer n.procMu.Unlock()
	return n.chain.Close()
}

// SubmitBlock processes a block, brings the mempool in line and relays a new tip, as
// node.Node does.
func (n *testNode) SubmitBlock(ctx context.Context, b *types.Block) (*chainstate.Result, error) {
	n.procMu.Lock()
	res, err := n.chain.ProcessBlock(ctx, b)
	if res != nil {
		n.pool.ChainChanged(res)
	}
	n.procMu.Unlock()
	if err != nil {
		n.log.Debug("block rejected", "hash", b.Hash(), "err", err)
		return res, err
	}
	if res.IsTip && n.net != nil {
		n.net.RelayBlock(res.Hash)
	}
	return res, nil
}

// SubmitTransaction adds a transaction to the mempool and relays it.
func (n *testNode) SubmitTransaction(ctx context.Context, tx *types.Transaction) (types.Hash, error) {
	txid, err := n.pool.Accept(ctx, tx)
	if err != nil {
		n.log.Debug("transaction rejected", "txid", txid, "err", err)
		return txid, err
	}
	n.log.Debug("transaction accepted", "txid", txid)
	if n.net != nil {
		n.net.RelayTransaction(txid)
	}
	return txid, nil
}

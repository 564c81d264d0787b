package rpcserver

import (
	"context"
	"net/netip"
	"time"

	"github.com/cointoolkit/coin/lib/chainstate"
	"github.com/cointoolkit/coin/lib/consensus"
	"github.com/cointoolkit/coin/lib/mempool"
	"github.com/cointoolkit/coin/lib/params"
	"github.com/cointoolkit/coin/lib/rpcapi"
	"github.com/cointoolkit/coin/lib/types"
)

// The handlers declare what they need of the node (in the manner of dcrd's
// internal/rpcserver/interface.go); lib/node passes its chain state, mempool and itself, with
// a compile-time check of each.

// Chain is what the handlers read of the chain state (*chainstate.Chain).
type Chain interface {
	Stats() chainstate.Stats
	Tip() *chainstate.BlockNode
	NodeByHash(h types.Hash) *chainstate.BlockNode
	// HeaderState snapshots a block-index entry under the chain's lock: the only way to
	// read what changes as blocks connect (status, size, main-chain membership).
	HeaderState(h types.Hash) chainstate.HeaderState
	NodeAt(height uint64) *chainstate.BlockNode
	InMainChain(h types.Hash) bool
	Block(h types.Hash) (*types.Block, error)
	Transaction(txid types.Hash) (*types.Transaction, chainstate.TxLocation, error)
	UtxosByAddress(pkh types.Hash) ([]chainstate.AddressUtxo, error)
	ClusterBalance(id types.Hash) (uint64, error)
	ClusterOf(pkh types.Hash) (types.Hash, error)
	ClusterOfAddress(pkh types.Hash) (chainstate.ClusterSummary, error)
	ClusterByID(id types.Hash) (chainstate.ClusterSummary, bool, error)
	InputValue(e *consensus.UtxoEntry, height uint64) (uint64, error)
	UtxoSetInfo(ctx context.Context) (chainstate.UtxoSetInfo, error)
	// Conduct is the confirmed agent and contract state; Directory visits its agents by
	// score; ConductInfo hashes all of it.
	Conduct() consensus.ConductView
	Directory(visit func(chainstate.DirectoryEntry) bool) error
	ConductInfo(ctx context.Context) (chainstate.ConductInfo, error)
	// NextBlock describes the block a miner builds on the tip.
	NextBlock() chainstate.Template
	// ChainTips lists the ends of the block index's branches (getchaintips).
	ChainTips() []chainstate.ChainTip
}

// Mempool is what the handlers read of the mempool (*mempool.Pool).
type Mempool interface {
	Info() mempool.Info
	Get(txid types.Hash) (*mempool.Entry, bool)
	SpentBy(op types.Outpoint) (types.Hash, bool)
	OutputsTo(pkh types.Hash) []mempool.PendingOutput
	// Conduct is the pending view (chain and mempool agent transactions, protocol §9.3);
	// PendingAgents are the agents the mempool changes, with their pending records.
	Conduct() consensus.ConductView
	PendingAgents() map[types.Hash]*consensus.AgentRecord
	// Select lists transactions for a block template, parents first.
	Select(maxBytes int) []*mempool.Entry
	// TestAccept runs Accept's checks without adding (testmempoolaccept).
	TestAccept(tx *types.Transaction) (types.Hash, uint64, int, error)
}

// Backend is what the handlers ask of the node besides reading the chain and the mempool.
type Backend interface {
	Network() *params.Network
	// SubmitBlock processes a block from outside (miner or RPC), updates the mempool and
	// relays it. ctx is the call's: it bounds the wait for the node's block processing.
	SubmitBlock(ctx context.Context, b *types.Block) (*chainstate.Result, error)
	// SubmitTransaction adds a transaction to the mempool and relays it; when ctx ends
	// first, nothing is added.
	SubmitTransaction(ctx context.Context, tx *types.Transaction) (types.Hash, error)
	Peers() []rpcapi.Peer
	// The network controls (net.go); a node without a P2P layer answers each with an
	// error of reason p2p_disabled.
	NetworkInfo() (rpcapi.NetworkInfo, error)
	NetTotals() (rpcapi.NetTotals, error)
	// DisconnectNode ends the connection with the peer at addr or, when addr is empty,
	// the peer with id.
	DisconnectNode(addr string, id uint64) error
	SetBan(subnet netip.Prefix, until time.Time) error
	Unban(subnet netip.Prefix) error
	ListBanned() ([]rpcapi.Banned, error)
	ClearBanned() error
	SetNetworkActive(on bool) error
	PingPeers() error
	// Syncing reports whether the node is behind a peer and fetching blocks.
	Syncing() bool
	// RequestStop asks the node to shut down.
	RequestStop()
}

// backend is what a handler reaches through api.b: the node, its chain state and mempool.
type backend struct {
	Backend
	chain Chain
	pool  Mempool
}

func (b backend) Chain() Chain     { return b.chain }
func (b backend) Mempool() Mempool { return b.pool }

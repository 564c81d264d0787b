package p2p

import (
	"context"

	"github.com/cointoolkit/coin/lib/chainstate"
	"github.com/cointoolkit/coin/lib/consensus"
	"github.com/cointoolkit/coin/lib/mempool"
	"github.com/cointoolkit/coin/lib/types"
)

// The P2P layer declares what it needs of the rest of the node (in the manner of btcd's
// netsync/interface.go); lib/node passes its chain state, mempool and itself, with a
// compile-time check of each.

// Chain is what sync and relay read of the chain state, and the headers they hand it
// (*chainstate.Chain).
type Chain interface {
	// Tip is the main chain's last block.
	Tip() *chainstate.BlockNode
	// ProcessBlockHeaders accepts a headers message into the block index.
	ProcessBlockHeaders(hs []types.BlockHeader) (chainstate.HeadersResult, error)
	// HeaderState looks a header up, header-only or stored.
	HeaderState(h types.Hash) chainstate.HeaderState
	// HeaderLocator is the block locator of the best header.
	HeaderLocator() []types.Hash
	// LocatorFrom is the block locator of a header in the index (nil when unknown).
	LocatorFrom(h types.Hash) []types.Hash
	// BestHeader is the valid header with the most work (the tip when none has more).
	BestHeader() *chainstate.BlockNode
	// BlocksToFetch is the download path: the header-only ancestors of the best header,
	// lowest first.
	BlocksToFetch() []*chainstate.BlockNode
	// HeaderCount is the number of header-only nodes and their bound.
	HeaderCount() (int, int)
	// InvalidateHeader gives up on a header whose block no peer delivers intact.
	InvalidateHeader(h types.Hash) error
	// HeadersAfter answers a getheaders from the main chain.
	HeadersAfter(locator []types.Hash, stop types.Hash, max int) []types.BlockHeader
	BlockBytes(h types.Hash) ([]byte, error)
	TxLocation(txid types.Hash) (chainstate.TxLocation, error)
	// SigCache is where downloaded blocks' signatures are verified ahead (nil: none).
	SigCache() *consensus.SigCache
	// SetBulk and Flush: the chain writes in batches while the node catches up.
	SetBulk(on bool) error
	Flush(ctx context.Context) error
}

// Mempool is what relay reads of the mempool (*mempool.Pool).
type Mempool interface {
	Get(txid types.Hash) (*mempool.Entry, bool)
}

// Backend is what the P2P layer asks of the node. The node owns every change to the chain
// and the mempool: blocks and transactions from peers go through SubmitBlock and
// SubmitTransaction like those from RPC.
//
// The context the P2P layer passes is its server's: Stop cancels it, so a long reorganisation
// a peer's block started stops between blocks at shutdown.
type Backend interface {
	SubmitBlock(ctx context.Context, b *types.Block) (*chainstate.Result, error)
	SubmitTransaction(ctx context.Context, tx *types.Transaction) (types.Hash, error)
}

package miner

import (
	"context"
	"errors"

	"github.com/cointoolkit/coin/lib/jsonrpc"
	"github.com/cointoolkit/coin/lib/rpcapi"
)

// NodeClient is what the miner needs from a node; *rpcapi.Client implements it.
type NodeClient interface {
	GetBlockTemplate(ctx context.Context, address string) (*rpcapi.BlockTemplate, error)
	SubmitBlock(ctx context.Context, hexData string) error
	GetBlockCount(ctx context.Context) (uint64, error)
	GetBlockHash(ctx context.Context, height uint64) (string, error)
	GetMempoolInfo(ctx context.Context) (*rpcapi.MempoolInfo, error)
	GetBlockchainInfo(ctx context.Context) (*rpcapi.BlockchainInfo, error)
}

var _ NodeClient = (*rpcapi.Client)(nil)

// Errors Run returns: retrying would not help.
var (
	// ErrWrongNetwork: the node runs a network the mining address does not belong to.
	ErrWrongNetwork = errors.New("node and mining address are on different networks")
	// ErrNodeRefused: the node rejects the mining address or has no getblocktemplate.
	ErrNodeRefused = errors.New("node refuses to give block templates")
)

// rpcError is the node's own error answer (code and message), or nil for a transport error.
func rpcError(err error) *jsonrpc.Error {
	var e *jsonrpc.Error
	if errors.As(err, &e) {
		return e
	}
	return nil
}

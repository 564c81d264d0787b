package rpcapi

import "context"

// Typed calls of Bitcoin Core's staples (Methods, "Bitcoin Core's staples").

// GetBestBlockHash is the tip's hash.
func (c *Client) GetBestBlockHash(ctx context.Context) (string, error) {
	var h string
	return h, c.Call(ctx, "getbestblockhash", nil, &h)
}

// GetMiningInfo is the mining summary.
func (c *Client) GetMiningInfo(ctx context.Context) (*MiningInfo, error) {
	return call[MiningInfo](ctx, c, "getmininginfo", nil)
}

// GetChainTips lists the branch tips of the node's block index.
func (c *Client) GetChainTips(ctx context.Context) ([]ChainTip, error) {
	var ts []ChainTip
	return ts, c.Call(ctx, "getchaintips", nil, &ts)
}

// GetBlockStats is the statistics of the block with hash (or at height, given as a string of
// digits).
func (c *Client) GetBlockStats(ctx context.Context, hashOrHeight string) (*BlockStats, error) {
	return call[BlockStats](ctx, c, "getblockstats", []any{hashOrHeight})
}

// GetMempoolEntry describes a mempool transaction; one not in the pool is an error of kind
// reason.TxNotFound.
func (c *Client) GetMempoolEntry(ctx context.Context, txid string) (*MempoolEntry, error) {
	return call[MempoolEntry](ctx, c, "getmempoolentry", []any{txid})
}

// TestMempoolAccept tells whether the pool would accept each transaction (hex), without
// adding any.
func (c *Client) TestMempoolAccept(ctx context.Context, hexTxs []string) ([]TestAccept, error) {
	var r []TestAccept
	return r, c.Call(ctx, "testmempoolaccept", []any{hexTxs}, &r)
}

// EstimateSmartFee is a fee rate for confirmation within target blocks.
func (c *Client) EstimateSmartFee(ctx context.Context, target uint64) (*FeeEstimate, error) {
	return call[FeeEstimate](ctx, c, "estimatesmartfee", []any{target})
}

// WaitForNewBlock waits up to timeoutMS milliseconds (0: the node's call limit less a second)
// for the tip to change and returns the tip.
func (c *Client) WaitForNewBlock(ctx context.Context, timeoutMS uint64) (*BlockRef, error) {
	return call[BlockRef](ctx, c, "waitfornewblock", []any{timeoutMS})
}

// WaitForBlockHeight waits up to timeoutMS milliseconds (0: the node's call limit less a
// second) for the main chain to reach height and returns the tip.
func (c *Client) WaitForBlockHeight(ctx context.Context, height, timeoutMS uint64) (*BlockRef, error) {
	return call[BlockRef](ctx, c, "waitforblockheight", []any{height, timeoutMS})
}

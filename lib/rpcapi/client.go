package rpcapi

import (
	"context"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"

	"github.com/cointoolkit/coin/lib/jsonrpc"
	"github.com/cointoolkit/coin/lib/types"
)

// Client is a typed client of the node.
type Client struct {
	*jsonrpc.Client
}

// NewClient connects to the node's RPC URL.
func NewClient(url string, opts ...jsonrpc.ClientOption) *Client {
	return &Client{jsonrpc.NewClient(url, opts...)}
}

// Call is jsonrpc.Client.Call whose domain errors with a reason come back as *NodeError, so
// that callers match them with errors.Is against the kinds (see DecodeError).
func (c *Client) Call(ctx context.Context, method string, params []any, result any) error {
	return DecodeError(c.Client.Call(ctx, method, params, result))
}

// CallRaw is jsonrpc.Client.CallRaw with the errors of Call.
func (c *Client) CallRaw(ctx context.Context, method string, params []json.RawMessage) (json.RawMessage, error) {
	res, err := c.Client.CallRaw(ctx, method, params)
	return res, DecodeError(err)
}

// GetBlockCount is the tip height.
func (c *Client) GetBlockCount(ctx context.Context) (uint64, error) {
	var n uint64
	return n, c.Call(ctx, "getblockcount", nil, &n)
}

// GetBlockHash is the hash at height.
func (c *Client) GetBlockHash(ctx context.Context, height uint64) (string, error) {
	var h string
	return h, c.Call(ctx, "getblockhash", []any{height}, &h)
}

// GetBlock fetches a block.
func (c *Client) GetBlock(ctx context.Context, hash string) (*Block, error) {
	return call[Block](ctx, c, "getblock", []any{hash})
}

// GetBlockTemplate fetches a template paying address.
func (c *Client) GetBlockTemplate(ctx context.Context, address string) (*BlockTemplate, error) {
	return call[BlockTemplate](ctx, c, "getblocktemplate", []any{address})
}

// SubmitBlock submits a block's hex.
func (c *Client) SubmitBlock(ctx context.Context, hexData string) error {
	var s string
	return c.Call(ctx, "submitblock", []any{hexData}, &s)
}

// SendRawTransaction submits a transaction's hex and returns its txid.
func (c *Client) SendRawTransaction(ctx context.Context, hexData string) (string, error) {
	var id string
	return id, c.Call(ctx, "sendrawtransaction", []any{hexData}, &id)
}

// GetUtxosByAddress lists all the unspent outputs of an address, asking for pages of
// UtxoPageMax outputs until a shorter one comes (each page starts after the last output of
// the one before, so an output appears once even when blocks arrive in between). A node
// that does not page refuses the paging parameters with -32602 (invalid params: the code,
// not the message, is what the client goes by); it is then asked the spec's call once. A
// paging node never answers -32602 to these parameters, which are valid for it.
func (c *Client) GetUtxosByAddress(ctx context.Context, address string, includeMempool bool) ([]UTXO, error) {
	var all []UTXO
	after := ""
	for {
		var page []UTXO
		err := c.Call(ctx, "getutxosbyaddress", []any{address, includeMempool, after, UtxoPageMax}, &page)
		var re *jsonrpc.Error
		if after == "" && errors.As(err, &re) && re.Code == jsonrpc.CodeInvalidParams {
			var u []UTXO
			return u, c.Call(ctx, "getutxosbyaddress", []any{address, includeMempool}, &u)
		}
		if err != nil {
			return nil, err
		}
		if all == nil {
			all = page
		} else {
			all = append(all, page...)
		}
		if len(page) < UtxoPageMax {
			return all, nil
		}
		last := page[len(page)-1]
		after = last.TxID + ":" + strconv.FormatUint(uint64(last.Index), 10)
	}
}

// GetAddressBalance returns the balances of an address, summed by the node.
func (c *Client) GetAddressBalance(ctx context.Context, address string, includeMempool bool) (*AddressBalance, error) {
	return call[AddressBalance](ctx, c, "getaddressbalance", []any{address, includeMempool})
}

// GetMempoolInfo returns the mempool totals.
func (c *Client) GetMempoolInfo(ctx context.Context) (*MempoolInfo, error) {
	return call[MempoolInfo](ctx, c, "getmempoolinfo", nil)
}

// GetRawMempool lists the ids of the mempool's transactions, parents before children (a
// transaction that relies on another's outputs or agent effect comes after it).
func (c *Client) GetRawMempool(ctx context.Context) ([]string, error) {
	var ids []string
	return ids, c.Call(ctx, "getrawmempool", nil, &ids)
}

// GetRawTransactionHex is getrawtransaction's answer: the transaction's hex bincode (a
// mempool or a mined transaction; an unknown one is an error of kind reason.TxNotFound).
func (c *Client) GetRawTransactionHex(ctx context.Context, txid string) (string, error) {
	var h string
	return h, c.Call(ctx, "getrawtransaction", []any{txid}, &h)
}

// GetRawTransaction fetches a transaction and decodes it. A node's answer that does not decode
// is an error that says so (and wraps the decoder's).
func (c *Client) GetRawTransaction(ctx context.Context, txid string) (*types.Transaction, error) {
	h, err := c.GetRawTransactionHex(ctx, txid)
	if err != nil {
		return nil, err
	}
	raw, err := hex.DecodeString(h)
	if err != nil {
		return nil, fmt.Errorf("getrawtransaction %s: %w", txid, err)
	}
	tx, err := types.DecodeTransaction(raw)
	if err != nil {
		return nil, fmt.Errorf("getrawtransaction %s: %w", txid, err)
	}
	return tx, nil
}

// GetBlockchainInfo returns the chain summary.
func (c *Client) GetBlockchainInfo(ctx context.Context) (*BlockchainInfo, error) {
	return call[BlockchainInfo](ctx, c, "getblockchaininfo", nil)
}

// GetTransaction fetches a transaction summary.
func (c *Client) GetTransaction(ctx context.Context, txid string) (*Transaction, error) {
	return call[Transaction](ctx, c, "gettransaction", []any{txid})
}

// GenerateToAddress mines n blocks (regtest).
func (c *Client) GenerateToAddress(ctx context.Context, n int, address string) ([]string, error) {
	var hs []string
	return hs, c.Call(ctx, "generatetoaddress", []any{n, address}, &hs)
}

// GetSyncStatus returns the sync state.
func (c *Client) GetSyncStatus(ctx context.Context) (*SyncStatus, error) {
	return call[SyncStatus](ctx, c, "getsyncstatus", nil)
}

// GetAgentProfile returns an agent's profile (pending view); an unknown agent is an error of
// kind reason.AgentNotFound.
func (c *Client) GetAgentProfile(ctx context.Context, address string) (*AgentProfile, error) {
	return call[AgentProfile](ctx, c, "getagentprofile", []any{address})
}

// ListAgents returns a page of the agent directory.
func (c *Client) ListAgents(ctx context.Context, offset, limit uint64) (*AgentList, error) {
	return call[AgentList](ctx, c, "listagents", []any{offset, limit})
}

// GetContract returns a contract (pending view); an unknown one is an error of kind
// reason.ContractNotFound.
func (c *Client) GetContract(ctx context.Context, id string) (*Contract, error) {
	return call[Contract](ctx, c, "getcontract", []any{id})
}

// GetConductInfo returns the confirmed conduct state's summary and hash.
func (c *Client) GetConductInfo(ctx context.Context) (*ConductInfo, error) {
	return call[ConductInfo](ctx, c, "getconductinfo", nil)
}

// GetClusterInfo describes the cluster of an address (or the cluster with an id).
func (c *Client) GetClusterInfo(ctx context.Context, addressOrID string) (*ClusterInfo, error) {
	return call[ClusterInfo](ctx, c, "getclusterinfo", []any{addressOrID})
}

// call runs method and decodes its result into a new T: nil with the error when the call
// fails, so no caller holds a zero record as if it were the node's answer.
func call[T any](ctx context.Context, c *Client, method string, params []any) (*T, error) {
	var v T
	if err := c.Call(ctx, method, params, &v); err != nil {
		return nil, err
	}
	return &v, nil
}

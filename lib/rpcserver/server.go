package rpcserver

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"time"

	"github.com/cointoolkit/coin/lib/consensus"
	"github.com/cointoolkit/coin/lib/jsonrpc"
	"github.com/cointoolkit/coin/lib/keys"
	"github.com/cointoolkit/coin/lib/mempool"
	"github.com/cointoolkit/coin/lib/reason"
	"github.com/cointoolkit/coin/lib/rpcapi"
	"github.com/cointoolkit/coin/lib/types"
)

type handler func(ctx context.Context, p jsonrpc.Params) (any, error)

type api struct {
	b backend
}

// Register installs every method of rpcapi.Methods on s, answering from the node's chain
// state and mempool and through the node's Backend.
func Register(s *jsonrpc.Server, chain Chain, pool Mempool, b Backend) {
	a := &api{b: backend{Backend: b, chain: chain, pool: pool}}
	handlers := a.handlers(s)
	maps.Copy(handlers, a.stapleHandlers(time.Now()))
	for _, m := range rpcapi.Methods {
		h, ok := handlers[m.Name]
		if !ok {
			panic("rpcserver: no handler for " + m.Name)
		}
		if m.Regtest && !b.Network().AllowGenerate {
			h = func(context.Context, jsonrpc.Params) (any, error) {
				return nil, rpcapi.DomainError(reason.RegtestOnly, m.Name+" is only available on regtest")
			}
		}
		specs := make([]jsonrpc.ParamSpec, len(m.Params))
		for i, p := range m.Params {
			specs[i] = jsonrpc.ParamSpec{Name: p.Name, Type: p.Type, Help: p.Help, Optional: p.Optional}
		}
		s.Register(jsonrpc.Method{Name: m.Name, Params: specs, Result: m.Result, Help: m.Summary, Handler: h})
	}
}

func (a *api) handlers(s *jsonrpc.Server) map[string]handler {
	return map[string]handler{
		"getblockcount":      a.getBlockCount,
		"getblockhash":       a.getBlockHash,
		"getblock":           a.getBlock,
		"getblockheader":     a.getBlockHeader,
		"gettransaction":     a.getTransaction,
		"getrawtransaction":  a.getRawTransaction,
		"sendrawtransaction": a.sendRawTransaction,
		"getmempoolinfo":     a.getMempoolInfo,
		"getrawmempool":      a.getRawMempool,
		"getpeerinfo":        a.getPeerInfo,
		"getnetworkinfo":     a.getNetworkInfo,
		"getnettotals":       a.getNetTotals,
		"disconnectnode":     a.disconnectNode,
		"setban":             a.setBan,
		"listbanned":         a.listBanned,
		"clearbanned":        a.clearBanned,
		"setnetworkactive":   a.setNetworkActive,
		"ping":               a.ping,
		"addnode":            a.addNode,          // addrs.go
		"getaddednodeinfo":   a.getAddedNodeInfo, // addrs.go
		"getnodeaddresses":   a.getNodeAddresses, // addrs.go
		"getinfo":            a.getInfo,
		"getblockchaininfo":  a.getBlockchainInfo,
		"getsyncstatus":      a.getSyncStatus,
		"getblocktemplate":   a.getBlockTemplate,
		"submitblock":        a.submitBlock,
		"generatetoaddress":  a.generateToAddress,
		"getutxosbyaddress":  a.getUtxosByAddress,
		"getaddressbalance":  a.getAddressBalance,
		"getclusterbalance":  a.getClusterBalance,
		"getclusterinfo":     a.getClusterInfo,
		"gettxoutsetinfo":    a.getTxOutSetInfo,
		"validateaddress":    a.validateAddress,
		"getagentprofile":    a.getAgentProfile,
		"listagents":         a.listAgents,
		"getcontract":        a.getContract,
		"getconductinfo":     a.getConductInfo,
		"help":               func(ctx context.Context, p jsonrpc.Params) (any, error) { return help(p) },
		"stop":               a.stop,
	}
}

// hashParam decodes parameter i as a 64-hex-character hash.
func hashParam(p jsonrpc.Params, i int, what string) (types.Hash, error) {
	s, err := p.String(i)
	if err != nil {
		return types.Hash{}, err
	}
	h, err := types.ParseHash(s)
	if err != nil {
		return types.Hash{}, jsonrpc.NewError(jsonrpc.CodeInvalidParams, "invalid %s: want 64 hex characters", what)
	}
	return h, nil
}

// addressParam decodes parameter i as an address of this network.
func (a *api) addressParam(p jsonrpc.Params, i int) (keys.PubKeyHash, error) {
	s, err := p.String(i)
	if err != nil {
		return keys.PubKeyHash{}, err
	}
	pkh, err := keys.DecodeAddress(s, a.b.Network().HRP)
	if err != nil {
		return pkh, rpcapi.DomainError(reason.InvalidAddress, fmt.Sprintf("invalid address: %v", err))
	}
	return pkh, nil
}

// internal wraps a storage failure: the caller sees -32603 without details of the disk.
func internal(err error) error {
	return jsonrpc.NewError(jsonrpc.CodeInternal, "internal error: %v", err)
}

// rejection is the answer to a block or transaction the node refused: a domain error with
// the message and the reason of the rule's kind (consensus or mempool, protocol §11), or an
// internal error when the refusal is no rule's (a storage failure).
func rejection(err error) error {
	var re *mempool.RejectError
	if !errors.As(err, &re) && !consensus.IsRuleError(err) {
		return internal(err)
	}
	return rpcapi.NewDomainError(err)
}

package rpcserver

import (
	"context"
	"errors"

	"github.com/cointoolkit/coin/lib/jsonrpc"
	"github.com/cointoolkit/coin/lib/p2p/addrman"
	"github.com/cointoolkit/coin/lib/reason"
	"github.com/cointoolkit/coin/lib/rpcapi"
)

// The address methods: addnode, getaddednodeinfo and getnodeaddresses, with Bitcoin
// Core's names, parameters and result fields.

// PeerBook is what the address methods ask of the node: its added nodes and its known
// addresses (lib/node's Node, through its P2P layer). A Backend without it, or a node
// running without a P2P layer (addrman.ErrNoNetwork), answers that the network is off.
type PeerBook interface {
	AddNode(node, command string) error
	AddedNodeInfo(node string) ([]rpcapi.AddedNodeInfo, error)
	NodeAddresses(count int) ([]rpcapi.NodeAddress, error)
}

// Error codes of Bitcoin Core for the added-node list and a disabled network.
const (
	codeNodeAlreadyAdded = -23 // RPC_CLIENT_NODE_ALREADY_ADDED
	codeNodeNotAdded     = -24 // RPC_CLIENT_NODE_NOT_ADDED
	codeP2PDisabled      = -31 // RPC_CLIENT_P2P_DISABLED
)

// peerBook is the node's PeerBook, or the error that the network is off.
func (a *api) peerBook() (PeerBook, error) {
	if pb, ok := a.b.Backend.(PeerBook); ok {
		return pb, nil
	}
	return nil, coreCodeError(codeP2PDisabled, addrman.ErrNoNetwork)
}

// coreCodeError is err with Bitcoin Core's code for it and, as every domain error, the
// reason of its kind as data.reason (docs/rpc-errors.md).
func coreCodeError(code int, err error) *jsonrpc.Error {
	e := jsonrpc.NewError(code, "%v", err)
	if r := reason.Of(err); r != "" {
		e.Data = rpcapi.ErrorData{Reason: r}
	}
	return e
}

// addrError turns the P2P layer's errors about addresses into RPC errors.
func addrError(err error) error {
	switch {
	case err == nil:
		return nil
	case errors.Is(err, addrman.ErrAlreadyAdded):
		return coreCodeError(codeNodeAlreadyAdded, err)
	case errors.Is(err, addrman.ErrNotAdded):
		return coreCodeError(codeNodeNotAdded, err)
	case errors.Is(err, addrman.ErrInvalidAddr), errors.Is(err, addrman.ErrBadCommand), errors.Is(err, addrman.ErrTooManyAdded):
		return jsonrpc.NewError(jsonrpc.CodeInvalidParams, "%v", err)
	case errors.Is(err, addrman.ErrNoNetwork):
		return coreCodeError(codeP2PDisabled, err)
	}
	return internal(err)
}

func (a *api) addNode(_ context.Context, p jsonrpc.Params) (any, error) {
	node, err := p.String(0)
	if err != nil {
		return nil, err
	}
	cmd, err := p.String(1)
	if err != nil {
		return nil, err
	}
	pb, err := a.peerBook()
	if err != nil {
		return nil, err
	}
	return nil, addrError(pb.AddNode(node, cmd))
}

func (a *api) getAddedNodeInfo(_ context.Context, p jsonrpc.Params) (any, error) {
	node, err := p.OptString(0, "")
	if err != nil {
		return nil, err
	}
	pb, err := a.peerBook()
	if err != nil {
		return nil, err
	}
	info, err := pb.AddedNodeInfo(node)
	if err != nil {
		return nil, addrError(err)
	}
	if info == nil {
		info = []rpcapi.AddedNodeInfo{}
	}
	return info, nil
}

// maxNodeAddresses bounds one getnodeaddresses answer (count 0 asks for all).
const maxNodeAddresses = 10_000

func (a *api) getNodeAddresses(_ context.Context, p jsonrpc.Params) (any, error) {
	count, err := p.OptUint64(0, 1)
	if err != nil {
		return nil, err
	}
	if count == 0 || count > maxNodeAddresses {
		count = maxNodeAddresses
	}
	pb, err := a.peerBook()
	if err != nil {
		return nil, err
	}
	out, err := pb.NodeAddresses(int(count))
	if err != nil {
		return nil, addrError(err)
	}
	if out == nil {
		out = []rpcapi.NodeAddress{}
	}
	return out, nil
}

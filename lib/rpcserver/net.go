package rpcserver

import (
	"context"
	"net/netip"
	"time"

	"github.com/cointoolkit/coin/lib/jsonrpc"
	"github.com/cointoolkit/coin/lib/p2p"
	"github.com/cointoolkit/coin/lib/reason"
	"github.com/cointoolkit/coin/lib/rpcapi"
)

// The network methods, with Bitcoin Core's names and fields: getnetworkinfo, getnettotals,
// disconnectnode, setban, listbanned, clearbanned, setnetworkactive and ping (getpeerinfo is
// in chain.go with the spec's methods). The node answers through Backend's network
// controls; a node without a P2P layer answers p2p_disabled.

// defaultBanTime is setban's bantime when none is given (Core's -bantime default).
const defaultBanTime = 24 * time.Hour

// netError turns a network control's error into a domain error with its reason.
func netError(err error) error {
	if reason.Of(err) == "" {
		return internal(err)
	}
	return rpcapi.NewDomainError(err)
}

func (a *api) getNetworkInfo(context.Context, jsonrpc.Params) (any, error) {
	info, err := a.b.NetworkInfo()
	if err != nil {
		return nil, netError(err)
	}
	return info, nil
}

func (a *api) getNetTotals(context.Context, jsonrpc.Params) (any, error) {
	t, err := a.b.NetTotals()
	if err != nil {
		return nil, netError(err)
	}
	return t, nil
}

func (a *api) disconnectNode(_ context.Context, p jsonrpc.Params) (any, error) {
	addr, err := p.OptString(0, "")
	if err != nil {
		return nil, err
	}
	var id uint64
	hasID := len(p) > 1 && string(p[1]) != "null"
	if hasID {
		if id, err = p.Uint64(1); err != nil {
			return nil, err
		}
	}
	switch {
	case addr == "" && !hasID:
		return nil, jsonrpc.NewError(jsonrpc.CodeInvalidParams, "disconnectnode: give an address, or an empty address and a nodeid")
	case addr != "" && hasID:
		return nil, jsonrpc.NewError(jsonrpc.CodeInvalidParams, "disconnectnode: give an address or a nodeid, not both")
	}
	if err := a.b.DisconnectNode(addr, id); err != nil {
		return nil, netError(err)
	}
	return nil, nil
}

func (a *api) setBan(_ context.Context, p jsonrpc.Params) (any, error) {
	s, err := p.String(0)
	if err != nil {
		return nil, err
	}
	cmd, err := p.String(1)
	if err != nil {
		return nil, err
	}
	if cmd != "add" && cmd != "remove" {
		return nil, jsonrpc.NewError(jsonrpc.CodeInvalidParams, "setban: command must be add or remove, not %q", cmd)
	}
	subnet, err := parseSubnet(s)
	if err != nil {
		return nil, err
	}
	if cmd == "remove" {
		if err := a.b.Unban(subnet); err != nil {
			return nil, netError(err)
		}
		return nil, nil
	}
	bantime, err := p.OptUint64(2, 0)
	if err != nil {
		return nil, err
	}
	absolute, err := p.OptBool(3, false)
	if err != nil {
		return nil, err
	}
	now := time.Now()
	until := now.Add(defaultBanTime)
	switch {
	case absolute:
		until = time.Unix(int64(min(bantime, 1<<40)), 0)
		if !until.After(now) {
			return nil, jsonrpc.NewError(jsonrpc.CodeInvalidParams, "setban: absolute bantime %d is not in the future", bantime)
		}
	case bantime > 0:
		until = now.Add(time.Duration(min(bantime, 1<<32)) * time.Second)
	}
	if err := a.b.SetBan(subnet, until); err != nil {
		return nil, netError(err)
	}
	return nil, nil
}

// parseSubnet reads setban's subnet: an address or a CIDR range (p2p.ParseSubnet).
func parseSubnet(s string) (netip.Prefix, error) {
	pfx, err := p2p.ParseSubnet(s)
	if err != nil {
		return netip.Prefix{}, rpcapi.DomainError(reason.InvalidSubnet, err.Error())
	}
	return pfx, nil
}

func (a *api) listBanned(context.Context, jsonrpc.Params) (any, error) {
	list, err := a.b.ListBanned()
	if err != nil {
		return nil, netError(err)
	}
	if list == nil {
		list = []rpcapi.Banned{}
	}
	return list, nil
}

func (a *api) clearBanned(context.Context, jsonrpc.Params) (any, error) {
	if err := a.b.ClearBanned(); err != nil {
		return nil, netError(err)
	}
	return nil, nil
}

func (a *api) setNetworkActive(_ context.Context, p jsonrpc.Params) (any, error) {
	on, err := p.Bool(0)
	if err != nil {
		return nil, err
	}
	if err := a.b.SetNetworkActive(on); err != nil {
		return nil, netError(err)
	}
	return on, nil
}

func (a *api) ping(context.Context, jsonrpc.Params) (any, error) {
	if err := a.b.PingPeers(); err != nil {
		return nil, netError(err)
	}
	return nil, nil
}

package main

import (
	"fmt"

	"github.com/cointoolkit/coin/lib/chainstate"
	"github.com/cointoolkit/coin/lib/mempool"
	"github.com/cointoolkit/coin/lib/node"
	"github.com/cointoolkit/coin/lib/p2p"
)

var (
	_ node.Network = (*p2p.Server)(nil)
	_ p2p.Backend  = (*node.Node)(nil)
	_ p2p.Chain    = (*chainstate.Chain)(nil)
	_ p2p.Mempool  = (*mempool.Pool)(nil)
)

// attachNetwork plugs the P2P layer into the node: it listens on --p2p-port, keeps the
// --connect peers (or else the known ones of peers.json) connected, and relays and syncs
// through the node's SubmitBlock and SubmitTransaction.
func attachNetwork(n *node.Node) error {
	cfg := n.Config()
	none := func(v int) int { // the flags say 0 for none; p2p.Config says negative
		if v == 0 {
			return -1
		}
		return v
	}
	srv, err := p2p.New(p2p.Config{
		Network:     cfg.Network,
		ListenAddr:  fmt.Sprintf(":%d", cfg.P2PPort),
		Connect:     cfg.Connect,
		MaxOutbound: none(cfg.MaxPeers),
		MaxInbound:  none(cfg.MaxInbound),
		DataDir:     cfg.DataDir,
		Logger:      n.Logger(),
	}, n.Chain(), n.Mempool(), n)
	if err != nil {
		return err
	}
	n.SetNetwork(srv)
	return nil
}

package node

import (
	"net/netip"

	"github.com/cointoolkit/coin/lib/p2p"
	"github.com/cointoolkit/coin/lib/p2p/addrman"
	"github.com/cointoolkit/coin/lib/rpcapi"
	"github.com/cointoolkit/coin/lib/rpcserver"
)

// The address methods of RPC (lib/rpcserver's PeerBook): the added nodes and the known
// addresses of the P2P layer. A node without one answers addrman.ErrNoNetwork.

// peerBook is the part of the P2P layer the address methods use (*p2p.Server).
type peerBook interface {
	AddNode(node, command string) error
	AddedNodeInfo(node string) ([]p2p.AddedNode, error)
	NodeAddresses(count int) []addrman.Entry
}

var (
	_ peerBook           = (*p2p.Server)(nil)
	_ rpcserver.PeerBook = (*Node)(nil)
)

func (n *Node) peerBook() (peerBook, error) {
	if pb, ok := n.net.(peerBook); ok {
		return pb, nil
	}
	return nil, addrman.ErrNoNetwork
}

// AddNode is the addnode RPC (p2p.Server.AddNode).
func (n *Node) AddNode(node, command string) error {
	pb, err := n.peerBook()
	if err != nil {
		return err
	}
	return pb.AddNode(node, command)
}

// AddedNodeInfo is the getaddednodeinfo RPC.
func (n *Node) AddedNodeInfo(node string) ([]rpcapi.AddedNodeInfo, error) {
	pb, err := n.peerBook()
	if err != nil {
		return nil, err
	}
	list, err := pb.AddedNodeInfo(node)
	if err != nil {
		return nil, err
	}
	out := make([]rpcapi.AddedNodeInfo, 0, len(list))
	for _, a := range list {
		info := rpcapi.AddedNodeInfo{AddedNode: a.Addr, Connected: a.Connected, Addresses: []rpcapi.AddedNodeAddress{}}
		for _, c := range a.Conns {
			info.Addresses = append(info.Addresses, rpcapi.AddedNodeAddress{Address: c.Addr, Connected: c.Direction})
		}
		out = append(out, info)
	}
	return out, nil
}

// NodeAddresses is the getnodeaddresses RPC: up to count known addresses, at random.
func (n *Node) NodeAddresses(count int) ([]rpcapi.NodeAddress, error) {
	pb, err := n.peerBook()
	if err != nil {
		return nil, err
	}
	entries := pb.NodeAddresses(count)
	out := make([]rpcapi.NodeAddress, 0, len(entries))
	for _, e := range entries {
		ap, err := netip.ParseAddrPort(e.Addr)
		if err != nil {
			continue // a hostname (never in the tables; kept for safety)
		}
		network := "ipv6"
		if ap.Addr().Unmap().Is4() {
			network = "ipv4"
		}
		out = append(out, rpcapi.NodeAddress{Time: e.LastSeen, Services: rpcapi.NodeNetwork,
			Address: ap.Addr().Unmap().String(), Port: ap.Port(), Network: network})
	}
	return out, nil
}

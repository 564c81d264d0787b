package rpcapi

// Results of the address methods (addnode, getaddednodeinfo, getnodeaddresses), with
// Bitcoin Core's field names.

// AddedNodeInfo is one entry of getaddednodeinfo's result.
type AddedNodeInfo struct {
	AddedNode string             `json:"addednode"`
	Connected bool               `json:"connected"`
	Addresses []AddedNodeAddress `json:"addresses"`
}

// AddedNodeAddress is one connection to an added node: the remote address and
// "outbound" or "inbound".
type AddedNodeAddress struct {
	Address   string `json:"address"`
	Connected string `json:"connected"`
}

// NodeAddress is one entry of getnodeaddresses' result.
type NodeAddress struct {
	Time     int64  `json:"time"`     // unix seconds the address was last seen
	Services uint64 `json:"services"` // service bits: 1 (NODE_NETWORK), every coin-node serves blocks
	Address  string `json:"address"`  // the IP
	Port     uint16 `json:"port"`
	Network  string `json:"network"` // "ipv4" or "ipv6"
}

// NodeNetwork is the NODE_NETWORK service bit: the node serves the full block chain.
const NodeNetwork = 1

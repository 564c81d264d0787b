package api

// The query parameters of the GET endpoints, as types: what an MCP tool (lib/faucet/mcp)
// takes as its input, and what a client may encode into the query string. Each field's
// JSON name is the parameter's name; optional parameters are omitempty.

// AddressQuery is the query of GET /api/wallet/balance, /api/agent/profile and
// /api/address/decay.
type AddressQuery struct {
	Address string `json:"address"`
}

// DirectoryQuery is the query of GET /api/agent/directory: offset (default 0) and limit
// (1 to 100, default 20).
type DirectoryQuery struct {
	Offset uint64 `json:"offset,omitempty"`
	Limit  uint64 `json:"limit,omitempty"`
}

// ContractQuery is the query of GET /api/agent/contract.
type ContractQuery struct {
	ContractID string `json:"contract_id"`
}

// BlockQuery is the query of GET /api/block: a block hash, or a main-chain height (one of
// the two).
type BlockQuery struct {
	Hash   string  `json:"hash,omitempty"`
	Height *uint64 `json:"height,omitempty"`
}

// TxQuery is the query of GET /api/tx.
type TxQuery struct {
	TxID string `json:"txid"`
}

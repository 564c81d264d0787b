package api

// The chain reads (beyond the spec): a block, a transaction and an address's decay, from
// the node's getblock, gettransaction and getclusterinfo. Amounts are COIN strings with 8
// decimals, like every amount of this API.

// Block is the body of GET /api/block.
type Block struct {
	Hash             string   `json:"hash"`
	Height           uint64   `json:"height"`
	PrevHash         string   `json:"prev_hash"`
	MerkleRoot       string   `json:"merkle_root"`
	Timestamp        uint64   `json:"timestamp"`
	DifficultyTarget uint32   `json:"difficulty_target"`
	Nonce            uint64   `json:"nonce"`
	Confirmations    int64    `json:"confirmations"`
	Size             int      `json:"size"`
	TxCount          int      `json:"tx_count"`
	Tx               []string `json:"tx"`
}

// Transaction is the body of GET /api/tx: where a transaction is (a block, the mempool).
// Fee is absent for a coinbase; BlockHash and BlockHeight while it is unconfirmed.
type Transaction struct {
	TxID          string  `json:"txid"`
	Kind          string  `json:"kind"`
	Size          int     `json:"size"`
	VinCount      int     `json:"vin_count"`
	VoutCount     int     `json:"vout_count"`
	Fee           string  `json:"fee,omitempty"`
	Confirmations uint64  `json:"confirmations"`
	InMempool     bool    `json:"in_mempool"`
	BlockHash     string  `json:"block_hash,omitempty"`
	BlockHeight   *uint64 `json:"block_height,omitempty"`
}

// Decay is the body of GET /api/address/decay: the concentration decay (protocol §8) of
// the cluster an address belongs to. RatePerBlock is in parts per 10^12 of an output's value
// per block; ClusterBalance and CirculatingSupply are nominal values.
type Decay struct {
	Address            string `json:"address"`
	ClusterID          string `json:"cluster_id"`
	ClusterAddresses   uint64 `json:"cluster_addresses"`
	ClusterBalance     string `json:"cluster_balance"`
	ConcentrationPPB   uint64 `json:"concentration_ppb"`
	RatePerBlock       uint64 `json:"rate_per_block"`
	YearlyDecayPercent string `json:"yearly_decay_percent"`
	CirculatingSupply  string `json:"circulating_supply"`
}

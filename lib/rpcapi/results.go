package rpcapi

import "encoding/json"

// Block is getblock's result.
type Block struct {
	Hash             string   `json:"hash"`
	Height           uint64   `json:"height"`
	Version          uint32   `json:"version"`
	PrevHash         string   `json:"prev_hash"`
	MerkleRoot       string   `json:"merkle_root"`
	Timestamp        uint64   `json:"timestamp"`
	DifficultyTarget uint32   `json:"difficulty_target"`
	Nonce            uint64   `json:"nonce"`
	TxCount          int      `json:"tx_count"`
	Tx               []string `json:"tx"`
	Confirmations    int64    `json:"confirmations"`
	Size             int      `json:"size"`
}

// Header is getblockheader's result.
type Header struct {
	Hash             string `json:"hash"`
	Version          uint32 `json:"version"`
	PrevHash         string `json:"prev_hash"`
	MerkleRoot       string `json:"merkle_root"`
	Timestamp        uint64 `json:"timestamp"`
	DifficultyTarget uint32 `json:"difficulty_target"`
	Nonce            uint64 `json:"nonce"`
}

// Transaction is gettransaction's result: the spec's fields, then extras.
type Transaction struct {
	TxID          string  `json:"txid"`
	Version       uint32  `json:"version"`
	VinCount      int     `json:"vin_count"`
	VoutCount     int     `json:"vout_count"`
	LockTime      uint64  `json:"lock_time"`
	Kind          string  `json:"kind"`
	Size          int     `json:"size"`
	Fee           *uint64 `json:"fee,omitempty"`
	BlockHash     string  `json:"block_hash,omitempty"`
	BlockHeight   *uint64 `json:"block_height,omitempty"`
	Confirmations uint64  `json:"confirmations"`
	InMempool     bool    `json:"in_mempool"`
}

// MempoolInfo is getmempoolinfo's result.
type MempoolInfo struct {
	Size     int    `json:"size"`
	Bytes    int    `json:"bytes"`
	TotalFee uint64 `json:"total_fee"`
}

// Peer describes one connection (getpeerinfo's list), with Bitcoin Core's field names.
type Peer struct {
	ID             uint64 `json:"id"`
	Addr           string `json:"addr"`
	AddrLocal      string `json:"addrlocal,omitempty"`
	Inbound        bool   `json:"inbound"`
	ConnectionType string `json:"connection_type"` // inbound, outbound-full-relay, manual or addr-fetch
	// PingTime and MinPing are in seconds; absent until a pong came back.
	PingTime       float64 `json:"pingtime,omitempty"`
	MinPing        float64 `json:"minping,omitempty"`
	SyncedHeaders  int64   `json:"synced_headers"` // -1: none known yet
	SyncedBlocks   int64   `json:"synced_blocks"`  // -1: none known yet
	BytesSent      uint64  `json:"bytessent"`
	BytesRecv      uint64  `json:"bytesrecv"`
	ConnTime       int64   `json:"conntime"` // unix seconds
	Version        uint32  `json:"version"`  // the peer's protocol version
	SubVer         string  `json:"subver"`
	StartingHeight uint64  `json:"startingheight"` // the height the peer announced, raised by what it has shown since
	BanScore       int     `json:"banscore"`
}

// PeerInfo is getpeerinfo's result: the spec's connected count and the peers.
type PeerInfo struct {
	Connected int    `json:"connected"`
	Peers     []Peer `json:"peers"`
}

// LocalAddress is one of getnetworkinfo's localaddresses.
type LocalAddress struct {
	Address string `json:"address"`
	Port    uint16 `json:"port"`
}

// NetworkInfo is getnetworkinfo's result (Bitcoin Core's fields; relayfee in COIN per kB).
type NetworkInfo struct {
	Version         int            `json:"version"`
	SubVersion      string         `json:"subversion"`
	ProtocolVersion uint32         `json:"protocolversion"`
	LocalAddresses  []LocalAddress `json:"localaddresses"`
	Connections     int            `json:"connections"`
	ConnectionsIn   int            `json:"connections_in"`
	ConnectionsOut  int            `json:"connections_out"`
	NetworkActive   bool           `json:"networkactive"`
	RelayFee        json.Number    `json:"relayfee"`
}

// Banned is one entry of listbanned (Core's fields; times in unix seconds).
type Banned struct {
	Address       string `json:"address"`
	BanCreated    int64  `json:"ban_created"`
	BannedUntil   int64  `json:"banned_until"`
	BanDuration   int64  `json:"ban_duration"`
	TimeRemaining int64  `json:"time_remaining"`
	Reason        string `json:"reason,omitempty"`
}

// NetTotals is getnettotals' result.
type NetTotals struct {
	TotalBytesRecv uint64 `json:"totalbytesrecv"`
	TotalBytesSent uint64 `json:"totalbytessent"`
	TimeMillis     int64  `json:"timemillis"`
}

// NodeInfo is getinfo's result; the supply fields are decimal COIN numbers.
type NodeInfo struct {
	Blocks            uint64      `json:"blocks"`
	BestBlockHash     string      `json:"bestblockhash"`
	Connections       int         `json:"connections"`
	CirculatingSupply json.Number `json:"circulating_supply"`
	DecayPool         json.Number `json:"decay_pool"`
}

// BlockchainInfo is getblockchaininfo's result.
type BlockchainInfo struct {
	Height               uint64 `json:"height"`
	BestBlockHash        string `json:"best_block_hash"`
	CirculatingSupply    uint64 `json:"circulating_supply"`
	DecayPoolBalance     uint64 `json:"decay_pool_balance"`
	InitialBlockDownload bool   `json:"initial_block_download"`
	UtxoCount            uint64 `json:"utxo_count"`
	MempoolSize          int    `json:"mempool_size"`
	PeerCount            int    `json:"peer_count"`
	Network              string `json:"network"`
}

// SyncStatus is getsyncstatus's result.
type SyncStatus struct {
	Syncing       bool   `json:"syncing"`
	CurrentHeight uint64 `json:"current_height"`
	PeerCount     int    `json:"peer_count"`
	BestBlockHash string `json:"best_block_hash"`
	// Extensions beside the spec's fields: the height the node is syncing toward (its tip's
	// when caught up) and current_height / target_height in [0, 1].
	TargetHeight uint64  `json:"target_height"`
	Progress     float64 `json:"progress"`
}

// TemplateTx is one transaction of a block template.
type TemplateTx struct {
	TxID string `json:"txid"`
	Data string `json:"data"`
	Fee  uint64 `json:"fee"`
}

// BlockTemplate is getblocktemplate's result. transactions[0] is the coinbase.
type BlockTemplate struct {
	Version          uint32       `json:"version"`
	PrevHash         string       `json:"prev_hash"`
	MerkleRoot       string       `json:"merkle_root"`
	Timestamp        uint64       `json:"timestamp"`
	DifficultyTarget uint32       `json:"difficulty_target"`
	Nonce            uint64       `json:"nonce"`
	Height           uint64       `json:"height"`
	Transactions     []TemplateTx `json:"transactions"`
	Target           string       `json:"target"`  // the full 256-bit target, hex
	MinTime          uint64       `json:"mintime"` // median time past + 1
	CoinbaseValue    uint64       `json:"coinbase_value"`
}

// UTXO is one element of getutxosbyaddress.
type UTXO struct {
	TxID           string `json:"txid"`
	Index          uint32 `json:"index"`
	Value          uint64 `json:"value"`
	BlockHeight    uint64 `json:"block_height"`
	IsCoinbase     bool   `json:"is_coinbase"`
	ClusterID      string `json:"cluster_id"`
	PubKeyHash     string `json:"pubkey_hash"`
	EffectiveValue uint64 `json:"effective_value"`
	Locked         bool   `json:"locked"`
	Confirmations  uint64 `json:"confirmations"`
}

// AddressBalance is getaddressbalance's result, in subunits. Balance is the nominal value of
// the address's outputs (confirmed; with include_mempool the pending view's): Spendable, at
// their effective value at the next block, of the mature and unlocked ones (a mempool output
// counts at its value), plus Locked (stakes, escrows) and Immature (coinbases younger than
// the maturity), both nominal. UtxoCount is the number of outputs Balance sums.
type AddressBalance struct {
	Address   string `json:"address"`
	Balance   uint64 `json:"balance"`
	Spendable uint64 `json:"spendable"`
	Locked    uint64 `json:"locked"`
	Immature  uint64 `json:"immature"`
	UtxoCount uint64 `json:"utxo_count"`
}

// TxOutSetInfo is gettxoutsetinfo's result.
type TxOutSetInfo struct {
	Height        uint64 `json:"height"`
	BestBlockHash string `json:"best_block_hash"`
	UtxoCount     uint64 `json:"utxo_count"`
	TotalAmount   uint64 `json:"total_amount"`
	Hash          string `json:"hash"`
}

// ValidateAddress is validateaddress's result.
type ValidateAddress struct {
	IsValid    bool   `json:"isvalid"`
	Address    string `json:"address"`
	PubKeyHash string `json:"pubkey_hash,omitempty"`
	ClusterID  string `json:"cluster_id,omitempty"`
	Error      string `json:"error,omitempty"`
}

// AgentProfile is getagentprofile's result: the spec's conduct profile (same field names as
// the faucet's /api/agent/profile) and where the record stands. Scores and counts are the
// pending view's (chain plus mempool); registered_at and registered_height are absent until
// the registration is mined.
type AgentProfile struct {
	Address            string   `json:"address"`
	ConductScore       uint32   `json:"conduct_score"`
	Tier               string   `json:"tier"`
	ContractsCompleted uint64   `json:"contracts_completed"`
	ContractsFailed    uint64   `json:"contracts_failed"`
	VouchesReceived    uint64   `json:"vouches_received"`
	VouchesGiven       uint64   `json:"vouches_given"`
	ReviewsReceived    uint64   `json:"reviews_received"`
	AverageReviewScore *float64 `json:"average_review_score,omitempty"`
	RegisteredAt       string   `json:"registered_at,omitempty"` // RFC 3339 UTC
	RegisteredHeight   *uint64  `json:"registered_height,omitempty"`
	StakeTxID          string   `json:"stake_txid"`
	// Confirmed is false while the registration is in the mempool; the scores can be
	// pending either way.
	Confirmed bool `json:"confirmed"`
}

// AgentEntry is one element of listagents's agents (the spec's directory entry).
type AgentEntry struct {
	Address            string `json:"address"`
	ConductScore       uint32 `json:"conduct_score"`
	Tier               string `json:"tier"`
	ContractsCompleted uint64 `json:"contracts_completed"`
}

// AgentList is listagents's result (the spec's directory page).
type AgentList struct {
	Agents []AgentEntry `json:"agents"`
	Total  uint64       `json:"total"`
	Offset uint64       `json:"offset"`
	Limit  uint64       `json:"limit"`
}

// Contract is getcontract's result.
type Contract struct {
	ContractID             string `json:"contract_id"`
	Initiator              string `json:"initiator"`
	Counterparty           string `json:"counterparty"`
	Value                  uint64 `json:"value"`      // subunits
	ValueCoin              string `json:"value_coin"` // the same in COIN, 8 decimals
	CreatedHeight          uint64 `json:"created_height"`
	ExpiresAt              uint64 `json:"expires_at"`
	Status                 string `json:"status"` // open, fulfilled, expired
	ClosedBy               string `json:"closed_by,omitempty"`
	ReviewedByInitiator    bool   `json:"reviewed_by_initiator"`
	ReviewedByCounterparty bool   `json:"reviewed_by_counterparty"`
	// Confirmed is false while the contract's creation, or the change that gave it its
	// status, is in the mempool.
	Confirmed bool `json:"confirmed"`
}

// ConductInfo is getconductinfo's result: the confirmed conduct state at the tip.
type ConductInfo struct {
	Height        uint64 `json:"height"`
	BestBlockHash string `json:"best_block_hash"`
	Agents        uint64 `json:"agents"`
	OpenContracts uint64 `json:"open_contracts"`
	Hash          string `json:"hash"`
}

// ClusterInfo is getclusterinfo's result. The rate is for an owner that is no agent; an
// agent's tier multiplies it (protocol §8: exemplary ×0.5 … observer ×3).
type ClusterInfo struct {
	ClusterID         string `json:"cluster_id"`
	Balance           uint64 `json:"balance"`   // subunits, Σ nominal value of its unspent outputs
	Addresses         uint64 `json:"addresses"` // addresses in the cluster
	ConcentrationPPB  uint64 `json:"concentration_ppb"`
	RatePerBlock      uint64 `json:"rate_per_block"` // parts per 10^12
	YearlyDecayPct    string `json:"yearly_decay_percent"`
	CirculatingSupply uint64 `json:"circulating_supply"`
}

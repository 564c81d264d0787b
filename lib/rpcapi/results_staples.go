package rpcapi

import "encoding/json"

// Results of the methods named as Bitcoin Core names them (getmininginfo, getchaintips, ...):
// Core's field names; amounts Core gives in BTC are in COIN (JSON numbers with 8 decimals),
// amounts it gives in satoshis are in subunits.

// MiningInfo is getmininginfo's result.
type MiningInfo struct {
	Blocks        uint64   `json:"blocks"`
	Bits          string   `json:"bits"` // the tip's compact target, 8 hex digits
	Difficulty    float64  `json:"difficulty"`
	Target        string   `json:"target"` // the tip's target, 64 hex digits
	NetworkHashPS float64  `json:"networkhashps"`
	PooledTx      int      `json:"pooledtx"`
	Chain         string   `json:"chain"`
	Warnings      []string `json:"warnings"`
}

// ChainTip is one element of getchaintips's result.
type ChainTip struct {
	Height    uint64 `json:"height"`
	Hash      string `json:"hash"`
	BranchLen uint64 `json:"branchlen"`
	Status    string `json:"status"`
}

// BlockStats is getblockstats's result. Fees are in subunits and nominal: the inputs' values
// as created less the outputs (docs/operations.md, "Fee estimation").
type BlockStats struct {
	AvgFee             uint64    `json:"avgfee"`
	AvgFeeRate         uint64    `json:"avgfeerate"`
	AvgTxSize          uint64    `json:"avgtxsize"`
	BlockHash          string    `json:"blockhash"`
	FeeRatePercentiles [5]uint64 `json:"feerate_percentiles"`
	Height             uint64    `json:"height"`
	Ins                uint64    `json:"ins"`
	MaxFee             uint64    `json:"maxfee"`
	MaxFeeRate         uint64    `json:"maxfeerate"`
	MaxTxSize          uint64    `json:"maxtxsize"`
	MedianFee          uint64    `json:"medianfee"`
	MedianTime         uint64    `json:"mediantime"`
	MedianTxSize       uint64    `json:"mediantxsize"`
	MinFee             uint64    `json:"minfee"`
	MinFeeRate         uint64    `json:"minfeerate"`
	MinTxSize          uint64    `json:"mintxsize"`
	Outs               uint64    `json:"outs"`
	Subsidy            uint64    `json:"subsidy"`
	Time               uint64    `json:"time"`
	TotalOut           uint64    `json:"total_out"`
	TotalSize          uint64    `json:"total_size"`
	TotalFee           uint64    `json:"totalfee"`
	Txs                uint64    `json:"txs"`
	UtxoIncrease       int64     `json:"utxo_increase"`
}

// MempoolFees are the fees of getmempoolentry, in COIN.
type MempoolFees struct {
	Base       json.Number `json:"base"`
	Modified   json.Number `json:"modified"`
	Ancestor   json.Number `json:"ancestor"`
	Descendant json.Number `json:"descendant"`
}

// MempoolEntry is getmempoolentry's result.
type MempoolEntry struct {
	TxID            string      `json:"txid"`
	VSize           int         `json:"vsize"`
	Size            int         `json:"size"`
	Fee             uint64      `json:"fee"` // subunits
	Fees            MempoolFees `json:"fees"`
	Time            int64       `json:"time"`
	Height          uint64      `json:"height"`
	AncestorCount   int         `json:"ancestorcount"`
	AncestorSize    int         `json:"ancestorsize"`
	DescendantCount int         `json:"descendantcount"`
	DescendantSize  int         `json:"descendantsize"`
	Depends         []string    `json:"depends"`
	SpentBy         []string    `json:"spentby"`
}

// TestAcceptFees are testmempoolaccept's fees, in COIN.
type TestAcceptFees struct {
	Base json.Number `json:"base"`
}

// TestAccept is one element of testmempoolaccept's result.
type TestAccept struct {
	TxID    string          `json:"txid"`
	Allowed bool            `json:"allowed"`
	VSize   int             `json:"vsize,omitempty"`
	Fees    *TestAcceptFees `json:"fees,omitempty"`
	// RejectReason is the refusal's reason (docs/rpc-errors.md), RejectDetails its message.
	RejectReason  string `json:"reject-reason,omitempty"`
	RejectDetails string `json:"reject-details,omitempty"`
}

// DecodedInput is one input of decoderawtransaction's result.
type DecodedInput struct {
	TxID      string `json:"txid"`
	Vout      uint32 `json:"vout"`
	PubKey    string `json:"pubkey"`
	Signature string `json:"signature"`
}

// DecodedOutput is one output of decoderawtransaction's result.
type DecodedOutput struct {
	Value         json.Number `json:"value"` // COIN
	ValueSubunits uint64      `json:"value_subunits"`
	N             int         `json:"n"`
	Address       string      `json:"address"`
	PubKeyHash    string      `json:"pubkey_hash"`
}

// DecodedTx is decoderawtransaction's result.
type DecodedTx struct {
	TxID     string          `json:"txid"`
	Hash     string          `json:"hash"`
	Version  uint32          `json:"version"`
	Size     int             `json:"size"`
	VSize    int             `json:"vsize"`
	LockTime uint64          `json:"locktime"`
	Kind     string          `json:"kind"`
	Payload  string          `json:"payload,omitempty"` // hex
	Vin      []DecodedInput  `json:"vin"`
	Vout     []DecodedOutput `json:"vout"`
}

// FeeEstimate is estimatesmartfee's result: FeeRate in COIN per 1,000 bytes as Core's, and
// FeeRatePerByte in subunits, the unit of the node's relay rule and of coin-wallet.
type FeeEstimate struct {
	FeeRate        json.Number `json:"feerate"`
	FeeRatePerByte uint64      `json:"feerate_per_byte"`
	Blocks         uint64      `json:"blocks"`
	Errors         []string    `json:"errors,omitempty"`
}

// BlockRef is waitfornewblock's and waitforblockheight's result: the tip when the call
// returned.
type BlockRef struct {
	Hash   string `json:"hash"`
	Height uint64 `json:"height"`
}

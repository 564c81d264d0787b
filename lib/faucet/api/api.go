package api

import "encoding/json"

// NewWalletResult is the body of GET /api/wallet/new.
type NewWalletResult struct {
	Address  string `json:"address"`
	Mnemonic string `json:"mnemonic"`
}

// ClaimRequest is the body of POST /api/faucet.
type ClaimRequest struct {
	Address string `json:"address"`
}

// ClaimResult is the body of a paid claim.
type ClaimResult struct {
	TxID   string `json:"txid"`
	Amount string `json:"amount"`
}

// StatusResult is the body of GET /api/status: the spec's three fields, then extras.
type StatusResult struct {
	BlockHeight     uint64 `json:"block_height"`
	MempoolSize     int    `json:"mempool_size"`
	FaucetBalance   string `json:"faucet_balance"`
	FaucetAddress   string `json:"faucet_address"`
	FaucetImmature  string `json:"faucet_immature_balance"`
	Network         string `json:"network"`
	ClaimAmount     string `json:"claim_amount"`
	CooldownSeconds int64  `json:"cooldown_seconds"`
	ClaimsPaid      uint64 `json:"claims_paid"`
}

// BalanceResult is the body of GET /api/wallet/balance.
type BalanceResult struct {
	Address   string `json:"address"`
	Balance   string `json:"balance"`
	UTXOCount int    `json:"utxo_count"`
}

// SendRequest is the body of POST /api/wallet/send; Amount is decimal COIN, read exactly
// from its text.
type SendRequest struct {
	Mnemonic string      `json:"mnemonic"`
	To       string      `json:"to"`
	Amount   json.Number `json:"amount"`
}

// TransferResult is the body of POST /api/wallet/send.
type TransferResult struct {
	TxID   string `json:"txid"`
	From   string `json:"from"`
	To     string `json:"to"`
	Amount string `json:"amount"`
	Fee    string `json:"fee"`
}

// DeriveRequest is the body of POST /api/wallet/derive.
type DeriveRequest struct {
	Mnemonic string `json:"mnemonic"`
}

// AddressResult is the body of POST /api/wallet/derive.
type AddressResult struct {
	Address string `json:"address"`
}

// ErrorBody is the body of every error response.
type ErrorBody struct {
	Error ErrorObject `json:"error"`
}

// ErrorObject says what went wrong: Code is stable (see openapi.json), Message is for
// people.
type ErrorObject struct {
	Code    string `json:"code"`
	Message string `json:"message"`
}

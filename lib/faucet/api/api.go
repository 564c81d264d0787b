package api

import (
	"encoding/json"
	"reflect"
)

// Number is a JSON number kept as its text, so that amounts are read exactly (protocol §2).
// Unlike json.Number it refuses a JSON string such as "1": the spec's amounts, scores and
// counts are numbers.
type Number string

// numberType is what a Number is reported as in a type error ("must be a number").
var numberType = reflect.TypeFor[float64]()

// UnmarshalJSON takes a JSON number's text and refuses any other value (null leaves n as
// it is).
func (n *Number) UnmarshalJSON(b []byte) error {
	switch {
	case len(b) > 0 && (b[0] == '-' || b[0] >= '0' && b[0] <= '9'):
		*n = Number(b)
		return nil
	case string(b) == "null":
		return nil
	case len(b) > 0 && b[0] == '"':
		return &json.UnmarshalTypeError{Value: "string", Type: numberType}
	}
	return &json.UnmarshalTypeError{Value: "value", Type: numberType}
}

// MarshalJSON writes the number's text (0 when empty).
func (n Number) MarshalJSON() ([]byte, error) {
	if n == "" {
		return []byte("0"), nil
	}
	return []byte(n), nil
}

// String is the number's text.
func (n Number) String() string { return string(n) }

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
// FaucetBalance is what the faucet can still pay out: its mature, unlocked outputs in the
// node's pending view (unconfirmed change included) at their effective value at the next
// block (protocol §8), which is below their nominal value while the faucet's cluster decays.
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

// BalanceResult is the body of GET /api/wallet/balance, from the address's confirmed
// outputs (the mempool aside). Balance is their nominal value, as getclusterbalance counts
// it: what the outputs hold, immature coinbases, agent stake and contract escrow included.
// Spendable is what of it a transaction in the next block can spend: the outputs that are
// mature and not locked, at their effective value at the next block (protocol §8: below the
// nominal value when the address's cluster holds more than 0.1% of the supply). UTXOCount
// is the number of outputs Balance sums.
type BalanceResult struct {
	Address   string `json:"address"`
	Balance   string `json:"balance"`
	UTXOCount int    `json:"utxo_count"`
	Spendable string `json:"spendable"`
}

// SendRequest is the body of POST /api/wallet/send; Amount is decimal COIN, read exactly
// from its text.
type SendRequest struct {
	Mnemonic  string `json:"mnemonic,omitempty"`
	PublicKey string `json:"public_key,omitempty"`
	To        string `json:"to"`
	Amount    Number `json:"amount"`
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

// The agent endpoints (7 to 13, and protocol §9.4's refund and contract lookup). Requests that
// act for a wallet carry its mnemonic, or instead its public key (PublicKey, 64 hex): then
// the answer is an UnsignedTx to sign and send with POST /api/tx/submit (protocol §9.5).

// MnemonicRequest is the body of POST /api/agent/register.
type MnemonicRequest struct {
	Mnemonic  string `json:"mnemonic,omitempty"`
	PublicKey string `json:"public_key,omitempty"`
}

// RegisterResult is the body of POST /api/agent/register.
type RegisterResult struct {
	Address      string `json:"address"`
	StakeTxID    string `json:"stake_txid"`
	ConductScore uint32 `json:"conduct_score"`
}

// AgentProfile is the body of GET /api/agent/profile: the spec's conduct profile, then
// extras. AverageReviewScore is absent while the agent has no reviews, RegisteredAt (RFC 3339
// UTC) while its registration is unconfirmed.
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
	RegisteredAt       string   `json:"registered_at,omitempty"`
	StakeTxID          string   `json:"stake_txid,omitempty"`
}

// DirectoryEntry is one element of the directory's agents.
type DirectoryEntry struct {
	Address            string `json:"address"`
	ConductScore       uint32 `json:"conduct_score"`
	Tier               string `json:"tier"`
	ContractsCompleted uint64 `json:"contracts_completed"`
}

// Directory is the body of GET /api/agent/directory: agents by score (highest first), then
// address.
type Directory struct {
	Agents []DirectoryEntry `json:"agents"`
	Total  uint64           `json:"total"`
	Offset uint64           `json:"offset"`
	Limit  uint64           `json:"limit"`
}

// VouchRequest is the body of POST /api/agent/vouch.
type VouchRequest struct {
	Mnemonic      string `json:"mnemonic,omitempty"`
	PublicKey     string `json:"public_key,omitempty"`
	TargetAddress string `json:"target_address"`
}

// VouchResult is the body of POST /api/agent/vouch.
type VouchResult struct {
	Voucher string `json:"voucher"`
	Target  string `json:"target"`
	TxID    string `json:"txid"`
}

// ContractCreateRequest is the body of POST /api/agent/contract/create. ValueCoin is
// decimal COIN, read exactly from its text; ExpiryBlocks is optional (default 1,440).
type ContractCreateRequest struct {
	Mnemonic     string `json:"mnemonic,omitempty"`
	PublicKey    string `json:"public_key,omitempty"`
	Counterparty string `json:"counterparty"`
	ValueCoin    Number `json:"value_coin"`
	ExpiryBlocks Number `json:"expiry_blocks,omitempty"`
}

// ContractCreateResult is the body of POST /api/agent/contract/create.
type ContractCreateResult struct {
	ContractID   string `json:"contract_id"`
	Initiator    string `json:"initiator"`
	Counterparty string `json:"counterparty"`
	ValueCoin    string `json:"value_coin"`
	Status       string `json:"status"`
	ExpiryBlocks uint32 `json:"expiry_blocks"`
}

// ContractRequest is the body of POST /api/agent/contract/fulfil and /refund.
type ContractRequest struct {
	Mnemonic   string `json:"mnemonic,omitempty"`
	PublicKey  string `json:"public_key,omitempty"`
	ContractID string `json:"contract_id"`
}

// FulfilResult is the body of POST /api/agent/contract/fulfil.
type FulfilResult struct {
	ContractID  string `json:"contract_id"`
	Status      string `json:"status"`
	ReleaseTxID string `json:"release_txid"`
}

// RefundResult is the body of POST /api/agent/contract/refund.
type RefundResult struct {
	ContractID string `json:"contract_id"`
	Status     string `json:"status"`
	RefundTxID string `json:"refund_txid"`
}

// Contract is the body of GET /api/agent/contract: the contract record (pending view).
type Contract struct {
	ContractID             string `json:"contract_id"`
	Initiator              string `json:"initiator"`
	Counterparty           string `json:"counterparty"`
	ValueCoin              string `json:"value_coin"`
	Status                 string `json:"status"`
	CreatedHeight          uint64 `json:"created_height"`
	ExpiresAt              uint64 `json:"expires_at"`
	ClosedBy               string `json:"closed_by,omitempty"`
	ReviewedByInitiator    bool   `json:"reviewed_by_initiator"`
	ReviewedByCounterparty bool   `json:"reviewed_by_counterparty"`
	Confirmed              bool   `json:"confirmed"`
}

// ReviewRequest is the body of POST /api/agent/review; Score is an integer from 1 to 10.
type ReviewRequest struct {
	Mnemonic       string `json:"mnemonic,omitempty"`
	PublicKey      string `json:"public_key,omitempty"`
	SubjectAddress string `json:"subject_address"`
	Score          Number `json:"score"`
	ContractID     string `json:"contract_id"`
}

// ReviewResult is the body of POST /api/agent/review; NewConductScore is the subject's
// score in the node's pending view right after the review.
type ReviewResult struct {
	Reviewer        string `json:"reviewer"`
	Subject         string `json:"subject"`
	Score           int    `json:"score"`
	ContractID      string `json:"contract_id"`
	NewConductScore uint32 `json:"new_conduct_score"`
	TxID            string `json:"txid"`
}

// UnsignedTx is the answer of an operation asked with public_key instead of mnemonic
// (protocol §9.5): the transaction built for the acting address,
// nothing signed or broadcast. UnsignedTx is its bincode in hex with every input's public key
// and signature zero; TxID is its id (BLAKE3 of the witness-stripped bincode, final before
// signing); Sign is the message every input signs, "COIN-TX-V1" ‖ network magic ‖ txid, in
// hex; Fee is what the inputs pay beyond the outputs; Inputs are the coins it spends.
type UnsignedTx struct {
	UnsignedTx string         `json:"unsigned_tx"`
	TxID       string         `json:"txid"`
	Sign       string         `json:"sign"`
	Fee        string         `json:"fee"`
	Inputs     []UnsignedCoin `json:"inputs"`
}

// UnsignedCoin is an input of an UnsignedTx: the output it spends and what that output is
// worth when spent in the next block (its effective value, decimal COIN).
type UnsignedCoin struct {
	TxID  string `json:"txid"`
	Index uint32 `json:"index"`
	Value string `json:"value"`
}

// TxSubmitRequest is the body of POST /api/tx/submit: an UnsignedTx's transaction, the
// acting address's Ed25519 public key (64 hex) and its signature of the sign message
// (128 hex), which the faucet puts in every input.
type TxSubmitRequest struct {
	UnsignedTx string `json:"unsigned_tx"`
	PublicKey  string `json:"public_key"`
	Signature  string `json:"signature"`
}

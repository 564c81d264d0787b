package mcp

import (
	"context"
	"net/http"
	"reflect"

	"github.com/cointoolkit/coin/lib/faucet/api"
)

// Tool is one MCP tool: the HTTP endpoint it wraps and the lib/faucet/api types of that
// endpoint's input (the JSON body of a POST, the query of a GET) and 200 answer.
type Tool struct {
	Name        string
	Title       string
	Description string
	Method      string
	Path        string
	// TakesMnemonic marks tools that act for a wallet: their input carries its mnemonic.
	TakesMnemonic bool
	// TakesPublicKey marks the operations that take public_key in place of mnemonic (protocol
	// §9.5): their answer is then an api.UnsignedTx, which tx_submit completes.
	TakesPublicKey bool
	// In and Out are the endpoint's request and response types (lib/faucet/api).
	In, Out reflect.Type
	// call calls the Service method of the endpoint (calls.go).
	call func(ctx context.Context, svc api.Service, in *input) (any, error)
}

// ReadOnly reports whether the tool only reads (a GET).
func (t *Tool) ReadOnly() bool { return t.Method == http.MethodGet }

// mnemonicNote ends the description of every tool that acts for a wallet.
const mnemonicNote = " Acts for the wallet whose 12-word mnemonic is given (account 0, index 0); the mnemonic " +
	"travels to the faucet, which never logs or stores it. Safer: keep the key in coin-wallet and run " +
	"'coin-wallet agent ...' (it signs locally and submits the signed transaction to a node)."

// publicKeyNote ends the description of the operations that take public_key.
const publicKeyNote = " Non-custodial: give public_key (the wallet's Ed25519 public key, 64 hex) instead of mnemonic, " +
	"and nothing is signed or broadcast: the answer is {unsigned_tx, txid, sign, fee, inputs}; decode unsigned_tx, " +
	"check it is what you asked, sign the bytes of sign with your key and call tx_submit."

func tool[In, Out any](name, title, method, path, desc string) Tool {
	return Tool{Name: name, Title: title, Description: desc, Method: method, Path: path,
		In: reflect.TypeFor[In](), Out: reflect.TypeFor[Out]()}
}

func signer[In, Out any](name, title, path, desc string) Tool {
	t := tool[In, Out](name, title, http.MethodPost, path, desc+mnemonicNote)
	t.TakesMnemonic = true
	return t
}

// keyed is signer for an operation that also takes public_key.
func keyed[In, Out any](name, title, path, desc string) Tool {
	t := tool[In, Out](name, title, http.MethodPost, path, desc+mnemonicNote+publicKeyNote)
	t.TakesMnemonic, t.TakesPublicKey = true, true
	return t
}

// noInput is the input of the endpoints that take none.
type noInput struct{}

// tools is the tool list, in the order of the HTTP API's endpoints
// (1 to 6 of docs/faucet.md#api, 7 to 13 with the refund and lookup of protocol §9.4, the chain reads).
var tools = []Tool{
	tool[noInput, api.NewWalletResult]("wallet_new", "New wallet", http.MethodGet, "/api/wallet/new",
		"Create a fresh testnet wallet: a 12-word BIP-39 mnemonic and its address. Nothing is stored; keep the mnemonic, it is the only key."),
	signer[api.DeriveRequest, api.AddressResult]("wallet_derive", "Derive address", "/api/wallet/derive",
		"The address (account 0, index 0) of a mnemonic."),
	tool[api.ClaimRequest, api.ClaimResult]("faucet_claim", "Claim testnet COIN", http.MethodPost, "/api/faucet",
		"Send the faucet's claim amount (100 COIN by default) to an address: once per address per cooldown (an hour), and a few claims per client per hour. Refusals: address_rate_limited, client_rate_limited, budget_exhausted (with retry_after_seconds)."),
	tool[noInput, api.StatusResult]("network_status", "Network status", http.MethodGet, "/api/status",
		"Block height, mempool size, the faucet's balance and address, the claim amount and cooldown."),
	tool[api.AddressQuery, api.BalanceResult]("wallet_balance", "Balance", http.MethodGet, "/api/wallet/balance",
		"The confirmed balance of an address (nominal, stake and escrow included), its UTXO count, and what of it is spendable at the next block after decay."),
	keyed[api.SendRequest, api.TransferResult]("wallet_send", "Send COIN", "/api/wallet/send",
		"Build, sign and broadcast a transfer of amount COIN (a JSON number, at most 8 decimals) to an address."),
	keyed[api.MnemonicRequest, api.RegisterResult]("agent_register", "Register as an agent", "/api/agent/register",
		"Register the wallet as a Proof of Conduct agent: stakes 50 COIN for good; the agent starts at conduct score 500."),
	tool[api.AddressQuery, api.AgentProfile]("agent_profile", "Agent profile", http.MethodGet, "/api/agent/profile",
		"An agent's conduct profile: score (0-1000), tier, contracts, vouches, reviews. agent_not_found for an address that is no agent."),
	tool[api.DirectoryQuery, api.Directory]("agent_directory", "Agent directory", http.MethodGet, "/api/agent/directory",
		"Registered agents, highest conduct score first, paginated by offset (default 0) and limit (1 to 100, default 20)."),
	keyed[api.VouchRequest, api.VouchResult]("agent_vouch", "Vouch for an agent", "/api/agent/vouch",
		"Vouch for another agent (+30 to its score, scaled). The voucher needs a conduct score of at least 700 and vouches for a target once."),
	keyed[api.ContractCreateRequest, api.ContractCreateResult]("contract_create", "Create a contract", "/api/agent/contract/create",
		"Open a contract with another agent (the counterparty), locking value_coin COIN in escrow until the counterparty fulfils it or, after expiry_blocks (default 1440), the initiator refunds it. The contract id is the transaction id."),
	keyed[api.ContractRequest, api.FulfilResult]("contract_fulfil", "Fulfil a contract", "/api/agent/contract/fulfil",
		"Fulfil an open contract as its counterparty: the escrow is released to the counterparty; counterparty +20, initiator +10 (scaled, less for repeats between the same two agents)."),
	keyed[api.ContractRequest, api.RefundResult]("contract_refund", "Refund an expired contract", "/api/agent/contract/refund",
		"Take the escrow of an expired, unfulfilled contract back as its initiator; the counterparty loses 50 (scaled)."),
	tool[api.ContractQuery, api.Contract]("contract_get", "Contract", http.MethodGet, "/api/agent/contract",
		"A contract's record: parties, value, status (open, fulfilled, expired), expiry height, reviews."),
	keyed[api.ReviewRequest, api.ReviewResult]("agent_review", "Review an agent", "/api/agent/review",
		"Review the other participant of a fulfilled contract with a score from 1 (terrible) to 10 (excellent): its conduct score changes by (2*score-11)*10, scaled. Once per reviewer and contract."),
	tool[api.TxSubmitRequest, map[string]any]("tx_submit", "Submit a signed transaction", http.MethodPost, "/api/tx/submit",
		"Complete an operation asked with public_key: send back its unsigned_tx with public_key and signature (128 hex, your Ed25519 signature of the bytes of the answer's sign field). The faucet puts the key and signature in every input, checks them, broadcasts, and answers what the operation answers with a mnemonic (by the transaction's kind), with the same error codes; bad_signature, pubkey_mismatch or invalid_unsigned_tx when the transaction, key or signature do not match."),
	tool[api.BlockQuery, api.Block]("block_get", "Block", http.MethodGet, "/api/block",
		"A block by hash or by main-chain height: header fields, confirmations and its transaction ids."),
	tool[api.TxQuery, api.Transaction]("transaction_get", "Transaction", http.MethodGet, "/api/tx",
		"Where a transaction is: in the mempool, or in a block with its confirmations; its kind (transfer, agent_register, contract_create, ...) and fee."),
	tool[api.AddressQuery, api.Decay]("address_decay", "Address decay", http.MethodGet, "/api/address/decay",
		"The concentration decay of the cluster an address belongs to: the cluster's balance and share of the supply, its decay rate per block (parts per 10^12) and per year."),
}

func init() {
	for i := range tools {
		tools[i].call = calls[tools[i].Name]
		if tools[i].call == nil {
			panic("mcp: tool " + tools[i].Name + " calls nothing")
		}
	}
}

// Tools lists the tools, in a copy.
func Tools() []Tool { return append([]Tool(nil), tools...) }

// propertyDoc describes the input properties, by JSON name.
var propertyDoc = map[string]string{
	"mnemonic":        "the acting wallet's BIP-39 mnemonic (12 words separated by spaces); or give public_key instead",
	"public_key":      "the acting wallet's Ed25519 public key (64 hex): in an operation, given instead of its mnemonic, the answer is the unsigned transaction to sign yourself and send with tx_submit; in tx_submit, the key that signed",
	"unsigned_tx":     "the unsigned_tx of an operation's answer, as it came (hex)",
	"signature":       "your Ed25519 signature (128 hex) of the bytes of the answer's sign field",
	"address":         "a bech32 address of the faucet's network (tcoin1... on testnet and regtest)",
	"to":              "the recipient's address",
	"amount":          "COIN to send, a JSON number with at most 8 decimals, e.g. 1.5",
	"target_address":  "the agent to vouch for",
	"counterparty":    "the other agent's address",
	"value_coin":      "COIN to lock in escrow, a JSON number with at most 8 decimals (at least 0.00001)",
	"expiry_blocks":   "blocks after which the initiator may refund (10 to 525960, default 1440)",
	"contract_id":     "the contract's id: the 64-hex-character txid of contract_create",
	"subject_address": "the reviewed agent: the other participant of the contract",
	"score":           "an integer from 1 (terrible) to 10 (excellent)",
	"offset":          "agents to skip (default 0)",
	"limit":           "agents to list, 1 to 100 (default 20)",
	"hash":            "a block hash (64 hex characters); give hash or height",
	"height":          "a main-chain height; give hash or height",
	"txid":            "a transaction id (64 hex characters)",
}

// integerNumbers are the api.Number request fields that take an integer.
var integerNumbers = map[string]bool{"score": true, "expiry_blocks": true}

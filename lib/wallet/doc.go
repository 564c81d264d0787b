// Package wallet is the behaviour of coin-wallet and of the faucet's spending: keys derived
// from a BIP-39 mnemonic, an encrypted seed store on LevelDB, the one transaction builder
// (coin selection with an exact fee, any kind and payload), per-input signing, and the
// balance and UTXO views of a set of addresses read from a node.
//
// # Overview
//
// Keys follow protocol §4: SLIP-0010 ed25519 at m/44'/COIN_TYPE'/account'/0'/index' from the
// BIP-39 seed, COIN_TYPE 7777 on mainnet and 1 on testnet and regtest ([Keyring],
// [AddressFromMnemonic]). The derivation is checked against vectors made by an independent
// JavaScript implementation (scripts/vectors, testdata/wallet).
//
// A [Store] is a LevelDB directory holding the wallet's network, its account, the
// addresses derived so far (public, so balance and address work without the passphrase)
// and the 64-byte BIP-39 seed encrypted with XChaCha20-Poly1305 under a key derived by
// argon2id from the passphrase (salt and cost parameters stored beside it; the network and
// format version are the AEAD's associated data). The mnemonic itself is never stored.
//
// A [Request] describes any transaction but a coinbase: its kind (Transfer by default) and
// payload, an optional locked output 0 (an AgentRegister's stake, a ContractCreate's escrow),
// the payments, the inputs it must spend first (a contract's escrow as input 0), the change
// address, the fee rate and an input bound. [Select] builds it: it chooses coins in the
// caller's order until they cover the outputs plus the fee, where fee = fee rate ×
// serialized size of the signed transaction plus the inputs' decay margin, exactly. Change goes back to the change address
// as the last output when it is at least the dust limit (lib/policy, 1,000 subunits); a
// smaller remainder is left to the fee instead of creating a non-standard output (a
// transaction with no other output takes more coins for its change). [Sign] signs each input
// with the key of the address it spends from, or of the coin's Signer when set (a contract
// refund); the txid covers kind, payload and outputs but not signatures, so every input signs
// the same message.
//
// The Proof of Conduct operations (protocol §9) are built here once, for coin-wallet and the
// faucet: [RegisterRequest], [VouchRequest], [ContractCreateRequest], [FulfilRequest] and
// [RefundRequest] (of an [Escrow], read from getcontract with [EscrowOf]) and
// [ReviewRequest] return the Request of one operation of the acting agent, after consensus's
// rules that need no chain (score 1 to 10, expiry, minimum escrow, no self-targets).
// [PrecheckAgent] runs every consensus rule of the operation (consensus.CheckAgentTx) against
// the node's pending view (lib/conductview), so a refusal is the rule's own error. [BuildAgent]
// builds one from the actor's coins only (every input of an agent transaction is the
// actor's), signs it with the actor's key and applies consensus.CheckTransactionSanity;
// [SpendAgent] does so from the node's pending view and broadcasts. A fulfilment spends the
// escrow as input 0 with the counterparty's key and a refund with the initiator's, each
// paying the escrow less the fee back as the actor's change, its only output.
//
// The node side ([NodeClient], implemented by *rpcapi.Client): [ListUTXOs] lists the coins of a
// set of addresses with getutxosbyaddress (include_mempool=true, so unconfirmed change is
// spendable and mempool-spent outputs are not offered twice), skips immature coinbase
// outputs (fewer than 100 confirmations) and locked outputs, and values each coin at its
// effective value (protocol §8); [Spend] lists, builds, signs and broadcasts a Request with
// sendrawtransaction, and [Send] is Spend for one payment to an address. [Consolidate]
// merges a wallet's smallest outputs into one, in as many transactions as needed, each
// within [MaxInputsPerTx] and built by Select, for a wallet whose payment needs more inputs
// than one transaction may have ([ErrTooManyInputs]). [GetBalance] reads the pending view
// only: an output a mempool transaction spends counts nowhere.
//
// # Decay
//
// Coins are worth their effective value at the next block, but a transaction may wait in
// the mempool, and its inputs keep decaying; the node drops it when they fall below its
// outputs or the relay fee. So "a send never fails because of decay": the fee also covers
// [DecayMargin] of every input, what it would lose if the transaction were mined
// [DecayMarginBlocks] (6) blocks after the next. Each coin's rate is recovered from the
// node's own numbers ([ImpliedDecayRate]: the highest rate that turns its nominal value
// into its effective value over its age, with consensus.EffectiveValue), and the margin is
// the effective value minus the consensus value at age + 6 at that rate: exact, rounding
// included, while the rate stays as it is. Unconfirmed outputs (age 0, not decayed yet)
// take the cluster's rate from getclusterinfo ([ClusterNode], [AddDecayRates]) or the rate
// of the same address's confirmed outputs. Outputs that do not decay cost no margin, and
// neither do coins without decay information ([Coins], for a caller such as the faucet's
// engine that values its coins for later blocks itself; [DecayingCoins] carries it). The
// margin goes to the miner as fee (Plan.DecayMargin says how much). [GetBalance] adds the
// nominal values and the clusters' rates ([Clusters]) to the balance.
//
// # Errors
//
// Errors match these sentinels with errors.Is: [ErrInsufficientFunds] (an
// *InsufficientFundsError says how much was needed and available), [ErrDust] (a payment
// below the dust limit), [ErrBadKind] (a kind the builder cannot build, or a transfer with a
// payload), [ErrNoPayments] (a transfer with no output), [ErrBadFeeRate], [ErrTooLarge] (the
// transaction would exceed the consensus size or input limits; [ErrTooManyInputs] too when
// the payment needs more of the wallet's outputs than fit), a consensus.RuleError of the
// rule's kind for an agent operation the wallet refuses itself (consensus.ErrInvalidScore,
// ErrNotCounterparty, ...: errors.Is matches its reason too), [ErrWrongPassphrase] (the seed does not decrypt), [ErrNoWallet] and
// [ErrWalletExists] (store directory state), [ErrWrongNetwork] (a store or address of
// another network), [ErrLocked] (another process has the store open). Mnemonic and address
// errors are those of lib/keys and never contain a word of the mnemonic. An error from the
// node is returned as it came: errors.Is matches it against the consensus and mempool kinds
// (lib/rpcapi), and errors.As finds the *jsonrpc.Error when the node answered.
package wallet

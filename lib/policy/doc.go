// Package policy holds the node's relay and standardness values that both the mempool, which
// enforces them, and the wallet, which builds transactions to meet them, read (protocol §5). They
// are policy, not consensus: a block may contain a transaction that breaks them.
//
// # Overview
//
// MinRelayFeePerByte is the smallest fee rate the mempool relays, in subunits per serialized
// byte; DustLimit is the smallest standard output value, in subunits. The package has no
// imports and no behaviour, so any package may depend on it.
//
// # Errors
//
// None: the package declares only constants.
package policy

// Package types defines the coin's transactions and blocks, their strict bincode form, and
// the hashes that identify them.
//
// # Overview
//
// A Transaction's id is BLAKE3-256 of its witness-stripped bincode (every input's public key
// and signature left out), so signatures cannot change a txid. A block's hash is SHA-256d of
// the fixed 88-byte header layout (HeaderSize), in which the nonce lies in the second SHA-256
// block so miners can reuse a midstate. The merkle root is the RFC 6962 tree over the txids
// with BLAKE3 (leaf = H(0x00‖txid), node = H(0x01‖left‖right)), which never duplicates a node.
// Each input signs SigMessage: "COIN-TX-V1" ‖ network magic ‖ txid; SignInputs signs
// every input of a transaction with one key. NewBlock assembles a block from a BlockSpec
// (its coinbase, NewCoinbase, then the given transactions, under their merkle root) and
// SolveBlock searches nonces one hash at a time, enough for regtest targets
// (generatetoaddress, test chains).
//
// Hashes print as plain lowercase hex of the 32 bytes in order (no byte reversal).
//
// # Errors
//
// Decoders return the bincode package's errors (wrapped) and ErrUnknownKind for an unknown
// TxKind discriminant. They never panic and never allocate beyond what the input can hold.
// SolveBlock returns ErrNonceExhausted when no nonce in its range meets the target.
package types

// Package mining assembles blocks: the coinbase paying a miner, the merkle root over the
// chosen transactions, and a simple nonce search for easy targets (regtest, tests,
// generatetoaddress). The fast multi-stream search for real targets is lib/sha256d.
//
// # Overview
//
// NewBlock builds an unsolved block from a Spec; Solve searches nonces until the header hash
// meets the target; Sign signs every input of a transfer with one key.
//
// # Errors
//
// Solve returns ErrExhausted when no nonce in the allowed range meets the target.
package mining

// Package params holds the fixed parameters of each network: magic, ports, address HRP,
// BIP-44 coin type, proof-of-work limit, retarget switch and the genesis block.
//
// # Overview
//
// Mainnet, Testnet and Regtest are the three networks of protocol §6. Each genesis block is
// built from constants (timestamp, nonce, coinbase message) and its hash is fixed as a
// constant too; a test rebuilds every genesis block and compares, so a change to the block
// format or to these constants fails loudly. Genesis outputs are not spendable and are not
// in the UTXO set.
//
// # Errors
//
// ByName returns ErrUnknownNetwork for a name other than mainnet, testnet or regtest.
package params

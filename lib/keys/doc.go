// Package keys implements the key material and addresses of the coin:
// BIP-39 mnemonics, SLIP-0010 ed25519 key derivation, BLAKE3 public key
// hashes and bech32m addresses.
//
// # Overview
//
// The chain from a mnemonic to an address is:
//
//	mnemonic  --BIP-39 PBKDF2-HMAC-SHA512 (salt "mnemonic"+passphrase)-->  64-byte seed
//	seed      --SLIP-0010 ed25519, m/44'/COIN_TYPE'/account'/0'/index'-->   ExtKey
//	ExtKey    --Ed25519 (crypto/ed25519)-->                                32-byte public key
//	pubkey    --BLAKE3-256-->                                              PubKeyHash
//	hash      --bech32m, HRP "coin" / "tcoin", version symbol 0-->         address
//
// Mnemonics use the BIP-39 English word list ([NewMnemonic], [ValidateMnemonic],
// [SeedFromMnemonic]). 12 words is the default; 15, 18, 21 and 24 words are
// accepted. Whitespace is normalised (strings.Fields, joined with one space)
// before validation and before the seed is computed, so "  a  b\tc " and
// "a b c" give the same seed. Words must be lower case, as in the word list.
// The passphrase defaults to empty and is NFKD-normalised as BIP-39 asks
// (golang.org/x/text/unicode/norm); one that is not valid UTF-8 is rejected with
// [ErrPassphraseNotUTF8].
//
// Key derivation follows SLIP-0010 for ed25519 ([MasterKey], [ExtKey.Child], [ParsePath],
// [DerivePath]). Ed25519 supports hardened derivation only: [ExtKey.Child]
// always sets the hardened bit, and [DerivePath] rejects path segments that
// are not marked hardened. Account keys live at m/44'/COIN_TYPE'/account'/0'/index'
// ([AccountPath], [DeriveAccountKey]); COIN_TYPE is [CoinTypeMainnet] (7777) on
// mainnet and [CoinTypeTestnet] (1) on testnet and regtest. "The address of a
// mnemonic" ([AddressOfMnemonic]) is account 0, index 0.
//
// An address is the bech32m (BIP-350) encoding of the data part
// [0] ++ convertbits(pubkey_hash, 8->5, pad): the version symbol 0 followed by
// the 52 five-bit symbols of the 32-byte [PubKeyHash]. The HRP is [HRPMainnet]
// ("coin") on mainnet and [HRPTestnet] ("tcoin") on testnet and regtest.
// [EncodeAddress] always produces lower case. [DecodeAddress] accepts an
// all-lower-case or an all-upper-case address (BIP-173 allows all upper case,
// which suits QR codes) and rejects mixed case. Decoding is strict, so any
// address that decodes re-encodes to exactly its lower-case form.
//
// # Errors
//
// Every error returned by [DecodeAddress] matches [ErrBadAddress] with
// errors.Is, and where the cause is known also one of these sentinels:
//
//   - [ErrMixedCase]: the string mixes upper and lower case.
//   - [ErrBadChecksum]: the checksum is neither a valid bech32m nor a valid
//     bech32 checksum (for example one mistyped character).
//   - [ErrWrongNetwork]: the checksum is valid but the HRP is not the expected
//     one (for example a testnet address given to a mainnet node).
//   - [ErrBech32NotM]: the checksum is a valid bech32 (BIP-173) checksum, not
//     the required bech32m one.
//   - [ErrBadVersion]: the version symbol is not 0.
//   - [ErrBadLength]: the string is longer than 90 characters, or the data part
//     does not encode exactly 32 bytes (wrong symbol count, or non-zero padding
//     bits, which would make the encoding non-canonical).
//   - only [ErrBadAddress]: any other malformation (characters outside
//     33..126, no separator, characters outside the bech32 alphabet, ...).
//
// The checks run in this order, and the first failure is reported: string
// length at most 90; characters and case; separator and alphabet; checksum;
// HRP; bech32m rather than bech32; version; program length and padding.
//
// [EncodeAddress] returns an error matching [ErrBadHRP] for an HRP that is
// empty, too long, not lower case or has characters outside 33..126.
//
// Mnemonic errors all match [ErrBadMnemonic], and one of
// [ErrMnemonicWordCount], [ErrMnemonicUnknownWord] or [ErrMnemonicChecksum].
// Their text never contains the mnemonic or any of its words, so they are
// safe to log or print; an unknown word is reported by its position only.
// [NewMnemonic] returns [ErrMnemonicWordCount] for an unsupported word count.
//
// [DerivePath] returns errors matching [ErrBadPath] for a malformed or
// non-hardened path, and [ErrBadSeed] for a seed that is not 16 to 64 bytes.
package keys

package keys

import (
	"crypto/ed25519"
	"errors"
	"fmt"

	"github.com/btcsuite/btcd/btcutil/bech32"
	"lukechampine.com/blake3"
)

// Network parameters for addresses and key derivation.
const (
	// HRPMainnet is the bech32m human-readable part of mainnet addresses.
	HRPMainnet = "coin"
	// HRPTestnet is the bech32m human-readable part of testnet and regtest
	// addresses.
	HRPTestnet = "tcoin"
	// CoinTypeMainnet is the SLIP-0044 style coin type used on mainnet.
	CoinTypeMainnet uint32 = 7777
	// CoinTypeTestnet is the coin type used on testnet and regtest.
	CoinTypeTestnet uint32 = 1
	// AddressVersion is the only address version symbol defined so far.
	AddressVersion = 0
)

// PubKeyHash is the BLAKE3-256 hash of a 32-byte Ed25519 public key.
type PubKeyHash [32]byte

// Address errors. All of them match ErrBadAddress with errors.Is.
var (
	// ErrBadAddress matches every address decoding error.
	ErrBadAddress = errors.New("invalid address")
	// ErrWrongNetwork: valid checksum, but not the expected HRP.
	ErrWrongNetwork = fmt.Errorf("%w: wrong network", ErrBadAddress)
	// ErrBadChecksum: neither a bech32m nor a bech32 checksum verifies.
	ErrBadChecksum = fmt.Errorf("%w: bad checksum", ErrBadAddress)
	// ErrBech32NotM: the checksum is bech32 (BIP-173), not bech32m (BIP-350).
	ErrBech32NotM = fmt.Errorf("%w: bech32 checksum, bech32m required", ErrBadAddress)
	// ErrMixedCase: the string mixes upper and lower case.
	ErrMixedCase = fmt.Errorf("%w: mixed case", ErrBadAddress)
	// ErrBadLength: too long, or the program is not exactly 32 bytes.
	ErrBadLength = fmt.Errorf("%w: bad length", ErrBadAddress)
	// ErrBadVersion: the version symbol is not 0.
	ErrBadVersion = fmt.Errorf("%w: unknown version", ErrBadAddress)
)

// ErrBadHRP is returned by EncodeAddress for an unusable human-readable part.
var ErrBadHRP = errors.New("invalid address HRP")

// maxAddressLen is the BIP-173 length limit, enforced by bech32.DecodeGeneric.
const maxAddressLen = 90

// programSymbols is the number of 5-bit symbols that encode 32 bytes.
const programSymbols = (32*8 + 4) / 5 // 52

// HashPubKey returns BLAKE3-256 of the public key. It panics if pub is not
// ed25519.PublicKeySize (32) bytes long, as that is a programming error that
// would otherwise yield a valid-looking address nobody can spend from.
func HashPubKey(pub ed25519.PublicKey) PubKeyHash {
	if len(pub) != ed25519.PublicKeySize {
		panic(fmt.Sprintf("keys: HashPubKey: public key is %d bytes, want %d", len(pub), ed25519.PublicKeySize))
	}
	return blake3.Sum256(pub)
}

// checkHRP validates an HRP for encoding: 1..83 characters in 33..126, not
// upper case (addresses are always produced in lower case).
func checkHRP(hrp string) error {
	// 83 = 90 - separator - 6 checksum characters.
	if len(hrp) == 0 || len(hrp) > maxAddressLen-7 {
		return fmt.Errorf("%w: length %d, want 1..83", ErrBadHRP, len(hrp))
	}
	for i := 0; i < len(hrp); i++ {
		c := hrp[i]
		if c < 33 || c > 126 {
			return fmt.Errorf("%w: character 0x%02x at position %d", ErrBadHRP, c, i)
		}
		if c >= 'A' && c <= 'Z' {
			return fmt.Errorf("%w: %q is not lower case", ErrBadHRP, hrp)
		}
	}
	return nil
}

// EncodeAddress returns the lower-case bech32m address of h for the given
// HRP (HRPMainnet or HRPTestnet; other valid lower-case HRPs are accepted).
func EncodeAddress(hrp string, h PubKeyHash) (string, error) {
	if err := checkHRP(hrp); err != nil {
		return "", fmt.Errorf("encode address: %w", err)
	}
	prog, err := bech32.ConvertBits(h[:], 8, 5, true)
	if err != nil { // cannot happen for 8->5 with padding
		return "", fmt.Errorf("encode address: %w", err)
	}
	data := make([]byte, 0, 1+len(prog))
	data = append(data, AddressVersion)
	data = append(data, prog...)
	s, err := bech32.EncodeM(hrp, data)
	if err != nil {
		return "", fmt.Errorf("encode address: %w", err)
	}
	return s, nil
}

// DecodeAddress decodes a bech32m address and checks that its HRP equals hrp.
// The returned error matches ErrBadAddress and, where applicable, one of the
// more precise sentinels (see the package documentation, section Errors).
// All-upper-case input is accepted; mixed case is not.
func DecodeAddress(s, hrp string) (PubKeyHash, error) {
	var h PubKeyHash
	gotHRP, data, ver, err := bech32.DecodeGeneric(s)
	if err != nil {
		return h, fmt.Errorf("decode address: %w", classifyBech32Error(err))
	}
	if gotHRP != hrp {
		return h, fmt.Errorf("decode address: %w: HRP %q, want %q", ErrWrongNetwork, gotHRP, hrp)
	}
	if ver != bech32.VersionM {
		return h, fmt.Errorf("decode address: %w", ErrBech32NotM)
	}
	if len(data) == 0 {
		return h, fmt.Errorf("decode address: %w: empty data part", ErrBadLength)
	}
	if data[0] != AddressVersion {
		return h, fmt.Errorf("decode address: %w: version %d, want %d", ErrBadVersion, data[0], AddressVersion)
	}
	if n := len(data) - 1; n != programSymbols {
		return h, fmt.Errorf("decode address: %w: %d program symbols (%d bits), want %d (32 bytes)",
			ErrBadLength, n, 5*n, programSymbols)
	}
	prog, err := bech32.ConvertBits(data[1:], 5, 8, false)
	if err != nil {
		return h, fmt.Errorf("decode address: %w: non-zero padding bits", ErrBadLength)
	}
	if len(prog) != len(h) { // defensive; implied by the symbol count
		return h, fmt.Errorf("decode address: %w: program is %d bytes, want %d", ErrBadLength, len(prog), len(h))
	}
	copy(h[:], prog)
	return h, nil
}

// classifyBech32Error maps errors of the bech32 library to this package's
// sentinels, keeping the library's message as detail.
func classifyBech32Error(err error) error {
	var (
		mixed    bech32.ErrMixedCase
		checksum bech32.ErrInvalidChecksum
		length   bech32.ErrInvalidLength
	)
	switch {
	case errors.As(err, &mixed):
		return ErrMixedCase
	case errors.As(err, &checksum):
		return ErrBadChecksum
	case errors.As(err, &length) && int(length) > maxAddressLen:
		return fmt.Errorf("%w: %d characters, at most %d allowed", ErrBadLength, int(length), maxAddressLen)
	default:
		return fmt.Errorf("%w: %v", ErrBadAddress, err)
	}
}

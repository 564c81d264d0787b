package keys

import (
	"crypto/ed25519"
	"crypto/hmac"
	"crypto/sha512"
	"encoding/binary"
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// HardenedOffset is the hardened-derivation bit of a child index.
const HardenedOffset uint32 = 0x80000000

// slip10Curve is the SLIP-0010 HMAC key for ed25519 master key generation.
var slip10Curve = []byte("ed25519 seed")

// Derivation errors.
var (
	// ErrBadPath: the derivation path is malformed or not fully hardened.
	ErrBadPath = errors.New("invalid derivation path")
	// ErrBadSeed: the seed is not 16 to 64 bytes (BIP-32: 128 to 512 bits).
	ErrBadSeed = errors.New("invalid seed length")
)

// ExtKey is a SLIP-0010 ed25519 node: the 32-byte private key (the Ed25519
// seed, RFC 8032 "secret key") and the chain code. It holds secret material.
type ExtKey struct {
	Key       [32]byte
	ChainCode [32]byte
}

// splitI fills an ExtKey from a 64-byte HMAC-SHA512 output I = IL || IR.
func splitI(i []byte) ExtKey {
	var k ExtKey
	copy(k.Key[:], i[:32])
	copy(k.ChainCode[:], i[32:])
	clear(i)
	return k
}

// MasterKey returns the SLIP-0010 ed25519 master node of seed:
// I = HMAC-SHA512(key "ed25519 seed", seed), Key = I[:32], ChainCode = I[32:].
// It accepts any seed length; DerivePath checks for 16..64 bytes.
func MasterKey(seed []byte) ExtKey {
	mac := hmac.New(sha512.New, slip10Curve)
	mac.Write(seed)
	return splitI(mac.Sum(nil))
}

// Child returns the hardened child of k with the given index. The hardened
// bit (0x80000000) is set if absent, so Child(i) == Child(i|0x80000000):
// ed25519 has no non-hardened derivation.
// I = HMAC-SHA512(ChainCode, 0x00 || Key || ser32(index)).
func (k ExtKey) Child(index uint32) ExtKey {
	index |= HardenedOffset
	var data [1 + 32 + 4]byte
	copy(data[1:33], k.Key[:])
	binary.BigEndian.PutUint32(data[33:], index)
	mac := hmac.New(sha512.New, k.ChainCode[:])
	mac.Write(data[:])
	clear(data[:])
	return splitI(mac.Sum(nil))
}

// PrivateKey returns the Ed25519 private key whose seed is k.Key.
func (k ExtKey) PrivateKey() ed25519.PrivateKey {
	return ed25519.NewKeyFromSeed(k.Key[:])
}

// PublicKey returns the 32-byte Ed25519 public key of k.
func (k ExtKey) PublicKey() ed25519.PublicKey {
	priv := k.PrivateKey()
	pub := make(ed25519.PublicKey, ed25519.PublicKeySize)
	copy(pub, priv[ed25519.SeedSize:])
	clear(priv)
	return pub
}

// ParsePath parses a derivation path such as "m/44'/1'/0'/0'/0'" into child
// indices with the hardened bit set. "m" alone is the master node. Every
// segment must be a decimal number below 2^31 without sign or leading zeros,
// followed by a hardened marker: ' (canonical), h or H. Segments without a
// marker are rejected (ErrBadPath), since ed25519 only derives hardened.
func ParsePath(path string) ([]uint32, error) {
	segs := strings.Split(path, "/")
	if segs[0] != "m" {
		return nil, fmt.Errorf("%w %q: must start with \"m\"", ErrBadPath, path)
	}
	idx := make([]uint32, 0, len(segs)-1)
	for n, seg := range segs[1:] {
		num, hardened := seg, false
		if l := len(seg); l > 0 && (seg[l-1] == '\'' || seg[l-1] == 'h' || seg[l-1] == 'H') {
			num, hardened = seg[:l-1], true
		}
		if num == "" || num[0] < '0' || num[0] > '9' || (len(num) > 1 && num[0] == '0') {
			return nil, fmt.Errorf("%w %q: segment %d (%q) is not a canonical index", ErrBadPath, path, n+1, seg)
		}
		v, err := strconv.ParseUint(num, 10, 32)
		if err != nil || uint32(v) >= HardenedOffset {
			return nil, fmt.Errorf("%w %q: segment %d (%q) is not an index below 2^31", ErrBadPath, path, n+1, seg)
		}
		if !hardened {
			return nil, fmt.Errorf("%w %q: segment %d (%q) is not hardened; ed25519 derivation is hardened only, write %s'",
				ErrBadPath, path, n+1, seg, seg)
		}
		idx = append(idx, uint32(v)|HardenedOffset)
	}
	return idx, nil
}

// DerivePath derives the node at path (see ParsePath) from a BIP-39 seed of
// 16 to 64 bytes.
func DerivePath(seed []byte, path string) (ExtKey, error) {
	if len(seed) < 16 || len(seed) > 64 {
		return ExtKey{}, fmt.Errorf("%w: %d bytes, want 16..64", ErrBadSeed, len(seed))
	}
	idx, err := ParsePath(path)
	if err != nil {
		return ExtKey{}, err
	}
	k := MasterKey(seed)
	for _, i := range idx {
		k = k.Child(i)
	}
	return k, nil
}

// AccountPath returns "m/44'/coinType'/account'/0'/index'". The hardened bit
// of each argument is ignored (as in Child and DeriveAccountKey), so
// DerivePath(seed, AccountPath(c, a, i)) always equals
// DeriveAccountKey(seed, c, a, i).
func AccountPath(coinType, account, index uint32) string {
	return fmt.Sprintf("m/44'/%d'/%d'/0'/%d'",
		coinType&^HardenedOffset, account&^HardenedOffset, index&^HardenedOffset)
}

// DeriveAccountKey derives m/44'/coinType'/account'/0'/index' from seed.
// Use CoinTypeMainnet (7777) on mainnet and CoinTypeTestnet (1) on testnet
// and regtest. Unlike DerivePath it does not check the seed length.
func DeriveAccountKey(seed []byte, coinType, account, index uint32) ExtKey {
	return MasterKey(seed).Child(44).Child(coinType).Child(account).Child(0).Child(index)
}

// AddressOfMnemonic returns the address of a mnemonic: the address of the
// key at account 0, index 0 (m/44'/coinType'/0'/0'/0') of the BIP-39 seed
// of m and passphrase, encoded with hrp. Mnemonic errors are those of
// SeedFromMnemonic and never contain any word of m.
func AddressOfMnemonic(m, passphrase, hrp string, coinType uint32) (string, error) {
	seed, err := SeedFromMnemonic(m, passphrase)
	if err != nil {
		return "", err
	}
	defer clear(seed)
	k := DeriveAccountKey(seed, coinType, 0, 0)
	return EncodeAddress(hrp, HashPubKey(k.PublicKey()))
}

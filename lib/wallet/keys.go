package wallet

import (
	"crypto/ed25519"
	"errors"
	"fmt"

	"github.com/cointoolkit/coin/lib/keys"
	"github.com/cointoolkit/coin/lib/params"
	"github.com/cointoolkit/coin/lib/types"
)

// ErrWrongNetwork is returned for a store or an address of another network.
var ErrWrongNetwork = errors.New("wrong network")

// Key is one derived key: its position, Ed25519 key pair, pubkey hash and address.
// Priv is secret; call Wipe when done with it.
type Key struct {
	Account uint32
	Index   uint32
	Priv    ed25519.PrivateKey
	Pub     ed25519.PublicKey
	PKH     types.Hash
	Address string
}

// Wipe zeroes the private key.
func (k *Key) Wipe() { clear(k.Priv) }

// Keyring derives the keys of one account of a BIP-39 seed on one network.
type Keyring struct {
	seed    []byte
	net     *params.Network
	account uint32
}

// NewKeyring derives from a copy of seed (16 to 64 bytes).
func NewKeyring(seed []byte, net *params.Network, account uint32) (*Keyring, error) {
	if len(seed) < 16 || len(seed) > 64 {
		return nil, fmt.Errorf("%w: %d bytes, want 16..64", keys.ErrBadSeed, len(seed))
	}
	if account >= keys.HardenedOffset {
		return nil, fmt.Errorf("%w: account %d is not below 2^31", keys.ErrBadPath, account)
	}
	return &Keyring{seed: append([]byte(nil), seed...), net: net, account: account}, nil
}

// KeyringFromMnemonic validates mnemonic (errors match keys.ErrBadMnemonic and never contain
// its words) and returns the keyring of its seed with the given BIP-39 passphrase.
func KeyringFromMnemonic(mnemonic, bip39Passphrase string, net *params.Network, account uint32) (*Keyring, error) {
	seed, err := keys.SeedFromMnemonic(mnemonic, bip39Passphrase)
	if err != nil {
		return nil, err
	}
	defer clear(seed)
	return NewKeyring(seed, net, account)
}

// Network is the keyring's network.
func (r *Keyring) Network() *params.Network { return r.net }

// Account is the keyring's account.
func (r *Keyring) Account() uint32 { return r.account }

// Key derives m/44'/COIN_TYPE'/account'/0'/index'.
func (r *Keyring) Key(index uint32) (Key, error) {
	if index >= keys.HardenedOffset {
		return Key{}, fmt.Errorf("%w: index %d is not below 2^31", keys.ErrBadPath, index)
	}
	ext := keys.DeriveAccountKey(r.seed, r.net.CoinType, r.account, index)
	priv := ext.PrivateKey()
	clear(ext.Key[:])
	clear(ext.ChainCode[:])
	pub := priv.Public().(ed25519.PublicKey)
	pkh := types.Hash(keys.HashPubKey(pub))
	addr, err := keys.EncodeAddress(r.net.HRP, keys.PubKeyHash(pkh))
	if err != nil {
		clear(priv)
		return Key{}, err
	}
	return Key{Account: r.account, Index: index, Priv: priv, Pub: pub, PKH: pkh, Address: addr}, nil
}

// Wipe zeroes the keyring's seed; the keyring must not be used afterwards.
func (r *Keyring) Wipe() { clear(r.seed) }

// AddressFromMnemonic is the address at account 0 and the given index of a mnemonic (no
// BIP-39 passphrase) on net. Index 0 is "the address of a mnemonic" (protocol §4).
func AddressFromMnemonic(mnemonic string, net *params.Network, index uint32) (string, error) {
	r, err := KeyringFromMnemonic(mnemonic, "", net, 0)
	if err != nil {
		return "", err
	}
	defer r.Wipe()
	k, err := r.Key(index)
	if err != nil {
		return "", err
	}
	k.Wipe()
	return k.Address, nil
}

// NewMnemonic returns a fresh BIP-39 English mnemonic of words words (12 by default when
// words is 0) and its address (account 0, index 0) on net.
func NewMnemonic(words int, net *params.Network) (mnemonic, address string, err error) {
	if words == 0 {
		words = keys.DefaultMnemonicWords
	}
	m, err := keys.NewMnemonic(words)
	if err != nil {
		return "", "", err
	}
	a, err := AddressFromMnemonic(m, net, 0)
	if err != nil {
		return "", "", err
	}
	return m, a, nil
}

// DecodeAddress decodes an address of net; errors match keys.ErrBadAddress.
func DecodeAddress(addr string, net *params.Network) (types.Hash, error) {
	h, err := keys.DecodeAddress(addr, net.HRP)
	return types.Hash(h), err
}

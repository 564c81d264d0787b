package miner

import (
	"errors"
	"fmt"
	"strings"

	"github.com/cointoolkit/coin/lib/keys"
	"github.com/cointoolkit/coin/lib/params"
)

// ErrUnknownHRP is returned by ParseAddress for an address whose prefix is no network's.
var ErrUnknownHRP = errors.New("unknown address prefix")

// Address is a checked mining address.
type Address struct {
	// String is the canonical (lower-case) bech32m form sent to the node.
	String string
	// PubKeyHash is what the coinbase must pay.
	PubKeyHash keys.PubKeyHash
	// HRP is the address's human-readable part: "coin" or "tcoin".
	HRP string
	// Networks are the networks the address is valid on: mainnet, or testnet and regtest.
	Networks []*params.Network
}

// ValidOn reports whether the address belongs to network n.
func (a Address) ValidOn(n *params.Network) bool {
	for _, m := range a.Networks {
		if m == n {
			return true
		}
	}
	return false
}

// NetworkNames is "mainnet" or "testnet or regtest".
func (a Address) NetworkNames() string {
	names := make([]string, len(a.Networks))
	for i, n := range a.Networks {
		names[i] = n.Name
	}
	return strings.Join(names, " or ")
}

// ParseAddress checks a mining address: bech32m checksum, version and length, and its
// network. With network nil the network is inferred from the prefix ("coin" is mainnet,
// "tcoin" is testnet or regtest); otherwise the address must belong to network.
func ParseAddress(s string, network *params.Network) (Address, error) {
	hrp := ""
	if i := strings.LastIndexByte(s, '1'); i > 0 {
		hrp = strings.ToLower(s[:i])
	}
	if network != nil {
		if hrp != network.HRP && networksOf(hrp) != nil {
			return Address{}, fmt.Errorf("%w: %s is a %s address, not a %s one", keys.ErrWrongNetwork,
				s, Address{Networks: networksOf(hrp)}.NetworkNames(), network.Name)
		}
		hrp = network.HRP
	} else if networksOf(hrp) == nil {
		if hrp == "" {
			// Let the decoder say what is wrong with it.
			_, err := keys.DecodeAddress(s, keys.HRPMainnet)
			if err != nil {
				return Address{}, err
			}
		}
		return Address{}, fmt.Errorf("%w %q: want %s1... (mainnet) or %s1... (testnet, regtest)",
			ErrUnknownHRP, hrp, keys.HRPMainnet, keys.HRPTestnet)
	}
	pkh, err := keys.DecodeAddress(s, hrp)
	if err != nil {
		return Address{}, err
	}
	canon, err := keys.EncodeAddress(hrp, pkh)
	if err != nil {
		return Address{}, err
	}
	a := Address{String: canon, PubKeyHash: pkh, HRP: hrp, Networks: networksOf(hrp)}
	if network != nil {
		a.Networks = []*params.Network{network}
	}
	return a, nil
}

// networksOf lists the networks whose addresses use hrp.
func networksOf(hrp string) []*params.Network {
	var ns []*params.Network
	for _, n := range params.Networks {
		if n.HRP == hrp {
			ns = append(ns, n)
		}
	}
	return ns
}

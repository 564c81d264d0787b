package params

import (
	"errors"
	"fmt"
	"math/big"
	"path/filepath"

	"github.com/cointoolkit/coin/lib/pow"
	"github.com/cointoolkit/coin/lib/types"
)

// ErrUnknownNetwork is returned by ByName for an unknown network name.
var ErrUnknownNetwork = errors.New("unknown network")

// Network is one network's fixed parameters.
type Network struct {
	Name         string
	Magic        [4]byte
	P2PPort      uint16
	RPCPort      uint16
	HRP          string
	CoinType     uint32
	PowLimitBits uint32
	PowLimit     *big.Int
	// Retarget is false on regtest, whose difficulty never changes.
	Retarget bool
	// AllowGenerate enables the generatetoaddress RPC (regtest only).
	AllowGenerate bool
	// MaxFutureDrift is how many seconds a block's timestamp may be ahead of the node's
	// clock: 15 minutes, and 2 hours on regtest (as Bitcoin's), so that a burst of tens of
	// thousands of generatetoaddress blocks, each a second past the median, is accepted.
	MaxFutureDrift uint64
	// DNSSeeds are host names whose address records list nodes of this network (on its
	// P2PPort, or the port a "host:port" entry names); a node asks them when it knows
	// (nearly) no addresses. Empty until a public network exists.
	DNSSeeds []string
	// LocalAddrs: the node stores and relays private and loopback addresses too, each with
	// its port (testnet, regtest), so nodes on one host or a private lab find each other.
	// Mainnet takes only publicly routable addresses.
	LocalAddrs bool

	genesis     genesisSpec
	GenesisHash types.Hash
}

type genesisSpec struct {
	timestamp uint64
	nonce     uint64
	message   string
}

// GenesisBlock builds the network's genesis block (a fresh copy each call).
func (n *Network) GenesisBlock() *types.Block {
	b := types.NewBlock(types.BlockSpec{Timestamp: n.genesis.timestamp, Target: n.PowLimitBits,
		Reward: 50 * 100_000_000, Extra: []byte(n.genesis.message)}) // paid to the all-zero pubkey hash
	b.Header.Nonce = n.genesis.nonce
	return b
}

// DefaultDataDir is the per-network data directory under home.
func (n *Network) DefaultDataDir(home string) string {
	return filepath.Join(home, ".coin", n.Name)
}

// String is the network's name.
func (n *Network) String() string { return n.Name }

func limit(bits uint32) *big.Int {
	t, neg, over := pow.CompactToBig(bits)
	if neg || over {
		panic("params: invalid pow limit")
	}
	return t
}

// The three networks. Their fields must not be modified.
var (
	Mainnet = &Network{
		Name: "mainnet", Magic: [4]byte{'C', 'O', 'I', 'N'}, P2PPort: 18333, RPCPort: 18332,
		HRP: "coin", CoinType: 7777, PowLimitBits: 0x1e0fffff, PowLimit: limit(0x1e0fffff), Retarget: true,
		MaxFutureDrift: 15 * 60,
		genesis:        genesisSpec{timestamp: 1767225600, nonce: mainnetGenesisNonce, message: "COIN mainnet genesis 2026-01-01: concentration decays"},
		GenesisHash:    mustHash(mainnetGenesisHash),
	}
	Testnet = &Network{
		Name: "testnet", Magic: [4]byte{'T', 'C', 'O', 'N'}, P2PPort: 28333, RPCPort: 28332,
		HRP: "tcoin", CoinType: 1, PowLimitBits: 0x1e0fffff, PowLimit: limit(0x1e0fffff), Retarget: true,
		MaxFutureDrift: 15 * 60, LocalAddrs: true,
		genesis:     genesisSpec{timestamp: 1767225601, nonce: testnetGenesisNonce, message: "COIN testnet genesis"},
		GenesisHash: mustHash(testnetGenesisHash),
	}
	Regtest = &Network{
		Name: "regtest", Magic: [4]byte{'R', 'C', 'O', 'N'}, P2PPort: 38333, RPCPort: 38332,
		HRP: "tcoin", CoinType: 1, PowLimitBits: 0x207fffff, PowLimit: limit(0x207fffff), Retarget: false,
		AllowGenerate: true, MaxFutureDrift: 2 * 60 * 60, LocalAddrs: true,
		genesis:     genesisSpec{timestamp: 1767225602, nonce: regtestGenesisNonce, message: "COIN regtest genesis"},
		GenesisHash: mustHash(regtestGenesisHash),
	}
)

// Networks lists every network, mainnet first.
var Networks = []*Network{Mainnet, Testnet, Regtest}

// ByName returns the network called name.
func ByName(name string) (*Network, error) {
	for _, n := range Networks {
		if n.Name == name {
			return n, nil
		}
	}
	return nil, fmt.Errorf("%w %q (want mainnet, testnet or regtest)", ErrUnknownNetwork, name)
}

func mustHash(s string) types.Hash {
	h, err := types.ParseHash(s)
	if err != nil {
		panic(err)
	}
	return h
}

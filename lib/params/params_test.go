package params

import (
	"errors"
	"flag"
	"testing"

	"github.com/cointoolkit/coin/lib/pow"
)

var mine = flag.Bool("mine", false, "search genesis nonces and print them")

func TestMineGenesis(t *testing.T) {
	if !*mine {
		t.Skip("only with -mine")
	}
	for _, n := range Networks {
		b := n.GenesisBlock()
		for nonce := uint64(0); ; nonce++ {
			b.Header.Nonce = nonce
			if pow.CheckProofOfWork(b.Hash(), n.PowLimitBits, n.PowLimit) == nil {
				t.Logf("%s nonce %d hash %s", n.Name, nonce, b.Hash())
				break
			}
		}
	}
}

func TestGenesis(t *testing.T) {
	seen := map[string]bool{}
	for _, n := range Networks {
		b := n.GenesisBlock()
		if got := b.Hash(); got != n.GenesisHash {
			t.Errorf("%s genesis hash %s, constant %s", n.Name, got, n.GenesisHash)
		}
		if err := pow.CheckProofOfWork(b.Hash(), n.PowLimitBits, n.PowLimit); err != nil {
			t.Errorf("%s genesis: %v", n.Name, err)
		}
		if b.Header.PrevHash != [32]byte{} || len(b.Transactions) != 1 || !b.Transactions[0].IsCoinbase() {
			t.Errorf("%s genesis shape", n.Name)
		}
		if seen[n.GenesisHash.String()] {
			t.Errorf("%s genesis hash repeats another network's", n.Name)
		}
		seen[n.GenesisHash.String()] = true
	}
}

func TestByName(t *testing.T) {
	for _, n := range Networks {
		if got, err := ByName(n.Name); err != nil || got != n {
			t.Fatal(n.Name, err)
		}
	}
	if _, err := ByName("simnet"); !errors.Is(err, ErrUnknownNetwork) {
		t.Fatal(err)
	}
}

func TestTable(t *testing.T) {
	// protocol §6's table.
	want := []struct {
		name, magic, hrp string
		p2p, rpc         uint16
		bits             uint32
		retarget         bool
	}{
		{"mainnet", "COIN", "coin", 18333, 18332, 0x1e0fffff, true},
		{"testnet", "TCON", "tcoin", 28333, 28332, 0x1e0fffff, true},
		{"regtest", "RCON", "tcoin", 38333, 38332, 0x207fffff, false},
	}
	for i, w := range want {
		n := Networks[i]
		if n.Name != w.name || string(n.Magic[:]) != w.magic || n.HRP != w.hrp || n.P2PPort != w.p2p ||
			n.RPCPort != w.rpc || n.PowLimitBits != w.bits || n.Retarget != w.retarget {
			t.Errorf("%s differs from docs/protocol.md's Networks table: %+v", w.name, n)
		}
	}
}

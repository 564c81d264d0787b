package wallet

import (
	"encoding/hex"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/cointoolkit/coin/lib/keys"
	"github.com/cointoolkit/coin/lib/params"
)

// derivationVectors is testdata/wallet/derivation_vectors.json, made by the independent
// JavaScript generator in scripts/vectors (npm bip39, ed25519-hd-key, @noble/hashes blake3,
// bech32).
type derivationVectors struct {
	Source string `json:"source"`
	Cases  []struct {
		Mnemonic    string `json:"mnemonic"`
		Passphrase  string `json:"passphrase"`
		Seed        string `json:"seed"`
		Derivations []struct {
			Network    string `json:"network"`
			Account    uint32 `json:"account"`
			Index      uint32 `json:"index"`
			Path       string `json:"path"`
			PrivateKey string `json:"private_key"`
			PublicKey  string `json:"public_key"`
			PubKeyHash string `json:"pubkey_hash"`
			Address    string `json:"address"`
		} `json:"derivations"`
	} `json:"cases"`
}

func loadVectors(t *testing.T) derivationVectors {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "..", "testdata", "wallet", "derivation_vectors.json"))
	if err != nil {
		t.Fatal(err)
	}
	var v derivationVectors
	if err := json.Unmarshal(b, &v); err != nil {
		t.Fatal(err)
	}
	if len(v.Cases) < 10 {
		t.Fatalf("only %d vector cases", len(v.Cases))
	}
	return v
}

func TestDerivationVectors(t *testing.T) {
	v := loadVectors(t)
	n := 0
	for ci, c := range v.Cases {
		seed, err := keys.SeedFromMnemonic(c.Mnemonic, c.Passphrase)
		if err != nil {
			t.Fatalf("case %d: %v", ci, err)
		}
		if got := hex.EncodeToString(seed); got != c.Seed {
			t.Fatalf("case %d: seed %s, want %s", ci, got, c.Seed)
		}
		for _, d := range c.Derivations {
			net, err := params.ByName(d.Network)
			if err != nil {
				t.Fatal(err)
			}
			// PBKDF2 once per case (checked above); the keyring from the mnemonic itself is
			// checked once per case below.
			ring, err := NewKeyring(seed, net, d.Account)
			if err != nil {
				t.Fatal(err)
			}
			k, err := ring.Key(d.Index)
			if err != nil {
				t.Fatal(err)
			}
			if got := keys.AccountPath(net.CoinType, d.Account, d.Index); got != d.Path {
				t.Errorf("case %d: path %s, want %s", ci, got, d.Path)
			}
			if got := hex.EncodeToString(k.Priv.Seed()); got != d.PrivateKey {
				t.Errorf("case %d %s: private key %s, want %s", ci, d.Path, got, d.PrivateKey)
			}
			if got := hex.EncodeToString(k.Pub); got != d.PublicKey {
				t.Errorf("case %d %s: public key %s, want %s", ci, d.Path, got, d.PublicKey)
			}
			if got := k.PKH.String(); got != d.PubKeyHash {
				t.Errorf("case %d %s: pubkey hash %s, want %s", ci, d.Path, got, d.PubKeyHash)
			}
			if k.Address != d.Address {
				t.Errorf("case %d %s %s: address %s, want %s", ci, d.Network, d.Path, k.Address, d.Address)
			}
			// The same through the other entry points, once per case and network.
			if d.Account == 0 && d.Index == 0 {
				r2, err := KeyringFromMnemonic(c.Mnemonic, c.Passphrase, net, 0)
				if err != nil {
					t.Fatal(err)
				}
				if k2, _ := r2.Key(0); k2.Address != d.Address {
					t.Errorf("KeyringFromMnemonic: address %s, want %s", k2.Address, d.Address)
				}
				if c.Passphrase == "" {
					if a, err := AddressFromMnemonic(c.Mnemonic, net, 0); err != nil || a != d.Address {
						t.Errorf("AddressFromMnemonic = %q, %v; want %s", a, err, d.Address)
					}
					if a, err := keys.AddressOfMnemonic(c.Mnemonic, "", net.HRP, net.CoinType); err != nil || a != d.Address {
						t.Errorf("keys.AddressOfMnemonic = %q, %v; want %s", a, err, d.Address)
					}
				}
			}
			// Regtest shares testnet's HRP and coin type.
			if d.Network == "testnet" {
				rr, _ := NewKeyring(seed, params.Regtest, d.Account)
				if rk, _ := rr.Key(d.Index); rk.Address != d.Address {
					t.Errorf("regtest address %s, want testnet's %s", rk.Address, d.Address)
				}
			}
			n++
		}
	}
	t.Logf("%d derivations from %s", n, v.Source)
}

func TestNewMnemonicRoundTrip(t *testing.T) {
	m, a, err := NewMnemonic(0, params.Testnet)
	if err != nil {
		t.Fatal(err)
	}
	if len(splitWords(m)) != 12 {
		t.Fatalf("mnemonic has %d words", len(splitWords(m)))
	}
	if got, err := AddressFromMnemonic("  "+m+"\n", params.Testnet, 0); err != nil || got != a {
		t.Fatalf("derive = %q, %v; want %s", got, err, a)
	}
	if _, err := DecodeAddress(a, params.Testnet); err != nil {
		t.Fatal(err)
	}
	if _, err := DecodeAddress(a, params.Mainnet); err == nil {
		t.Fatal("testnet address accepted on mainnet")
	}
	if _, _, err := NewMnemonic(13, params.Testnet); err == nil {
		t.Fatal("13 words accepted")
	}
}

func splitWords(s string) []string {
	var out []string
	w := ""
	for _, r := range s + " " {
		if r == ' ' {
			if w != "" {
				out = append(out, w)
			}
			w = ""
			continue
		}
		w += string(r)
	}
	return out
}

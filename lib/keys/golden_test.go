package keys

import (
	"crypto/ed25519"
	"crypto/hmac"
	"crypto/sha512"
	"encoding/binary"
	"encoding/hex"
	"testing"

	"github.com/btcsuite/btcd/btcutil/bech32"
	"lukechampine.com/blake3"
)

// Golden addresses of the mnemonic abandonAbout with an empty passphrase,
// account 0, index 0. Computed with this package and checked below against
// an inline derivation that shares no code with it.
const (
	goldenTestnetAddress = "tcoin1q96nxnn43whppxdyguxp3tj8nztpu7l6lvphxrvp7r840zvt4lwuq0f0fzx" // m/44'/1'/0'/0'/0'
	goldenMainnetAddress = "coin1qs7fked3u44mql0kfkctrmx4tkp07qgrepntytma0vqtnmh2ffuzqsaqlre"  // m/44'/7777'/0'/0'/0'
)

func TestGoldenAddresses(t *testing.T) {
	for _, c := range []struct {
		hrp      string
		coinType uint32
		want     string
	}{
		{HRPTestnet, CoinTypeTestnet, goldenTestnetAddress},
		{HRPMainnet, CoinTypeMainnet, goldenMainnetAddress},
	} {
		got, err := AddressOfMnemonic(abandonAbout, "", c.hrp, c.coinType)
		if err != nil {
			t.Fatal(err)
		}
		if got != c.want {
			t.Errorf("AddressOfMnemonic(%q, %d) = %s, want %s", c.hrp, c.coinType, got, c.want)
		}
		if indep := independentAddress(t, abandonAbout, "", c.hrp, c.coinType); indep != c.want {
			t.Errorf("independent derivation (%q, %d) = %s, want %s", c.hrp, c.coinType, indep, c.want)
		}
		h, err := DecodeAddress(c.want, c.hrp)
		if err != nil {
			t.Fatal(err)
		}
		k, err := DerivePath(mustSeed(t), AccountPath(c.coinType, 0, 0))
		if err != nil {
			t.Fatal(err)
		}
		if HashPubKey(k.PublicKey()) != h {
			t.Errorf("%s: DerivePath(AccountPath) gives another key", c.want)
		}
	}
}

func mustSeed(t *testing.T) []byte {
	s, err := SeedFromMnemonic(abandonAbout, "")
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// independentAddress recomputes an address from first principles with plain
// HMAC-SHA512 steps, without this package's mnemonic, derivation or address
// code (and without go-bip39): BIP-39 seed by PBKDF2-HMAC-SHA512 written out,
// SLIP-0010 ed25519 derivation, Ed25519, BLAKE3-256 and bech32m (library).
func independentAddress(t *testing.T, mnemonic, passphrase, hrp string, coinType uint32) string {
	t.Helper()
	// BIP-39: PBKDF2-HMAC-SHA512, 2048 iterations, one 64-byte block.
	prf := hmac.New(sha512.New, []byte(mnemonic))
	prf.Write([]byte("mnemonic" + passphrase))
	prf.Write([]byte{0, 0, 0, 1}) // block index 1
	u := prf.Sum(nil)
	seed := append([]byte(nil), u...)
	for range 2047 {
		prf.Reset()
		prf.Write(u)
		u = prf.Sum(u[:0])
		for j := range seed {
			seed[j] ^= u[j]
		}
	}
	// The well-known BIP-39 seed of abandonAbout with no passphrase.
	const abandonAboutSeed = "5eb00bbddcf069084889a8ab9155568165f5c453ccb85e70811aaed6f6da5fc19a5ac40b389cd370d086206dec8aa6c43daea6690f20ad3d8d48b2d2ce9e38e4"
	if mnemonic == abandonAbout && passphrase == "" && hex.EncodeToString(seed) != abandonAboutSeed {
		t.Fatalf("inline PBKDF2 gave %x, want %s", seed, abandonAboutSeed)
	}

	// SLIP-0010 ed25519: master, then hardened children.
	mac := hmac.New(sha512.New, []byte("ed25519 seed"))
	mac.Write(seed)
	i := mac.Sum(nil)
	key, chain := i[:32], i[32:]
	for _, idx := range []uint32{44, coinType, 0, 0, 0} {
		data := make([]byte, 0, 37)
		data = append(data, 0)
		data = append(data, key...)
		data = binary.BigEndian.AppendUint32(data, idx|0x80000000)
		mac := hmac.New(sha512.New, chain)
		mac.Write(data)
		i := mac.Sum(nil)
		key, chain = i[:32], i[32:]
	}

	pub := ed25519.NewKeyFromSeed(key).Public().(ed25519.PublicKey)
	hash := blake3.Sum256(pub)
	prog, err := bech32.ConvertBits(hash[:], 8, 5, true)
	if err != nil {
		t.Fatal(err)
	}
	addr, err := bech32.EncodeM(hrp, append([]byte{0}, prog...))
	if err != nil {
		t.Fatal(err)
	}
	return addr
}

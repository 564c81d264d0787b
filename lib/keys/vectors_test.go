package keys

import (
	"bytes"
	"crypto/ed25519"
	"encoding/hex"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/btcsuite/btcd/btcutil/bech32"
	"github.com/tyler-smith/go-bip39"
)

// vectorsDir is the repository's shared test vector directory, relative to
// this package directory.
var vectorsDir = filepath.Join("..", "..", "testdata", "vectors")

func readVectors(t testing.TB, name string, v any) {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(vectorsDir, name))
	if err != nil {
		t.Fatalf("read vectors: %v", err)
	}
	if err := json.Unmarshal(b, v); err != nil {
		t.Fatalf("parse %s: %v", name, err)
	}
}

func mustHex(t testing.TB, s string) []byte {
	t.Helper()
	b, err := hex.DecodeString(s)
	if err != nil {
		t.Fatalf("bad hex %q: %v", s, err)
	}
	return b
}

// TestBIP39Vectors: entropy -> mnemonic (go-bip39), mnemonic -> seed with
// passphrase "TREZOR" (SeedFromMnemonic), and ValidateMnemonic accepts it.
func TestBIP39Vectors(t *testing.T) {
	var f struct {
		English [][4]string `json:"english"`
	}
	readVectors(t, "bip39_english.json", &f)
	if len(f.English) != 24 {
		t.Fatalf("got %d BIP-39 vectors, want 24", len(f.English))
	}
	for i, v := range f.English {
		entropy, mnemonic, seedHex := mustHex(t, v[0]), v[1], v[2]
		got, err := bip39.NewMnemonic(entropy)
		if err != nil {
			t.Fatalf("vector %d: NewMnemonic: %v", i, err)
		}
		if got != mnemonic {
			t.Errorf("vector %d: mnemonic = %q, want %q", i, got, mnemonic)
		}
		norm, err := ValidateMnemonic(mnemonic)
		if err != nil {
			t.Errorf("vector %d: ValidateMnemonic: %v", i, err)
		} else if norm != mnemonic {
			t.Errorf("vector %d: normalised form changed: %q", i, norm)
		}
		seed, err := SeedFromMnemonic(mnemonic, "TREZOR")
		if err != nil {
			t.Fatalf("vector %d: SeedFromMnemonic: %v", i, err)
		}
		if hex.EncodeToString(seed) != seedHex {
			t.Errorf("vector %d: seed = %x, want %s", i, seed, seedHex)
		}
	}
}

// TestSLIP10Vectors: DerivePath gives the chain code, private key and public
// key of every SLIP-0010 ed25519 vector.
func TestSLIP10Vectors(t *testing.T) {
	var vs []struct {
		Seed      string `json:"seed_hex"`
		Path      string `json:"path"`
		ChainCode string `json:"chain_code_hex"`
		Private   string `json:"private_hex"`
		Public    string `json:"public_hex"`
	}
	readVectors(t, "slip10_ed25519.json", &vs)
	if len(vs) != 12 {
		t.Fatalf("got %d SLIP-0010 vectors, want 12", len(vs))
	}
	for _, v := range vs {
		k, err := DerivePath(mustHex(t, v.Seed), v.Path)
		if err != nil {
			t.Errorf("%s %s: %v", v.Seed[:8], v.Path, err)
			continue
		}
		if got := hex.EncodeToString(k.ChainCode[:]); got != v.ChainCode {
			t.Errorf("%s %s: chain code %s, want %s", v.Seed[:8], v.Path, got, v.ChainCode)
		}
		if got := hex.EncodeToString(k.Key[:]); got != v.Private {
			t.Errorf("%s %s: private %s, want %s", v.Seed[:8], v.Path, got, v.Private)
		}
		pub := mustHex(t, v.Public)
		if len(pub) != 33 || pub[0] != 0 {
			t.Fatalf("%s %s: unexpected public key format %s", v.Seed[:8], v.Path, v.Public)
		}
		if got := k.PublicKey(); !bytes.Equal(got, pub[1:]) {
			t.Errorf("%s %s: public %x, want %x", v.Seed[:8], v.Path, got, pub[1:])
		}
		if got := k.PrivateKey().Public().(ed25519.PublicKey); !bytes.Equal(got, pub[1:]) {
			t.Errorf("%s %s: PrivateKey().Public() %x, want %x", v.Seed[:8], v.Path, got, pub[1:])
		}
	}
}

type bech32Section struct {
	Valid         []string `json:"valid"`
	Invalid       []string `json:"invalid"`
	InvalidDetail []struct {
		BytesHex string `json:"bytes_hex"`
		Reason   string `json:"reason"`
	} `json:"invalid_detail"`
}

// TestBech32Vectors checks the bech32 library this package relies on against
// the BIP-173/BIP-350 checksum vectors: bech32m valid strings decode as
// bech32m, bech32 valid strings decode as bech32 (so not as bech32m), and
// every invalid string fails, both as JSON text and as its exact raw bytes.
func TestBech32Vectors(t *testing.T) {
	var f struct {
		Bech32  bech32Section `json:"bech32"`
		Bech32m bech32Section `json:"bech32m"`
	}
	readVectors(t, "bech32_bech32m.json", &f)
	for _, c := range []struct {
		name        string
		sec         bech32Section
		wantVersion bech32.Version
		nValid      int
		nInvalid    int
	}{
		{"bech32", f.Bech32, bech32.Version0, 7, 12},
		{"bech32m", f.Bech32m, bech32.VersionM, 7, 14},
	} {
		if len(c.sec.Valid) != c.nValid || len(c.sec.Invalid) != c.nInvalid || len(c.sec.InvalidDetail) != c.nInvalid {
			t.Fatalf("%s: vector counts %d/%d/%d, want %d/%d/%d", c.name,
				len(c.sec.Valid), len(c.sec.Invalid), len(c.sec.InvalidDetail), c.nValid, c.nInvalid, c.nInvalid)
		}
		for _, s := range c.sec.Valid {
			hrp, data, ver, err := bech32.DecodeGeneric(s)
			if err != nil {
				t.Errorf("%s valid %q: %v", c.name, s, err)
				continue
			}
			if ver != c.wantVersion {
				t.Errorf("%s valid %q: decoded as version %v, want %v", c.name, s, ver, c.wantVersion)
			}
			// Re-encoding gives the lower-case input back.
			var re string
			if c.wantVersion == bech32.VersionM {
				re, err = bech32.EncodeM(hrp, data)
			} else {
				re, err = bech32.Encode(hrp, data)
			}
			if err != nil || re != strings.ToLower(s) {
				t.Errorf("%s valid %q: re-encoded %q, %v", c.name, s, re, err)
			}
			// None of these is a valid address of ours.
			if _, err := DecodeAddress(s, hrp); err == nil {
				t.Errorf("%s valid %q: accepted by DecodeAddress", c.name, s)
			}
		}
		for i, s := range c.sec.Invalid {
			d := c.sec.InvalidDetail[i]
			if _, _, ver, err := bech32.DecodeGeneric(s); err == nil {
				t.Errorf("%s invalid %q (%s): decoded as version %v", c.name, s, d.Reason, ver)
			}
			raw := string(mustHex(t, d.BytesHex))
			if _, _, ver, err := bech32.DecodeGeneric(raw); err == nil {
				t.Errorf("%s invalid raw %x (%s): decoded as version %v", c.name, raw, d.Reason, ver)
			}
			if isASCII(s) && raw != s {
				t.Errorf("%s invalid %q: bytes_hex %s does not match the string", c.name, s, d.BytesHex)
			}
			for _, in := range []string{s, raw} {
				if _, err := DecodeAddress(in, HRPMainnet); err == nil {
					t.Errorf("%s invalid %q: accepted by DecodeAddress", c.name, in)
				}
			}
		}
	}
}

func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= 0x80 {
			return false
		}
	}
	return true
}

// TestEd25519Vectors: RFC 8032 section 7.1 with crypto/ed25519.
func TestEd25519Vectors(t *testing.T) {
	var vs []struct {
		Name      string `json:"name"`
		Secret    string `json:"secret_key_hex"`
		Public    string `json:"public_key_hex"`
		Message   string `json:"message_hex"`
		Signature string `json:"signature_hex"`
	}
	readVectors(t, "ed25519_rfc8032.json", &vs)
	if len(vs) != 5 {
		t.Fatalf("got %d Ed25519 vectors, want 5", len(vs))
	}
	for _, v := range vs {
		priv := ed25519.NewKeyFromSeed(mustHex(t, v.Secret))
		pub := priv.Public().(ed25519.PublicKey)
		if got := hex.EncodeToString(pub); got != v.Public {
			t.Errorf("%s: public %s, want %s", v.Name, got, v.Public)
		}
		msg := mustHex(t, v.Message)
		sig := ed25519.Sign(priv, msg)
		if got := hex.EncodeToString(sig); got != v.Signature {
			t.Errorf("%s: signature %s, want %s", v.Name, got, v.Signature)
		}
		if !ed25519.Verify(pub, msg, mustHex(t, v.Signature)) {
			t.Errorf("%s: signature does not verify", v.Name)
		}
		// The same key through ExtKey.
		var k ExtKey
		copy(k.Key[:], mustHex(t, v.Secret))
		if !bytes.Equal(k.PublicKey(), pub) || !bytes.Equal(k.PrivateKey(), priv) {
			t.Errorf("%s: ExtKey keys differ from crypto/ed25519", v.Name)
		}
	}
}

package wallet

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cointoolkit/coin/lib/keys"
	"github.com/cointoolkit/coin/lib/params"
)

// testKDF keeps argon2id cheap in tests; the format stores the parameters used.
var testKDF = KDF{Time: 1, MemoryKiB: 1024, Threads: 1}

const testMnemonic = "abandon abandon abandon abandon abandon abandon abandon abandon abandon abandon abandon about"

func testSeed(t *testing.T) []byte {
	t.Helper()
	s, err := keys.SeedFromMnemonic(testMnemonic, "")
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestStoreCreateOpenUnlock(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "wallet")
	s, err := Create(dir, params.Regtest, 0, testSeed(t), "correct horse", testKDF)
	if err != nil {
		t.Fatal(err)
	}
	want, _ := AddressFromMnemonic(testMnemonic, params.Regtest, 0)
	recs, err := s.Addresses()
	if err != nil || len(recs) != 1 || recs[0].Address != want || recs[0].Index != 0 {
		t.Fatalf("addresses = %+v, %v; want index 0 %s", recs, err, want)
	}
	// A second process (here: a second open) is refused while the store is open.
	if _, err := Open(dir, params.Regtest); !errors.Is(err, ErrLocked) {
		t.Fatalf("second open: %v, want ErrLocked", err)
	}
	s.Close()

	if _, err := Create(dir, params.Regtest, 0, testSeed(t), "x", testKDF); !errors.Is(err, ErrWalletExists) {
		t.Fatalf("create over a wallet: %v, want ErrWalletExists", err)
	}
	if _, err := Open(dir, params.Mainnet); !errors.Is(err, ErrWrongNetwork) {
		t.Fatalf("open on mainnet: %v, want ErrWrongNetwork", err)
	}
	if _, err := Open(filepath.Join(t.TempDir(), "none"), params.Regtest); !errors.Is(err, ErrNoWallet) {
		t.Fatalf("open missing: %v, want ErrNoWallet", err)
	}

	s, err = Open(dir, params.Regtest)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if _, err := s.Unlock("wrong horse"); !errors.Is(err, ErrWrongPassphrase) {
		t.Fatalf("unlock with a wrong passphrase: %v", err)
	}
	ring, err := s.Unlock("correct horse")
	if err != nil {
		t.Fatal(err)
	}
	defer ring.Wipe()
	r1, err := s.NewAddress(ring)
	if err != nil {
		t.Fatal(err)
	}
	want1, _ := AddressFromMnemonic(testMnemonic, params.Regtest, 1)
	if r1.Index != 1 || r1.Address != want1 {
		t.Fatalf("new address = %+v, want index 1 %s", r1, want1)
	}
	ks, err := s.Keys(ring)
	if err != nil || len(ks) != 2 || ks[1].Address != want1 {
		t.Fatalf("keys = %d, %v", len(ks), err)
	}
	uk, err := s.UnlockKeys("correct horse")
	if err != nil || len(uk) != 2 || uk[1].Address != want1 || uk[0].Address != ks[0].Address {
		t.Fatalf("UnlockKeys = %d, %v", len(uk), err)
	}
	if _, err := s.UnlockKeys("wrong horse"); !errors.Is(err, ErrWrongPassphrase) {
		t.Fatalf("UnlockKeys with a wrong passphrase: %v", err)
	}
}

// The seed is not stored in the clear: neither the seed bytes nor any word of the
// mnemonic appear in the directory's files.
func TestStoreNoPlaintext(t *testing.T) {
	dir := t.TempDir()
	seed := testSeed(t)
	s, err := Create(dir, params.Regtest, 0, seed, "pw", testKDF)
	if err != nil {
		t.Fatal(err)
	}
	s.Close()
	files, _ := os.ReadDir(dir)
	for _, f := range files {
		b, err := os.ReadFile(filepath.Join(dir, f.Name()))
		if err != nil {
			t.Fatal(err)
		}
		txt := strings.ToLower(string(b))
		if strings.Contains(string(b), string(seed[:16])) || strings.Contains(txt, "abandon") ||
			strings.Contains(txt, strings.ToLower(hexString(seed[:16]))) {
			t.Fatalf("%s holds the seed or mnemonic in the clear", f.Name())
		}
	}
}

func hexString(b []byte) string {
	const digits = "0123456789abcdef"
	out := make([]byte, 0, 2*len(b))
	for _, c := range b {
		out = append(out, digits[c>>4], digits[c&15])
	}
	return string(out)
}

func TestStoreRejectsEmptyPassphrase(t *testing.T) {
	if _, err := Create(t.TempDir(), params.Regtest, 0, testSeed(t), "", testKDF); !errors.Is(err, ErrEmptyPassphrase) {
		t.Fatalf("err = %v", err)
	}
}

// A store made for one account cannot be decrypted as another (the account and network
// are the AEAD's associated data).
func TestStoreBindsMetadata(t *testing.T) {
	dir := t.TempDir()
	s, err := Create(dir, params.Regtest, 3, testSeed(t), "pw", testKDF)
	if err != nil {
		t.Fatal(err)
	}
	s.meta.Account = 4
	if _, err := s.Unlock("pw"); !errors.Is(err, ErrWrongPassphrase) {
		t.Fatalf("unlock with tampered metadata: %v", err)
	}
	s.meta.Account = 3
	ring, err := s.Unlock("pw")
	if err != nil || ring.Account() != 3 {
		t.Fatalf("unlock: %v", err)
	}
	s.Close()
}

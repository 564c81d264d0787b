package keys

import (
	"bytes"
	"crypto/ed25519"
	"crypto/rand"
	"slices"
	"strings"
	"testing"
)

func TestParsePath(t *testing.T) {
	good := map[string][]uint32{
		"m":                 {},
		"m/0'":              {HardenedOffset},
		"m/44'/1'/0'/0'/0'": {44 | HardenedOffset, 1 | HardenedOffset, HardenedOffset, HardenedOffset, HardenedOffset},
		"m/44h/7777H/3'":    {44 | HardenedOffset, 7777 | HardenedOffset, 3 | HardenedOffset},
		"m/2147483647'":     {0xffffffff},
		"m/1000000000'/10'": {1000000000 | HardenedOffset, 10 | HardenedOffset},
	}
	for p, want := range good {
		got, err := ParsePath(p)
		if err != nil || !slices.Equal(got, want) {
			t.Errorf("ParsePath(%q) = %v, %v; want %v", p, got, err, want)
		}
	}
	bad := []string{
		"", "M", "m/", "/0'", "0'", "m/0'/", "m//0'", "n/0'",
		"m/0", "m/44'/1'/0'/0/0'", "m/44'/1'/0'/0'/0", // non-hardened
		"m/2147483648'", "m/4294967296'", "m/99999999999999999999'",
		"m/01'", "m/-1'", "m/+1'", "m/1''", "m/'", "m/ 1'", "m/1' ", "m/0x1'", "m/1'h", "m/a'",
	}
	for _, p := range bad {
		_, err := ParsePath(p)
		wantErr(t, "ParsePath "+p, err, ErrBadPath)
		_, err = DerivePath(make([]byte, 32), p)
		wantErr(t, "DerivePath "+p, err, ErrBadPath)
	}
	_, err := DerivePath(make([]byte, 32), "m/44'/1'/0'/0/0'")
	if err == nil || !strings.Contains(err.Error(), "hardened") {
		t.Errorf("non-hardened error %q does not say why", err)
	}
}

func TestDerivePathSeedLength(t *testing.T) {
	for _, n := range []int{0, 15, 65, 128} {
		_, err := DerivePath(make([]byte, n), "m/0'")
		wantErr(t, "seed length", err, ErrBadSeed)
	}
	for _, n := range []int{16, 32, 64} {
		if _, err := DerivePath(make([]byte, n), "m/0'"); err != nil {
			t.Errorf("seed of %d bytes: %v", n, err)
		}
	}
}

func TestChildIsAlwaysHardened(t *testing.T) {
	m := MasterKey(bytes.Repeat([]byte{7}, 64))
	for _, i := range []uint32{0, 1, 44, 7777, 0x7fffffff} {
		if m.Child(i) != m.Child(i|HardenedOffset) {
			t.Errorf("Child(%d) != Child(%d|H)", i, i)
		}
	}
	if m.Child(0) == m.Child(1) || m.Child(0) == m {
		t.Error("children not distinct")
	}
}

func TestAccountPath(t *testing.T) {
	if got := AccountPath(CoinTypeTestnet, 0, 0); got != "m/44'/1'/0'/0'/0'" {
		t.Errorf("AccountPath(1, 0, 0) = %q", got)
	}
	if got := AccountPath(CoinTypeMainnet, 2, 5); got != "m/44'/7777'/2'/0'/5'" {
		t.Errorf("AccountPath(7777, 2, 5) = %q", got)
	}
	if got := AccountPath(1|HardenedOffset, HardenedOffset, 0xffffffff); got != "m/44'/1'/0'/0'/2147483647'" {
		t.Errorf("AccountPath with hardened bits = %q", got)
	}
	seed := make([]byte, 64)
	rand.Read(seed)
	for _, c := range [][3]uint32{{1, 0, 0}, {7777, 0, 0}, {7777, 3, 9}, {1, 0x7fffffff, 1}, {1 | HardenedOffset, 0, 5 | HardenedOffset}} {
		k, err := DerivePath(seed, AccountPath(c[0], c[1], c[2]))
		if err != nil {
			t.Fatal(err)
		}
		if got := DeriveAccountKey(seed, c[0], c[1], c[2]); got != k {
			t.Errorf("DeriveAccountKey%v differs from DerivePath(%s)", c, AccountPath(c[0], c[1], c[2]))
		}
	}
	if DeriveAccountKey(seed, 1, 0, 0) == DeriveAccountKey(seed, 7777, 0, 0) {
		t.Error("coin types give the same key")
	}
}

func TestExtKeySignVerify(t *testing.T) {
	seed := make([]byte, 64)
	rand.Read(seed)
	k := DeriveAccountKey(seed, CoinTypeTestnet, 0, 0)
	priv, pub := k.PrivateKey(), k.PublicKey()
	if len(priv) != ed25519.PrivateKeySize || len(pub) != ed25519.PublicKeySize {
		t.Fatalf("key sizes %d, %d", len(priv), len(pub))
	}
	if !bytes.Equal(priv.Seed(), k.Key[:]) || !bytes.Equal(priv.Public().(ed25519.PublicKey), pub) {
		t.Fatal("PrivateKey and PublicKey disagree")
	}
	msg := []byte("spend")
	if !ed25519.Verify(pub, msg, ed25519.Sign(priv, msg)) {
		t.Fatal("signature does not verify")
	}
	// PublicKey returns a fresh slice each time.
	pub[0] ^= 1
	if bytes.Equal(k.PublicKey(), pub) {
		t.Fatal("PublicKey shares memory between calls")
	}
}

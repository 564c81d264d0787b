package keys

import (
	"crypto/ed25519"
	"crypto/rand"
	"errors"
	"strings"
	"testing"

	"github.com/btcsuite/btcd/btcutil/bech32"
	"lukechampine.com/blake3"
)

const bech32Charset = "qpzry9x8gf2tvdw0s3jn54khce6mua7l"

func randomHash(t testing.TB) PubKeyHash {
	t.Helper()
	var h PubKeyHash
	if _, err := rand.Read(h[:]); err != nil {
		t.Fatal(err)
	}
	return h
}

// rawAddress builds a bech32 or bech32m string from a version symbol and a
// program of any length, bypassing EncodeAddress's checks.
func rawAddress(t testing.TB, hrp string, version byte, program []byte, m bool) string {
	t.Helper()
	prog, err := bech32.ConvertBits(program, 8, 5, true)
	if err != nil {
		t.Fatal(err)
	}
	return rawSymbols(t, hrp, append([]byte{version}, prog...), m)
}

func rawSymbols(t testing.TB, hrp string, data []byte, m bool) string {
	t.Helper()
	var s string
	var err error
	if m {
		s, err = bech32.EncodeM(hrp, data)
	} else {
		s, err = bech32.Encode(hrp, data)
	}
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func wantErr(t *testing.T, what string, err error, sentinels ...error) {
	t.Helper()
	if err == nil {
		t.Errorf("%s: no error, want %v", what, sentinels)
		return
	}
	for _, s := range sentinels {
		if !errors.Is(err, s) {
			t.Errorf("%s: error %q does not match %q", what, err, s)
		}
	}
}

func TestAddressRoundTrip(t *testing.T) {
	hashes := []PubKeyHash{{}, {0xff, 0xff}}
	for i := range hashes[1] {
		hashes[1][i] = 0xff
	}
	for range 200 {
		hashes = append(hashes, randomHash(t))
	}
	for _, hrp := range []string{HRPMainnet, HRPTestnet} {
		for _, h := range hashes {
			a, err := EncodeAddress(hrp, h)
			if err != nil {
				t.Fatalf("EncodeAddress(%q, %x): %v", hrp, h, err)
			}
			if !strings.HasPrefix(a, hrp+"1q") || len(a) != len(hrp)+1+53+6 || a != strings.ToLower(a) {
				t.Fatalf("EncodeAddress(%q, %x) = %q: wrong shape", hrp, h, a)
			}
			// The checksum is bech32m, and the data is [0] ++ convertbits(h).
			gotHRP, data, ver, err := bech32.DecodeGeneric(a)
			if err != nil || gotHRP != hrp || ver != bech32.VersionM || data[0] != 0 {
				t.Fatalf("%q: DecodeGeneric = %q, %v, %v, %v", a, gotHRP, data, ver, err)
			}
			for _, in := range []string{a, strings.ToUpper(a)} {
				got, err := DecodeAddress(in, hrp)
				if err != nil {
					t.Fatalf("DecodeAddress(%q): %v", in, err)
				}
				if got != h {
					t.Fatalf("DecodeAddress(%q) = %x, want %x", in, got, h)
				}
			}
		}
	}
}

// TestDecodeAddressUppercase documents the decision: an all-upper-case
// address is valid (BIP-173 allows it, and it makes QR codes smaller); it
// decodes to the same hash and EncodeAddress gives the lower-case form.
func TestDecodeAddressUppercase(t *testing.T) {
	h := randomHash(t)
	a, _ := EncodeAddress(HRPTestnet, h)
	up := strings.ToUpper(a)
	got, err := DecodeAddress(up, HRPTestnet)
	if err != nil || got != h {
		t.Fatalf("DecodeAddress(%q) = %x, %v; want %x", up, got, err, h)
	}
	// The expected HRP is given in lower case; an upper-case one never matches.
	wantErr(t, "upper-case expected HRP", func() error { _, err := DecodeAddress(up, "TCOIN"); return err }(),
		ErrWrongNetwork, ErrBadAddress)
}

func TestDecodeAddressWrongNetwork(t *testing.T) {
	h := randomHash(t)
	main, _ := EncodeAddress(HRPMainnet, h)
	test, _ := EncodeAddress(HRPTestnet, h)
	_, err := DecodeAddress(main, HRPTestnet)
	wantErr(t, "mainnet address on testnet", err, ErrWrongNetwork, ErrBadAddress)
	_, err = DecodeAddress(test, HRPMainnet)
	wantErr(t, "testnet address on mainnet", err, ErrWrongNetwork, ErrBadAddress)
	if err != nil && !strings.Contains(err.Error(), `"tcoin"`) {
		t.Errorf("error %q does not name the HRP found", err)
	}
	other := rawAddress(t, "bc", 0, h[:], true)
	_, err = DecodeAddress(other, HRPMainnet)
	wantErr(t, "other HRP", err, ErrWrongNetwork)
}

func TestDecodeAddressBech32NotM(t *testing.T) {
	for _, hrp := range []string{HRPMainnet, HRPTestnet} {
		h := randomHash(t)
		s := rawAddress(t, hrp, 0, h[:], false) // same data, BIP-173 checksum
		_, err := DecodeAddress(s, hrp)
		wantErr(t, "bech32 checksum "+s, err, ErrBech32NotM, ErrBadAddress)
		_, err = DecodeAddress(strings.ToUpper(s), hrp)
		wantErr(t, "upper-case bech32 checksum", err, ErrBech32NotM)
	}
}

func TestDecodeAddressMixedCase(t *testing.T) {
	a, _ := EncodeAddress(HRPMainnet, randomHash(t))
	// All upper case up to the last letter (the characters after it may all be digits,
	// which have no case).
	last := strings.LastIndexFunc(a, func(r rune) bool { return r >= 'a' && r <= 'z' })
	cases := []string{
		"C" + a[1:],                          // HRP
		strings.ToUpper(a[:last]) + a[last:], // all but the last letter
	}
	// One upper-case letter in the data part.
	for i := len(HRPMainnet) + 1; i < len(a); i++ {
		if c := a[i]; c >= 'a' && c <= 'z' {
			cases = append(cases, a[:i]+strings.ToUpper(a[i:i+1])+a[i+1:])
			break
		}
	}
	for _, s := range cases {
		_, err := DecodeAddress(s, HRPMainnet)
		wantErr(t, "mixed case "+s, err, ErrMixedCase, ErrBadAddress)
	}
}

func TestDecodeAddressBadVersion(t *testing.T) {
	h := randomHash(t)
	for _, v := range []byte{1, 16, 31} {
		s := rawAddress(t, HRPMainnet, v, h[:], true)
		_, err := DecodeAddress(s, HRPMainnet)
		wantErr(t, "version "+s, err, ErrBadVersion, ErrBadAddress)
	}
}

func TestDecodeAddressBadLength(t *testing.T) {
	for _, n := range []int{0, 1, 20, 31, 33, 40} {
		prog := make([]byte, n)
		rand.Read(prog)
		s := rawAddress(t, HRPTestnet, 0, prog, true)
		_, err := DecodeAddress(s, HRPTestnet)
		wantErr(t, "program length "+s, err, ErrBadLength, ErrBadAddress)
	}
	// Empty data part: no version symbol at all.
	_, err := DecodeAddress(rawSymbols(t, HRPTestnet, nil, true), HRPTestnet)
	wantErr(t, "empty data part", err, ErrBadLength)
	// Longer than 90 characters (BIP-173 limit).
	long := rawAddress(t, HRPTestnet, 0, make([]byte, 64), true)
	_, err = DecodeAddress(long, HRPTestnet)
	wantErr(t, "91+ characters", err, ErrBadLength)
	// 52 symbols but the 4 padding bits are not zero: non-canonical.
	h := randomHash(t)
	prog, _ := bech32.ConvertBits(h[:], 8, 5, true)
	for _, pad := range []byte{1, 2, 4, 8, 15} {
		p := append([]byte(nil), prog...)
		p[len(p)-1] |= pad
		s := rawSymbols(t, HRPTestnet, append([]byte{0}, p...), true)
		_, err := DecodeAddress(s, HRPTestnet)
		wantErr(t, "non-zero padding "+s, err, ErrBadLength)
	}
}

// TestDecodeAddressFlippedCharacter: every single-character substitution in
// the data part (including the checksum), and in the HRP, is a checksum error.
func TestDecodeAddressFlippedCharacter(t *testing.T) {
	a, _ := EncodeAddress(HRPMainnet, randomHash(t))
	sep := strings.LastIndexByte(a, '1')
	n := 0
	for i := sep + 1; i < len(a); i++ {
		for _, c := range []byte(bech32Charset) {
			if c == a[i] {
				continue
			}
			s := a[:i] + string(c) + a[i+1:]
			_, err := DecodeAddress(s, HRPMainnet)
			wantErr(t, "flipped "+s, err, ErrBadChecksum, ErrBadAddress)
			n++
		}
	}
	if n != (len(a)-sep-1)*31 {
		t.Fatalf("tested %d substitutions", n)
	}
	for i := 0; i < sep; i++ {
		s := a[:i] + "x" + a[i+1:]
		_, err := DecodeAddress(s, HRPMainnet)
		wantErr(t, "flipped HRP "+s, err, ErrBadChecksum)
	}
}

func TestDecodeAddressMalformed(t *testing.T) {
	a, _ := EncodeAddress(HRPMainnet, randomHash(t))
	cases := map[string]string{
		"empty":              "",
		"HRP only":           "coin1",
		"no separator":       strings.Replace(a, "1", "", 1),
		"non-charset b":      a[:10] + "b" + a[11:],
		"non-charset i":      a[:10] + "i" + a[11:],
		"non-charset o":      a[:10] + "o" + a[11:],
		"leading space":      " " + a,
		"trailing newline":   a + "\n",
		"inner space":        a[:10] + " " + a[10:],
		"non-ASCII":          a[:10] + "é" + a[10:],
		"NUL":                a[:10] + "\x00" + a[11:],
		"truncated":          a[:len(a)-1],
		"extra char":         a + "q",
		"checksum too short": a[:len(HRPMainnet)+4],
	}
	for name, s := range cases {
		h, err := DecodeAddress(s, HRPMainnet)
		wantErr(t, name, err, ErrBadAddress)
		if h != (PubKeyHash{}) {
			t.Errorf("%s: non-zero hash returned with error", name)
		}
		if err != nil && !strings.HasPrefix(err.Error(), "decode address: ") {
			t.Errorf("%s: error %q lacks context", name, err)
		}
	}
}

func TestEncodeAddressBadHRP(t *testing.T) {
	for _, hrp := range []string{"", "Coin", "TCOIN", "co in", "coin\x7f", "cö", strings.Repeat("a", 84)} {
		_, err := EncodeAddress(hrp, PubKeyHash{})
		wantErr(t, "HRP "+hrp, err, ErrBadHRP)
	}
	if _, err := EncodeAddress(strings.Repeat("a", 83), PubKeyHash{}); err != nil {
		t.Errorf("83-character HRP: %v", err)
	}
}

func TestHashPubKey(t *testing.T) {
	pub, _, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := HashPubKey(pub), PubKeyHash(blake3.Sum256(pub)); got != want {
		t.Fatalf("HashPubKey = %x, want BLAKE3-256 %x", got, want)
	}
	for _, n := range []int{0, 31, 33, 64} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("HashPubKey of %d bytes did not panic", n)
				}
			}()
			HashPubKey(make(ed25519.PublicKey, n))
		}()
	}
}

func TestAddressSentinelsAreDistinct(t *testing.T) {
	all := []error{ErrWrongNetwork, ErrBadChecksum, ErrBech32NotM, ErrMixedCase, ErrBadLength, ErrBadVersion}
	for i, a := range all {
		if !errors.Is(a, ErrBadAddress) {
			t.Errorf("%v does not match ErrBadAddress", a)
		}
		for j, b := range all {
			if i != j && errors.Is(a, b) {
				t.Errorf("%v matches %v", a, b)
			}
		}
	}
}

package keys

import (
	"bytes"
	"errors"
	"fmt"
	mrand "math/rand/v2"
	"strings"
	"testing"
	"unicode"

	"github.com/tyler-smith/go-bip39/wordlists"
)

const abandonAbout = "abandon abandon abandon abandon abandon abandon abandon abandon abandon abandon abandon about"

func TestNewMnemonic(t *testing.T) {
	seen := map[string]bool{}
	for _, n := range []int{DefaultMnemonicWords, 15, 18, 21, 24} {
		for range 5 {
			m, err := NewMnemonic(n)
			if err != nil {
				t.Fatalf("NewMnemonic(%d): %v", n, err)
			}
			if got := len(strings.Fields(m)); got != n {
				t.Fatalf("NewMnemonic(%d) has %d words", n, got)
			}
			if norm, err := ValidateMnemonic(m); err != nil || norm != m {
				t.Fatalf("NewMnemonic(%d) does not validate: %v", n, err)
			}
			if seen[m] {
				t.Fatalf("NewMnemonic(%d) repeated a mnemonic", n)
			}
			seen[m] = true
		}
	}
	for _, n := range []int{-12, 0, 3, 11, 13, 14, 16, 23, 25, 27, 48} {
		m, err := NewMnemonic(n)
		wantErr(t, fmt.Sprintf("NewMnemonic(%d)", n), err, ErrMnemonicWordCount, ErrBadMnemonic)
		if m != "" {
			t.Errorf("NewMnemonic(%d) returned a mnemonic with an error", n)
		}
	}
}

func TestValidateMnemonicNormalisesWhitespace(t *testing.T) {
	messy := "  abandon\tabandon abandon\n abandon abandon abandon\u00a0abandon abandon  abandon\r\nabandon abandon\u3000about \n"
	norm, err := ValidateMnemonic(messy)
	if err != nil {
		t.Fatal(err)
	}
	if norm != abandonAbout {
		t.Fatalf("normalised to %q", norm)
	}
	s1, err := SeedFromMnemonic(messy, "")
	if err != nil {
		t.Fatal(err)
	}
	s2, _ := SeedFromMnemonic(abandonAbout, "")
	if !bytes.Equal(s1, s2) {
		t.Fatal("seed depends on whitespace")
	}
}

func TestValidateMnemonicWordCount(t *testing.T) {
	words := strings.Fields(abandonAbout)
	for _, n := range []int{0, 1, 11, 13, 14, 16, 17, 19, 20, 22, 23, 25, 27, 36} {
		var ws []string
		for i := range n {
			ws = append(ws, words[i%len(words)])
		}
		_, err := ValidateMnemonic(strings.Join(ws, " "))
		wantErr(t, fmt.Sprintf("%d words", n), err, ErrMnemonicWordCount, ErrBadMnemonic)
		if err != nil && !strings.Contains(err.Error(), fmt.Sprintf("got %d,", n)) {
			t.Errorf("%d words: error %q does not give the count", n, err)
		}
	}
}

func TestValidateMnemonicErrors(t *testing.T) {
	cases := []struct {
		m    string
		want error
	}{
		{strings.Repeat("abandon ", 12), ErrMnemonicChecksum},
		{strings.Repeat("zoo ", 24), ErrMnemonicChecksum},
		{"legal winner thank year wave sausage worth useful legal winner thank thank", ErrMnemonicChecksum},
		{strings.Replace(abandonAbout, "about", "abbout", 1), ErrMnemonicUnknownWord},
		{strings.Replace(abandonAbout, "about", "About", 1), ErrMnemonicUnknownWord},
		{strings.Replace(abandonAbout, "abandon", "ABANDON", 1), ErrMnemonicUnknownWord},
		{strings.Replace(abandonAbout, "abandon", "abandón", 1), ErrMnemonicUnknownWord},
		{strings.Replace(abandonAbout, "abandon", "aban,don", 1), ErrMnemonicUnknownWord},
		{strings.Replace(abandonAbout, "about", "abou", 1), ErrMnemonicUnknownWord}, // prefixes are not expanded
	}
	for _, c := range cases {
		norm, err := ValidateMnemonic(c.m)
		wantErr(t, "validate", err, c.want, ErrBadMnemonic)
		if norm != "" {
			t.Errorf("normalised form returned with an error")
		}
		if _, err2 := SeedFromMnemonic(c.m, ""); !errors.Is(err2, c.want) {
			t.Errorf("SeedFromMnemonic: %v, want %v", err2, c.want)
		}
		if _, err2 := AddressOfMnemonic(c.m, "", HRPMainnet, CoinTypeMainnet); !errors.Is(err2, c.want) {
			t.Errorf("AddressOfMnemonic: %v, want %v", err2, c.want)
		}
	}
	_, err := ValidateMnemonic(strings.Replace(abandonAbout, "about", "About", 1))
	if err == nil || !strings.Contains(err.Error(), "#12 of 12") {
		t.Errorf("unknown word error %q does not give its position", err)
	}
}

// checkNoLeak fails if the error text contains any word of the input, as a
// substring (case-insensitive) or as a token.
func checkNoLeak(t *testing.T, input string, err error, substring bool) {
	t.Helper()
	if err == nil {
		t.Fatalf("no error for %q", input)
	}
	text := strings.ToLower(err.Error())
	tokens := map[string]bool{}
	for _, tok := range strings.FieldsFunc(text, func(r rune) bool { return !unicode.IsLetter(r) }) {
		tokens[tok] = true
	}
	for _, w := range strings.Fields(strings.ToLower(input)) {
		if tokens[w] || (substring && strings.Contains(text, w)) {
			t.Errorf("error %q leaks input word %q", err, w)
		}
	}
}

// TestValidateMnemonicErrorDoesNotLeakWords: the error for a wrong checksum
// or an unknown word never contains any word of the input.
func TestValidateMnemonicErrorDoesNotLeakWords(t *testing.T) {
	inputs := []string{
		strings.Repeat("abandon ", 11) + "ability",                                         // checksum
		"legal winner thank year wave sausage worth useful legal winner thank thank",       // checksum
		"letter advice cage absurd amount doctor acoustic avoid letter advice cage absurd", // checksum
		strings.Replace(abandonAbout, "about", "secretword", 1),                            // unknown word
		"legal winner thank year wave sausage worth useful legal winner thank yellowx",     // unknown word
		"Legal winner thank year wave sausage worth useful legal winner thank yellow",      // upper case
		"zoo zoo zoo zoo zoo zoo zoo zoo zoo zoo zoo",                                      // 11 words
	}
	for _, in := range inputs {
		_, err := ValidateMnemonic(in)
		checkNoLeak(t, in, err, true)
		_, err = SeedFromMnemonic(in, "")
		checkNoLeak(t, in, err, true)
		_, err = AddressOfMnemonic(in, "", HRPTestnet, CoinTypeTestnet)
		checkNoLeak(t, in, err, true)
	}

	// Random mnemonics of list words (mostly bad checksums) and with one
	// random unknown word. Token check, since a short list word can be a
	// substring of fixed message text.
	rng := mrand.New(mrand.NewPCG(1, 2))
	for range 500 {
		n := 12 + 3*rng.IntN(5)
		ws := make([]string, n)
		for i := range ws {
			ws[i] = wordlists.English[rng.IntN(len(wordlists.English))]
		}
		if rng.IntN(2) == 0 {
			ws[rng.IntN(n)] = fmt.Sprintf("%sx", ws[rng.IntN(n)])
		}
		in := strings.Join(ws, " ")
		if _, err := ValidateMnemonic(in); err != nil {
			checkNoLeak(t, in, err, false)
		}
	}
}

// TestMnemonicErrorTextHasNoListWords: no error this package returns for a
// mnemonic contains a BIP-39 English word as a token, so no message can be
// mistaken for (or hide) a leaked word.
func TestMnemonicErrorTextHasNoListWords(t *testing.T) {
	list := map[string]bool{}
	for _, w := range wordlists.English {
		list[w] = true
	}
	errs := []error{ErrBadMnemonic, ErrMnemonicWordCount, ErrMnemonicUnknownWord, ErrMnemonicChecksum, ErrPassphraseNotUTF8}
	for _, in := range []string{"", "abandon", strings.Replace(abandonAbout, "about", "About", 1),
		strings.Replace(abandonAbout, "about", "xyz", 1), strings.Repeat("abandon ", 12)} {
		_, err := ValidateMnemonic(in)
		errs = append(errs, err)
	}
	_, err := NewMnemonic(11)
	errs = append(errs, err)
	for _, err := range errs {
		for _, tok := range strings.FieldsFunc(strings.ToLower(err.Error()), func(r rune) bool { return !unicode.IsLetter(r) }) {
			if list[tok] {
				t.Errorf("error %q contains the list word %q", err, tok)
			}
		}
	}
}

func TestSeedFromMnemonicPassphrase(t *testing.T) {
	empty, err := SeedFromMnemonic(abandonAbout, "")
	if err != nil {
		t.Fatal(err)
	}
	// Well-known BIP-39 seed of this mnemonic with no passphrase.
	const want = "5eb00bbddcf069084889a8ab9155568165f5c453ccb85e70811aaed6f6da5fc19a5ac40b389cd370d086206dec8aa6c43daea6690f20ad3d8d48b2d2ce9e38e4"
	if fmt.Sprintf("%x", empty) != want {
		t.Fatalf("seed = %x, want %s", empty, want)
	}
	withPass, err := SeedFromMnemonic(abandonAbout, "correct horse")
	if err != nil || bytes.Equal(empty, withPass) || len(withPass) != 64 {
		t.Fatalf("passphrase has no effect: %v", err)
	}
	// NFKD: the composed and decomposed forms of a passphrase give one seed.
	composed, err1 := SeedFromMnemonic(abandonAbout, "p\u00e4ssword")
	decomposed, err2 := SeedFromMnemonic(abandonAbout, "pa\u0308ssword")
	if err1 != nil || err2 != nil || !bytes.Equal(composed, decomposed) || bytes.Equal(composed, empty) {
		t.Fatalf("NFKD passphrase: %v %v", err1, err2)
	}
	_, err = SeedFromMnemonic(abandonAbout, "\xff")
	wantErr(t, "invalid UTF-8 passphrase", err, ErrPassphraseNotUTF8)
	if err != nil && strings.Contains(err.Error(), "\xff") {
		t.Errorf("error %q contains the passphrase", err)
	}
}

package keys

import (
	"unicode/utf8"

	"errors"
	"fmt"
	unorm "golang.org/x/text/unicode/norm"
	"strings"

	"github.com/tyler-smith/go-bip39"
	"github.com/tyler-smith/go-bip39/wordlists"
)

// DefaultMnemonicWords is the default mnemonic length.
const DefaultMnemonicWords = 12

// Mnemonic errors. All of them match ErrBadMnemonic with errors.Is. Their
// text never contains the mnemonic or any of its words. The messages are
// also chosen so that they contain no BIP-39 English word as a token, so a
// leak could not hide among them (checked by the tests).
var (
	// ErrBadMnemonic matches every mnemonic error.
	ErrBadMnemonic = errors.New("invalid mnemonic")
	// ErrMnemonicWordCount: not 12, 15, 18, 21 or 24 words.
	ErrMnemonicWordCount = fmt.Errorf("%w: unsupported count of words", ErrBadMnemonic)
	// ErrMnemonicUnknownWord: a word is not in the BIP-39 English wordlist.
	ErrMnemonicUnknownWord = fmt.Errorf("%w: not in the BIP-39 English wordlist", ErrBadMnemonic)
	// ErrMnemonicChecksum: all words are known but the checksum does not match.
	ErrMnemonicChecksum = fmt.Errorf("%w: checksum mismatch", ErrBadMnemonic)
)

// ErrPassphraseNotUTF8 is returned for a passphrase that is not valid UTF-8:
// BIP-39 normalises the passphrase with NFKD, which needs text.
var ErrPassphraseNotUTF8 = errors.New("passphrase bytes are not UTF-8")

// englishIndex maps each word of the BIP-39 English list to its index. It is
// built from the wordlists package, not from bip39's global (settable) list.
var englishIndex = func() map[string]int {
	m := make(map[string]int, len(wordlists.English))
	for i, w := range wordlists.English {
		m[w] = i
	}
	return m
}()

func validWordCount(n int) bool {
	return n >= 12 && n <= 24 && n%3 == 0
}

// NewMnemonic returns a new random BIP-39 English mnemonic of the given
// number of words: 12 (DefaultMnemonicWords), 15, 18, 21 or 24.
func NewMnemonic(words int) (string, error) {
	if !validWordCount(words) {
		return "", fmt.Errorf("new mnemonic: %w: got %d, expected 12, 15, 18, 21 or 24", ErrMnemonicWordCount, words)
	}
	entropy, err := bip39.NewEntropy(words / 3 * 32)
	if err != nil {
		return "", fmt.Errorf("new mnemonic: %w", err)
	}
	defer clear(entropy)
	m, err := bip39.NewMnemonic(entropy)
	if err != nil {
		// The go-bip39 errors for entropy do not contain words.
		return "", fmt.Errorf("new mnemonic: %w", err)
	}
	// go-bip39 uses a process-wide, settable word list; make sure the result
	// is valid against the English list this package validates with.
	if _, err := ValidateMnemonic(m); err != nil {
		return "", fmt.Errorf("new mnemonic: generated mnemonic failed validation (bip39.SetWordList called?): %w", err)
	}
	return m, nil
}

// ValidateMnemonic checks a BIP-39 English mnemonic (word count, word list
// and checksum) and returns its normalised form: the words separated by
// single spaces. Errors match ErrBadMnemonic and never contain any word of m.
func ValidateMnemonic(m string) (string, error) {
	words := strings.Fields(m)
	if !validWordCount(len(words)) {
		return "", fmt.Errorf("%w: got %d, expected 12, 15, 18, 21 or 24", ErrMnemonicWordCount, len(words))
	}
	for i, w := range words {
		if _, ok := englishIndex[w]; !ok {
			hint := ""
			if _, ok := englishIndex[strings.ToLower(w)]; ok {
				hint = " (has uppercase; the wordlist is lowercase)"
			}
			return "", fmt.Errorf("%w: #%d of %d words%s", ErrMnemonicUnknownWord, i+1, len(words), hint)
		}
	}
	norm := strings.Join(words, " ")
	entropy, err := bip39.EntropyFromMnemonic(norm)
	clear(entropy)
	switch {
	case err == nil:
		return norm, nil
	case errors.Is(err, bip39.ErrChecksumIncorrect):
		return "", ErrMnemonicChecksum
	default:
		// Never wrap go-bip39's error: some of its messages quote a word.
		return "", ErrBadMnemonic
	}
}

// SeedFromMnemonic validates and normalises m, then returns its 64-byte
// BIP-39 seed: PBKDF2-HMAC-SHA512(mnemonic, "mnemonic"+passphrase, 2048).
// Use "" for no passphrase. The passphrase is NFKD-normalised as BIP-39
// requires, so composed and decomposed forms give the same seed.
func SeedFromMnemonic(m, passphrase string) ([]byte, error) {
	norm, err := ValidateMnemonic(m)
	if err != nil {
		return nil, err
	}
	if !utf8.ValidString(passphrase) {
		return nil, ErrPassphraseNotUTF8
	}
	return bip39.NewSeed(norm, unorm.NFKD.String(passphrase)), nil
}

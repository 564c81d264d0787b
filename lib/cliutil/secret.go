package cliutil

// The one reader of secrets (protocol §4: a mnemonic or a passphrase never comes from argv and
// never goes into an error message or a log): mnemonics and passphrases come from a file,
// standard input, an environment variable or a terminal prompt without echo. A mnemonic may
// be the words or the JSON that 'coin-wallet new' and 'create' print, so every command that
// takes a mnemonic accepts the file 'coin-wallet new > wallet.json' wrote.

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"golang.org/x/term"
)

// maxSecretBytes bounds what is read from a secret source.
const maxSecretBytes = 64 << 10

// SecretSource says where a secret is read from, in this order: the file Path ("-" is
// standard input), the environment variable Env (when set, even to ""), then standard
// input or the terminal (see ReadMnemonic and ReadPassphrase).
type SecretSource struct {
	// Path is a file holding the secret; "-" reads standard input; "" skips to Env.
	Path string
	// Env is an environment variable holding the secret ("": none).
	Env string
	// Prompt is the terminal prompt.
	Prompt string
	// In is standard input (nil: os.Stdin). Only an *os.File can be a terminal.
	In io.Reader
	// Hint says how to give the secret, for the error when there is no source (for example
	// "give --passphrase-file FILE or set COIN_WALLET_PASSPHRASE").
	Hint string
}

func (s SecretSource) in() io.Reader {
	if s.In == nil {
		return os.Stdin
	}
	return s.In
}

// inTerminal is standard input when it is a terminal.
func (s SecretSource) inTerminal() (*os.File, bool) {
	f, ok := s.in().(*os.File)
	return f, ok && IsTerminal(f)
}

// ErrSecretFileMode: a secret file (a mnemonic or a passphrase) can be read or written by
// other users. The rule is the wallet directory's (lib/wallet: no access for group or
// others): a mnemonic file holds the funds in plain text and a passphrase file the key to
// the encrypted seed, so a file others could read may have been copied already; the owner
// must know, as OpenSSH refuses a private key others can read.
//
// One exception, PostgreSQL's rule for its key file: a file owned by root may also be
// readable (only readable) by its group when we are not root and are in that group. That is
// an administrator handing a secret to a service account: Kubernetes mounts a Secret owned
// by root with the pod's fsGroup and forces group read (mode 0440), and Debian's ssl-cert
// group works the same way. Nobody but root could have written such a file.
var ErrSecretFileMode = errors.New("the secret file is accessible to other users")

// checkSecretFileMode applies ErrSecretFileMode's rule to a regular file (pipes such as
// <(...) and devices are not files others could have copied later).
func checkSecretFileMode(path string, st os.FileInfo) error {
	m := st.Mode()
	if !m.IsRegular() {
		return nil
	}
	uid, gid, known := fileOwner(st)
	if secretModeOK(m.Perm(), uid, gid, known, processIDs) {
		return nil
	}
	return fmt.Errorf("%w: %s has mode %04o; run 'chmod 600 %s' (if other users could read it, consider the secret known)",
		ErrSecretFileMode, path, m.Perm(), path)
}

// secretModeOK is ErrSecretFileMode's rule for a file of mode perm owned by uid:gid (known
// false: the owner is not known on this system, so only 0600 or less passes); ids says who
// we are.
func secretModeOK(perm os.FileMode, uid, gid int, known bool, ids func() (euid int, groups []int)) bool {
	if perm&0o077 == 0 {
		return true
	}
	if !known || uid != 0 || perm&0o037 != 0 { // others nothing; group read only
		return false
	}
	euid, groups := ids()
	if euid == 0 {
		return false // root reading its own file: the owner's rule
	}
	for _, g := range groups {
		if g == gid {
			return true
		}
	}
	return false
}

// MinPassphraseChars is the length under which a new wallet passphrase gets a warning
// (NIST SP 800-63B's minimum for memorised secrets): the passphrase alone guards the
// encrypted seed of a copied wallet directory against an offline search. Shorter ones are
// accepted (throwaway regtest wallets, scripts), with the warning of ShortPassphraseWarning.
const MinPassphraseChars = 8

// ShortPassphraseWarning is the warning for a new passphrase p ("" when p is long enough).
func ShortPassphraseWarning(p string) string {
	if n := len([]rune(p)); n < MinPassphraseChars {
		return fmt.Sprintf("warning: the passphrase has %d character(s), fewer than %d: anyone who copies the wallet directory "+
			"can try every such passphrase offline; use a longer one for a wallet that holds anything of value", n, MinPassphraseChars)
	}
	return ""
}

// readSecretFile reads a secret file, refusing one that others can access
// (ErrSecretFileMode). Its error names the file, never its content.
func readSecretFile(path string) (string, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return "", err
	}
	if err := checkSecretFileMode(path, st); err != nil {
		return "", err
	}
	b, err := io.ReadAll(io.LimitReader(f, maxSecretBytes+1))
	if err != nil {
		return "", fmt.Errorf("read %s: %w", path, err)
	}
	if len(b) > maxSecretBytes {
		return "", fmt.Errorf("%s: larger than %d KiB, not a secret", path, maxSecretBytes>>10)
	}
	return string(b), nil
}

// readAllSecret reads all of r (bounded).
func readAllSecret(r io.Reader) (string, error) {
	b, err := io.ReadAll(io.LimitReader(r, maxSecretBytes+1))
	if err != nil {
		return "", fmt.Errorf("read standard input: %w", err)
	}
	if len(b) > maxSecretBytes {
		return "", fmt.Errorf("standard input: larger than %d KiB, not a secret", maxSecretBytes>>10)
	}
	return string(b), nil
}

// promptOn asks on the terminal tty without echo, writing the prompt to w.
func promptOn(tty *os.File, w io.Writer, prompt string) (string, error) {
	fmt.Fprint(w, prompt)
	b, err := term.ReadPassword(int(tty.Fd()))
	fmt.Fprintln(w)
	if err != nil {
		return "", fmt.Errorf("read from the terminal: %w", err)
	}
	s := strings.TrimSpace(string(b))
	clear(b)
	return s, nil
}

// ParseMnemonic reads the text of a mnemonic source: the words, or a JSON object with a
// "mnemonic" string (what 'coin-wallet new' and 'create' print; its "address", if any, is
// returned too). The words come back trimmed and separated by single spaces; whether they
// are a valid BIP-39 mnemonic is lib/keys' to say. Errors never contain the text.
func ParseMnemonic(raw string) (words, address string, err error) {
	raw = strings.TrimSpace(raw)
	if strings.HasPrefix(raw, "{") {
		var v struct {
			Mnemonic *string `json:"mnemonic"`
			Address  string  `json:"address"`
		}
		// json's error messages may quote the input: never pass them on.
		if json.Unmarshal([]byte(raw), &v) != nil {
			return "", "", errors.New("the mnemonic input starts with '{' but is not a JSON object (want the words, or the JSON of 'coin-wallet new')")
		}
		if v.Mnemonic == nil {
			return "", "", errors.New("the mnemonic input is JSON without a \"mnemonic\" string (want the words, or the JSON of 'coin-wallet new')")
		}
		raw, address = *v.Mnemonic, strings.TrimSpace(v.Address)
	}
	words = strings.Join(strings.Fields(raw), " ")
	if words == "" {
		return "", "", errors.New("the mnemonic input is empty")
	}
	return words, address, nil
}

// ReadMnemonic reads a mnemonic from the file path ("-": standard input), else the
// environment variable env (when not ""), else standard input: asked for with prompt
// without echo when it is a terminal, read to its end otherwise. The words or the JSON of
// 'coin-wallet new' are accepted (ParseMnemonic). Errors never contain the mnemonic.
func ReadMnemonic(path, env, prompt string) (string, error) {
	m, _, err := SecretSource{Path: path, Env: env, Prompt: prompt}.ReadMnemonic()
	return m, err
}

// ReadMnemonic reads a mnemonic from s: the file s.Path ("-": standard input), else
// s.Env, else standard input (a prompt without echo when it is a terminal, else all of
// it). It returns the words (ParseMnemonic) and the address beside them when the source
// was the JSON of 'coin-wallet new'.
func (s SecretSource) ReadMnemonic() (words, address string, err error) {
	var raw string
	switch {
	case s.Path != "" && s.Path != "-":
		if raw, err = readSecretFile(s.Path); err != nil {
			return "", "", fmt.Errorf("read mnemonic: %w", err)
		}
		words, address, err = ParseMnemonic(raw)
		if err != nil {
			return "", "", fmt.Errorf("%s: %w", s.Path, err)
		}
		return words, address, nil
	case s.Path == "" && s.Env != "":
		if v, ok := os.LookupEnv(s.Env); ok {
			words, address, err = ParseMnemonic(v)
			if err != nil {
				return "", "", fmt.Errorf("%s: %w", s.Env, err)
			}
			return words, address, nil
		}
	}
	if tty, ok := s.inTerminal(); ok {
		prompt := s.Prompt
		if prompt == "" {
			prompt = "mnemonic: "
		}
		raw, err = promptOn(tty, os.Stderr, prompt)
	} else {
		raw, err = readAllSecret(s.in())
	}
	if err != nil {
		return "", "", fmt.Errorf("read mnemonic: %w", err)
	}
	if strings.TrimSpace(raw) == "" {
		hint := s.Hint
		if hint == "" {
			hint = "pipe the mnemonic (or the JSON of 'coin-wallet new') to standard input"
		}
		return "", "", errors.New("no mnemonic: standard input is empty (" + hint + ")")
	}
	words, address, err = ParseMnemonic(raw)
	if err != nil {
		return "", "", fmt.Errorf("standard input: %w", err)
	}
	return words, address, nil
}

// ErrNoTerminal: a passphrase was to be asked for, but neither standard input nor the
// process's controlling terminal (/dev/tty) is a terminal to ask on.
var ErrNoTerminal = errors.New("no terminal to ask for it on")

// ReadPassphrase reads a passphrase from s: the file s.Path (all of it, as ReadSecret; "-"
// reads the first line of standard input), else s.Env, else a prompt without echo on standard input
// when it is a terminal, else on the controlling terminal (/dev/tty), so that a command
// whose standard input holds something else (a mnemonic) still asks, as ssh and sudo do.
// With no terminal the error matches ErrNoTerminal and carries s.Hint. When confirm is not
// "" and the passphrase was typed on a terminal, it is asked for again with that prompt and
// the two must match. The passphrase is trimmed of surrounding white space.
func (s SecretSource) ReadPassphrase(confirm string) (string, error) {
	switch {
	case s.Path == "-":
		return ReadLine(s.in())
	case s.Path != "":
		raw, err := readSecretFile(s.Path)
		if err != nil {
			return "", fmt.Errorf("read passphrase: %w", err)
		}
		return strings.TrimSpace(raw), nil
	case s.Env != "":
		if v, ok := os.LookupEnv(s.Env); ok {
			return strings.TrimSpace(v), nil
		}
	}
	ask := func(prompt string) (string, error) {
		if tty, ok := s.inTerminal(); ok {
			return promptOn(tty, os.Stderr, prompt)
		}
		tty, err := os.OpenFile("/dev/tty", os.O_RDWR, 0)
		if err != nil {
			return "", s.noTerminal()
		}
		defer tty.Close()
		if !IsTerminal(tty) {
			return "", s.noTerminal()
		}
		return promptOn(tty, tty, prompt)
	}
	p, err := ask(s.Prompt)
	if err != nil || confirm == "" {
		return p, err
	}
	again, err := ask(confirm)
	if err != nil {
		return "", err
	}
	if again != p {
		return "", errors.New("the passphrases differ")
	}
	return p, nil
}

func (s SecretSource) noTerminal() error {
	hint := s.Hint
	if hint == "" && s.Env != "" {
		hint = "set " + s.Env
	}
	if hint != "" {
		hint = ": " + hint
	}
	return fmt.Errorf("no passphrase given and %w (standard input is not a terminal and there is no /dev/tty)%s", ErrNoTerminal, hint)
}

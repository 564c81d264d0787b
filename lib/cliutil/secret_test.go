package cliutil

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

const testWords = "legal winner thank year wave sausage worth useful legal winner thank yellow"

func TestParseMnemonic(t *testing.T) {
	for in, want := range map[string][2]string{
		testWords: {testWords, ""},
		"\n  legal winner\tthank year wave sausage worth useful legal winner thank yellow \n": {testWords, ""},
		`{"mnemonic": "` + testWords + `", "address": "tcoin1xyz"}` + "\n":                    {testWords, "tcoin1xyz"},
		`{"mnemonic": "` + testWords + `", "address": "coin1a", "wallet_dir": "/w"}`:          {testWords, "coin1a"},
	} {
		w, a, err := ParseMnemonic(in)
		if err != nil || w != want[0] || a != want[1] {
			t.Errorf("ParseMnemonic(%q) = %q, %q, %v; want %q", in, w, a, err, want)
		}
	}
	// Errors never quote the input.
	for _, in := range []string{"", "  \n", `{"mnemonic": "legal winner`, `{"address": "legal"}`, `{"mnemonic": 5, "x": "legal"}`, `{legal}`} {
		_, _, err := ParseMnemonic(in)
		if err == nil || strings.Contains(err.Error(), "legal") {
			t.Errorf("ParseMnemonic(%q): %v", in, err)
		}
	}
}

// The file 'coin-wallet new > wallet.json' wrote is a mnemonic like the bare words.
func TestReadMnemonic(t *testing.T) {
	dir := t.TempDir()
	js := filepath.Join(dir, "wallet.json")
	os.WriteFile(js, []byte("{\n  \"mnemonic\": \""+testWords+"\",\n  \"address\": \"tcoin1q\"\n}\n"), 0o600)
	plain := filepath.Join(dir, "m.txt")
	os.WriteFile(plain, []byte(testWords+"\n"), 0o600)
	for _, f := range []string{js, plain} {
		if m, err := ReadMnemonic(f, "", ""); err != nil || m != testWords {
			t.Errorf("ReadMnemonic(%s) = %q, %v", f, m, err)
		}
	}
	w, a, err := SecretSource{Path: "-", In: strings.NewReader(`{"mnemonic":"` + testWords + `","address":"tcoin1q"}`)}.ReadMnemonic()
	if err != nil || w != testWords || a != "tcoin1q" {
		t.Errorf("from stdin: %q %q %v", w, a, err)
	}
	t.Setenv("COIN_TEST_MNEMONIC", " "+testWords+" ")
	if w, _, err := (SecretSource{Env: "COIN_TEST_MNEMONIC", In: strings.NewReader("")}).ReadMnemonic(); err != nil || w != testWords {
		t.Errorf("from env: %q %v", w, err)
	}
	// The file wins over the variable; a missing file is an error naming it.
	if _, _, err := (SecretSource{Path: filepath.Join(dir, "none"), Env: "COIN_TEST_MNEMONIC"}).ReadMnemonic(); err == nil || !strings.Contains(err.Error(), "none") {
		t.Errorf("missing file: %v", err)
	}
	bad := filepath.Join(dir, "bad.json")
	os.WriteFile(bad, []byte(`{"mnemonic": "`+testWords), 0o600)
	if _, _, err := (SecretSource{Path: bad}).ReadMnemonic(); err == nil || strings.Contains(err.Error(), "legal") || !strings.Contains(err.Error(), bad) {
		t.Errorf("bad JSON file: %v", err)
	}
	if _, _, err := (SecretSource{Path: "-", In: strings.NewReader(" \n"), Hint: "use --mnemonic-file"}).ReadMnemonic(); err == nil ||
		!strings.Contains(err.Error(), "--mnemonic-file") {
		t.Errorf("empty stdin: %v", err)
	}
	big := filepath.Join(dir, "big")
	os.WriteFile(big, make([]byte, maxSecretBytes+1), 0o600)
	if _, err := ReadMnemonic(big, "", ""); err == nil {
		t.Error("a 64 KiB file read as a mnemonic")
	}
}

func TestReadPassphrase(t *testing.T) {
	f := filepath.Join(t.TempDir(), "pass")
	os.WriteFile(f, []byte("  hunter2 \n"), 0o600)
	t.Setenv("COIN_TEST_PASS", "from-env")
	// The file first (all of it, trimmed, as ReadSecret), then the variable; standard input
	// holds something else and is not read.
	in := strings.NewReader(testWords)
	if p, err := (SecretSource{Path: f, Env: "COIN_TEST_PASS", In: in}).ReadPassphrase("again: "); err != nil || p != "hunter2" {
		t.Errorf("file: %q %v", p, err)
	}
	if p, err := (SecretSource{Env: "COIN_TEST_PASS", In: in}).ReadPassphrase("again: "); err != nil || p != "from-env" {
		t.Errorf("env: %q %v", p, err)
	}
	if p, err := (SecretSource{Path: "-", In: strings.NewReader("line one\nline two\n")}).ReadPassphrase(""); err != nil || p != "line one" {
		t.Errorf("stdin: %q %v", p, err)
	}
	if in.Len() != len(testWords) {
		t.Error("standard input was read")
	}
	// No file, no variable, standard input not a terminal: /dev/tty, or a clear error.
	if tty, err := os.OpenFile("/dev/tty", os.O_RDWR, 0); err == nil {
		tty.Close()
		t.Skip("this test has a controlling terminal")
	}
	_, err := SecretSource{Env: "COIN_TEST_UNSET", In: strings.NewReader(testWords), Hint: "give --passphrase-file FILE"}.ReadPassphrase("")
	if !errors.Is(err, ErrNoTerminal) || !strings.Contains(err.Error(), "--passphrase-file") {
		t.Errorf("no terminal: %v", err)
	}
}

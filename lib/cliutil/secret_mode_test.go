package cliutil

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A mnemonic or passphrase file that others can read is refused, with the chmod to run and
// never the secret; 0600 files, and pipes, are read.
func TestSecretFileModeRefused(t *testing.T) {
	dir := t.TempDir()
	for _, mode := range []os.FileMode{0o644, 0o640, 0o604, 0o660} {
		f := filepath.Join(dir, "secret")
		os.Remove(f)
		if err := os.WriteFile(f, []byte(testWords+"\n"), 0o600); err != nil {
			t.Fatal(err)
		}
		os.Chmod(f, mode)
		_, err := ReadMnemonic(f, "", "")
		if !errors.Is(err, ErrSecretFileMode) || !strings.Contains(err.Error(), "chmod 600 "+f) || strings.Contains(err.Error(), "legal winner") {
			t.Fatalf("mnemonic file mode %04o: %v", mode, err)
		}
		_, err = SecretSource{Path: f}.ReadPassphrase("")
		if !errors.Is(err, ErrSecretFileMode) {
			t.Fatalf("passphrase file mode %04o: %v", mode, err)
		}
		os.Chmod(f, 0o600)
		if _, err := ReadMnemonic(f, "", ""); err != nil {
			t.Fatalf("mode 0600: %v", err)
		}
	}
}

// A new passphrase shorter than MinPassphraseChars gets a warning that says why.
func TestShortPassphraseWarning(t *testing.T) {
	if w := ShortPassphraseWarning("x"); !strings.Contains(w, "1 character") || !strings.Contains(w, "offline") {
		t.Fatalf("1 character: %q", w)
	}
	if w := ShortPassphraseWarning("correct horse"); w != "" {
		t.Fatalf("long passphrase: %q", w)
	}
}

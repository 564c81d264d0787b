package main

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cointoolkit/coin/lib/cliutil"
)

// The secret-file rule (docs/security.md): a 0644 --passphrase-file is refused, as a loose
// wallet directory is; a one-character passphrase for a new wallet is accepted with a
// warning that says why it is weak.
func TestPassphraseFileRuleAndLength(t *testing.T) {
	dir := t.TempDir()
	pass := filepath.Join(dir, "pass")
	if err := os.WriteFile(pass, []byte("correct horse battery\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	os.Chmod(pass, 0o644)
	_, err := runApp(t, mnemonic, "--network", "regtest", "--wallet-dir", filepath.Join(dir, "w1"), "--passphrase-file", pass, "restore")
	if !errors.Is(err, cliutil.ErrSecretFileMode) || !strings.Contains(err.Error(), "chmod 600") {
		t.Fatalf("restore with a 0644 passphrase file: %v", err)
	}
	if _, err := os.Stat(filepath.Join(dir, "w1")); err == nil {
		t.Fatal("the refused restore created the wallet")
	}

	short := filepath.Join(dir, "short")
	if err := os.WriteFile(short, []byte("x\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	out, err := runApp(t, mnemonic, "--network", "regtest", "--wallet-dir", filepath.Join(dir, "w2"), "--passphrase-file", short, "restore")
	if err != nil || !strings.Contains(out, "warning: the passphrase has 1 character") {
		t.Fatalf("restore with a 1-character passphrase: %v\n%s", err, out)
	}
}

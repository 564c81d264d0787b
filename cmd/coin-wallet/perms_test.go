package main

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cointoolkit/coin/lib/wallet"
)

func modeOf(t *testing.T, path string) os.FileMode {
	t.Helper()
	st, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	return st.Mode().Perm()
}

// TestWalletFileModes: a wallet created at the default location leaves ~/.coin,
// ~/.coin/regtest and the wallet directory 0700 and the wallet's files 0600; a loosened
// ~/.coin is set back to 0700 with a note; a loosened wallet directory is refused with the
// chmod to run.
func TestWalletFileModes(t *testing.T) {
	home := t.TempDir()
	t.Setenv("HOME", home)
	pass := filepath.Join(t.TempDir(), "pass")
	os.WriteFile(pass, []byte("secret\n"), 0o600)
	base := []string{"--network", "regtest", "--passphrase-file", pass}
	if _, err := runApp(t, mnemonic, append(base, "restore")...); err != nil {
		t.Fatal(err)
	}
	coinDir := filepath.Join(home, ".coin")
	wdir := filepath.Join(coinDir, "regtest", "wallet")
	for _, d := range []string{coinDir, filepath.Dir(wdir), wdir} {
		if m := modeOf(t, d); m != 0o700 {
			t.Fatalf("%s has mode %04o, want 0700", d, m)
		}
	}
	ents, _ := os.ReadDir(wdir)
	for _, e := range ents {
		if m := modeOf(t, filepath.Join(wdir, e.Name())); m != 0o600 {
			t.Fatalf("wallet file %s has mode %04o, want 0600", e.Name(), m)
		}
	}

	os.Chmod(coinDir, 0o755)
	out, err := runApp(t, "", append(base, "address")...)
	if err != nil || !strings.Contains(out, "note: ~/.coin was mode 0755") || modeOf(t, coinDir) != 0o700 {
		t.Fatalf("address with a loose ~/.coin: %q, %v, mode %04o", out, err, modeOf(t, coinDir))
	}

	os.Chmod(wdir, 0o755)
	_, err = runApp(t, "", append(base, "address")...)
	if !errors.Is(err, wallet.ErrPermissions) || !strings.Contains(err.Error(), "chmod 700 "+wdir) {
		t.Fatalf("address with a loose wallet directory: %v", err)
	}
}

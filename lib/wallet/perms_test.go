package wallet

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cointoolkit/coin/lib/params"
)

// checkModes fails unless dir is 0700 and every file in it 0600.
func checkModes(t *testing.T, dir string) {
	t.Helper()
	st, err := os.Stat(dir)
	if err != nil {
		t.Fatal(err)
	}
	if m := st.Mode().Perm(); m != DirMode {
		t.Fatalf("wallet directory mode %04o, want 0700", m)
	}
	ents, _ := os.ReadDir(dir)
	if len(ents) == 0 {
		t.Fatal("no files in the wallet directory")
	}
	for _, e := range ents {
		info, _ := e.Info()
		if m := info.Mode().Perm(); m != FileMode {
			t.Fatalf("%s has mode %04o, want 0600", e.Name(), m)
		}
	}
}

// TestStoreModes: a new wallet's directory is 0700 and its files (the encrypted seed's
// LevelDB tables and logs) 0600, also with a permissive umask and after the store wrote
// more; a loosened file is tightened at the next open; a loosened directory is refused
// with ErrPermissions and a message saying what to do.
func TestStoreModes(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "nested", "wallet")
	s, err := Create(dir, params.Regtest, 0, testSeed(t), "pass", testKDF)
	if err != nil {
		t.Fatal(err)
	}
	checkModes(t, dir)
	if st, _ := os.Stat(filepath.Dir(dir)); st.Mode().Perm() != DirMode {
		t.Fatalf("a parent created for the wallet has mode %04o", st.Mode().Perm())
	}
	ring, err := s.Unlock("pass")
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 3; i++ {
		if _, err := s.NewAddress(ring); err != nil {
			t.Fatal(err)
		}
	}
	ring.Wipe()
	s.Close()
	checkModes(t, dir)

	// A file loosened (or left 0644 by an older version): tightened at open.
	ents, _ := os.ReadDir(dir)
	loose := filepath.Join(dir, ents[0].Name())
	if err := os.Chmod(loose, 0o644); err != nil {
		t.Fatal(err)
	}
	s, err = Open(dir, params.Regtest)
	if err != nil {
		t.Fatal(err)
	}
	checkModes(t, dir)
	s.Close()

	// The directory loosened: refused, for Open and Create alike, with the fix named.
	for _, mode := range []os.FileMode{0o755, 0o750, 0o701} {
		if err := os.Chmod(dir, mode); err != nil {
			t.Fatal(err)
		}
		_, err = Open(dir, params.Regtest)
		if !errors.Is(err, ErrPermissions) || !strings.Contains(err.Error(), "chmod 700 "+dir) {
			t.Fatalf("open with mode %04o: %v", mode, err)
		}
		if _, err := Create(dir, params.Regtest, 0, testSeed(t), "pass", testKDF); !errors.Is(err, ErrPermissions) {
			t.Fatalf("create in a directory of mode %04o: %v", mode, err)
		}
	}
	os.Chmod(dir, 0o700)
	s, err = Open(dir, params.Regtest)
	if err != nil {
		t.Fatalf("open after chmod 700: %v", err)
	}
	s.Close()

	// An existing empty directory (mkdir with the usual umask) is made private by Create.
	empty := filepath.Join(t.TempDir(), "made-by-mkdir")
	if err := os.Mkdir(empty, 0o755); err != nil {
		t.Fatal(err)
	}
	os.Chmod(empty, 0o755)
	s, err = Create(empty, params.Regtest, 0, testSeed(t), "pass", testKDF)
	if err != nil {
		t.Fatal(err)
	}
	s.Close()
	checkModes(t, empty)
}

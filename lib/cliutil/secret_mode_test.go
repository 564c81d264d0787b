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

// The group exception (a Kubernetes Secret, a Debian ssl-cert key): a root-owned file that
// its group may only read passes for a non-root member of that group, and nothing else does.
func TestSecretModeRootGroupRead(t *testing.T) {
	member := func() (int, []int) { return 10001, []int{10001, 2000} }
	stranger := func() (int, []int) { return 10001, []int{10001} }
	root := func() (int, []int) { return 0, []int{0, 2000} }
	cases := []struct {
		perm     os.FileMode
		uid, gid int
		known    bool
		ids      func() (int, []int)
		ok       bool
	}{
		{0o600, 10001, 10001, true, member, true},
		{0o400, 0, 2000, true, member, true},
		{0o440, 0, 2000, true, member, true}, // Kubernetes: defaultMode 0440 with fsGroup 2000
		{0o640, 0, 2000, true, member, true},
		{0o440, 0, 2000, true, stranger, false}, // not in the file's group
		{0o440, 0, 2000, true, root, false},     // root reads its own file: owner-only
		{0o440, 10001, 2000, true, member, false},
		{0o460, 0, 2000, true, member, false}, // group may write
		{0o444, 0, 2000, true, member, false}, // others may read
		{0o450, 0, 2000, true, member, false},
		{0o440, 0, 2000, false, member, false}, // owner unknown
	}
	for _, c := range cases {
		if got := secretModeOK(c.perm, c.uid, c.gid, c.known, c.ids); got != c.ok {
			t.Errorf("mode %04o owner %d:%d known %v: ok=%v, want %v", c.perm, c.uid, c.gid, c.known, got, c.ok)
		}
	}
}

package wallet

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
)

// File modes (protocol §4): the wallet directory holds the encrypted seed, its salt and nonce.
// goleveldb creates its directory 0755 and its files 0644, so the store makes the directory
// itself with mode 0700 (Create also tightens an existing empty directory), refuses to open
// one that others can read or enter, and sets the
// files inside to 0600 when it opens and closes the store (goleveldb keeps creating files
// 0644; the 0700 directory keeps others out of them meanwhile).
//
// Why refuse rather than fix the directory: while it was open to others the ciphertext may
// have been copied and attacked offline at leisure; the owner must know that before deciding
// to keep the wallet (as OpenSSH refuses a private key that others can read). Files inside a
// 0700 directory were out of reach anyway, so tightening them is safe to do silently.

// ErrPermissions: the wallet directory can be read or entered by other users.
var ErrPermissions = errors.New("the wallet directory is accessible to other users")

// DirMode and FileMode are the modes of the wallet directory and of its files.
const (
	DirMode  fs.FileMode = 0o700
	FileMode fs.FileMode = 0o600
)

// checkDirPrivate fails with ErrPermissions when dir grants group or others any access.
// A missing dir is no error (the caller reports it).
func checkDirPrivate(dir string) error {
	st, err := os.Stat(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	if m := st.Mode().Perm(); m&0o077 != 0 {
		return fmt.Errorf("%w: %s has mode %04o; run 'chmod 700 %s' (the encrypted seed may have been copied while it was "+
			"open: if other users could reach it, consider moving the funds to a new wallet)", ErrPermissions, dir, m, dir)
	}
	return nil
}

// makePrivateDir creates dir (and missing parents) with DirMode for a new wallet. An
// existing empty directory is set to DirMode (nothing secret was in it yet); one that holds
// files must already be private (checkDirPrivate).
func makePrivateDir(dir string) error {
	if err := os.MkdirAll(dir, DirMode); err != nil {
		return err
	}
	if ents, err := os.ReadDir(dir); err == nil && len(ents) == 0 {
		if err := os.Chmod(dir, DirMode); err != nil {
			return err
		}
	}
	return checkDirPrivate(dir)
}

// tightenFiles sets every regular file in dir that grants group or others access to
// FileMode. It returns how many it changed.
func tightenFiles(dir string) (int, error) {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return 0, err
	}
	n := 0
	var errs []error
	for _, e := range ents {
		if !e.Type().IsRegular() {
			continue
		}
		info, err := e.Info()
		if err != nil {
			continue // removed meanwhile
		}
		if info.Mode().Perm()&0o077 != 0 {
			if err := os.Chmod(filepath.Join(dir, e.Name()), FileMode); err != nil && !errors.Is(err, fs.ErrNotExist) {
				errs = append(errs, err)
				continue
			}
			n++
		}
	}
	return n, errors.Join(errs...)
}

package main

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
)

// privateTree makes the default location's directories private: ~/.coin and
// ~/.coin/<network> are created 0700 (with create: for a new wallet), and set to 0700 when
// looser, with a note on w. They hold only directories (the wallet's, the node's), so
// tightening them takes nothing from anyone; the wallet directory itself is checked by
// lib/wallet, which refuses a loose one. Without create a missing directory is left
// missing: a command reading a wallet creates nothing.
func privateTree(w io.Writer, create bool, home string, dirs ...string) error {
	for _, d := range dirs {
		if create {
			if err := os.MkdirAll(d, 0o700); err != nil {
				return err
			}
		}
		st, err := os.Stat(d)
		if !create && errors.Is(err, fs.ErrNotExist) {
			return nil
		}
		if err != nil {
			return err
		}
		if m := st.Mode().Perm(); m&0o077 != 0 {
			if err := os.Chmod(d, 0o700); err != nil {
				return err
			}
			rel, _ := filepath.Rel(home, d)
			fmt.Fprintf(w, "note: ~/%s was mode %04o (readable by other users); set to 0700\n", rel, m)
		}
	}
	return nil
}

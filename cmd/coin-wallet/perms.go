package main

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
)

// privateTree makes the default location's directories private: ~/.coin and
// ~/.coin/<network> are created 0700, and set to 0700 when looser, with a note on w. They
// hold only directories (the wallet's, the node's), so tightening them takes nothing from
// anyone; the wallet directory itself is checked by lib/wallet, which refuses a loose one.
func privateTree(w io.Writer, home string, dirs ...string) error {
	for _, d := range dirs {
		if err := os.MkdirAll(d, 0o700); err != nil {
			return err
		}
		st, err := os.Stat(d)
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

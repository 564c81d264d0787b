// Package atomicfile writes a small file whole or not at all: the mempool's mempool.dat, the
// address manager's peers.json, the ban list's banlist.json.
package atomicfile

import (
	"os"
	"path/filepath"
)

// Write writes data to path through a synced temporary file in the same directory renamed
// over it, with mode 0600, so a reader or a crash sees the old file or the new one, never a
// part. The directory is synced after the rename where the system allows it.
func Write(path string, data []byte) error {
	dir := filepath.Dir(path)
	tmp, err := os.CreateTemp(dir, "."+filepath.Base(path)+".tmp-*")
	if err != nil {
		return err
	}
	name := tmp.Name()
	ok := false
	defer func() {
		if !ok {
			tmp.Close()
			os.Remove(name)
		}
	}()
	// CreateTemp makes the file 0600 already; keep it so whatever the umask.
	if err := tmp.Chmod(0o600); err != nil {
		return err
	}
	if _, err := tmp.Write(data); err != nil {
		return err
	}
	if err := tmp.Sync(); err != nil {
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	if err := os.Rename(name, path); err != nil {
		return err
	}
	ok = true
	if d, err := os.Open(dir); err == nil {
		d.Sync() // the rename itself; best effort where directories cannot be synced
		d.Close()
	}
	return nil
}

package node

import (
	"errors"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
)

// File modes: the data directory, db/ and db/blocks/ are 0700 and their files 0600. The node fixes
// looser modes, logging a warning, rather than refusing to start: nothing in it is secret
// (the chain is public; peers.json, mempool.dat and node.log only say whom the node talks
// to and what it relays), so stopping an existing node over it would cost more than it
// protects. goleveldb creates its files 0644; the node sets them to 0600 at start and at a
// clean stop (the 0700 directories keep others out of them meanwhile). A wallet directory
// is refused instead (lib/wallet perms.go): it holds the encrypted seed.

const (
	dataDirMode  fs.FileMode = 0o700
	dataFileMode fs.FileMode = 0o600
)

// privateDataDir creates dataDir with mode 0700 when missing and tightens it (and db/,
// and the files of both) when looser, with a warning for what was not the node's own doing.
func privateDataDir(dataDir string, log *slog.Logger) error {
	if err := os.MkdirAll(dataDir, dataDirMode); err != nil {
		return err
	}
	for _, dir := range privateDirs(dataDir) {
		st, err := os.Stat(dir)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return err
		}
		if m := st.Mode().Perm(); m&0o077 != 0 {
			if err := os.Chmod(dir, dataDirMode); err != nil {
				return err
			}
			log.Warn("data directory was accessible to other users; set to 0700", "dir", dir, "was", m.String())
		}
	}
	tightenDataFiles(dataDir, log)
	return nil
}

// privateDirs are the data directory, the chain database's and its block files'.
func privateDirs(dataDir string) []string {
	db := filepath.Join(dataDir, "db")
	return []string{dataDir, db, filepath.Join(db, "blocks")}
}

// tightenDataFiles sets the files of the data directory, db/ and db/blocks/ that others could
// read to 0600. goleveldb's own files (created 0644) are changed silently; others are logged.
func tightenDataFiles(dataDir string, log *slog.Logger) {
	db := filepath.Join(dataDir, "db")
	for _, dir := range privateDirs(dataDir) {
		ents, err := os.ReadDir(dir)
		if err != nil {
			continue
		}
		for _, e := range ents {
			info, err := e.Info()
			if err != nil || !e.Type().IsRegular() || info.Mode().Perm()&0o077 == 0 {
				continue
			}
			path := filepath.Join(dir, e.Name())
			if err := os.Chmod(path, dataFileMode); err != nil {
				log.Warn("cannot make a data file private", "file", path, "err", err)
				continue
			}
			if dir != db {
				log.Warn("data file was readable by other users; set to 0600", "file", path, "was", info.Mode().Perm().String())
			}
		}
	}
}

// Package dblock tells, by the error's kind, that a LevelDB database could not be opened
// because another opener holds it: the chain state, the wallet, the faucet's claim and
// event stores each answer that with their own "in use" error, and decide it here once.
package dblock

import (
	"errors"
	"syscall"

	"github.com/syndtr/goleveldb/leveldb/storage"
)

// Held reports whether err, from leveldb.OpenFile, says the database is held: by another
// process (goleveldb's flock on the directory's LOCK file fails with EWOULDBLOCK, which is
// EAGAIN on Linux) or by this one through the same storage (storage.ErrLocked). The error's
// text is not read.
func Held(err error) bool {
	return errors.Is(err, storage.ErrLocked) || errors.Is(err, syscall.EWOULDBLOCK) || errors.Is(err, syscall.EAGAIN)
}

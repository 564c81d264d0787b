package chainstate

import (
	"errors"
	"log/slog"
	"sync"

	"github.com/cointoolkit/coin/lib/blockfile"
	lerrors "github.com/syndtr/goleveldb/leveldb/errors"
	"github.com/syndtr/goleveldb/leveldb/storage"
)

// Storage corruption is logged where it is found (docs/security.md): a flipped LevelDB block
// was found only when a read met it (an RPC answered -32603 "checksum mismatch") and was
// never logged, so the operator learnt of it from a client, if at all. storageErr, the one
// place that wraps the database's and the block files' errors, passes each corruption here:
// the first one of each operation and file is logged at error level with both, and the
// repeats of it are counted, not logged, so a client that keeps asking does not flood the
// log.

// corruption is where corruption is logged (SetCorruptionLog; slog.Default until then) and
// which corruptions were.
var corruption struct {
	mu     sync.Mutex
	log    *slog.Logger
	seen   map[string]int // op and file → times found
	logged int            // distinct corruptions logged
}

// maxCorruptionKeys bounds the distinct corruptions remembered (and logged).
const maxCorruptionKeys = 256

// SetCorruptionLog sets the logger of storage corruption (coin-node: its node log).
func SetCorruptionLog(l *slog.Logger) {
	corruption.mu.Lock()
	defer corruption.mu.Unlock()
	corruption.log = l
}

// isCorruption reports whether err says stored bytes are not what was written: goleveldb's
// checksum and structure errors, or a block file record that fails its header or checksum.
func isCorruption(err error) (file string, ok bool) {
	var dbErr *lerrors.ErrCorrupted
	var stErr *storage.ErrCorrupted
	switch {
	case errors.As(err, &dbErr):
		return dbErr.Fd.String(), true
	case errors.As(err, &stErr):
		return stErr.Fd.String(), true
	case errors.Is(err, blockfile.ErrCorrupt):
		return "block files", true
	}
	return "", false
}

// noteCorruption logs err, found by op, if it is corruption not logged before.
func noteCorruption(op string, err error) {
	file, ok := isCorruption(err)
	if !ok {
		return
	}
	corruption.mu.Lock()
	defer corruption.mu.Unlock()
	if corruption.seen == nil {
		corruption.seen = map[string]int{}
	}
	key := op + "\x00" + file
	if n, ok := corruption.seen[key]; ok || len(corruption.seen) >= maxCorruptionKeys {
		if ok {
			corruption.seen[key] = n + 1
		}
		return
	}
	corruption.seen[key] = 1
	corruption.logged++
	l := corruption.log
	if l == nil {
		l = slog.Default()
	}
	l.Error("storage corruption: stored data does not match what was written; restore the data directory from a backup "+
		"or resynchronise into a fresh --data-dir", "op", op, "file", file, "err", err)
}

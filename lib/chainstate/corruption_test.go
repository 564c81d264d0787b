package chainstate

import (
	"bytes"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"testing"

	"github.com/cointoolkit/coin/lib/blockfile"
	lerrors "github.com/syndtr/goleveldb/leveldb/errors"
	"github.com/syndtr/goleveldb/leveldb/storage"
)

// Corruption found by a read is logged once, with the operation and the file; repeats are
// counted, not logged; other errors are not logged. Before, a flipped LevelDB block reached
// an RPC client as "checksum mismatch" and the node's log said nothing.
func TestCorruptionLoggedOnce(t *testing.T) {
	var buf bytes.Buffer
	freshCorruptionRecord(t)
	SetCorruptionLog(slog.New(slog.NewTextHandler(&buf, nil)))
	t.Cleanup(func() { SetCorruptionLog(nil) })
	table := &lerrors.ErrCorrupted{Fd: storage.FileDesc{Type: storage.TypeTable, Num: 42}, Err: errors.New("checksum mismatch")}
	for range 3 {
		_ = storageErr("read conduct", fmt.Errorf("get: %w", table))
	}
	_ = storageErr("read block 00ab", fmt.Errorf("%w (blk00000.dat)", blockfile.ErrChecksum))
	_ = storageErr("read block 00ab", errors.New("disk full"))
	out := buf.String()
	if n := strings.Count(out, "storage corruption"); n != 2 {
		t.Fatalf("%d corruption records, want 2 (one per corruption):\n%s", n, out)
	}
	if !strings.Contains(out, "op=\"read conduct\"") || !strings.Contains(out, "00042.ldb") || !strings.Contains(out, "checksum") {
		t.Fatalf("the record lacks its context:\n%s", out)
	}
	if strings.Contains(out, "disk full") {
		t.Fatalf("a non-corruption error was logged as corruption:\n%s", out)
	}
}

// freshCorruptionRecord starts t with no corruption seen, as a new process does, and puts
// back what the process had seen when t ends: the record is process-wide, and another test
// (or another run of this one under -count) may have filled it.
func freshCorruptionRecord(t *testing.T) {
	corruption.mu.Lock()
	seen, logged := corruption.seen, corruption.logged
	corruption.seen, corruption.logged = nil, 0
	corruption.mu.Unlock()
	t.Cleanup(func() {
		corruption.mu.Lock()
		corruption.seen, corruption.logged = seen, logged
		corruption.mu.Unlock()
	})
}

package chainstate

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/cointoolkit/coin/lib/blockfile"
	"github.com/cointoolkit/coin/lib/consensus"
	"github.com/cointoolkit/coin/lib/params"
	"github.com/syndtr/goleveldb/leveldb"
)

// toDatabaseLayout rewrites the closed database in dir as a version before the block files
// wrote it: each block's bytes under 'b' and its undo data under 'j', no positions, no file
// ends, no blocks directory.
func toDatabaseLayout(t *testing.T, dir string) {
	t.Helper()
	c, err := Open(context.Background(), dir, params.Regtest, Options{Now: crashClock, Values: consensus.NominalValue{}})
	if err != nil {
		t.Fatal(err)
	}
	batch := new(leveldb.Batch)
	for _, kind := range []struct {
		at, old byte
		s       *blockfile.Store
	}{{pfxBlockAt, pfxBlock, c.blk}, {pfxUndoAt, pfxUndo, c.rev}} {
		for k, v := range rawTable(t, c, kind.at) {
			p, err := blockfile.DecodePos([]byte(v))
			if err != nil {
				t.Fatal(err)
			}
			raw, err := kind.s.Read(p)
			if err != nil {
				t.Fatal(err)
			}
			batch.Delete([]byte(k))
			old := []byte(k)
			old[0] = kind.old
			batch.Put(old, raw)
		}
	}
	batch.Delete([]byte(keyBlkEnd))
	batch.Delete([]byte(keyRevEnd))
	if err := c.db.Write(batch, nil); err != nil {
		t.Fatal(err)
	}
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	if err := os.RemoveAll(filepath.Join(dir, "blocks")); err != nil {
		t.Fatal(err)
	}
}

// TestBlockFilesAcrossTheUpgrade: a database whose blocks and undo data an older version
// kept in LevelDB opens; its blocks read back as they were stored, its blocks disconnect
// from their undo data there, and connecting them again puts their undo data in the rev
// files, with every table as a chain that always had the files. Small files (4 KiB) make
// the chain span many of each.
func TestBlockFilesAcrossTheUpgrade(t *testing.T) {
	defer func(n int64) { blockFileMax = n }(blockFileMax)
	blockFileMax = 4 << 10
	opts := Options{Now: crashClock, Values: consensus.NominalValue{}}
	ref, _ := workedChain(t, 5, 120)
	oldDir := t.TempDir()
	old, err := Open(context.Background(), oldDir, params.Regtest, opts)
	if err != nil {
		t.Fatal(err)
	}
	replayMain(t, ref, old)
	if err := old.Close(); err != nil {
		t.Fatal(err)
	}
	if files, _ := filepath.Glob(filepath.Join(oldDir, "blocks", "blk*.dat")); len(files) < 5 {
		t.Fatalf("%d blk files of 4 KiB for 120 blocks", len(files))
	}
	toDatabaseLayout(t, oldDir)
	if old, err = Open(context.Background(), oldDir, params.Regtest, opts); err != nil {
		t.Fatal(err)
	}
	defer old.Close()
	if n := len(rawTable(t, old, pfxBlock)); n != 121 {
		t.Fatalf("%d blocks in the database after the rewrite, want 121", n)
	}
	for h := uint64(0); h <= ref.Tip().Height; h++ {
		a, err1 := ref.BlockBytes(ref.NodeAt(h).Hash)
		b, err2 := old.BlockBytes(old.NodeAt(h).Hash)
		if err1 != nil || err2 != nil || !bytes.Equal(a, b) {
			t.Fatalf("block %d: %v %v", h, err1, err2)
		}
	}
	checkInvariants(t, old)
	for i := range 15 {
		disconnectAndWrite(t, i, ref, old)
		sameState(t, fmt.Sprintf("after %d disconnects (the second chain upgraded)", i+1), ref, old)
	}
	if n := len(rawTable(t, old, pfxUndo)); n != 120-15 {
		t.Fatalf("%d undo records in the database after 15 disconnects, want %d", n, 120-15)
	}
	for _, c := range []*Chain{ref, old} {
		c.mu.Lock()
		err := c.activateBestChain(context.Background(), new(Result), nil)
		if err == nil {
			err = c.flushLocked()
		}
		c.mu.Unlock()
		if err != nil {
			t.Fatal(err)
		}
	}
	sameState(t, "connected again (the second chain upgraded)", ref, old)
	if n := len(rawTable(t, old, pfxUndoAt)); n != 15 {
		t.Fatalf("%d undo positions after connecting 15 blocks again, want 15", n)
	}
	checkInvariants(t, old)
}

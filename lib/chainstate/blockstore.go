package chainstate

import (
	"errors"
	"path/filepath"

	"github.com/cointoolkit/coin/lib/blockfile"
	"github.com/cointoolkit/coin/lib/types"
	"github.com/syndtr/goleveldb/leveldb"
)

// Blocks and their undo data live in flat files beside the database (lib/blockfile), in
// <dir>/blocks/blkNNNNN.dat and revNNNNN.dat: they are written once and read rarely, and in
// LevelDB every one of their bytes was copied again by each compaction of its level while the
// database grew (half the scale sync's compaction work; docs/chain.md, "Scale"). The database
// keeps where each record is ('B' for a block, 'U' for undo data) and the end of each kind of
// file ("Fb", "Fr"), written in the same batch as the state that refers to them, after the
// append; Open cuts the files back to those ends, so a crash between the append and the batch
// leaves nothing behind. Databases written before keep their blocks ('b') and undo data ('j',
// 'r') where they are, and those are read there.

// blockFileMax is the size of a block or undo file (tests make it small).
var blockFileMax int64 = blockfile.DefaultMaxFileSize

var (
	blkMagic = [4]byte{'c', 'b', 'l', 'k'}
	revMagic = [4]byte{'c', 'r', 'e', 'v'}
)

// openBlockFiles opens the blk and rev files at the ends the database records.
func (c *Chain) openBlockFiles(dir string) error {
	dir = filepath.Join(dir, "blocks")
	var err error
	if c.blk, err = c.openStore(dir, "blk", keyBlkEnd, blkMagic); err == nil {
		c.rev, err = c.openStore(dir, "rev", keyRevEnd, revMagic)
	}
	if err != nil {
		c.closeBlockFiles()
	}
	return err
}

// openStore opens one kind of file at the end the database records under key (none yet: an
// empty store).
func (c *Chain) openStore(dir, name, key string, magic [4]byte) (*blockfile.Store, error) {
	var end blockfile.End
	raw, err := c.db.Get([]byte(key), nil)
	if err == nil {
		end, err = blockfile.DecodeEnd(raw)
	}
	if err != nil && !errors.Is(err, leveldb.ErrNotFound) {
		return nil, storageErr("read "+name+" files' end", err)
	}
	s, err := blockfile.Open(dir, name, magic, blockFileMax, end)
	return s, storageErr("open "+name+" files", err)
}

// closeBlockFiles closes the block and undo files that are open.
func (c *Chain) closeBlockFiles() {
	for _, s := range []*blockfile.Store{c.blk, c.rev} {
		if s != nil {
			s.Close()
		}
	}
}

// storeBlock appends a block's bytes to the blk files and puts its position and the files'
// new end in batch; with Options.Sync the files are synced first, so the batch never refers
// to bytes a power loss can take.
func (c *Chain) storeBlock(batch *leveldb.Batch, h types.Hash, raw []byte) error {
	p, err := c.blk.Append(raw)
	if err == nil && c.opts.Sync {
		err = c.blk.Sync()
	}
	if err != nil {
		return storageErr("store block", err)
	}
	batch.Put(hashKey(pfxBlockAt, h), p.Bytes())
	batch.Put([]byte(keyBlkEnd), c.blk.End().Bytes())
	return nil
}

// blockBytes reads a stored block's bytes: from the blk files, or from the database when an
// older version stored it.
func (c *Chain) blockBytes(h types.Hash) ([]byte, error) {
	raw, err := c.db.Get(hashKey(pfxBlockAt, h), nil)
	if errors.Is(err, leveldb.ErrNotFound) {
		raw, err = c.db.Get(hashKey(pfxBlock, h), nil)
		if errors.Is(err, leveldb.ErrNotFound) {
			return nil, ErrNotFound
		}
		return raw, storageErr("read block", err)
	}
	if err != nil {
		return nil, storageErr("read block", err)
	}
	p, err := blockfile.DecodePos(raw)
	if err == nil {
		raw, err = c.blk.Read(p)
	}
	return raw, storageErr("read block "+h.String(), err)
}

// storeUndo appends the undo data of the blocks wc connected (and did not disconnect again)
// to the rev files and puts their positions and the files' new end in batch, which must
// already hold the rest of wc (buildBatch); with Options.Sync the files are synced first. The
// puts come after the batch's deletes of the same keys, so a block disconnected and connected
// again keeps its new undo data.
func (c *Chain) storeUndo(wc *writeCache, batch *leveldb.Batch) error {
	for _, cb := range wc.blocks {
		if cb.undone {
			continue
		}
		p, err := c.rev.Append(cb.undo)
		if err != nil {
			return storageErr("store undo data", err)
		}
		batch.Put(hashKey(pfxUndoAt, cb.n.Hash), p.Bytes())
	}
	if c.opts.Sync {
		if err := c.rev.Sync(); err != nil {
			return storageErr("store undo data", err)
		}
	}
	batch.Put([]byte(keyRevEnd), c.rev.End().Bytes())
	return nil
}

// writeCacheBatch writes the batch buildBatch made of wc, with wc's undo data.
func (c *Chain) writeCacheBatch(wc *writeCache, batch *leveldb.Batch) error {
	if c.testWriteHook != nil {
		c.testWriteHook()
	}
	if err := c.storeUndo(wc, batch); err != nil {
		return err
	}
	return storageErr("write connected blocks", c.writeBatch(batch, c.wo))
}

// undoBytes reads the undo data of a block connected and written: from the rev files, or
// from the database (journal format 'j') when an older version wrote it. It returns the key
// that refers to it, for the write that disconnects the block to delete. Undo data in the
// format before the journal ('r') is the caller's (legacyUndo): then raw is nil and key is
// nil too.
func (c *Chain) undoBytes(h types.Hash) (raw, key []byte, err error) {
	key = hashKey(pfxUndoAt, h)
	raw, err = c.db.Get(key, nil)
	if err == nil {
		var p blockfile.Pos
		if p, err = blockfile.DecodePos(raw); err == nil {
			raw, err = c.rev.Read(p)
		}
		return raw, key, err
	}
	if !errors.Is(err, leveldb.ErrNotFound) {
		return nil, nil, err
	}
	key = hashKey(pfxUndo, h)
	raw, err = c.db.Get(key, nil)
	if errors.Is(err, leveldb.ErrNotFound) {
		return nil, nil, nil
	}
	return raw, key, err
}

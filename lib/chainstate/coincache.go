package chainstate

import (
	"github.com/VictoriaMetrics/fastcache"
	"github.com/syndtr/goleveldb/leveldb"
	"github.com/syndtr/goleveldb/leveldb/opt"
)

// The coin cache keeps unspent outputs the database holds in memory, across writes of the
// write cache, as Bitcoin Core's coins cache (-dbcache) does: a block's inputs are then read
// from memory instead of from goleveldb, where each read of an output that is no longer in
// the in-memory table walks every level-0 table and one table a level, and costs about ten
// times a read from memory once the UTXO set outgrows the block cache.
//
// It is correct by construction: every write to the database goes through writeBatch, which
// replays the batch it wrote into the cache (an output put is stored with the very bytes the
// database took, an output deleted is dropped), so the cache never holds a value the database
// does not. Only a write that succeeded is replayed. A read that misses it (never cached, or
// evicted) reads the database, as before. Reads look in the write cache and the pending
// write first (cache.go, bgwrite.go): an output they hold is newer than the database's, and
// every output a write stores is in the write cache it came from until the write has
// ended and been replayed.
//
// The entries live outside the Go heap (fastcache allocates them with mmap), so the cache is
// neither scanned by the garbage collector nor counted in its heap goal, and it costs the
// process exactly its bound in RSS: at GOGC=100 a Go map of the same entries would cost
// twice its size. When full, each of its 512 buckets overwrites its oldest entries.

// DefaultCoinCacheMiB is the coin cache's default size: about 1.3 million outputs (an
// entry takes its key and value, about 120 bytes, and the space of outputs spent since it
// was stored is reused only when its bucket wraps).
const DefaultCoinCacheMiB = 160

// coinCache is the cache of stored outputs; a nil fc is a cache that holds nothing.
type coinCache struct{ fc *fastcache.Cache }

func newCoinCache(mib int) coinCache {
	if mib <= 0 {
		return coinCache{}
	}
	return coinCache{fastcache.New(mib << 20)}
}

// get is the stored value of the output key ('u' ‖ outpoint), if the cache holds it.
func (cc coinCache) get(key []byte) ([]byte, bool) {
	if cc.fc == nil || key[0] != pfxUtxo {
		return nil, false
	}
	return cc.fc.HasGet(nil, key)
}

// Put and Delete take a written batch's records (leveldb.BatchReplay).
func (cc coinCache) Put(key, value []byte) {
	if len(key) == utxoKeyLen && key[0] == pfxUtxo {
		cc.fc.Set(key, value)
	}
}

func (cc coinCache) Delete(key []byte) {
	if len(key) == utxoKeyLen && key[0] == pfxUtxo {
		cc.fc.Del(key)
	}
}

// release gives the cache's memory back (to fastcache's pool of chunks).
func (cc coinCache) release() {
	if cc.fc != nil {
		cc.fc.Reset()
	}
}

// utxoKeyLen is the length of an output's key: the prefix and the outpoint.
const utxoKeyLen = 37

// writeBatch writes b to the database and, once it is written, into the coin cache. Every
// write of the chain database goes through it.
func (c *Chain) writeBatch(b *leveldb.Batch, wo *opt.WriteOptions) error {
	if err := c.db.Write(b, wo); err != nil {
		return err
	}
	if c.coins.fc != nil {
		// Replay fails only on a malformed batch, which Write has just refused.
		_ = b.Replay(c.coins)
	}
	return nil
}

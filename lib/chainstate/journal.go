package chainstate

import (
	"encoding/binary"
	"errors"
	"fmt"

	"github.com/cointoolkit/coin/lib/bincode"
	"github.com/syndtr/goleveldb/leveldb"
)

// The keyed state journal. Every kind of consensus state the chain keeps beside the blocks
// (UTXOs, clusters, the transaction and height indexes, the stats, and later agents and
// contracts) is a table: a one-byte key prefix and a codec for its values. Connecting a block
// stages keyed puts and deletes in a blockJournal; committing it applies them to the write
// cache and records, for every key the block touched, the value it had before the block
// (absent or the old value). That record is the block's undo data, so disconnecting a block
// writes each touched key's previous value back, whatever the table: no kind of state has a
// hand-written inverse (btcd's spend journal, generalised beyond UTXOs).
//
// Adding a kind of state: declare a table (prefix, encode, decode; an index function if the
// table needs a secondary index derived from its values), register it in tables, and stage
// its changes in connect. Writes, bulk-mode caching, crash safety and reorgs come with it.

// table is the untyped face of a tableOf, for the write cache and the undo data.
type table interface {
	prefix() byte
	keySize() int
	encodeAny(w *bincode.Writer, v any)
	decodeAny(r *bincode.Reader) any
	// indexKeyAny appends v's key in the table's secondary index to dst; ok is false when
	// the table has no index.
	indexKeyAny(dst []byte, key string, v any) (out []byte, ok bool)
	// indexBare tells whether index entries have no value (see tableOf.bareIndex).
	indexBare() bool
}

// tableOf is one kind of journaled state with values of type V.
type tableOf[V any] struct {
	name   string
	pfx    byte
	keyLen int // every key's length, prefix included
	encode func(w *bincode.Writer, v V)
	decode func(r *bincode.Reader) V
	// index, when set, derives a secondary index entry from a value: the write cache keeps
	// it in step with the table (same value bytes under the index key, or none when
	// bareIndex is set: a reader of the index then reads the table's record by its key).
	index     func(dst []byte, key string, v V) []byte
	bareIndex bool
}

func (t *tableOf[V]) keySize() int                       { return t.keyLen }
func (t *tableOf[V]) prefix() byte                       { return t.pfx }
func (t *tableOf[V]) encodeAny(w *bincode.Writer, v any) { t.encode(w, v.(V)) }
func (t *tableOf[V]) decodeAny(r *bincode.Reader) any    { return t.decode(r) }
func (t *tableOf[V]) indexBare() bool                    { return t.bareIndex }
func (t *tableOf[V]) indexKeyAny(dst []byte, key string, v any) ([]byte, bool) {
	if t.index == nil {
		return dst, false
	}
	return t.index(dst, key, v.(V)), true
}

// registry holds the tables by key prefix.
type registry [256]table

func newRegistry(ts ...table) *registry {
	r := new(registry)
	for _, t := range ts {
		if r[t.prefix()] != nil {
			panic(fmt.Sprintf("chainstate: two tables with prefix %q", t.prefix()))
		}
		r[t.prefix()] = t
	}
	return r
}

func (r *registry) of(key []byte) (table, error) {
	if len(key) == 0 || r[key[0]] == nil || len(key) != r[key[0]].keySize() {
		return nil, fmt.Errorf("no table for key %x", key)
	}
	return r[key[0]], nil
}

// decodeValue decodes a stored value of key's table.
func decodeValue(key, raw []byte) (any, error) {
	t, err := tables.of(key)
	if err != nil {
		return nil, err
	}
	r := bincode.NewReader(raw)
	v := t.decodeAny(r)
	if err := r.Finish(); err != nil {
		return nil, fmt.Errorf("table %q: %w", key[0], err)
	}
	return v, nil
}

// journalOp is one staged change: the key (keys[from:to] of its journal) gets val (nil:
// deleted). fresh says the caller knows the key is absent before the block (a new output, a
// new transaction), so the previous value need not be read.
type journalOp struct {
	from, to int32
	val      any
	fresh    bool
}

// blockJournal stages the changes of one block. Nothing touches the chain until commit. The
// keys share one buffer, so staging allocates nothing per key.
type blockJournal struct {
	ops  []journalOp
	keys []byte
}

// newBlockJournal is a journal with room for n37 keys of 37 bytes (outputs), n33 of 33 (a
// prefix and a hash), n65 of 65 (a prefix and two hashes) and a few others.
func newBlockJournal(n37, n33, n65, others int) blockJournal {
	return blockJournal{ops: make([]journalOp, 0, n37+n33+n65+others),
		keys: make([]byte, 0, 37*n37+33*n33+65*n65+16*others)}
}

func (j *blockJournal) add(key []byte, v any, fresh bool) {
	from := int32(len(j.keys))
	j.keys = append(j.keys, key...)
	j.ops = append(j.ops, journalOp{from: from, to: int32(len(j.keys)), val: v, fresh: fresh})
}

func (j *blockJournal) put(key []byte, v any)    { j.add(key, v, false) }
func (j *blockJournal) insert(key []byte, v any) { j.add(key, v, true) }
func (j *blockJournal) del(key []byte)           { j.add(key, nil, false) }

func (j *blockJournal) key(op *journalOp) []byte { return j.keys[op.from:op.to] }

// commit applies the journal to the write cache and returns the block's undo data: every
// touched key with the value it had before the block. It first makes sure that every key it
// overwrites is in the cache, so that once it starts changing the cache it cannot fail.
func (c *Chain) commit(j *blockJournal) ([]byte, error) {
	wc := &c.wc
	for i := range j.ops {
		op := &j.ops[i]
		if _, err := tables.of(j.key(op)); err != nil {
			return nil, err
		}
		if op.fresh {
			continue
		}
		if _, err := c.slotLocked(j.key(op)); err != nil {
			return nil, err
		}
	}
	wc.gen++
	wc.dirty = true
	u := undoWriterFor(len(j.ops))
	for i := range j.ops {
		op := &j.ops[i]
		k := j.key(op)
		s := wc.slots[string(k)]
		if s == nil {
			// Fresh: nothing on disk and nothing cached.
			s = wc.newSlot(k)
			s.gen = wc.gen
			u.add(k, nil)
		} else if s.gen != wc.gen {
			s.gen = wc.gen
			u.add(k, s.val)
		}
		s.val = op.val
		s.dirty = true
	}
	return u.finish(), nil
}

// undo data: the touched keys with the value each had before the block. A record is one
// byte (the key's table prefix, with the high bit set when a previous value follows), the
// length of what the key's body (the key less its prefix) shares with the body of the key
// before it, the rest of the body, then the previous value's stored bytes. Comparing bodies
// across tables lets a transaction's index key share its txid with its outputs' keys.
type undoWriter struct {
	n    int
	last []byte
	val  *bincode.Writer // scratch for one value
	// body holds the records after undoHeaderRoom bytes kept free for the header, so that
	// finish writes the header in front of them instead of copying them.
	body *bincode.Writer
}

// undoHeaderRoom fits the header: the version and the record count.
const undoHeaderRoom = 1 + binary.MaxVarintLen64

func undoWriterFor(n int) *undoWriter {
	return &undoWriter{body: bincode.NewWriter(make([]byte, undoHeaderRoom, undoHeaderRoom+64*n)),
		val: bincode.NewWriter(nil)}
}

func (u *undoWriter) add(key []byte, prev any) {
	body := key[1:]
	shared := 0
	for shared < len(body) && shared < len(u.last) && body[shared] == u.last[shared] {
		shared++
	}
	if prev == nil {
		u.body.U8(key[0])
	} else {
		u.body.U8(key[0] | undoPresent)
	}
	u.body.Varint(uint64(shared))
	u.body.VarBytes(body[shared:])
	if prev != nil {
		u.val.Reset()
		tables[key[0]].encodeAny(u.val, prev)
		u.body.VarBytes(u.val.Bytes())
	}
	u.last = append(u.last[:0], body...)
	u.n++
}

// undoPresent marks an undo record whose key had a value before the block.
const undoPresent = 0x80

const (
	undoVersion = 1
	maxKeyLen   = 128
)

func (u *undoWriter) finish() []byte {
	var hdr [undoHeaderRoom]byte
	h := bincode.AppendVarint(append(hdr[:0], undoVersion), uint64(u.n))
	b := u.body.Bytes()
	start := undoHeaderRoom - len(h)
	copy(b[start:], h)
	return b[start:]
}

// undoRecord is one key of a block's undo data and its value before the block (nil: absent).
type undoRecord struct {
	key  string
	prev any
}

func decodeUndo(b []byte) ([]undoRecord, error) {
	r := bincode.NewReader(b)
	if v := r.U8(); v != undoVersion {
		if r.Err() != nil {
			return nil, r.Err()
		}
		return nil, fmt.Errorf("undo data version %d (want %d)", v, undoVersion)
	}
	n := r.Len(3)
	out := make([]undoRecord, 0, n)
	last := ""
	lastKey := ""
	for range n {
		head := r.U8()
		shared := int(r.Varint(maxKeyLen))
		sfx := r.VarBytes(maxKeyLen)
		if r.Err() != nil {
			return nil, r.Err()
		}
		// Strict: the shared part is the longest one, so every record list has one form.
		if shared > len(last) || (shared < len(last) && len(sfx) > 0 && sfx[0] == last[shared]) {
			return nil, errors.New("undo data: bad key prefix")
		}
		body := last[:shared] + string(sfx)
		key := string([]byte{head &^ undoPresent}) + body
		if _, err := tables.of([]byte(key)); err != nil {
			return nil, err
		}
		if key == lastKey {
			return nil, errors.New("undo data: a key twice")
		}
		rec := undoRecord{key: key}
		if head&undoPresent != 0 {
			raw := r.VarBytes(r.Remaining())
			if r.Err() != nil {
				return nil, r.Err()
			}
			v, err := decodeValue([]byte(key), raw)
			if err != nil {
				return nil, err
			}
			rec.prev = v
		}
		out = append(out, rec)
		last, lastKey = body, key
	}
	return out, r.Finish()
}

// slot is the cached state of one key since the last flush.
type slot struct {
	val  any // current value; nil when absent
	disk any // the value on disk (nil: absent), to keep secondary indexes in step
	// dirty: val differs from what is on disk (or may: it is written at the next flush).
	dirty bool
	// kept: disk came from the clean cache, which need not take it again at the next flush.
	kept bool
	gen  uint64 // the journal generation that last recorded this key in undo data
}

// newSlot adds an empty slot for key (absent on disk).
func (wc *writeCache) newSlot(key []byte) *slot {
	if len(wc.slab) == cap(wc.slab) {
		wc.slab = make([]slot, 0, 1024)
	}
	wc.slab = append(wc.slab, slot{})
	s := &wc.slab[len(wc.slab)-1]
	wc.slots[string(key)] = s
	wc.bytes += slotCacheCost + len(key)
	return s
}

// slotLocked is key's slot, read from the database into the cache when it is not there. The
// caller holds c.mu for writing.
func (c *Chain) slotLocked(key []byte) (*slot, error) {
	if s := c.wc.slots[string(key)]; s != nil {
		return s, nil
	}
	v, kept, err := c.belowCache(key)
	if err != nil {
		return nil, err
	}
	s := c.wc.newSlot(key)
	s.val, s.disk, s.kept = v, v, kept
	return s, nil
}

// belowCache is key's value under the write cache (nil: absent): what the pending write
// stores, else what the clean cache knows the database holds (kept), else the stored value
// (readDB).
func (c *Chain) belowCache(key []byte) (v any, kept bool, err error) {
	if p := c.pendingSlot(string(key)); p != nil {
		return p.val, false, nil
	}
	if v, ok := c.clean[string(key)]; ok {
		return v, true, nil
	}
	v, err = c.readDB(key)
	return v, false, err
}

// readDB reads key's stored value (nil when absent): from the coin cache when it holds the
// key (coincache.go), else from the database.
func (c *Chain) readDB(key []byte) (any, error) {
	raw, ok := c.coins.get(key)
	if !ok {
		var err error
		raw, err = c.db.Get(key, nil)
		if errors.Is(err, leveldb.ErrNotFound) {
			return nil, nil
		}
		if err != nil {
			return nil, storageErr("read", err)
		}
	}
	v, err := decodeValue(key, raw)
	return v, storageErr("decode", err)
}

// getLocked reads key through the write cache without changing it (the caller holds c.mu,
// for reading or writing).
func (c *Chain) getLocked(key []byte) (any, error) {
	if s := c.wc.slots[string(key)]; s != nil {
		return s.val, nil
	}
	v, _, err := c.belowCache(key)
	return v, err
}

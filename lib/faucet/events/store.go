package events

import (
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"sync"

	"github.com/syndtr/goleveldb/leveldb"
	"github.com/syndtr/goleveldb/leveldb/opt"
	"github.com/syndtr/goleveldb/leveldb/util"

	"github.com/cointoolkit/coin/lib/dblock"
)

// DefaultRetention is how many events the store keeps by default: the newest ones, so a
// subscriber can resume with Last-Event-ID after that many events at most.
const DefaultRetention = 100_000

// ErrStoreInUse is returned by OpenStore when another process holds the store.
var ErrStoreInUse = errors.New("the event store is in use by another process")

// Key prefixes: events by id, and the source's own records.
const (
	prefixEvent = 'e'
	prefixMeta  = 'm'
)

// Store is the event log: events by id (1, 2, …, never reused) in LevelDB, the newest
// Retention of them, and the source's records, written in the same synced batch as the
// events they go with, so a crash loses neither or both.
type Store struct {
	db   *leveldb.DB
	keep uint64

	mu          sync.Mutex
	first, last uint64 // ids held: first…last; first = last+1 when none
}

// OpenStore opens (creating it) the event store in dir, keeping the newest retention
// events (DefaultRetention when 0 or less).
func OpenStore(dir string, retention int) (*Store, error) {
	db, err := leveldb.OpenFile(dir, nil)
	if err != nil {
		if dblock.Held(err) {
			return nil, fmt.Errorf("%s: %w", dir, ErrStoreInUse)
		}
		return nil, fmt.Errorf("open event store %s: %w", dir, err)
	}
	if retention <= 0 {
		retention = DefaultRetention
	}
	s := &Store{db: db, keep: uint64(retention), first: 1}
	it := db.NewIterator(util.BytesPrefix([]byte{prefixEvent}), nil)
	if it.Last() {
		s.last = binary.BigEndian.Uint64(it.Key()[1:])
		it.First()
		s.first = binary.BigEndian.Uint64(it.Key()[1:])
	} else if v, err := db.Get(metaKey("last_id"), nil); err == nil && len(v) == 8 {
		// Every event pruned (retention 0 is impossible, but keep ids unique anyway).
		s.last = binary.BigEndian.Uint64(v)
		s.first = s.last + 1
	}
	it.Release()
	if err := it.Error(); err != nil {
		db.Close()
		return nil, fmt.Errorf("read event store: %w", err)
	}
	return s, nil
}

// Close closes the store.
func (s *Store) Close() error { return s.db.Close() }

func eventKey(id uint64) []byte {
	k := make([]byte, 9)
	k[0] = prefixEvent
	binary.BigEndian.PutUint64(k[1:], id)
	return k
}

func metaKey(name string) []byte { return append([]byte{prefixMeta}, name...) }

// Bounds are the first and last ids held (first > last: none).
func (s *Store) Bounds() (first, last uint64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.first, s.last
}

// Append gives evs the next ids, writes them with meta (name → value; a nil value deletes
// the record) in one synced batch, drops the oldest events beyond the retention, and
// returns evs with their ids.
func (s *Store) Append(evs []Event, meta map[string][]byte) ([]Event, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	b := new(leveldb.Batch)
	id := s.last
	for i := range evs {
		id++
		evs[i].ID = id
		v, err := json.Marshal(&evs[i])
		if err != nil {
			return nil, err
		}
		b.Put(eventKey(id), v)
		evs[i].raw = v
	}
	for name, v := range meta {
		if v == nil {
			b.Delete(metaKey(name))
		} else {
			b.Put(metaKey(name), v)
		}
	}
	first := s.first
	for ; id >= s.keep && first <= id-s.keep; first++ {
		b.Delete(eventKey(first))
	}
	var idb [8]byte
	binary.BigEndian.PutUint64(idb[:], id)
	b.Put(metaKey("last_id"), idb[:])
	if err := s.db.Write(b, &opt.WriteOptions{Sync: true}); err != nil {
		return nil, fmt.Errorf("write events: %w", err)
	}
	s.last, s.first = id, first
	return evs, nil
}

// Range returns up to limit events with ids above after, oldest first.
func (s *Store) Range(after uint64, limit int) ([]Event, error) {
	it := s.db.NewIterator(&util.Range{Start: eventKey(after + 1), Limit: []byte{prefixEvent + 1}}, nil)
	defer it.Release()
	var out []Event
	for len(out) < limit && it.Next() {
		var e Event
		if err := json.Unmarshal(it.Value(), &e); err != nil {
			return nil, fmt.Errorf("event %x: %w", it.Key()[1:], err)
		}
		e.raw = append([]byte(nil), it.Value()...)
		out = append(out, e)
	}
	return out, it.Error()
}

// Get returns the event id, if the store still holds it.
func (s *Store) Get(id uint64) (Event, bool, error) {
	v, err := s.db.Get(eventKey(id), nil)
	if errors.Is(err, leveldb.ErrNotFound) {
		return Event{}, false, nil
	}
	if err != nil {
		return Event{}, false, err
	}
	var e Event
	return e, true, json.Unmarshal(v, &e)
}

// Meta returns the record name written by Append (nil, nil when absent).
func (s *Store) Meta(name string) ([]byte, error) {
	v, err := s.db.Get(metaKey(name), nil)
	if errors.Is(err, leveldb.ErrNotFound) {
		return nil, nil
	}
	return v, err
}

// Package blockfile stores records (blocks, undo data) appended to numbered flat files, as
// Bitcoin Core keeps its blk?????.dat and rev?????.dat files beside its LevelDB databases.
//
// A record is written once and read by its position; it is never rewritten. Keeping the blocks
// and their undo data out of the chain's LevelDB keeps the database to the state that changes
// (UTXO set, indexes), which LevelDB compacts again and again as it grows: stored there, every
// block was copied through its levels for nothing.
//
// A record on disk is an 8-byte header (a 4-byte magic naming the store, the payload length,
// little-endian) and the payload. Its position (Pos) names the file, the header's offset and the
// payload length; Read checks the header against it, so a position that points at other bytes
// fails with ErrCorrupt instead of returning them.
//
// Records version 2 (written since the storage-corruption finding of docs/security.md) carry a
// checksum: the length field's top bit is set (a payload is under 2 GiB, so version 1 records
// never set it) and the CRC-32C (Castagnoli) of the payload follows the header, before the
// payload. Read verifies it, so a flipped bit in a stored block is ErrChecksum, not a different
// block served silently; version 1 records, which have no checksum, are still read as they
// are.
//
// # Crash safety
//
// The store does not decide which records exist: its owner does, by recording each record's
// Pos and the store's End in the same atomic database write that makes them part of its
// state, after the append. Open takes that End and cuts off whatever was appended after it
// (records of a write that never happened), so the files hold exactly what the owner's
// database refers to, plus the records it has since stopped referring to. With Sync (power
// loss, not only a killed process) the owner calls Sync between the append and its write.
package blockfile

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
)

// headerLen is a record's header: magic and payload length (top bit: version 2).
const headerLen = 8

// Version 2 records: the flag in the length field and the checksum after the header.
const (
	v2Flag   = 1 << 31
	crcLen   = 4
	v2Header = headerLen + crcLen
)

// castagnoli is CRC-32C's table (hardware-accelerated on amd64 and arm64).
var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// DefaultMaxFileSize is the size past which appends go to a new file (Bitcoin Core's, 128 MiB).
const DefaultMaxFileSize = 128 << 20

// ErrCorrupt is a position that does not point at a record of the store: its header is not
// there, names another store or another length, or the file is shorter.
var ErrCorrupt = errors.New("block file: no record at position")

// ErrChecksum is a version 2 record whose payload does not match its checksum: the bytes on
// disk changed after they were written. It matches ErrCorrupt too.
var ErrChecksum = fmt.Errorf("%w: the record's checksum does not match its payload", ErrCorrupt)

// Pos is where a record is: its file's number, its header's offset in the file and its payload
// length.
type Pos struct {
	File, Off, Len uint32
}

// PosLen is the length of an encoded Pos.
const PosLen = 12

// Bytes encodes p in PosLen bytes.
func (p Pos) Bytes() []byte {
	b := make([]byte, PosLen)
	binary.BigEndian.PutUint32(b, p.File)
	binary.BigEndian.PutUint32(b[4:], p.Off)
	binary.BigEndian.PutUint32(b[8:], p.Len)
	return b
}

// DecodePos decodes what Pos.Bytes encoded.
func DecodePos(b []byte) (Pos, error) {
	if len(b) != PosLen {
		return Pos{}, fmt.Errorf("block file position: %d bytes, want %d", len(b), PosLen)
	}
	return Pos{binary.BigEndian.Uint32(b), binary.BigEndian.Uint32(b[4:]), binary.BigEndian.Uint32(b[8:])}, nil
}

// End is the end of a store's last record: the last file's number and its size. The zero End
// is an empty store.
type End struct {
	File, Size uint32
}

// Bytes encodes e in 8 bytes.
func (e End) Bytes() []byte {
	b := make([]byte, 8)
	binary.BigEndian.PutUint32(b, e.File)
	binary.BigEndian.PutUint32(b[4:], e.Size)
	return b
}

// DecodeEnd decodes what End.Bytes encoded.
func DecodeEnd(b []byte) (End, error) {
	if len(b) != 8 {
		return End{}, fmt.Errorf("block file end: %d bytes, want 8", len(b))
	}
	return End{binary.BigEndian.Uint32(b), binary.BigEndian.Uint32(b[4:])}, nil
}

// Store is one kind of record in the files dir/<name>NNNNN.dat. Append and Sync are for one
// writer at a time; Read may run beside them.
type Store struct {
	dir, name string
	magic     [4]byte
	max       int64

	mu   sync.Mutex
	cur  *os.File // the last file, open for appending
	end  End
	done bool
}

// Open opens the store's files in dir (created 0700 if missing) and cuts them back to end:
// the last file to end.Size bytes, the files after it removed. max is the size past which
// appends start a new file (0: DefaultMaxFileSize).
func Open(dir, name string, magic [4]byte, max int64, end End) (*Store, error) {
	if max <= 0 {
		max = DefaultMaxFileSize
	}
	if max > 1<<31 {
		return nil, fmt.Errorf("block file: maximum size %d over 2 GiB", max)
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, err
	}
	s := &Store{dir: dir, name: name, magic: magic, max: max, end: end}
	nums, err := s.files()
	if err != nil {
		return nil, err
	}
	for _, n := range nums {
		if n > end.File {
			if err := os.Remove(s.path(n)); err != nil {
				return nil, err
			}
		}
	}
	f, err := os.OpenFile(s.path(end.File), os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, err
	}
	st, err := f.Stat()
	if err == nil && st.Size() < int64(end.Size) {
		err = fmt.Errorf("%w: %s holds %d bytes, the database refers to %d", ErrCorrupt, f.Name(), st.Size(), end.Size)
	}
	if err == nil && st.Size() > int64(end.Size) {
		err = f.Truncate(int64(end.Size))
	}
	if err == nil {
		_, err = f.Seek(int64(end.Size), io.SeekStart)
	}
	if err != nil {
		f.Close()
		return nil, err
	}
	s.cur = f
	return s, nil
}

func (s *Store) path(n uint32) string {
	return filepath.Join(s.dir, fmt.Sprintf("%s%05d.dat", s.name, n))
}

// files lists the numbers of the store's files in dir.
func (s *Store) files() ([]uint32, error) {
	ents, err := os.ReadDir(s.dir)
	if err != nil {
		return nil, err
	}
	var nums []uint32
	for _, e := range ents {
		rest, ok := strings.CutPrefix(e.Name(), s.name)
		if !ok || !strings.HasSuffix(rest, ".dat") {
			continue
		}
		n, err := strconv.ParseUint(strings.TrimSuffix(rest, ".dat"), 10, 32)
		if err != nil {
			continue
		}
		nums = append(nums, uint32(n))
	}
	sort.Slice(nums, func(i, j int) bool { return nums[i] < nums[j] })
	return nums, nil
}

// Append writes a record and returns its position. Nothing refers to it until the owner
// records the position (and End) in its database.
func (s *Store) Append(payload []byte) (Pos, error) {
	if int64(len(payload)) > s.max-v2Header {
		return Pos{}, fmt.Errorf("block file: record of %d bytes over the file size %d", len(payload), s.max)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.done {
		return Pos{}, os.ErrClosed
	}
	if int64(s.end.Size)+v2Header+int64(len(payload)) > s.max {
		if err := s.next(); err != nil {
			return Pos{}, err
		}
	}
	rec := make([]byte, v2Header+len(payload))
	copy(rec, s.magic[:])
	binary.LittleEndian.PutUint32(rec[4:], uint32(len(payload))|v2Flag)
	binary.LittleEndian.PutUint32(rec[headerLen:], crc32.Checksum(payload, castagnoli))
	copy(rec[v2Header:], payload)
	p := Pos{File: s.end.File, Off: s.end.Size, Len: uint32(len(payload))}
	if _, err := s.cur.Write(rec); err != nil {
		// A short write leaves bytes past end; put the offset back so the next record starts
		// at the end the store knows (Open would cut them off too).
		if _, serr := s.cur.Seek(int64(s.end.Size), io.SeekStart); serr != nil {
			s.done = true
		}
		return Pos{}, err
	}
	s.end.Size += uint32(len(rec))
	return p, nil
}

// next starts a new file after syncing the current one: a record in it is referred to only
// after this append, so the file it leaves must be complete first.
func (s *Store) next() error {
	if err := s.cur.Sync(); err != nil {
		return err
	}
	f, err := os.OpenFile(s.path(s.end.File+1), os.O_RDWR|os.O_CREATE|os.O_TRUNC, 0o600)
	if err != nil {
		return err
	}
	if d, err := os.Open(s.dir); err == nil { // the new file's name
		d.Sync()
		d.Close()
	}
	s.cur.Close()
	s.cur, s.end = f, End{File: s.end.File + 1}
	return nil
}

// End is the end of the last record appended.
func (s *Store) End() End {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.end
}

// Sync makes the records appended so far durable.
func (s *Store) Sync() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.done {
		return os.ErrClosed
	}
	return s.cur.Sync()
}

// Read returns the payload of the record at p, verifying its checksum (version 2 records;
// ErrChecksum when it does not match).
func (s *Store) Read(p Pos) ([]byte, error) {
	if int64(p.Len) > s.max-headerLen || p.Len >= v2Flag {
		return nil, fmt.Errorf("%w: a record of %d bytes is over the file size", ErrCorrupt, p.Len)
	}
	f, err := os.Open(s.path(p.File))
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return nil, fmt.Errorf("%w: %s%05d.dat is missing", ErrCorrupt, s.name, p.File)
		}
		return nil, err
	}
	defer f.Close()
	// One read of the version 2 size; a version 1 record (no checksum) is 4 bytes shorter,
	// and may end the file.
	buf := make([]byte, v2Header+int(p.Len))
	n, err := f.ReadAt(buf, int64(p.Off))
	if err != nil && !errors.Is(err, io.EOF) {
		return nil, err
	}
	if n < headerLen {
		return nil, fmt.Errorf("%w: %s%05d.dat ends before %d+%d", ErrCorrupt, s.name, p.File, p.Off, headerLen)
	}
	if [4]byte(buf[:4]) != s.magic {
		return nil, fmt.Errorf("%w: %s%05d.dat at %d", ErrCorrupt, s.name, p.File, p.Off)
	}
	switch l := binary.LittleEndian.Uint32(buf[4:]); {
	case l == p.Len: // version 1
		if n < headerLen+int(p.Len) {
			return nil, fmt.Errorf("%w: %s%05d.dat ends before %d+%d", ErrCorrupt, s.name, p.File, p.Off, headerLen+int(p.Len))
		}
		return buf[headerLen : headerLen+int(p.Len)], nil
	case l == p.Len|v2Flag:
		if n < len(buf) {
			return nil, fmt.Errorf("%w: %s%05d.dat ends before %d+%d", ErrCorrupt, s.name, p.File, p.Off, len(buf))
		}
		payload := buf[v2Header:]
		if crc32.Checksum(payload, castagnoli) != binary.LittleEndian.Uint32(buf[headerLen:]) {
			return nil, fmt.Errorf("%w (%s%05d.dat at %d, %d bytes)", ErrChecksum, s.name, p.File, p.Off, p.Len)
		}
		return payload, nil
	}
	return nil, fmt.Errorf("%w: %s%05d.dat at %d", ErrCorrupt, s.name, p.File, p.Off)
}

// Close closes the store.
func (s *Store) Close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.done {
		return nil
	}
	s.done = true
	return s.cur.Close()
}

package blockfile

import (
	"bytes"
	"encoding/binary"
	"errors"
	"os"
	"path/filepath"
	"testing"
)

// A flipped bit in a stored record's payload is ErrChecksum on read (it was served as it
// was before records carried a checksum); the record beside it still reads.
func TestReadVerifiesChecksum(t *testing.T) {
	dir := t.TempDir()
	s, err := Open(dir, "blk", testMagic, 0, End{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	p1, _ := s.Append(payload(1))
	p2, _ := s.Append(payload(2))
	if err := s.Sync(); err != nil {
		t.Fatal(err)
	}
	f, err := os.OpenFile(filepath.Join(dir, "blk00000.dat"), os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	var b [1]byte
	at := int64(p1.Off) + v2Header + 50
	f.ReadAt(b[:], at)
	b[0] ^= 0x04
	f.WriteAt(b[:], at)
	f.Close()
	if _, err := s.Read(p1); !errors.Is(err, ErrChecksum) || !errors.Is(err, ErrCorrupt) {
		t.Fatalf("flipped payload: %v, want ErrChecksum", err)
	}
	if got, err := s.Read(p2); err != nil || !bytes.Equal(got, payload(2)) {
		t.Fatalf("the next record: %v", err)
	}
}

// Files written before records carried a checksum (version 1: the header and the payload)
// are still read, and new records are appended after them with a checksum.
func TestReadsVersion1Records(t *testing.T) {
	dir := t.TempDir()
	var file []byte
	var old []Pos
	for i := range 3 {
		pl := payload(i)
		old = append(old, Pos{Off: uint32(len(file)), Len: uint32(len(pl))})
		file = append(file, testMagic[:]...)
		file = binary.LittleEndian.AppendUint32(file, uint32(len(pl)))
		file = append(file, pl...)
	}
	if err := os.WriteFile(filepath.Join(dir, "blk00000.dat"), file, 0o600); err != nil {
		t.Fatal(err)
	}
	s, err := Open(dir, "blk", testMagic, 0, End{Size: uint32(len(file))})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	p3, err := s.Append(payload(3))
	if err != nil {
		t.Fatal(err)
	}
	for i, p := range append(old, p3) {
		if got, err := s.Read(p); err != nil || !bytes.Equal(got, payload(i)) {
			t.Fatalf("record %d at %+v: %v", i, p, err)
		}
	}
	if s.End().Size != uint32(len(file))+v2Header+p3.Len {
		t.Fatalf("end %+v", s.End())
	}
}

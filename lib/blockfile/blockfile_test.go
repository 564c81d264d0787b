package blockfile

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"testing"
)

var testMagic = [4]byte{'t', 'e', 's', 't'}

func payload(i int) []byte { return bytes.Repeat([]byte{byte(i)}, 100+i*37%500) }

// TestAppendReadAcrossFiles appends records past several files' size, reads each back by its
// position, and again after reopening at the recorded End.
func TestAppendReadAcrossFiles(t *testing.T) {
	dir := t.TempDir()
	s, err := Open(dir, "blk", testMagic, 4096, End{})
	if err != nil {
		t.Fatal(err)
	}
	var pos []Pos
	for i := range 100 {
		p, err := s.Append(payload(i))
		if err != nil {
			t.Fatal(err)
		}
		pos = append(pos, p)
	}
	end := s.End()
	if end.File < 8 {
		t.Fatalf("100 records of about 350 bytes in files of 4 KiB: end %+v", end)
	}
	check := func(s *Store) {
		t.Helper()
		for i, p := range pos {
			got, err := s.Read(p)
			if err != nil || !bytes.Equal(got, payload(i)) {
				t.Fatalf("record %d at %+v: %d bytes, %v", i, p, len(got), err)
			}
		}
	}
	check(s)
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	s, err = Open(dir, "blk", testMagic, 4096, end)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	check(s)
	if s.End() != end {
		t.Fatalf("reopened at %+v, want %+v", s.End(), end)
	}
}

// TestOpenCutsUnrecordedAppends: records appended after the End the owner recorded (a write
// that crashed before the database write) are cut off, files after End's removed, and the next
// append goes where they were.
func TestOpenCutsUnrecordedAppends(t *testing.T) {
	dir := t.TempDir()
	s, err := Open(dir, "rev", testMagic, 2048, End{})
	if err != nil {
		t.Fatal(err)
	}
	for i := range 3 {
		if _, err := s.Append(payload(i)); err != nil {
			t.Fatal(err)
		}
	}
	end := s.End()
	var lost []Pos
	for i := 3; i < 30; i++ {
		p, err := s.Append(payload(i))
		if err != nil {
			t.Fatal(err)
		}
		lost = append(lost, p)
	}
	s.Close() // as if killed: the database still says end
	if s, err = Open(dir, "rev", testMagic, 2048, end); err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if s.End() != end {
		t.Fatalf("end %+v, want %+v", s.End(), end)
	}
	for _, p := range lost {
		if _, err := s.Read(p); !errors.Is(err, ErrCorrupt) {
			t.Fatalf("a record past the recorded end read back: %+v %v", p, err)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, fmt.Sprintf("rev%05d.dat", end.File+1))); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("the file after the end was kept: %v", err)
	}
	p, err := s.Append([]byte("next"))
	if err != nil || p != (Pos{File: end.File, Off: end.Size, Len: 4}) {
		t.Fatalf("next append at %+v %v, want at %+v", p, err, end)
	}
}

// TestOpenRefusesShortFile: a file shorter than the database says lost records the database
// refers to; Open says so rather than appending over the gap.
func TestOpenRefusesShortFile(t *testing.T) {
	dir := t.TempDir()
	s, err := Open(dir, "blk", testMagic, 0, End{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Append(payload(1)); err != nil {
		t.Fatal(err)
	}
	end := s.End()
	s.Close()
	if err := os.Truncate(filepath.Join(dir, "blk00000.dat"), 10); err != nil {
		t.Fatal(err)
	}
	if _, err := Open(dir, "blk", testMagic, 0, end); !errors.Is(err, ErrCorrupt) {
		t.Fatalf("open of a short file: %v, want ErrCorrupt", err)
	}
}

// TestReadChecksTheHeader: a position whose header is not a record of this store and length
// fails with ErrCorrupt.
func TestReadChecksTheHeader(t *testing.T) {
	dir := t.TempDir()
	s, err := Open(dir, "blk", testMagic, 0, End{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	p, err := s.Append(payload(2))
	if err != nil {
		t.Fatal(err)
	}
	other, err := Open(dir, "blk", [4]byte{'o', 't', 'h', 'r'}, 0, s.End())
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	for name, q := range map[string]Pos{
		"other length": {p.File, p.Off, p.Len - 1},
		"inside":       {p.File, p.Off + 8, 10},
		"past the end": {p.File, p.Off + 1000, 1},
		"no file":      {p.File + 1, 0, 1},
		"huge":         {p.File, 0, 1 << 31},
	} {
		if _, err := s.Read(q); !errors.Is(err, ErrCorrupt) {
			t.Errorf("%s: %v, want ErrCorrupt", name, err)
		}
	}
	if _, err := other.Read(p); !errors.Is(err, ErrCorrupt) {
		t.Errorf("another store's magic: %v, want ErrCorrupt", err)
	}
}

func TestPosAndEndRoundTrip(t *testing.T) {
	p := Pos{File: 7, Off: 1 << 30, Len: 12345}
	if q, err := DecodePos(p.Bytes()); err != nil || q != p {
		t.Fatalf("%+v -> %+v %v", p, q, err)
	}
	e := End{File: 3, Size: 99}
	if f, err := DecodeEnd(e.Bytes()); err != nil || f != e {
		t.Fatalf("%+v -> %+v %v", e, f, err)
	}
	if _, err := DecodePos(make([]byte, 11)); err == nil {
		t.Fatal("11-byte position decoded")
	}
	if _, err := DecodeEnd(make([]byte, 9)); err == nil {
		t.Fatal("9-byte end decoded")
	}
}

// FuzzRead: any file contents and any position either read back a payload whose header
// matched or fail; nothing panics, and a decoded position re-encodes to its bytes.
func FuzzRead(f *testing.F) {
	f.Add([]byte("test\x03\x00\x00\x00abc"), []byte{0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 3})
	f.Add([]byte{}, make([]byte, 12))
	f.Fuzz(func(t *testing.T, file, pos []byte) {
		dir := t.TempDir()
		if err := os.WriteFile(filepath.Join(dir, "blk00000.dat"), file, 0o600); err != nil {
			t.Fatal(err)
		}
		s, err := Open(dir, "blk", testMagic, 1<<20, End{Size: uint32(len(file))})
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		p, err := DecodePos(pos)
		if err != nil {
			return
		}
		if !bytes.Equal(p.Bytes(), pos) {
			t.Fatalf("%x decoded to %+v, which encodes to %x", pos, p, p.Bytes())
		}
		got, err := s.Read(p)
		if err != nil {
			return
		}
		if len(got) != int(p.Len) || !bytes.Equal(file[p.Off+8:p.Off+8+p.Len], got) {
			t.Fatalf("read %d bytes at %+v, not the file's", len(got), p)
		}
	})
}

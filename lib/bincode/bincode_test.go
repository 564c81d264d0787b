package bincode

import (
	"bytes"
	"encoding/hex"
	"errors"
	"math"
	"testing"
)

func TestVarintForms(t *testing.T) {
	cases := []struct {
		v   uint64
		hex string
	}{
		{0, "00"}, {1, "01"}, {250, "fa"}, {251, "fbfb00"}, {0xffff, "fbffff"},
		{0x10000, "fc00000100"}, {math.MaxUint32, "fcffffffff"},
		{math.MaxUint32 + 1, "fd0000000001000000"}, {math.MaxUint64, "fdffffffffffffffff"},
	}
	for _, c := range cases {
		got := hex.EncodeToString(AppendVarint(nil, c.v))
		if got != c.hex {
			t.Errorf("AppendVarint(%d) = %s, want %s", c.v, got, c.hex)
		}
		if VarintSize(c.v) != len(got)/2 {
			t.Errorf("VarintSize(%d) = %d, want %d", c.v, VarintSize(c.v), len(got)/2)
		}
		b, _ := hex.DecodeString(c.hex)
		r := NewReader(b)
		if v := r.U64(); v != c.v || r.Finish() != nil {
			t.Errorf("decode %s = %d, %v", c.hex, v, r.Finish())
		}
	}
}

func TestStrictDecoding(t *testing.T) {
	cases := []struct {
		name string
		hex  string
		read func(*Reader)
		want error
	}{
		{"non-minimal u16 marker", "fb0a00", func(r *Reader) { r.U64() }, ErrNonMinimal},
		{"non-minimal u16 marker at 250", "fbfa00", func(r *Reader) { r.U64() }, ErrNonMinimal},
		{"non-minimal u32 marker", "fcffff0000", func(r *Reader) { r.U64() }, ErrNonMinimal},
		{"non-minimal u64 marker", "fdffffffff00000000", func(r *Reader) { r.U64() }, ErrNonMinimal},
		{"u32 overflow", "fd0000000001000000", func(r *Reader) { r.U32() }, ErrOverflow},
		{"u16 overflow", "fc00000100", func(r *Reader) { r.U16() }, ErrOverflow},
		{"invalid marker", "fe", func(r *Reader) { r.U64() }, ErrInvalid},
		{"invalid marker ff", "ff", func(r *Reader) { r.U64() }, ErrInvalid},
		{"truncated varint", "fc0000", func(r *Reader) { r.U64() }, ErrTruncated},
		{"empty", "", func(r *Reader) { r.U8() }, ErrTruncated},
		{"bool 2", "02", func(r *Reader) { r.Bool() }, ErrBool},
		{"length bomb", "fdffffffffffffff7f", func(r *Reader) { r.Len(1) }, ErrLength},
		{"length beyond input", "0501020304", func(r *Reader) { r.VarBytes(100) }, ErrLength},
		{"bytes over max", "03010203", func(r *Reader) { r.VarBytes(2) }, ErrOverflow},
		{"trailing", "0100", func(r *Reader) { r.U8() }, ErrTrailing},
		{"raw truncated", "0102", func(r *Reader) { var a [3]byte; r.Raw(a[:]) }, ErrTruncated},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			b, _ := hex.DecodeString(c.hex)
			r := NewReader(b)
			c.read(r)
			if err := r.Finish(); !errors.Is(err, c.want) {
				t.Fatalf("got %v, want %v", err, c.want)
			}
		})
	}
}

func TestStickyError(t *testing.T) {
	r := NewReader([]byte{0xfb})
	if r.U64() != 0 || r.U8() != 0 || r.Bool() || r.Len(1) != 0 {
		t.Fatal("reads after an error must return zero values")
	}
	if !errors.Is(r.Err(), ErrTruncated) {
		t.Fatalf("err = %v", r.Err())
	}
}

func TestWriterRoundTrip(t *testing.T) {
	w := NewWriter(nil)
	w.U8(7)
	w.Bool(true)
	w.U16(300)
	w.U32(70000)
	w.U64(1 << 40)
	w.Raw([]byte{1, 2, 3})
	w.VarBytes([]byte("hello"))
	r := NewReader(w.Bytes())
	var raw [3]byte
	if r.U8() != 7 || !r.Bool() || r.U16() != 300 || r.U32() != 70000 || r.U64() != 1<<40 {
		t.Fatal("integers differ")
	}
	r.Raw(raw[:])
	if raw != [3]byte{1, 2, 3} || !bytes.Equal(r.VarBytes(10), []byte("hello")) {
		t.Fatal("bytes differ")
	}
	if err := r.Finish(); err != nil {
		t.Fatal(err)
	}
}

func FuzzVarint(f *testing.F) {
	f.Add([]byte{0xfb, 0x00, 0x01})
	f.Add([]byte{0xfd, 1, 2, 3, 4, 5, 6, 7, 8})
	f.Fuzz(func(t *testing.T, b []byte) {
		r := NewReader(b)
		v := r.U64()
		if r.Err() != nil {
			return
		}
		if enc := AppendVarint(nil, v); !bytes.Equal(enc, b[:r.Offset()]) {
			t.Fatalf("re-encoding %x gives %x", b[:r.Offset()], enc)
		}
	})
}

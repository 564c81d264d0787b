package types

import (
	"bytes"
	"runtime"
	"testing"
)

// allocBound fails when decode allocates more than a fixed multiple of the input's size:
// lengths are checked against the bytes left before anything is allocated, so a few bytes
// claiming a million inputs cost nothing. The factor is 32 because the densest input, a run of
// minimal 6-byte transactions, decodes into 96-byte structs plus a pointer each; the 64 KiB
// of slack absorbs what the fuzzing engine itself allocates meanwhile (the counter is
// process-wide), far below what a real allocation bomb costs.
func allocBound(t *testing.T, in []byte, decode func()) {
	t.Helper()
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	decode()
	runtime.ReadMemStats(&after)
	if got, limit := after.TotalAlloc-before.TotalAlloc, uint64(32*len(in)+64<<10); got > limit {
		t.Fatalf("decoding %d bytes allocated %d bytes (limit %d)", len(in), got, limit)
	}
}

// Each decoder: no panic, no allocation beyond the input (bounded by bincode.Reader.Len),
// and whatever decodes re-encodes to the same bytes.

func FuzzDecodeTransaction(f *testing.F) {
	f.Add(sampleTx().Bytes())
	f.Add(sampleBlock().Transactions[0].Bytes())
	// Allocation bombs: a huge input count, a huge payload length.
	f.Add([]byte{1, 1, 0xfd, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x0f})
	f.Add([]byte{1, 1, 0, 0, 0, 0xfc, 0xff, 0xff, 0xff, 0x7f})
	f.Fuzz(func(t *testing.T, b []byte) {
		allocBound(t, b, func() { DecodeTransaction(b) })
		tx, err := DecodeTransaction(b)
		if err != nil {
			return
		}
		if !bytes.Equal(tx.Bytes(), b) {
			t.Fatalf("re-encoding differs")
		}
		if tx.SerializeSize() != len(b) {
			t.Fatalf("SerializeSize %d != %d", tx.SerializeSize(), len(b))
		}
	})
}

func FuzzDecodeBlock(f *testing.F) {
	f.Add(sampleBlock().Bytes())
	f.Fuzz(func(t *testing.T, b []byte) {
		allocBound(t, b, func() { DecodeBlock(b) })
		blk, err := DecodeBlock(b)
		if err != nil {
			return
		}
		if !bytes.Equal(blk.Bytes(), b) {
			t.Fatalf("re-encoding differs")
		}
	})
}

func FuzzDecodeHeader(f *testing.F) {
	h := sampleBlock().Header
	f.Add(h.Bytes())
	f.Fuzz(func(t *testing.T, b []byte) {
		allocBound(t, b, func() { DecodeHeader(b) })
		hd, err := DecodeHeader(b)
		if err != nil {
			return
		}
		if !bytes.Equal(hd.Bytes(), b) {
			t.Fatalf("re-encoding differs")
		}
		fixed := hd.FixedBytes()
		if HeaderFromFixed(&fixed) != *hd {
			t.Fatal("fixed layout round trip differs")
		}
	})
}

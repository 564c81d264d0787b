package types

import (
	"bytes"
	"testing"
)

// Each decoder: no panic, no allocation beyond the input (bounded by bincode.Reader.Len),
// and whatever decodes re-encodes to the same bytes.

func FuzzDecodeTransaction(f *testing.F) {
	f.Add(sampleTx().Bytes())
	f.Add(sampleBlock().Transactions[0].Bytes())
	f.Fuzz(func(t *testing.T, b []byte) {
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

package pow

import (
	"math/big"
	"testing"
)

var benchLimit = new(big.Int).Lsh(big.NewInt(0x0fffff), 8*(0x1e-3))

func BenchmarkHashMeetsTarget(b *testing.B) {
	target := TargetBytes(new(big.Int).Lsh(big.NewInt(0xffff), 8*(0x1d-3)))
	hashes := make([][32]byte, 256)
	for i := range hashes {
		hashes[i] = DoubleSHA256([]byte{byte(i)})
		if i%4 == 0 { // some near the target: equal prefix
			copy(hashes[i][:4], target[:4])
		}
	}
	b.ReportAllocs()
	n := 0
	for i := 0; b.Loop(); i++ {
		if HashMeetsTarget(&hashes[i&255], &target) {
			n++
		}
	}
	_ = n
}

func BenchmarkCheckProofOfWork(b *testing.B) {
	var hash [32]byte
	hash[5] = 1 // below 0x1d00ffff
	b.ReportAllocs()
	for b.Loop() {
		if err := CheckProofOfWork(hash, 0x1d00ffff, benchLimit); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkWork(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		if Work(0x1b0404cb).Sign() == 0 {
			b.Fatal("zero work")
		}
	}
}

func BenchmarkNextCompact(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		NextCompact(120, 0x1b0404cb, 10_000+5000, 10_000, benchLimit, true)
	}
}

package keys

import "testing"

func BenchmarkDecodeAddress(b *testing.B) {
	for b.Loop() {
		if _, err := DecodeAddress(goldenMainnetAddress, HRPMainnet); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkEncodeAddress(b *testing.B) {
	h := PubKeyHash{1, 2, 3}
	for b.Loop() {
		if _, err := EncodeAddress(HRPMainnet, h); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkDeriveAccountKey(b *testing.B) {
	seed := make([]byte, 64)
	for i := range seed {
		seed[i] = byte(i)
	}
	for b.Loop() {
		DeriveAccountKey(seed, CoinTypeMainnet, 0, 0)
	}
}

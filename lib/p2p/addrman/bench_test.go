package addrman

import (
	"testing"
	"time"
)

// fill adds addresses of many ranges from many sources until the tables are nearly full.
func fill(m *Manager, n int) {
	now := time.Now()
	for i := 0; i < n; i++ {
		a := addr(byte(1+i%220), byte(i/220), byte(i>>8), byte(i), 18333)
		m.Add(a, SourceAddr, addr(byte(1+i%97), byte(i%13), 1, 1, 1), now)
		if i%4 == 0 {
			m.Good(a, SourceOutbound)
		}
	}
}

// BenchmarkAdd is one learned address into a full table (the work of one address of an
// addr message).
func BenchmarkAdd(b *testing.B) {
	m := New(Config{})
	fill(m, 20_000)
	now := time.Now()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		m.Add(addr(byte(1+i%200), byte(i>>8), byte(i), 7, 18333), SourceAddr, addr(9, byte(i%50), 1, 1, 1), now)
	}
}

// BenchmarkCandidates is one draw of 16 outbound candidates from a full table (the connect
// loop's work when slots are free, at most every 250 ms).
func BenchmarkCandidates(b *testing.B) {
	m := New(Config{})
	fill(m, 20_000)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if len(m.Candidates(16, nil, nil)) != 16 {
			b.Fatal("short draw")
		}
	}
}

// BenchmarkSample is one getaddr answer (1,000 or 23%) from a full table.
func BenchmarkSample(b *testing.B) {
	m := New(Config{})
	fill(m, 20_000)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		m.Sample(1000, 23)
	}
}

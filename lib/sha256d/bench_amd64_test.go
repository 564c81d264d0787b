//go:build amd64 && !purego

package sha256d

import (
	"fmt"
	"testing"
)

// BenchmarkScanSHANI measures Scan with the SHA-NI kernel it picks
// (default) and with each stream count forced.
func BenchmarkScanSHANI(b *testing.B) {
	if !hasSHANI {
		b.Skip("no SHA extensions")
	}
	b.Run("default", func(b *testing.B) { benchScanWith(b, (*Scanner).Scan) })
	for _, w := range shaniWidths {
		b.Run(fmt.Sprintf("x%d", w), func(b *testing.B) {
			benchScanWith(b, func(s *Scanner, start, count uint64) (uint64, [32]byte, bool, uint64) {
				return s.scanSHANI(start, count, w)
			})
		})
	}
}

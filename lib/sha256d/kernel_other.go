//go:build !amd64 || purego

package sha256d

// Only the portable kernel exists on this architecture (or with -tags purego).

type archState struct{}

func (a *archState) init(*Scanner) {}

func haveAccel() bool { return false }

func accelName() string { return "portable" }

func (s *Scanner) scanAccel(start, count uint64) (nonce uint64, hash [32]byte, found bool, hashed uint64) {
	return s.scanPortable(start, count)
}

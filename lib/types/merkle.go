package types

import (
	"math/bits"

	"lukechampine.com/blake3"
)

// MerkleRoot is the RFC 6962 Merkle tree hash over the txids with BLAKE3:
// leaf = BLAKE3(0x00 ‖ txid), node = BLAKE3(0x01 ‖ left ‖ right), the list split at the
// largest power of two smaller than its length. The root of no txids is BLAKE3 of nothing.
func MerkleRoot(txids []Hash) Hash {
	if len(txids) == 0 {
		return blake3.Sum256(nil)
	}
	// Bottom-up over a scratch level; equivalent to the recursive definition because
	// RFC 6962's split keeps every left subtree complete.
	level := make([]Hash, len(txids))
	var buf [65]byte
	for i, id := range txids {
		buf[0] = 0
		copy(buf[1:33], id[:])
		level[i] = blake3.Sum256(buf[:33])
	}
	return reduce(level, &buf)
}

// reduce folds the leaves of a tree of n = len(level) nodes into its root.
func reduce(level []Hash, buf *[65]byte) Hash {
	n := len(level)
	if n == 1 {
		return level[0]
	}
	k := 1 << (bits.Len(uint(n-1)) - 1) // largest power of two < n
	left := reduce(level[:k], buf)
	right := reduce(level[k:], buf)
	buf[0] = 1
	copy(buf[1:33], left[:])
	copy(buf[33:], right[:])
	return blake3.Sum256(buf[:])
}

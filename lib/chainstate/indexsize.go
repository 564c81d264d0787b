package chainstate

import (
	"fmt"
	"slices"
	"unsafe"

	"github.com/cointoolkit/coin/lib/params"
)

// indexRecords is n index records of a main chain from net's genesis, as the database holds
// them.
func indexRecords(net *params.Network, n int) [][]byte {
	g := net.GenesisBlock()
	gn := &BlockNode{Hash: g.Hash(), Height: 0, status: StatusValid, size: uint32(g.SerializeSize()), txCount: 1}
	gn.setHeader(&g.Header)
	recs := [][]byte{indexRecord(gn)}
	prev := gn.Hash
	hd := g.Header
	for i := 1; i < n; i++ {
		hd.PrevHash = prev
		hd.Timestamp += 60
		hd.Nonce = uint64(i)
		hd.MerkleRoot[0], hd.MerkleRoot[1], hd.MerkleRoot[2] = byte(i), byte(i>>8), byte(i>>16)
		nd := &BlockNode{Height: uint64(i), status: StatusValid, seq: uint64(i), size: 250_000, txCount: 1000,
			Parent: &BlockNode{Hash: prev}}
		nd.setHeader(&hd)
		recs = append(recs, indexRecord(nd))
		prev = hd.Hash()
	}
	return recs
}

// loadIndex builds the block index from records the way load does and returns the chain
// holding it.
func loadIndex(net *params.Network, recs [][]byte) (*Chain, error) {
	c := &Chain{net: net, index: newNodeIndex(), tips: make(map[*BlockNode]struct{}), hdrs: make(map[*BlockNode]struct{})}
	if err := c.indexFrom(slices.Values(recs)); err != nil {
		return nil, err
	}
	last, _, err := decodeIndexRecord(recs[len(recs)-1])
	if err != nil {
		return nil, err
	}
	c.setMain(c.index.get(last.Hash))
	return c, nil
}

// IndexBytesPerBlock is the memory the in-memory block index of a main chain of n blocks on
// net takes, per block (n ≥ 2). The index is loaded from records made as the database holds
// them, the way Open loads it, and its parts are then counted (IndexBytes): a count, not a
// heap reading, so it does not move with whatever else the process allocates or frees
// meanwhile (a heap delta taken in the scale benchmark's process, while the sync's memory was
// being freed, once came out at -582 B). TestIndexBytesPerBlock bounds it and checks it
// against the heap growth of loading the index in a process that does nothing else; the
// scale benchmark reports it (docs/chain.md, "Scale").
func IndexBytesPerBlock(net *params.Network, n int) (float64, error) {
	if n < 2 {
		return 0, fmt.Errorf("IndexBytesPerBlock: %d blocks", n)
	}
	c, err := loadIndex(net, indexRecords(net, n))
	if err != nil {
		return 0, err
	}
	if len(c.main) != n || c.main[n-1].Height != uint64(n-1) {
		return 0, fmt.Errorf("main chain of %d blocks, want %d", len(c.main), n)
	}
	return float64(c.IndexBytes()) / float64(n), nil
}

// IndexBytes counts the memory of the chain's in-memory block index: each BlockNode's allocation
// (its size rounded up to the allocator's size class), the hash index's slot table and the
// main chain's slice, at their capacity. The tip and header-only sets hold a handful of
// entries and are left out.
func (c *Chain) IndexBytes() int64 {
	ptr := int64(unsafe.Sizeof((*BlockNode)(nil)))
	return int64(c.index.n)*nodeAllocBytes + int64(cap(c.index.slots))*ptr + int64(cap(c.main))*ptr
}

// nodeAllocBytes is what one BlockNode takes on the heap: its size rounded up to the Go
// allocator's size class (the classes below 512 bytes, runtime/sizeclasses.go; stable since
// Go 1.5 apart from 24 and 48 added long ago). TestIndexBytesPerBlock checks the count built on
// it against the heap.
var nodeAllocBytes = sizeClass(int64(unsafe.Sizeof(BlockNode{})))

func sizeClass(size int64) int64 {
	for _, c := range []int64{8, 16, 24, 32, 48, 64, 80, 96, 112, 128, 144, 160, 176, 192, 208, 224,
		240, 256, 288, 320, 352, 384, 416, 448, 480, 512} {
		if size <= c {
			return c
		}
	}
	return (size + 127) &^ 127 // not reached by BlockNode; close enough above 512
}

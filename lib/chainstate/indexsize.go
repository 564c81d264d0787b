package chainstate

import (
	"fmt"
	"runtime"
	"slices"

	"github.com/cointoolkit/coin/lib/params"
)

// indexRecords is n index records of a main chain from net's genesis, as the database holds
// them.
func indexRecords(net *params.Network, n int) [][]byte {
	g := net.GenesisBlock()
	gn := &Node{Hash: g.Hash(), Height: 0, Status: StatusValid, Size: uint32(g.SerializeSize()), TxCount: 1}
	gn.setHeader(&g.Header)
	recs := [][]byte{indexRecord(gn)}
	prev := gn.Hash
	hd := g.Header
	for i := 1; i < n; i++ {
		hd.PrevHash = prev
		hd.Timestamp += 60
		hd.Nonce = uint64(i)
		hd.MerkleRoot[0], hd.MerkleRoot[1], hd.MerkleRoot[2] = byte(i), byte(i>>8), byte(i>>16)
		nd := &Node{Height: uint64(i), Status: StatusValid, seq: uint64(i), Size: 250_000, TxCount: 1000,
			Parent: &Node{Hash: prev}}
		nd.setHeader(&hd)
		recs = append(recs, indexRecord(nd))
		prev = hd.Hash()
	}
	return recs
}

// loadIndex builds the block index from records the way load does and returns the chain
// holding it.
func loadIndex(net *params.Network, recs [][]byte) (*Chain, error) {
	c := &Chain{net: net, index: newNodeIndex(), tips: make(map[*Node]struct{}), hdrs: make(map[*Node]struct{})}
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

// IndexBytesPerBlock measures the heap the in-memory block index of a main chain of n blocks
// on net takes, per block (n ≥ 2): index records are made as the database holds them, then
// the index is loaded from them the way Open does, between two heap readings after a
// collection. TestIndexBytesPerBlock bounds it and the scale benchmark reports it
// (docs/chain.md, "Scale").
func IndexBytesPerBlock(net *params.Network, n int) (float64, error) {
	if n < 2 {
		return 0, fmt.Errorf("IndexBytesPerBlock: %d blocks", n)
	}
	recs := indexRecords(net, n)
	var m0, m1 runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&m0)
	c, err := loadIndex(net, recs)
	if err != nil {
		return 0, err
	}
	runtime.GC()
	runtime.ReadMemStats(&m1)
	runtime.KeepAlive(recs)
	if len(c.main) != n || c.main[n-1].Height != uint64(n-1) {
		return 0, fmt.Errorf("main chain of %d blocks, want %d", len(c.main), n)
	}
	runtime.KeepAlive(c)
	return float64(int64(m1.HeapAlloc)-int64(m0.HeapAlloc)) / float64(n), nil
}

package chainstate

import (
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"unsafe"

	"github.com/cointoolkit/coin/lib/params"
)

// maxIndexBytesPerBlock bounds the memory of the in-memory block index per block (the BlockNode,
// its slot in the hash index and in the main chain). docs/chain.md ("Scale") projects it to
// 5,000,000 blocks against the node's 1 GiB budget: 220 B is 1.02 GiB there; the figure
// measured when this bound was set was well under it (see the doc).
const maxIndexBytesPerBlock = 220

// indexChildEnv makes the test binary a child that only measures the heap of loading the
// index (TestIndexHeapChild).
const indexChildEnv = "COIN_INDEX_HEAP_CHILD"

// TestIndexBytesPerBlock: the counted figure (IndexBytesPerBlock) is positive, at least a
// BlockNode per block, at most maxIndexBytesPerBlock, and within 10% of the heap growth of loading
// the index measured in a child process that does nothing else. Over 100,000 blocks
// (COIN_INDEX_BLOCKS sets another count).
func TestIndexBytesPerBlock(t *testing.T) {
	n := 100_000
	if s := os.Getenv("COIN_INDEX_BLOCKS"); s != "" {
		v, err := strconv.Atoi(s)
		if err != nil || v < 2 {
			t.Fatalf("COIN_INDEX_BLOCKS=%q", s)
		}
		n = v
	}
	per, err := IndexBytesPerBlock(params.Mainnet, n)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("block index: %.1f bytes per block over %d blocks; %.0f MiB at 5,000,000 blocks", per, n, per*5e6/(1<<20))
	if min := float64(unsafe.Sizeof(BlockNode{})); per < min {
		t.Errorf("block index counted at %.1f bytes per block, less than a BlockNode (%.0f)", per, min)
	}
	if per > maxIndexBytesPerBlock {
		t.Errorf("block index takes %.1f bytes per block, more than %d", per, maxIndexBytesPerBlock)
	}

	cmd := exec.Command(os.Args[0], "-test.run=^TestIndexHeapChild$", "-test.count=1")
	cmd.Env = append(os.Environ(), indexChildEnv+"="+strconv.Itoa(n))
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("child: %v\n%s", err, out)
	}
	var heap float64
	for _, line := range strings.Split(string(out), "\n") {
		if v, ok := strings.CutPrefix(line, "index-heap-bytes-per-block "); ok {
			heap, err = strconv.ParseFloat(strings.TrimSpace(v), 64)
			if err != nil {
				t.Fatalf("child: %q", line)
			}
		}
	}
	t.Logf("heap growth of loading it in a process of its own: %.1f bytes per block", heap)
	if heap <= 0 || heap < per*0.9 || heap > per*1.1 {
		t.Errorf("counted %.1f bytes per block, the heap grew %.1f: the count misses a part of the index or the BlockNode's size class", per, heap)
	}
}

// TestIndexHeapChild is TestIndexBytesPerBlock's child: it prints the heap growth of loading
// the index, and does nothing unless started as that child.
func TestIndexHeapChild(t *testing.T) {
	s := os.Getenv(indexChildEnv)
	if s == "" {
		t.Skip("the child of TestIndexBytesPerBlock")
	}
	n, err := strconv.Atoi(s)
	if err != nil || n < 2 {
		t.Fatalf("%s=%q", indexChildEnv, s)
	}
	per, err := indexHeapBytesPerBlock(params.Mainnet, n)
	if err != nil {
		t.Fatal(err)
	}
	fmt.Printf("index-heap-bytes-per-block %.3f\n", per)
}

// indexHeapBytesPerBlock is the heap growth of loading the block index of a main chain of n
// blocks, per block: between two readings of the live heap, each after two collections (the
// second frees what sync.Pools kept through the first). Only meaningful in a process that does
// nothing else meanwhile: TestIndexBytesPerBlock runs it in a child process of its own.
func indexHeapBytesPerBlock(net *params.Network, n int) (float64, error) {
	recs := indexRecords(net, n)
	var m0, m1 runtime.MemStats
	runtime.GC()
	runtime.GC()
	runtime.ReadMemStats(&m0)
	c, err := loadIndex(net, recs)
	if err != nil {
		return 0, err
	}
	runtime.GC()
	runtime.GC()
	runtime.ReadMemStats(&m1)
	runtime.KeepAlive(recs)
	runtime.KeepAlive(c)
	return float64(int64(m1.HeapAlloc)-int64(m0.HeapAlloc)) / float64(n), nil
}

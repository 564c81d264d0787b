package sha256d

import (
	"crypto/sha256"
	"encoding"
	"encoding/binary"
	"fmt"
	"os"
	"runtime"
	"testing"
	"time"
)

// TestMeasure prints the best time per nonce over many short runs of every
// kernel, which stays stable on a loaded machine where the wall-clock
// averages of `go test -bench` do not. Opt in with SHA256D_MEASURE=1:
//
//	SHA256D_MEASURE=1 go test -run TestMeasure -v ./lib/sha256d/
func TestMeasure(t *testing.T) {
	if os.Getenv("SHA256D_MEASURE") == "" {
		t.Skip("set SHA256D_MEASURE=1 to run")
	}
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	best := func(chunk int, reps int, run func(start uint64)) float64 {
		b := time.Duration(1 << 62)
		for r := 0; r < reps; r++ {
			t0 := time.Now()
			run(uint64(r * chunk))
			if d := time.Since(t0); d < b {
				b = d
			}
		}
		return float64(b.Nanoseconds()) / float64(chunk)
	}
	report := func(name string, ns float64) {
		fmt.Printf("%-22s %8.2f ns/nonce %8.2f M nonces/s\n", name, ns, 1e3/ns)
	}
	var target [32]byte
	hdr := fixedHeader()
	for _, f := range allScanFuncs() {
		s := NewScanner(hdr, &target)
		chunk, reps := 1<<14, 1000
		if f.name == "portable" {
			chunk, reps = 1<<10, 300
		}
		report(f.name, best(chunk, reps, func(start uint64) { f.scan(s, start, uint64(chunk)) }))
	}
	h := *hdr
	report("stdlib Sum256 twice", best(1<<10, 300, func(start uint64) {
		for i := uint64(0); i < 1<<10; i++ {
			binary.LittleEndian.PutUint64(h[NonceOffset:], start+i)
			first := sha256.Sum256(h[:])
			_ = sha256.Sum256(first[:])
		}
	}))
	// The alternative portable design: restore the midstate into
	// crypto/sha256 per nonce (interface calls per nonce, so not used).
	d := sha256.New()
	d.Write(h[:64])
	state, err := d.(encoding.BinaryMarshaler).MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	u := d.(encoding.BinaryUnmarshaler)
	var tail [24]byte
	copy(tail[:], h[64:])
	var buf [32]byte
	report("stdlib midstate", best(1<<10, 300, func(start uint64) {
		for i := uint64(0); i < 1<<10; i++ {
			binary.LittleEndian.PutUint64(tail[16:], start+i)
			if err := u.UnmarshalBinary(state); err != nil {
				panic(err)
			}
			d.Write(tail[:])
			_ = sha256.Sum256(d.Sum(buf[:0]))
		}
	}))
}

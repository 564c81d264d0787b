package miner

import (
	"bufio"
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/cointoolkit/coin/lib/sha256d"
	"github.com/cointoolkit/coin/lib/types"
)

// BenchResult is one run of Benchmark.
type BenchResult struct {
	Threads      int
	Kernel       string
	Elapsed      time.Duration
	Hashes       uint64
	ThreadHashes []uint64
	// ThreadCPU is the CPU time each thread used (nil where it cannot be measured). On a
	// shared machine hashes per CPU-second show the kernel's speed when it has a core,
	// which is also how `openssl speed` counts; hashes per wall-clock second include the
	// time other processes took.
	ThreadCPU []time.Duration
	// BestRate is the total rate of the fastest BenchWindow of the run.
	BestRate float64
}

// BenchWindow is the length of the windows BenchResult.BestRate is the best of.
const BenchWindow = 500 * time.Millisecond

// Rate is the total hashes per wall-clock second.
func (r BenchResult) Rate() float64 { return perSecond(r.Hashes, r.Elapsed) }

// ThreadRate is thread i's hashes per wall-clock second.
func (r BenchResult) ThreadRate(i int) float64 { return perSecond(r.ThreadHashes[i], r.Elapsed) }

// CPURate is the sum over the threads of their hashes per CPU-second, or 0 when the CPU
// time is not known: the rate with a core for every thread.
func (r BenchResult) CPURate() float64 {
	if r.ThreadCPU == nil {
		return 0
	}
	var sum float64
	for i := range r.ThreadHashes {
		sum += r.ThreadCPURate(i)
	}
	return sum
}

// ThreadCPURate is thread i's hashes per CPU-second (0 when not known).
func (r BenchResult) ThreadCPURate(i int) float64 {
	if r.ThreadCPU == nil {
		return 0
	}
	return perSecond(r.ThreadHashes[i], r.ThreadCPU[i])
}

func perSecond(n uint64, d time.Duration) float64 {
	if d <= 0 {
		return 0
	}
	return float64(n) / d.Seconds()
}

// BenchmarkHeader is the fixed header Benchmark hashes.
func BenchmarkHeader() types.BlockHeader {
	return types.BlockHeader{
		Version:          1,
		PrevHash:         sha256.Sum256([]byte("coin-miner benchmark: previous block")),
		MerkleRoot:       sha256.Sum256([]byte("coin-miner benchmark: merkle root")),
		Timestamp:        1767225600,
		DifficultyTarget: 0x1d00ffff,
	}
}

// Benchmark runs threads hashing threads, exactly as Run does, on BenchmarkHeader with a
// target no hash meets, for d or until ctx is done.
func Benchmark(ctx context.Context, threads int, d time.Duration) BenchResult {
	if threads <= 0 {
		threads = runtime.NumCPU()
	}
	w := &Work{Header: BenchmarkHeader()} // all-zero target: never met
	h := newHasher(threads)
	h.measureCPU = true
	h.board.set(newJob(1, w, nil, w.Header.Timestamp, fullSpaceChunks))
	hctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var wg sync.WaitGroup
	start := time.Now()
	h.run(hctx, &wg)
	end := time.NewTimer(d)
	tick := time.NewTicker(BenchWindow)
	var best float64
	lastT, lastN := start, uint64(0)
loop:
	for {
		select {
		case now := <-tick.C:
			n := h.total()
			best = max(best, perSecond(n-lastN, now.Sub(lastT)))
			lastT, lastN = now, n
		case <-end.C:
			break loop
		case <-ctx.Done():
			end.Stop()
			break loop
		}
	}
	tick.Stop()
	h.board.close()
	wg.Wait()
	// The threads stop after their current chunk; the hashes and the time include it.
	r := BenchResult{Threads: threads, Kernel: sha256d.KernelName(), Elapsed: time.Since(start),
		Hashes: h.total(), ThreadHashes: h.perThread(), BestRate: best}
	if h.cpuOK.Load() {
		r.ThreadCPU = h.cpu
	}
	r.BestRate = max(r.BestRate, r.Rate())
	return r
}

// OpenSSLResult is the one-stream SHA-256 reference measured with `openssl speed`.
type OpenSSLResult struct {
	Command     string
	BytesPerSec float64 // the 16384-byte row
	// Rate is the double-SHA-256 rate of one stream: BytesPerSec / 64 / 2 (an 88-byte
	// header with a midstate costs two 64-byte compressions).
	Rate float64
}

// OpenSSLReference runs `openssl speed -seconds S -bytes 16384 -evp sha256` (one stream,
// one thread) and reads its 16384-byte row. It fails when openssl is not on PATH.
func OpenSSLReference(ctx context.Context, d time.Duration) (OpenSSLResult, error) {
	path, err := exec.LookPath("openssl")
	if err != nil {
		return OpenSSLResult{}, err
	}
	secs := strconv.Itoa(max(1, int(d.Round(time.Second)/time.Second)))
	var firstErr error
	for _, args := range [][]string{
		{"speed", "-seconds", secs, "-bytes", "16384", "-evp", "sha256"},
		{"speed", "-evp", "sha256"}, // openssl without -seconds and -bytes
	} {
		out, err := exec.CommandContext(ctx, path, args...).CombinedOutput()
		if err == nil {
			var bps float64
			if bps, err = ParseOpenSSLSpeed(string(out)); err == nil {
				return OpenSSLResult{Command: "openssl " + strings.Join(args, " "), BytesPerSec: bps, Rate: bps / 64 / 2}, nil
			}
		}
		if ctx.Err() != nil {
			return OpenSSLResult{}, ctx.Err()
		}
		if firstErr == nil {
			firstErr = fmt.Errorf("openssl %s: %w", strings.Join(args, " "), err)
		}
	}
	return OpenSSLResult{}, firstErr
}

// ParseOpenSSLSpeed reads the sha256 value of the 16384-byte column of `openssl speed`
// output, in bytes per second.
func ParseOpenSSLSpeed(out string) (float64, error) {
	var sizes []string
	sc := bufio.NewScanner(strings.NewReader(out))
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) == 0 {
			continue
		}
		if f[0] == "type" {
			sizes = sizes[:0]
			for i := 1; i+1 < len(f); i += 2 {
				sizes = append(sizes, f[i])
			}
			continue
		}
		if sizes == nil || !strings.EqualFold(f[0], "sha256") || len(f) < 1+len(sizes) {
			continue
		}
		vals := f[len(f)-len(sizes):]
		for i, s := range sizes {
			if s != "16384" {
				continue
			}
			v, err := strconv.ParseFloat(strings.TrimSuffix(vals[i], "k"), 64)
			if err != nil {
				return 0, fmt.Errorf("openssl speed: bad value %q", vals[i])
			}
			if strings.HasSuffix(vals[i], "k") {
				v *= 1000
			}
			return v, nil
		}
	}
	return 0, errors.New("openssl speed: no sha256 row for 16384-byte blocks in the output")
}

// CPUModel names the processor (the "model name" of /proc/cpuinfo on Linux).
func CPUModel() string {
	if b, err := os.ReadFile("/proc/cpuinfo"); err == nil {
		for line := range strings.Lines(string(b)) {
			if k, v, ok := strings.Cut(line, ":"); ok && strings.TrimSpace(k) == "model name" {
				return strings.TrimSpace(v)
			}
		}
	}
	return runtime.GOARCH
}

// FormatRate formats hashes per second with a unit: "25.31 MH/s".
func FormatRate(r float64) string {
	units := []string{"H/s", "kH/s", "MH/s", "GH/s", "TH/s", "PH/s"}
	i := 0
	for r >= 1000 && i < len(units)-1 {
		r /= 1000
		i++
	}
	return fmt.Sprintf("%.2f %s", r, units[i])
}

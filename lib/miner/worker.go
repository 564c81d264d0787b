package miner

import (
	"context"
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	"github.com/cointoolkit/coin/lib/sha256d"
	"github.com/cointoolkit/coin/lib/types"
)

// ChunkSize is how many consecutive nonces a hashing thread takes from a job at a time:
// about 2.5 ms of work for one SHA-NI thread, so a new job reaches every thread within
// that time while the shared counter is touched only some 400 times a second per thread.
const ChunkSize = 1 << chunkBits

const chunkBits = 16

// fullSpaceChunks is the number of chunks in the 64-bit nonce space.
const fullSpaceChunks = 1 << (64 - chunkBits)

// round is the set of jobs built on one parent block. At most one solution per round is
// submitted, and a round whose parent stopped being the tip is stale.
type round struct {
	prev   types.Hash
	solved atomic.Bool // a thread claimed a solution
	stale  atomic.Bool // the parent is no longer the tip
}

// job is one header to hash: a Work at one timestamp, with its share of the nonce space.
type job struct {
	id     uint64
	work   *Work
	round  *round
	ts     uint64
	header [types.HeaderSize]byte
	target [32]byte

	next    atomic.Uint64 // next chunk index to hand out
	chunks  uint64        // chunks in the job's nonce space
	stopped atomic.Bool   // replaced, or its nonce space is used up
}

func newJob(id uint64, w *Work, r *round, ts, chunks uint64) *job {
	j := &job{id: id, work: w, round: r, ts: ts, target: w.Target, chunks: chunks}
	h := w.HeaderAt(ts, 0)
	j.header = h.FixedBytes()
	return j
}

// dead reports whether hashing the job is pointless.
func (j *job) dead() bool {
	return j.stopped.Load() || (j.round != nil && (j.round.solved.Load() || j.round.stale.Load()))
}

// take hands out the next chunk: nonces start..start+ChunkSize-1. ok is false when the
// job's nonce space is used up.
func (j *job) take() (start uint64, ok bool) {
	c := j.next.Add(1) - 1
	if c >= j.chunks {
		return 0, false
	}
	return c * ChunkSize, true
}

// solution is a nonce that meets a job's target.
type solution struct {
	job   *job
	nonce uint64
	hash  [32]byte
}

// board is where the controller posts the current job and the hashing threads pick it up.
type board struct {
	mu     sync.Mutex
	cond   *sync.Cond
	cur    *job
	closed bool
}

func newBoard() *board {
	b := &board{}
	b.cond = sync.NewCond(&b.mu)
	return b
}

// set replaces the current job (nil: no work) and wakes the threads.
func (b *board) set(j *job) {
	b.mu.Lock()
	if b.cur != nil && b.cur != j {
		b.cur.stopped.Store(true)
	}
	b.cur = j
	b.mu.Unlock()
	b.cond.Broadcast()
}

// current is the posted job (possibly dead) or nil.
func (b *board) current() *job {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.cur
}

// close stops the threads.
func (b *board) close() {
	b.mu.Lock()
	b.closed = true
	if b.cur != nil {
		b.cur.stopped.Store(true)
	}
	b.mu.Unlock()
	b.cond.Broadcast()
}

// wait blocks until a live job is posted and returns it, or returns nil once the board is
// closed.
func (b *board) wait() *job {
	b.mu.Lock()
	defer b.mu.Unlock()
	for !b.closed && (b.cur == nil || b.cur.dead()) {
		b.cond.Wait()
	}
	if b.closed {
		return nil
	}
	return b.cur
}

// counter is a per-thread hash counter on its own cache line.
type counter struct {
	n atomic.Uint64
	_ [56]byte
}

// hasher is what the threads share: the board, their counters and where they report.
type hasher struct {
	board     *board
	counts    []counter
	solutions chan solution // one claimed solution per round
	exhausted chan uint64   // id of a job whose nonce space is used up

	// With measureCPU (benchmarks) each thread runs on its own OS thread and records the
	// CPU time it used in cpu; cpuOK is false where that cannot be measured.
	measureCPU bool
	cpu        []time.Duration
	cpuOK      atomic.Bool
}

func newHasher(threads int) *hasher {
	return &hasher{
		board:     newBoard(),
		counts:    make([]counter, threads),
		solutions: make(chan solution, threads),
		exhausted: make(chan uint64, 1),
		cpu:       make([]time.Duration, threads),
	}
}

// run starts the threads; they stop when the board is closed (wait for them with wg).
func (h *hasher) run(ctx context.Context, wg *sync.WaitGroup) {
	for i := range h.counts {
		wg.Go(func() { h.thread(ctx, i) })
	}
}

// total is the number of hashes of all threads.
func (h *hasher) total() uint64 {
	var n uint64
	for i := range h.counts {
		n += h.counts[i].n.Load()
	}
	return n
}

// perThread is each thread's hash count.
func (h *hasher) perThread() []uint64 {
	out := make([]uint64, len(h.counts))
	for i := range h.counts {
		out[i] = h.counts[i].n.Load()
	}
	return out
}

// thread is one hashing thread: it takes chunks of the current job until the job dies,
// then waits for the next one.
func (h *hasher) thread(ctx context.Context, id int) {
	cnt := &h.counts[id].n
	if h.measureCPU {
		runtime.LockOSThread()
		defer runtime.UnlockOSThread()
		if t0, ok := threadCPUTime(); ok {
			h.cpuOK.Store(true)
			defer func() {
				t1, _ := threadCPUTime()
				h.cpu[id] = t1 - t0
			}()
		}
	}
	for {
		j := h.board.wait()
		if j == nil {
			return
		}
		sc := sha256d.NewScanner(&j.header, &j.target)
		for !j.dead() {
			start, ok := j.take()
			if !ok {
				if !j.stopped.Swap(true) {
					select {
					case h.exhausted <- j.id:
					default:
					}
				}
				break
			}
			nonce, hash, found, hashed := sc.Scan(start, ChunkSize)
			cnt.Add(hashed)
			if found && (j.round == nil || j.round.solved.CompareAndSwap(false, true)) {
				select {
				case h.solutions <- solution{job: j, nonce: nonce, hash: hash}:
				case <-ctx.Done():
					return
				}
				break
			}
		}
	}
}

package chainstate

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"os/exec"
	"strconv"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/cointoolkit/coin/lib/consensus"
	"github.com/cointoolkit/coin/lib/params"
)

// The crash test runs this test binary again as a child (TestCrashWorker) that connects blocks
// into a data directory as fast as it can, kills it with SIGKILL after a random delay, and checks
// that the directory reopens at a consistent state. Then the next child continues the same
// directory.
const (
	crashDirEnv  = "COIN_CHAINSTATE_CRASH_DIR"  // data directory of the worker
	crashSeedEnv = "COIN_CHAINSTATE_CRASH_SEED" // the worker's seed; for the parent, a seed to replay
)

// crashClock is the chain clock of the crash test: far enough ahead for any number of blocks
// 60 s apart.
func crashClock() time.Time { return time.Unix(1<<40, 0) }

func TestCrashRecovery(t *testing.T) {
	if os.Getenv(crashDirEnv) != "" {
		t.Skip("running as a crash worker")
	}
	rounds := 20
	if testing.Short() {
		rounds = 5
	}
	seed := uint64(time.Now().UnixNano())
	if s := os.Getenv(crashSeedEnv); s != "" {
		var err error
		if seed, err = strconv.ParseUint(s, 10, 64); err != nil {
			t.Fatal(err)
		}
	}
	t.Logf("seed %d (set %s to repeat the blocks; kill times vary anyway)", seed, crashSeedEnv)
	defer func(n int64) { blockFileMax = n }(blockFileMax)
	blockFileMax = crashBlockFileMax
	rng := rand.New(rand.NewPCG(seed, 0))
	dir := t.TempDir()

	// Start with mature coinbases so that every child makes transfers from its first block.
	c, err := Open(context.Background(), dir, params.Regtest, Options{Now: crashClock, Values: consensus.NominalValue{}})
	if err != nil {
		t.Fatal(err)
	}
	w, err := newCrashWorker(c, seed)
	if err != nil {
		t.Fatal(err)
	}
	for c.Tip().Height < 110 {
		if err := w.step(); err != nil {
			t.Fatal(err)
		}
	}
	ref := &replayer{}
	defer ref.close()
	checkRecovered(t, c, ref)
	prevHeight, prevNodes := c.Tip().Height, c.index.len()
	setupNodes, setupSide := prevNodes, sideValid(c)
	c.Close()

	var midWrite, reorgs int
	var last conductCount
	var checking time.Duration
	start := time.Now()
	for r := 1; r <= rounds; r++ {
		delay := 5*time.Millisecond + time.Duration(rng.IntN(296))*time.Millisecond
		cmd := exec.Command(os.Args[0], "-test.run=^TestCrashWorker$", "-test.count=1")
		cmd.Env = append(os.Environ(), crashDirEnv+"="+dir, crashSeedEnv+"="+strconv.FormatUint(seed+uint64(r), 10))
		var out bytes.Buffer
		opened := &lineWatch{line: crashWorkerOpen, seen: make(chan struct{})}
		both := io.MultiWriter(&out, opened) // one writer for both, so exec writes one at a time
		cmd.Stdout, cmd.Stderr = both, both
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		// Odd rounds count the delay from the worker's start (a kill while it opens the
		// store is a crash too), even rounds from its open store, so that on a loaded machine,
		// where a -race worker may take longer than any delay to start, kills still land
		// among its writes.
		if r%2 == 0 {
			select {
			case <-opened.seen:
			case <-time.After(30 * time.Second):
			}
		}
		time.Sleep(delay)
		_ = cmd.Process.Signal(syscall.SIGKILL) // fails only when the worker is gone already
		err := cmd.Wait()
		ws, ok := cmd.ProcessState.Sys().(syscall.WaitStatus)
		if !ok || !ws.Signaled() || ws.Signal() != syscall.SIGKILL {
			t.Fatalf("round %d: the worker ended by itself (%v) before the kill:\n%s", r, err, out.Bytes())
		}

		c, err := Open(context.Background(), dir, params.Regtest, Options{Now: crashClock, Values: consensus.NominalValue{}})
		if err != nil {
			t.Fatalf("round %d: reopen after kill -9 at %v: %v", r, delay, err)
		}
		checkStart := time.Now()
		checkRecovered(t, c, ref)
		if r == rounds {
			// The replay above reuses the previous round's replay when it is a prefix of the
			// main chain; the last round also replays everything from genesis.
			fresh := &replayer{}
			if err := sameSet(utxoSet(t, c), fresh.replay(t, c)); err != nil {
				t.Fatal("UTXO set differs from a replay of the main chain:", err)
			}
			if got, want := conductInfo(t, c), fresh.conduct(t); got != want {
				t.Fatalf("conduct state differs from a replay of the main chain:\n reopened %+v\n replay   %+v", got, want)
			}
			fresh.close()
		}
		checking += time.Since(checkStart)
		tip := c.Tip()
		if best := c.bestCandidate(); best != tip {
			t.Errorf("round %d: reopened at tip %d %s, but stored block %d %s (%s) has more work",
				r, tip.Height, tip.Hash, best.Height, best.Hash, best.status)
		}
		nodes, side := c.index.len(), sideValid(c)
		cs := countConduct(t, c)
		t.Logf("round %2d: killed after %3d ms: tip %d (%+d), %d blocks stored (%+d), %d reorged out, %d txs, %s",
			r, delay.Milliseconds(), tip.Height, int64(tip.Height)-int64(prevHeight), nodes, nodes-prevNodes, side, c.Stats().TxCount, cs)
		last = cs
		if nodes > prevNodes {
			midWrite++
		}
		reorgs = side - setupSide
		prevHeight, prevNodes = tip.Height, nodes
		if err := c.Close(); err != nil {
			t.Fatal(err)
		}
	}
	t.Logf("%d rounds in %v (checks %v); %d stored new blocks before the kill", rounds,
		time.Since(start).Round(time.Millisecond), checking.Round(time.Millisecond), midWrite)
	// How far a worker gets depends on the machine (its start alone takes tens of
	// milliseconds with -race); a kill during its start is a fine crash too.
	childBlocks := prevNodes - setupNodes
	t.Logf("the workers stored %d blocks, %d of them were connected and then reorganised away", childBlocks, reorgs)
	if midWrite == 0 {
		t.Error("no worker got to store a block before the kill")
	}
	if childBlocks >= 100 && reorgs == 0 {
		t.Error("no reorg in the workers' blocks")
	}
	if childBlocks >= 100 && (last.agents < 2 || last.fulfilled == 0 || last.reviews == 0) {
		t.Errorf("the workers' chain has too few agent operations: %s", last)
	}
}

// sideValid counts the blocks off the main chain that were connected once: a reorg
// disconnected them.
func sideValid(c *Chain) int {
	n := 0
	for node := range c.index.all() {
		if node.status == StatusValid && !c.InMainChain(node.Hash) {
			n++
		}
	}
	return n
}

// crashBlockFileMax is the size of the crash test's blk and rev files: small, so that kills
// also land while the files move on to the next one.
const crashBlockFileMax = 16 << 10

// TestCrashWorker is the child of TestCrashRecovery; it does nothing in a normal run.
// crashWorkerOpen is the line a worker prints once its store is open.
const crashWorkerOpen = "crash-worker: open"

// lineWatch closes seen when line has been written through it.
type lineWatch struct {
	line string
	buf  []byte
	once sync.Once
	seen chan struct{}
}

func (w *lineWatch) Write(p []byte) (int, error) {
	w.buf = append(w.buf, p...)
	if bytes.Contains(w.buf, []byte(w.line)) {
		w.once.Do(func() { close(w.seen) })
		w.buf = w.buf[:0]
	} else if len(w.buf) > 4096 {
		w.buf = w.buf[len(w.buf)-len(w.line):]
	}
	return len(p), nil
}

func TestCrashWorker(t *testing.T) {
	dir := os.Getenv(crashDirEnv)
	if dir == "" {
		t.Skip("only run by TestCrashRecovery")
	}
	seed, err := strconv.ParseUint(os.Getenv(crashSeedEnv), 10, 64)
	if err != nil {
		t.Fatal(err)
	}
	blockFileMax = crashBlockFileMax
	// Every other worker connects in bulk mode, with its write cache written every few
	// milliseconds and at every reorg, so kills land before, during and between those writes.
	opts := Options{Now: crashClock, Values: consensus.NominalValue{}}
	bulk := seed%2 == 0
	if bulk {
		opts.WriteCacheAge = time.Duration(5+seed%40) * time.Millisecond
	}
	c, err := Open(context.Background(), dir, params.Regtest, opts)
	if err != nil {
		t.Fatal(err)
	}
	if err := c.SetBulk(bulk); err != nil {
		t.Fatal(err)
	}
	w, err := newCrashWorker(c, seed)
	if err != nil {
		t.Fatal(err)
	}
	fmt.Println(crashWorkerOpen) // the parent may count its delay from here
	// The parent kills the worker within a second; the deadline only bounds a stray one.
	for deadline := time.Now().Add(time.Minute); time.Now().Before(deadline); {
		if err := w.step(); err != nil {
			t.Fatal(err)
		}
	}
	t.Fatal("not killed")
}

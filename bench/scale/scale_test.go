// Package scale holds the scale benchmark (make scale): a regtest chain of a million
// transfers, built once and cached, synced by a coin-node process from another one on
// loopback. See docs/chain.md, "Scale: a million transfers".
package scale

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/cointoolkit/coin/lib/chainstate"
	"github.com/cointoolkit/coin/lib/params"
	"github.com/cointoolkit/coin/lib/proctest"
	"github.com/cointoolkit/coin/lib/rpcapi"
)

// syncTimeout bounds one sync.
const syncTimeout = 60 * time.Minute

// sample is one poll of the syncing node.
type sample struct {
	at     float64 // seconds since the node was started
	height uint64
	rss    int64 // VmRSS, bytes
	hwm    int64 // VmHWM (peak RSS so far), bytes
}

// syncRun is what one sync measured.
type syncRun struct {
	label      string
	samples    []sample
	syncSec    float64 // start of the process until its tip is the source's
	settleSec  float64 // until getsyncstatus says it is no longer syncing (the cache written)
	stopSec    float64 // SIGTERM until the process exited
	peakRSS    int64   // VmHWM before the stop
	maxrss     int64   // getrusage of the exited child
	maxLive    float64 // largest live heap of a GC (gctrace), MiB
	maxGoal    float64 // largest heap goal (gctrace), MiB
	node       *proctest.Node
	dbBytes    int64
	restartSec float64
	utxoSec    float64
	utxo       *rpcapi.TxOutSetInfo
}

// procStatus reads VmRSS and VmHWM of pid in bytes.
func procStatus(pid int) (rss, hwm int64) {
	f, err := os.Open(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, 0
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		var v *int64
		switch {
		case strings.HasPrefix(line, "VmRSS:"):
			v = &rss
		case strings.HasPrefix(line, "VmHWM:"):
			v = &hwm
		default:
			continue
		}
		fields := strings.Fields(line)
		if len(fields) >= 2 {
			kb, _ := strconv.ParseInt(fields[1], 10, 64)
			*v = kb << 10
		}
	}
	return rss, hwm
}

// gctrace lines: "gc 12 @3.4s 5%: ... ms cpu, 120->130->60 MB, 125 MB goal, ...".
var gcLine = regexp.MustCompile(`(\d+)->(\d+)->(\d+) MB, (\d+) MB goal`)

func gcPeaks(out string) (live, goal float64) {
	for _, m := range gcLine.FindAllStringSubmatch(out, -1) {
		l, _ := strconv.ParseFloat(m[3], 64)
		g, _ := strconv.ParseFloat(m[4], 64)
		live, goal = max(live, l), max(goal, g)
	}
	return live, goal
}

// syncOnce starts a coin-node (bin) that syncs the source's chain of m.Blocks blocks over
// loopback, polls it until it has caught up and stops it.
func syncOnce(b *testing.B, label, bin string, src *proctest.Node, m chainMeta) *syncRun {
	r := &syncRun{label: label}
	n := proctest.NewNode(b, bin, "--connect", src.P2PAddr(), "--log-level", "warn")
	r.node = n
	t0 := time.Now()
	n.Start(b)
	pid := n.Proc.Cmd.Process.Pid
	target := uint64(m.Blocks)
	deadline := t0.Add(syncTimeout)
	for {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		h, err := n.RPC.GetBlockCount(ctx)
		cancel()
		at := time.Since(t0).Seconds()
		rss, hwm := procStatus(pid)
		if err == nil {
			r.samples = append(r.samples, sample{at: at, height: h, rss: rss, hwm: hwm})
			if h >= target {
				r.syncSec = at
				break
			}
		}
		if n.Proc.Exited() || time.Now().After(deadline) {
			b.Fatalf("%s: the node did not sync (height %d of %d, exited %v):\n%s", label, h, target, n.Proc.Exited(),
				n.Proc.Out.Tail(50))
		}
		time.Sleep(100 * time.Millisecond)
	}
	for {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		st, err := n.RPC.GetSyncStatus(ctx)
		cancel()
		if err == nil && !st.Syncing {
			break
		}
		if time.Now().After(deadline) {
			b.Fatalf("%s: still syncing", label)
		}
		time.Sleep(50 * time.Millisecond)
	}
	r.settleSec = time.Since(t0).Seconds()
	_, r.peakRSS = procStatus(pid)
	ts := time.Now()
	if code := n.Proc.Stop(b, 5*time.Minute); code != 0 {
		b.Fatalf("%s: coin-node exited with %d:\n%s", label, code, n.Proc.Out.Tail(50))
	}
	r.stopSec = time.Since(ts).Seconds()
	if ru, ok := n.Proc.Cmd.ProcessState.SysUsage().(*syscall.Rusage); ok {
		r.maxrss = ru.Maxrss << 10
	}
	r.maxLive, r.maxGoal = gcPeaks(n.Proc.Out.String())
	r.dbBytes = dirSize(b, filepath.Join(n.DataDir, "db"))
	return r
}

// restart starts the synced node again (no peers) and times its start-up until it answers
// RPC, then gettxoutsetinfo.
func (r *syncRun) restart(b *testing.B) {
	t0 := time.Now()
	r.node.Extra = []string{"--log-level", "warn"}
	r.node.Start(b)
	r.restartSec = time.Since(t0).Seconds()
	t1 := time.Now()
	var info rpcapi.TxOutSetInfo
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	if err := r.node.RPC.Call(ctx, "gettxoutsetinfo", nil, &info); err != nil {
		b.Fatal(err)
	}
	r.utxoSec = time.Since(t1).Seconds()
	r.utxo = &info
	if code := r.node.Proc.Stop(b, 5*time.Minute); code != 0 {
		b.Fatalf("coin-node exited with %d", code)
	}
}

// crossing is when the node's height first reached h, interpolated between two polls.
func (r *syncRun) crossing(h uint64) float64 {
	prev := sample{}
	for _, s := range r.samples {
		if s.height >= h {
			if s.height == prev.height || prev.at == 0 {
				return s.at
			}
			f := float64(h-prev.height) / float64(s.height-prev.height)
			return prev.at + f*(s.at-prev.at)
		}
		prev = s
	}
	return r.syncSec
}

// at is the last poll at or before t.
func (r *syncRun) at(t float64) sample {
	var out sample
	for _, s := range r.samples {
		if s.at > t {
			break
		}
		out = s
	}
	return out
}

// tenth is one tenth of the blocks with transfers.
type tenth struct {
	n                int
	from, to         uint64 // heights, inclusive
	transfers        int
	seconds          float64
	blocksPS, txPS   float64
	utxo             uint64
	rssMiB, hwmMiB   float64
	startSec, endSec float64
}

func (r *syncRun) tenths(m chainMeta) []tenth {
	first, last := m.FirstTransfer, uint64(m.Blocks)
	span := last - first + 1
	transfersIn := func(h uint64) int {
		return min(m.PerBlock, m.Transfers-int(h-first)*m.PerBlock)
	}
	var out []tenth
	prevEnd := first - 1
	for k := 1; k <= 10; k++ {
		end := first - 1 + uint64(k)*span/10
		if end <= prevEnd {
			continue
		}
		t := tenth{n: k, from: prevEnd + 1, to: end}
		for h := t.from; h <= t.to; h++ {
			t.transfers += transfersIn(h)
		}
		t.startSec, t.endSec = r.crossing(prevEnd), r.crossing(end)
		t.seconds = t.endSec - t.startSec
		if t.seconds > 0 {
			t.blocksPS = float64(t.to-t.from+1) / t.seconds
			t.txPS = float64(t.transfers) / t.seconds
		}
		t.utxo = m.UtxoAt[end]
		s := r.at(t.endSec)
		t.rssMiB, t.hwmMiB = float64(s.rss)/(1<<20), float64(s.hwm)/(1<<20)
		out = append(out, t)
		prevEnd = end
	}
	return out
}

func (r *syncRun) print(m chainMeta) []tenth {
	ts := r.tenths(m)
	pre := r.crossing(m.FirstTransfer - 1)
	fmt.Printf("scale-preamble run=%s blocks=%d seconds=%.3f\n", r.label, m.FirstTransfer-1, pre)
	for _, t := range ts {
		fmt.Printf("scale-tenth run=%s tenth=%d from=%d to=%d blocks=%d transfers=%d seconds=%.3f blocks_per_s=%.2f tx_per_s=%.1f utxo=%d rss_mib=%.1f hwm_mib=%.1f\n",
			r.label, t.n, t.from, t.to, t.to-t.from+1, t.transfers, t.seconds, t.blocksPS, t.txPS, t.utxo, t.rssMiB, t.hwmMiB)
	}
	for _, s := range r.samples {
		fmt.Printf("scale-sample run=%s t=%.2f height=%d rss_mib=%.1f\n", r.label, s.at, s.height, float64(s.rss)/(1<<20))
	}
	fmt.Printf("scale-sync run=%s sync_s=%.2f settle_s=%.2f stop_s=%.2f peak_rss_mib=%.1f maxrss_mib=%.1f gc_max_live_mib=%.0f gc_max_goal_mib=%.0f db_mib=%.1f\n",
		r.label, r.syncSec, r.settleSec, r.stopSec, float64(r.peakRSS)/(1<<20), float64(r.maxrss)/(1<<20), r.maxLive, r.maxGoal,
		float64(r.dbBytes)/(1<<20))
	return ts
}

// machine describes the host: lscpu's model name, cores, memory and Go.
func machine() string {
	model := "unknown"
	if out, err := exec.Command("lscpu").Output(); err == nil {
		for _, line := range strings.Split(string(out), "\n") {
			if strings.HasPrefix(line, "Model name:") {
				model = strings.TrimSpace(strings.TrimPrefix(line, "Model name:"))
			}
		}
	}
	var memKB int64
	if raw, err := os.ReadFile("/proc/meminfo"); err == nil {
		for _, line := range strings.Split(string(raw), "\n") {
			if f := strings.Fields(line); len(f) >= 2 && f[0] == "MemTotal:" {
				memKB, _ = strconv.ParseInt(f[1], 10, 64)
			}
		}
	}
	return fmt.Sprintf("cpu=%q cores=%d ram_gib=%.1f go=%s", model, runtime.NumCPU(), float64(memKB)/(1<<20), runtime.Version())
}

// BenchmarkScale: the chain of COIN_SCALE_TRANSFERS transfers (default 1,000,000) in blocks
// of COIN_SCALE_PER_BLOCK (default 1,000), built once into the cache (see cacheDir), served
// by a coin-node on it and synced by a fresh coin-node process over loopback. Prints one
// scale-tenth line per tenth of the blocks with transfers, the polls (scale-sample), the
// totals (scale-sync, scale-summary) and the machine; scripts/scaleplot draws them. With
// COIN_SCALE_BASELINE_BIN set to another coin-node executable, that one syncs the same
// chain first (run=baseline) for comparison. Run with -benchtime 1x.
func BenchmarkScale(b *testing.B) {
	cfg := configFromEnv(b)
	t0 := time.Now()
	srcDir, m := loadOrBuild(b, cfg)
	fmt.Printf("scale-chain dir=%s blocks=%d first_transfer=%d transfers=%d per_block=%d keys=%d raw_mib=%.1f source_db_mib=%.1f utxo=%d build_s=%.1f ready_s=%.1f\n",
		srcDir, m.Blocks, m.FirstTransfer, m.Transfers, m.PerBlock, m.Keys, float64(m.RawBytes)/(1<<20),
		float64(m.SourceDBBytes)/(1<<20), m.UtxoCountAtTip, m.BuildSeconds, time.Since(t0).Seconds())
	fmt.Printf("scale-machine %s\n", machine())
	bin := filepath.Join(proctest.Build(b, "./cmd/coin-node"), "coin-node")
	b.Setenv("GODEBUG", "gctrace=1") // the nodes' GC lines give the live heap
	src := proctest.NewNode(b, bin, "--log-level", "warn")
	src.DataDir = srcDir
	src.Start(b)
	defer src.Proc.Stop(b, 5*time.Minute)

	if base := os.Getenv("COIN_SCALE_BASELINE_BIN"); base != "" {
		r := syncOnce(b, "baseline", base, src, m)
		r.print(m)
	}
	b.ResetTimer()
	r := syncOnce(b, "current", bin, src, m)
	b.StopTimer()
	ts := r.print(m)
	r.restart(b)
	if r.utxo.UtxoCount != m.UtxoCountAtTip || r.utxo.Hash != m.UtxoSetHash {
		b.Fatalf("synced UTXO set %d entries, hash %s; the source's %d, %s", r.utxo.UtxoCount, r.utxo.Hash,
			m.UtxoCountAtTip, m.UtxoSetHash)
	}
	// The block index's bytes per block, counted (not a heap delta of this process, which frees
	// the sync's memory meanwhile); a figure that is not positive is never printed.
	perBlock, err := chainstate.IndexBytesPerBlock(params.Mainnet, 200_000)
	if err != nil {
		b.Fatal(err)
	}
	if perBlock <= 0 {
		b.Fatalf("block index counted at %.1f bytes per block", perBlock)
	}
	ratio := ts[len(ts)-1].txPS / ts[0].txPS
	fmt.Printf("scale-summary run=current blocks=%d transfers=%d utxo=%d sync_s=%.2f blocks_per_s=%.2f tx_per_s=%.1f last_over_first=%.3f peak_rss_mib=%.1f index_bytes_per_block=%.0f index_mib_5m=%.0f db_mib=%.1f raw_mib=%.1f db_over_raw=%.3f restart_s=%.3f txoutsetinfo_s=%.3f\n",
		m.Blocks, m.Transfers, r.utxo.UtxoCount, r.syncSec, float64(m.Blocks)/r.syncSec, float64(m.Transfers)/r.syncSec, ratio,
		float64(r.peakRSS)/(1<<20), perBlock, perBlock*5e6/(1<<20), float64(r.dbBytes)/(1<<20), float64(m.RawBytes)/(1<<20),
		float64(r.dbBytes)/float64(m.RawBytes), r.restartSec, r.utxoSec)
	b.ReportMetric(float64(m.Blocks)/r.syncSec, "blocks/s")
	b.ReportMetric(float64(m.Transfers)/r.syncSec, "tx/s")
	b.ReportMetric(ts[0].txPS, "first-tenth-tx/s")
	b.ReportMetric(ts[len(ts)-1].txPS, "last-tenth-tx/s")
	b.ReportMetric(ratio, "last/first")
	b.ReportMetric(float64(r.peakRSS)/(1<<20), "peak-rss-MiB")
	b.ReportMetric(perBlock, "index-B/block")
	b.ReportMetric(perBlock*5e6/(1<<20), "index-MiB@5M")
	b.ReportMetric(float64(r.dbBytes)/float64(m.RawBytes), "db/raw")
	b.ReportMetric(r.restartSec, "restart-s")
	b.ReportMetric(r.utxoSec, "txoutsetinfo-s")
}

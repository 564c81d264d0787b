package main

import (
	"context"
	"strings"
	"testing"
	"time"
)

// TestE2EInterval: --interval paces the miner to one block per interval (the whole run of
// --blocks 3 --interval 700ms takes at least two intervals), and on regtest without --blocks
// the miner is paced at one block a second by default, which it logs, and its block time
// stays at the clock. Unpaced, a regtest miner solved hundreds of blocks a second and pushed
// block time 40 minutes ahead.
func TestE2EInterval(t *testing.T) {
	n := newTestNode(t)
	h0 := n.height()
	start := time.Now()
	m := n.startMiner(t, regtestAddress(t, 1), "--blocks", "3", "--interval", "700ms")
	if code := m.Wait(t, 60*time.Second); code != 0 {
		t.Fatalf("miner exit %d\n%s", code, m.Out.Tail(logLines))
	}
	if d := time.Since(start); d < 1400*time.Millisecond {
		t.Errorf("3 blocks at --interval 700ms took %s, less than two intervals", d)
	}
	if h := n.height(); h != h0+3 || len(minedHashes(m)) != 3 {
		t.Fatalf("height %d (want %d), printed %q", h, h0+3, m.Stdout.String())
	}
	if !strings.Contains(m.Out.String(), "interval=700ms") {
		t.Errorf("the interval is not logged:\n%s", m.Out.Tail(logLines))
	}

	// The regtest default without --blocks: one block a second.
	h0 = n.height()
	d := n.startMiner(t, regtestAddress(t, 2))
	for deadline := time.Now().Add(30 * time.Second); len(minedHashes(d)) < 3; time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) || d.Exited() {
			t.Fatalf("the miner printed %d hashes:\n%s", len(minedHashes(d)), d.Out.Tail(logLines))
		}
	}
	if code := d.Stop(t, 10*time.Second); code != 0 {
		t.Fatalf("exit %d after SIGTERM\n%s", code, d.Out.Tail(logLines))
	}
	// The miner logs an accepted block before it waits out the interval, so the third block
	// is logged at least two intervals after the first (to the log's millisecond), however
	// late this test looks at the output.
	hashes, at := minedHashes(d), acceptedAt(t, d.Out.String())
	first, ok1 := at[hashes[0]]
	third, ok3 := at[hashes[2]]
	if !ok1 || !ok3 {
		t.Fatalf("no \"block accepted\" line for the first or third hash %v:\n%s", hashes[:3], d.Out.Tail(logLines))
	}
	if gap := third.Sub(first); gap < 2*time.Second-time.Millisecond {
		t.Errorf("3 blocks on regtest by default within %s: not paced at one a second\n%s", gap, d.Out.Tail(logLines))
	}
	if !strings.Contains(d.Out.String(), "interval=1s") {
		t.Errorf("the default interval is not logged:\n%s", d.Out.Tail(logLines))
	}
	tip, err := n.RPC.GetBlock(context.Background(), n.hashAt(n.height()))
	if err != nil {
		t.Fatal(err)
	}
	if ahead := time.Until(time.Unix(int64(tip.Timestamp), 0)); ahead > 2*time.Second || n.height() < h0+3 {
		t.Errorf("tip at height %d has a block time %s ahead of the clock", n.height(), ahead)
	}
}

// TestE2EBlockLogAndQuiet: the first 10 accepted blocks are logged at info level, later ones
// only at debug level; --quiet prints nothing (no hashes, no log lines, no summary) while it
// mines; --interval 0 given on regtest mines unpaced; a negative --interval is refused.
func TestE2EBlockLogAndQuiet(t *testing.T) {
	n := newTestNode(t)
	h0 := n.height()
	m := n.startMiner(t, regtestAddress(t, 1), "--blocks", "14", "--log-level", "info")
	if code := m.Wait(t, 60*time.Second); code != 0 {
		t.Fatalf("miner exit %d\n%s", code, m.Out.Tail(logLines))
	}
	if c := strings.Count(m.Out.String(), "msg=\"block accepted\""); c != 10 || len(minedHashes(m)) != 14 {
		t.Fatalf("14 blocks at info: %d block lines, %d hashes\n%s", c, len(minedHashes(m)), m.Out.Tail(logLines))
	}
	if !strings.Contains(m.Out.String(), "later ones at debug level") {
		t.Errorf("the tenth block's line does not say the rest go to debug:\n%s", m.Out.Tail(logLines))
	}
	dbg := n.startMiner(t, regtestAddress(t, 1), "--blocks", "12", "--log-level", "debug")
	if code := dbg.Wait(t, 60*time.Second); code != 0 {
		t.Fatalf("miner exit %d\n%s", code, dbg.Out.Tail(logLines))
	}
	if c := strings.Count(dbg.Out.String(), "msg=\"block accepted\""); c != 12 {
		t.Errorf("12 blocks at debug: %d block lines\n%s", c, dbg.Out.Tail(logLines))
	}

	q := n.startMiner(t, regtestAddress(t, 1), "--blocks", "3", "--quiet", "--interval", "0")
	if code := q.Wait(t, 60*time.Second); code != 0 {
		t.Fatalf("miner exit %d\n%s", code, q.Out.Tail(logLines))
	}
	if out := q.Out.String(); out != "" {
		t.Errorf("--quiet printed:\n%s", out)
	}
	if h := n.height(); h != h0+14+12+3 {
		t.Errorf("height %d, want %d", h, h0+14+12+3)
	}
	// --interval 0 on regtest without --blocks: unpaced (20 blocks long before 20 seconds).
	f := n.startMiner(t, regtestAddress(t, 3), "--interval", "0")
	n.waitHeight(n.height()+20, 15*time.Second, f)
	if code := f.Stop(t, 10*time.Second); code != 0 {
		t.Fatalf("exit %d after SIGTERM\n%s", code, f.Out.Tail(logLines))
	}
	if !strings.Contains(f.Out.String(), "interval=0s") {
		t.Errorf("--interval 0 is not logged as no pause:\n%s", f.Out.Tail(logLines))
	}

	bad := n.startMiner(t, regtestAddress(t, 1), "--interval", "-1s")
	if code := bad.Wait(t, 10*time.Second); code == 0 || !strings.Contains(bad.Out.String(), "--interval") {
		t.Errorf("--interval -1s: exit %d\n%s", code, bad.Out.String())
	}
}

// acceptedAt is the time of each "block accepted" line of a miner's log, by block hash.
func acceptedAt(t *testing.T, log string) map[string]time.Time {
	t.Helper()
	at := map[string]time.Time{}
	for line := range strings.Lines(log) {
		if !strings.Contains(line, `msg="block accepted"`) {
			continue
		}
		var ts, hash string
		for _, f := range strings.Fields(line) {
			if v, ok := strings.CutPrefix(f, "time="); ok {
				ts = v
			} else if v, ok := strings.CutPrefix(f, "hash="); ok {
				hash = v
			}
		}
		tm, err := time.Parse(time.RFC3339Nano, ts)
		if err != nil || hash == "" {
			t.Fatalf("a \"block accepted\" line without time or hash (%v): %s", err, line)
		}
		at[hash] = tm
	}
	return at
}

package netlab

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"slices"
	"testing"
	"time"
)

// TestForwarderDelaysTCPWithSourceIntact: three namespaces in two regions (10 ms inside,
// 60 ms between); a TCP connection from region 1 to region 0 sees its client's own lab
// address and a round trip of at least two one-way delays, while one inside region 0 is
// quick; a partition stops the traffic and healing lets it through again.
func TestForwarderDelaysTCPWithSourceIntact(t *testing.T) {
	if err := Supported(); err != nil {
		t.Skip(err)
	}
	l, err := New(Config{Nodes: 3, Regions: 2, IntraDelay: 10 * time.Millisecond,
		InterDelay: []time.Duration{60 * time.Millisecond}, BinDir: t.TempDir(), WorkDir: t.TempDir(),
		Mode: ModeConnect, Logf: t.Logf})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	srv, cliFar, cliNear := l.Nodes[0], l.Nodes[1], l.Nodes[2] // regions 0, 1, 0
	var ln net.Listener
	if err := InNetns(srv.NS, func() (err error) { ln, err = net.Listen("tcp", srv.IP.String()+":9000"); return }); err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				c.Write([]byte(c.RemoteAddr().(*net.TCPAddr).IP.String() + "\n"))
				io.Copy(c, c)
			}()
		}
	}()
	rtt := func(from *Node) (string, time.Duration) {
		t.Helper()
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		c, err := DialIn(from.NS, nil)(ctx, "tcp", srv.IP.String()+":9000")
		if err != nil {
			t.Fatalf("dial from %s: %v", from.IP, err)
		}
		defer c.Close()
		c.SetDeadline(time.Now().Add(5 * time.Second))
		buf := make([]byte, 64)
		n, err := c.Read(buf)
		if err != nil {
			t.Fatal(err)
		}
		seen := string(buf[:n-1])
		best := time.Hour
		for range 5 {
			start := time.Now()
			c.Write([]byte("x"))
			if _, err := io.ReadFull(c, buf[:1]); err != nil {
				t.Fatal(err)
			}
			best = min(best, time.Since(start))
		}
		return seen, best
	}
	seen, far := rtt(cliFar)
	if seen != cliFar.IP.String() {
		t.Errorf("the server saw %s, want the client's own address %s", seen, cliFar.IP)
	}
	if far < 108*time.Millisecond || far > 400*time.Millisecond {
		t.Errorf("round trip between regions %v, want about 120 ms (2 x 60 ms one way, 10%% jitter)", far)
	}
	_, near := rtt(cliNear)
	if near < 18*time.Millisecond || near > far/2 {
		t.Errorf("round trip inside a region %v, want about 20 ms", near)
	}
	t.Logf("round trips: %v between regions, %v inside one", far, near)

	l.Fwd.SetCut(func(a, b *Port) bool { return a.Region != b.Region })
	ctx, cancel := context.WithTimeout(context.Background(), 500*time.Millisecond)
	_, err = DialIn(cliFar.NS, nil)(ctx, "tcp", srv.IP.String()+":9000")
	cancel()
	if err == nil || !errors.Is(err, context.DeadlineExceeded) && !isTimeout(err) {
		t.Errorf("dial across a partition: %v, want a timeout", err)
	}
	l.Fwd.SetCut(nil)
	if _, d := rtt(cliFar); d < 108*time.Millisecond {
		t.Errorf("after healing: round trip %v", d)
	}
}

func isTimeout(err error) bool {
	var ne net.Error
	return errors.As(err, &ne) && ne.Timeout()
}

// TestCleanStaleRemovesDeadRunsOnly: namespaces of a lab whose process is gone are removed;
// those of a live one (this process) stay.
func TestCleanStaleRemovesDeadRunsOnly(t *testing.T) {
	if err := Supported(); err != nil {
		t.Skip(err)
	}
	dead := 0
	for pid := 4_000_000; pid < 4_000_100; pid++ {
		if !processAlive(pid) {
			dead = pid
			break
		}
	}
	if dead == 0 {
		t.Skip("no free pid found")
	}
	gone := fmt.Sprintf("%s%d-n00", Prefix, dead)
	live := fmt.Sprintf("%s%d-test", Prefix, os.Getpid())
	for _, ns := range []string{gone, live} {
		if err := run("ip", "netns", "add", ns); err != nil {
			t.Fatal(err)
		}
	}
	defer deleteNetns(live)
	defer deleteNetns(gone)
	removed := CleanStale()
	if !slices.Contains(removed, gone) || slices.Contains(removed, live) {
		t.Errorf("removed %v, want %s and not %s", removed, gone, live)
	}
	if slices.Contains(listNetns(), gone) || !slices.Contains(listNetns(), live) {
		t.Errorf("namespaces after: %v", listNetns())
	}
}

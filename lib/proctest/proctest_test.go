package proctest

import (
	"context"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/cointoolkit/coin/lib/keys"
	"github.com/cointoolkit/coin/lib/params"
)

const childPkg = "./lib/proctest/testdata/child"

func TestMain(m *testing.M) {
	code := m.Run()
	Cleanup()
	os.Exit(code)
}

func child(t *testing.T) string { return filepath.Join(Build(t, childPkg), "child") }

// fakeTB records the failure of a function under test, which Fatal ends as t.Fatal would.
type fakeTB struct {
	testing.TB
	msg string
}

func (f *fakeTB) Helper() {}

func (f *fakeTB) Fatal(args ...any) { f.msg = fmt.Sprint(args...); runtime.Goexit() }

func (f *fakeTB) Fatalf(format string, args ...any) {
	f.msg = fmt.Sprintf(format, args...)
	runtime.Goexit()
}

// failure runs fn in a goroutine of its own and returns the message it failed with.
func failure(t *testing.T, fn func(tb testing.TB)) string {
	t.Helper()
	f := &fakeTB{TB: t}
	done := make(chan struct{})
	go func() { defer close(done); fn(f) }()
	<-done
	if f.msg == "" {
		t.Fatal("did not fail")
	}
	return f.msg
}

func TestBuildOncePerSet(t *testing.T) {
	dir := Build(t, childPkg)
	if _, err := os.Stat(filepath.Join(dir, "child")); err != nil {
		t.Fatal(err)
	}
	if again := Build(t, childPkg, childPkg); again != dir {
		t.Fatalf("the same set built again: %s, then %s", dir, again)
	}
	both := Build(t, "./cmd/coin-node", childPkg)
	if both == dir {
		t.Fatal("another set shares a directory")
	}
	if again := Build(t, childPkg, "./cmd/coin-node"); again != both {
		t.Fatal("the order of the packages made another build")
	}
	for _, name := range []string{"coin-node", "child"} {
		if _, err := os.Stat(filepath.Join(both, name)); err != nil {
			t.Fatal(err)
		}
	}
	if msg := failure(t, func(tb testing.TB) { Build(tb, "./no/such/package") }); !strings.Contains(msg, "go build ./no/such/package") {
		t.Fatalf("failed build: %s", msg)
	}
	if msg := failure(t, func(tb testing.TB) { Build(tb) }); !strings.Contains(msg, "no packages") {
		t.Fatalf("empty build: %s", msg)
	}
}

func TestCleanupThenBuildAgain(t *testing.T) {
	dir := Build(t, childPkg)
	Cleanup()
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Fatalf("%s after Cleanup: %v", dir, err)
	}
	again := Build(t, childPkg)
	if _, err := os.Stat(filepath.Join(again, "child")); err != nil {
		t.Fatal(err)
	}
}

func TestFreePort(t *testing.T) {
	l, err := net.Listen("tcp", fmt.Sprintf("127.0.0.1:%d", FreePort(t)))
	if err != nil {
		t.Fatal(err)
	}
	l.Close()
}

func TestBufferTail(t *testing.T) {
	var b Buffer
	fmt.Fprint(&b, "a\nb\nc\n")
	for n, want := range map[int]string{0: "", 1: "c\n", 2: "b\nc\n", 3: "a\nb\nc\n", 9: "a\nb\nc\n"} {
		if got := b.Tail(n); got != want {
			t.Errorf("Tail(%d) = %q, want %q", n, got, want)
		}
	}
	fmt.Fprint(&b, "d")
	if got := b.Tail(2); got != "c\nd" {
		t.Errorf("Tail(2) without a final newline = %q", got)
	}
}

func TestProcOutputAndExitCode(t *testing.T) {
	p := Start(t, child(t), "out:to stdout", "err:to stderr", "exit:3")
	if code := p.Wait(t, 10*time.Second); code != 3 {
		t.Fatalf("exit code %d", code)
	}
	if !p.Exited() {
		t.Fatal("not Exited after Wait")
	}
	if got := p.Out.String(); !strings.Contains(got, "to stdout\n") || !strings.Contains(got, "to stderr\n") {
		t.Fatalf("Out %q", got)
	}
	if got := p.Stdout.String(); got != "to stdout\n" {
		t.Fatalf("Stdout %q", got)
	}
}

// waitOutput waits until p has written s.
func waitOutput(t *testing.T, p *Proc, s string) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); !strings.Contains(p.Out.String(), s); time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) || p.Exited() {
			t.Fatalf("no %q in %q", s, p.Out.String())
		}
	}
}

func TestProcStopKillAndCleanup(t *testing.T) {
	bin := child(t)
	p := Start(t, bin, "term:7", "out:ready", "sleep:1m")
	waitOutput(t, p, "ready")
	if code := p.Stop(t, 10*time.Second); code != 7 {
		t.Fatalf("exit code %d after SIGTERM", code)
	}

	p = Start(t, bin, "sleep:1m")
	if p.Exited() {
		t.Fatal("Exited while running")
	}
	p.Kill()
	if !p.Exited() || p.Cmd.ProcessState.ExitCode() != -1 {
		t.Fatalf("after Kill: exited %v, %v", p.Exited(), p.Cmd.ProcessState)
	}
	p.Kill() // a second Kill does nothing

	var left *Proc
	t.Run("sub", func(t *testing.T) { left = Start(t, bin, "sleep:1m") })
	if !left.Exited() {
		t.Fatal("a process outlived its test")
	}
}

func TestProcFailures(t *testing.T) {
	bin := child(t)
	p := Start(t, bin, "ignoreterm", "out:stubborn", "sleep:1m")
	waitOutput(t, p, "stubborn")
	if msg := failure(t, func(tb testing.TB) { p.Wait(tb, 50*time.Millisecond) }); !strings.Contains(msg, "child did not exit within 50ms") || !strings.Contains(msg, "stubborn") {
		t.Fatalf("Wait: %s", msg)
	}
	if msg := failure(t, func(tb testing.TB) { p.Stop(tb, 200*time.Millisecond) }); !strings.Contains(msg, "did not stop within 200ms of SIGTERM") || !strings.Contains(msg, "stubborn") {
		t.Fatalf("Stop: %s", msg)
	}
	if !p.Exited() {
		t.Fatal("Stop left the process running")
	}
	if msg := failure(t, func(tb testing.TB) { Start(tb, filepath.Join(t.TempDir(), "missing")) }); !strings.Contains(msg, "missing") {
		t.Fatalf("Start: %s", msg)
	}
}

func TestNodeRestartsOnItsState(t *testing.T) {
	bin := filepath.Join(Build(t, "./cmd/coin-node"), "coin-node")
	n := StartNode(t, bin, "--log-level", "debug")
	args := n.Args()
	for _, want := range []string{"--network regtest", "--data-dir " + n.DataDir, "--rpc-bind " + n.RPCAddr,
		fmt.Sprintf("--p2p-port %d", n.P2PPort), "--log-level debug"} {
		if !strings.Contains(strings.Join(args, " "), want) {
			t.Errorf("args %q lack %q", args, want)
		}
	}
	if n.URL() != "http://"+n.RPCAddr || !strings.HasPrefix(n.P2PAddr(), "127.0.0.1:") {
		t.Fatalf("URL %s, P2PAddr %s", n.URL(), n.P2PAddr())
	}
	addr, err := keys.EncodeAddress(params.Regtest.HRP, keys.PubKeyHash{1})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if _, err := n.RPC.GenerateToAddress(ctx, 3, addr); err != nil {
		t.Fatal(err)
	}
	if msg := failure(t, func(tb testing.TB) { n.Start(tb) }); !strings.Contains(msg, "still running") {
		t.Fatalf("a second Start: %s", msg)
	}

	first := n.Proc
	if code := first.Stop(t, 20*time.Second); code != 0 {
		t.Fatalf("exit code %d after SIGTERM:\n%s", code, first.Out)
	}
	n.Start(t)
	if n.Proc == first {
		t.Fatal("Start kept the old process")
	}
	if h, err := n.RPC.GetBlockCount(ctx); err != nil || h != 3 {
		t.Fatalf("height %d (%v) after a restart", h, err)
	}
	n.Proc.Kill()
	n.Extra = append(slices.Clip(n.Extra), "--log-file")
	n.Start(t)
	if h, err := n.RPC.GetBlockCount(ctx); err != nil || h != 3 {
		t.Fatalf("height %d (%v) after a kill", h, err)
	}
	if _, err := os.Stat(filepath.Join(n.DataDir, "node.log")); err != nil {
		t.Fatalf("Extra changed after the first start not used: %v", err)
	}
}

func TestNodeThatDoesNotComeUp(t *testing.T) {
	start := time.Now()
	bin := child(t)
	msg := failure(t, func(tb testing.TB) { StartNode(tb, bin, "err:no such flag") })
	if !strings.Contains(msg, "coin-node did not come up") || !strings.Contains(msg, "no such flag") {
		t.Fatalf("message: %s", msg)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Fatalf("waited %v for a process that had exited", d)
	}
}

// A first start whose port was taken meanwhile moves to new ports and comes up.
func TestNodeStartRetriesTakenPort(t *testing.T) {
	if testing.Short() {
		t.Skip("builds coin-node")
	}
	bin := Build(t, "./cmd/coin-node")
	n := NewNode(t, filepath.Join(bin, "coin-node"))
	l, err := net.Listen("tcp", n.RPCAddr)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	taken := n.RPCAddr
	n.Start(t)
	if n.RPCAddr == taken {
		t.Fatal("the node did not move off the taken port")
	}
	if _, err := n.RPC.GetBlockCount(context.Background()); err != nil {
		t.Fatal(err)
	}
}

// CPU counts the CPU time a running process used: the 300 ms it worked (to the
// clock tick, 10 ms, and the kernel's own rounding), and not much more.
func TestProcCPU(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("CPU reads /proc")
	}
	p := Start(t, child(t), "spin:300ms", "out:spun", "sleep:1m")
	waitOutput(t, p, "spun")
	if c := p.CPU(); c < 250*time.Millisecond || c > 2*time.Second {
		t.Fatalf("CPU %v after working 300 ms", c)
	}
	p.Kill()
}

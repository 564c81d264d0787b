package proctest

import (
	"bytes"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// FreePort is a TCP port that was free a moment ago on every interface. It is drawn at
// random from 20000–31999, below Linux's ephemeral range (32768–60999), so the outgoing
// connections of tests running in parallel (which take ephemeral ports) never land on it;
// two test processes drawing the same port is unlikely, and Node.Start retries a first start
// that lost such a race.
func FreePort(t testing.TB) int {
	t.Helper()
	for range 200 {
		port := 20000 + rand.IntN(12000)
		l, err := net.Listen("tcp", fmt.Sprintf(":%d", port))
		if err != nil {
			continue
		}
		l.Close()
		return port
	}
	t.Fatal("no free TCP port in 20000-31999")
	return 0
}

// Buffer is a bytes.Buffer that a process may write while the test reads it.
type Buffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (b *Buffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.Write(p)
}

// String is everything written so far.
func (b *Buffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.String()
}

// Tail is the last n lines written so far (all of them if there are fewer).
func (b *Buffer) Tail(n int) string {
	s := b.String()
	if n <= 0 {
		return ""
	}
	i := len(strings.TrimSuffix(s, "\n"))
	for range n {
		j := strings.LastIndexByte(s[:i], '\n')
		if j < 0 {
			return s
		}
		i = j
	}
	return s[i+1:]
}

// Proc is a started process.
type Proc struct {
	Cmd    *exec.Cmd
	Out    *Buffer // stdout and stderr
	Stdout *Buffer // stdout alone
	done   chan struct{}
}

// outputLines is how much of a process's output a failure message quotes.
const outputLines = 200

// Start runs the executable bin with args; it is killed when the test ends.
func Start(t testing.TB, bin string, args ...string) *Proc {
	t.Helper()
	p := &Proc{Cmd: exec.Command(bin, args...), Out: new(Buffer), Stdout: new(Buffer), done: make(chan struct{})}
	p.Cmd.Stdout, p.Cmd.Stderr = io.MultiWriter(p.Stdout, p.Out), p.Out
	if err := p.Cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { _ = p.Cmd.Wait(); close(p.done) }()
	t.Cleanup(p.Kill)
	return p
}

// Exited reports whether the process has ended.
func (p *Proc) Exited() bool {
	select {
	case <-p.done:
		return true
	default:
		return false
	}
}

// Kill kills the process, if it still runs, and waits for it.
func (p *Proc) Kill() {
	if !p.Exited() {
		_ = p.Cmd.Process.Kill()
		<-p.done
	}
}

// Wait waits up to timeout for the process to exit and returns its exit code (-1 if a
// signal ended it); the test fails if it does not exit in time.
func (p *Proc) Wait(t testing.TB, timeout time.Duration) int {
	t.Helper()
	select {
	case <-p.done:
		return p.Cmd.ProcessState.ExitCode()
	case <-time.After(timeout):
		t.Fatalf("%s did not exit within %v:\n%s", p.name(), timeout, p.Out.Tail(outputLines))
		return -1
	}
}

// Stop sends SIGTERM and returns the exit code as Wait does; a process still running after
// timeout is killed and fails the test.
func (p *Proc) Stop(t testing.TB, timeout time.Duration) int {
	t.Helper()
	_ = p.Cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-p.done:
		return p.Cmd.ProcessState.ExitCode()
	case <-time.After(timeout):
		p.Kill()
		t.Fatalf("%s did not stop within %v of SIGTERM:\n%s", p.name(), timeout, p.Out.Tail(outputLines))
		return -1
	}
}

func (p *Proc) name() string { return filepath.Base(p.Cmd.Path) }

// CPU is the CPU time (user + system) the process has used so far, read from
// /proc/PID/stat (clock ticks of 10 ms); 0 where that file is missing (not Linux) or the
// process has been reaped.
func (p *Proc) CPU() time.Duration {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(p.Cmd.Process.Pid) + "/stat")
	if err != nil {
		return 0
	}
	// The command name, in parentheses, may hold spaces; the fields after it start with
	// the state (field 3), so utime and stime (fields 14 and 15) are the 12th and 13th.
	s := string(b)
	f := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
	if len(f) < 13 {
		return 0
	}
	user, _ := strconv.ParseInt(f[11], 10, 64)
	sys, _ := strconv.ParseInt(f[12], 10, 64)
	return time.Duration(user+sys) * 10 * time.Millisecond
}

package netlab

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// ErrUnsupported says the lab cannot run on this machine (not root, no ip(8), no network
// namespaces, no ethtool); the reduced lab's test skips with it.
var ErrUnsupported = errors.New("netlab: network namespaces unavailable")

// Prefix is the start of every namespace name the lab creates: coinlab-<pid>-<name>. The pid
// tells a crashed run's leftovers (its process is gone) from a running lab's.
const Prefix = "coinlab-"

// Supported reports why the lab cannot run here (wrapping ErrUnsupported), or nil.
func Supported() error {
	if os.Geteuid() != 0 {
		return fmt.Errorf("%w: needs root (ip netns add)", ErrUnsupported)
	}
	for _, tool := range []string{"ip", "ethtool"} {
		if _, err := exec.LookPath(tool); err != nil {
			return fmt.Errorf("%w: %s is not installed (apt-get install iproute2 ethtool)", ErrUnsupported, tool)
		}
	}
	name := fmt.Sprintf("%s%d-probe", Prefix, os.Getpid())
	if err := run("ip", "netns", "add", name); err != nil {
		return fmt.Errorf("%w: %v", ErrUnsupported, err)
	}
	defer run("ip", "netns", "del", name)
	if err := run("ip", "-n", name, "link", "add", "p0", "type", "veth", "peer", "name", "p1"); err != nil {
		return fmt.Errorf("%w: veth: %v", ErrUnsupported, err)
	}
	return nil
}

// run runs a command and returns its output in the error when it fails.
func run(name string, args ...string) error {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	out, err := exec.CommandContext(ctx, name, args...).CombinedOutput()
	if err != nil {
		return fmt.Errorf("%s %s: %v: %s", name, strings.Join(args, " "), err, bytes.TrimSpace(out))
	}
	return nil
}

// ipBatch runs ip(8) commands, one a line, in one process (-batch), optionally inside ns.
func ipBatch(ns string, lines []string) error {
	if len(lines) == 0 {
		return nil
	}
	args := []string{"-batch", "-"}
	if ns != "" {
		args = append([]string{"-n", ns}, args...)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, "ip", args...)
	cmd.Stdin = strings.NewReader(strings.Join(lines, "\n") + "\n")
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("ip -n %s -batch: %v: %s", ns, err, bytes.TrimSpace(out))
	}
	return nil
}

// CleanStale removes the namespaces (and kills the processes in them) that an earlier lab
// run left behind when it crashed: those named coinlab-<pid>- whose pid is not alive. It
// returns the names removed.
func CleanStale() []string {
	var removed []string
	for _, ns := range listNetns() {
		rest, ok := strings.CutPrefix(ns, Prefix)
		if !ok {
			continue
		}
		pidStr, _, _ := strings.Cut(rest, "-")
		pid, err := strconv.Atoi(pidStr)
		if err != nil || pid == os.Getpid() || processAlive(pid) {
			continue
		}
		deleteNetns(ns)
		removed = append(removed, ns)
	}
	return removed
}

func processAlive(pid int) bool {
	err := syscall.Kill(pid, 0)
	return err == nil || errors.Is(err, syscall.EPERM)
}

// listNetns is the names of the named network namespaces.
func listNetns() []string {
	entries, err := os.ReadDir("/var/run/netns")
	if err != nil {
		return nil
	}
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	return names
}

// deleteNetns kills every process in ns and deletes it (its veths go with it).
func deleteNetns(ns string) {
	if out, err := exec.Command("ip", "netns", "pids", ns).Output(); err == nil {
		for _, f := range strings.Fields(string(out)) {
			if pid, err := strconv.Atoi(f); err == nil {
				syscall.Kill(pid, syscall.SIGKILL)
			}
		}
	}
	for i := 0; i < 20; i++ {
		if run("ip", "netns", "del", ns) == nil {
			return
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// InNetns runs f on an OS thread that has entered the named network namespace: the sockets
// f opens belong to it. The thread goes back to the lab's namespace afterwards, or, if that
// fails, is thrown away (its goroutine ends while locked to it).
func InNetns(ns string, f func() error) error {
	errc := make(chan error, 1)
	go func() {
		runtime.LockOSThread()
		orig, err := os.Open("/proc/thread-self/ns/net")
		if err != nil {
			runtime.UnlockOSThread()
			errc <- err
			return
		}
		defer orig.Close()
		target, err := os.Open("/var/run/netns/" + ns)
		if err != nil {
			runtime.UnlockOSThread()
			errc <- err
			return
		}
		defer target.Close()
		if err := unix.Setns(int(target.Fd()), unix.CLONE_NEWNET); err != nil {
			runtime.UnlockOSThread()
			errc <- fmt.Errorf("setns %s: %w", ns, err)
			return
		}
		ferr := f()
		if err := unix.Setns(int(orig.Fd()), unix.CLONE_NEWNET); err != nil {
			errc <- errors.Join(ferr, err) // the thread stays locked and dies with the goroutine
			return
		}
		runtime.UnlockOSThread()
		errc <- ferr
	}()
	return <-errc
}

// DialIn is a DialContext that opens its TCP connections from inside namespace ns (from
// laddr when it is not nil), as a process running there would.
func DialIn(ns string, laddr *net.TCPAddr) func(ctx context.Context, network, addr string) (net.Conn, error) {
	return func(ctx context.Context, network, addr string) (net.Conn, error) {
		var c net.Conn
		err := InNetns(ns, func() error {
			d := net.Dialer{Timeout: 5 * time.Second}
			if laddr != nil {
				d.LocalAddr = laddr
			}
			var err error
			c, err = d.DialContext(ctx, network, addr)
			return err
		})
		return c, err
	}
}

package devnet

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"time"
)

// stopGrace is how long a process has to exit after SIGINT before it is killed.
const stopGrace = 20 * time.Second

// child is one process the devnet started.
type child struct {
	name string
	cmd  *exec.Cmd
	log  string
	done chan struct{} // closed when the process has exited
}

// supervisor starts the devnet's processes, reports the first one that exits by itself,
// and stops them all, the last started first.
type supervisor struct {
	log      *slog.Logger
	mu       sync.Mutex
	children []*child
	stopping bool
	exited   chan error // the first unexpected exit (buffered, one)
}

func newSupervisor(log *slog.Logger) *supervisor {
	return &supervisor{log: log, exited: make(chan error, 1)}
}

// start runs bin with args, its standard output and error appended to logPath. The process
// gets its own process group, so a Ctrl-C on the terminal reaches the devnet only, which
// then stops the processes in order.
func (s *supervisor) start(name, bin string, args []string, logPath string, env []string) error {
	f, err := os.OpenFile(logPath, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o600)
	if err != nil {
		return err
	}
	cmd := exec.Command(bin, args...)
	cmd.Stdout, cmd.Stderr = f, f
	cmd.Env = append(os.Environ(), env...)
	// Pdeathsig: if the devnet itself is killed, its processes stop too (cleanly, by SIGTERM).
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGTERM}
	if err := cmd.Start(); err != nil {
		f.Close()
		return fmt.Errorf("devnet: start %s: %w", name, err)
	}
	c := &child{name: name, cmd: cmd, log: logPath, done: make(chan struct{})}
	s.mu.Lock()
	s.children = append(s.children, c)
	s.mu.Unlock()
	s.log.Info("devnet: started", "process", name, "pid", cmd.Process.Pid, "log", logPath)
	go func() {
		err := cmd.Wait()
		f.Close()
		close(c.done)
		s.mu.Lock()
		stopping := s.stopping
		s.mu.Unlock()
		if stopping {
			return
		}
		select {
		case s.exited <- fmt.Errorf("%w: %s (%v); the end of its log %s:\n%s", ErrChildExited, name, err, logPath, tail(logPath, 8)):
		default:
		}
	}()
	return nil
}

// failed returns the first unexpected exit, if one happened (without waiting).
func (s *supervisor) failed() error {
	select {
	case err := <-s.exited:
		s.exited <- err // keep it for Run's select
		return err
	default:
		return nil
	}
}

// stopAll sends SIGINT to every process, the last started first, waits for each to exit
// (SIGKILL after stopGrace), and returns when all are gone.
func (s *supervisor) stopAll() {
	s.mu.Lock()
	s.stopping = true
	children := append([]*child(nil), s.children...)
	s.mu.Unlock()
	for i := len(children) - 1; i >= 0; i-- {
		c := children[i]
		select {
		case <-c.done:
			continue
		default:
		}
		_ = c.cmd.Process.Signal(os.Interrupt)
		select {
		case <-c.done:
		case <-time.After(stopGrace):
			s.log.Warn("devnet: did not stop in time; killing", "process", c.name)
			_ = c.cmd.Process.Kill()
			<-c.done
		}
		s.log.Info("devnet: stopped", "process", c.name)
	}
}

// runTool runs a short-lived tool and returns its standard output; a failure carries its
// standard error.
func runTool(ctx context.Context, bin string, env []string, args ...string) (string, error) {
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Env = append(os.Environ(), env...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			return "", fmt.Errorf("devnet: %s %s: %s", bin, strings.Join(args, " "), strings.TrimSpace(errb.String()))
		}
		return "", err
	}
	return out.String(), nil
}

// tail returns the last n lines of a file.
func tail(path string, n int) string {
	b, err := os.ReadFile(path)
	if err != nil {
		return ""
	}
	lines := strings.Split(strings.TrimRight(string(b), "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

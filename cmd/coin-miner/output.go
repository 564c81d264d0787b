package main

import (
	"context"
	"fmt"
	"github.com/cointoolkit/coin/lib/logging"
	"io"
	"log/slog"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/cointoolkit/coin/lib/cliutil"
	"github.com/cointoolkit/coin/lib/miner"
	"github.com/cointoolkit/coin/lib/sha256d"
)

func kernelName() string { return sha256d.KernelName() }

// console writes the miner's output: block hashes to out (standard output), logs to errw
// (standard error) and, when errw is a terminal, the live status line under the logs.
type console struct {
	mu     sync.Mutex
	out    io.Writer
	errw   io.Writer
	tty    bool // errw is a terminal: status line redrawn with \r
	outTTY bool // out is a terminal too, so it shares the screen with the status line
	status string
}

func newConsole(out, errw io.Writer) *console {
	c := &console{out: out, errw: errw}
	if f, ok := errw.(*os.File); ok && cliutil.IsTerminal(f) {
		c.tty = true
		if o, ok := out.(*os.File); ok && cliutil.IsTerminal(o) {
			c.outTTY = true
		}
	}
	return c
}

// clearLine erases the status line (the caller holds mu).
func (c *console) clearLine() {
	if c.status != "" {
		io.WriteString(c.errw, "\r\x1b[K")
	}
}

// redraw draws the status line again (the caller holds mu).
func (c *console) redraw() {
	if c.status != "" {
		io.WriteString(c.errw, "\r"+c.status+"\x1b[K")
	}
}

// Write is the log handlers' writer: on a terminal each record goes above the status line.
func (c *console) Write(p []byte) (int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.clearLine()
	n, err := c.errw.Write(p)
	c.redraw()
	return n, err
}

// setStatus replaces the status line (terminal only).
func (c *console) setStatus(s string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.clearLine()
	c.status = s
	c.redraw()
}

// printBlock writes an accepted block's hash to standard output.
func (c *console) printBlock(hash string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.outTTY {
		c.clearLine()
	}
	fmt.Fprintln(c.out, hash)
	if c.outTTY {
		c.redraw()
	}
}

// logger is a key=value logger on the console; on a terminal the time is shortened.
func (c *console) logger(level slog.Level) *slog.Logger {
	return slog.New(slog.NewTextHandler(c, &slog.HandlerOptions{Level: level,
		ReplaceAttr: func(groups []string, a slog.Attr) slog.Attr {
			switch {
			case len(groups) > 0:
			case a.Key == slog.LevelKey:
				a = logging.NameTrace(a)
			case a.Key == slog.TimeKey && c.tty:
				a.Value = slog.StringValue(a.Value.Time().Format(time.TimeOnly))
			}
			return a
		}}))
}

// report keeps the status line fresh (terminal) or logs a status line every interval.
func (c *console) report(ctx context.Context, m *miner.Miner, logger *slog.Logger, interval time.Duration) {
	if c.tty {
		interval = time.Second
	}
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			if c.tty {
				c.setStatus("")
			}
			return
		case <-t.C:
			st := m.Stats()
			if c.tty {
				c.setStatus(statusLine(st))
				continue
			}
			logger.Info("status", statusAttrs(st)...)
		}
	}
}

// statusLine is the terminal's one-line status.
func statusLine(st miner.Stats) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s | accepted %d | rejected %d", miner.FormatRate(st.Hashrate), st.Accepted, st.Rejected)
	if st.Stale > 0 {
		fmt.Fprintf(&b, " | stale %d", st.Stale)
	}
	fmt.Fprintf(&b, " | height %d | %d threads | up %s", st.Height, st.Threads, st.Elapsed.Round(time.Second))
	if !st.NodeUp {
		b.WriteString(" | node unreachable, retrying")
	} else if st.Pausing {
		b.WriteString(" | pausing (--interval)")
	} else if !st.Mining {
		b.WriteString(" | waiting for work")
	}
	return b.String()
}

func statusAttrs(st miner.Stats) []any {
	return []any{"hashrate", miner.FormatRate(st.Hashrate), "hashes_per_sec", int64(st.Hashrate),
		"accepted", st.Accepted, "rejected", st.Rejected, "stale", st.Stale, "height", st.Height,
		"threads", st.Threads, "node_up", st.NodeUp, "uptime", st.Elapsed.Round(time.Second)}
}

// summary is printed on exit, whatever the log level: plain text on a terminal, a
// key=value line otherwise.
func (c *console) summary(st miner.Stats, _ slog.Level) {
	if c.tty {
		c.mu.Lock()
		defer c.mu.Unlock()
		c.clearLine()
		c.status = ""
		fmt.Fprintf(c.errw, "mined for %s on %d threads: %d blocks accepted, %d rejected, %d stale dropped, %d not submitted\n",
			st.Elapsed.Round(time.Second), st.Threads, st.Accepted, st.Rejected, st.Stale, st.SubmitErrors)
		fmt.Fprintf(c.errw, "%d hashes, %s on average; %d templates; chain height %d\n",
			st.Hashes, miner.FormatRate(st.AvgHashrate), st.Templates, st.Height)
		return
	}
	l := c.logger(slog.LevelInfo)
	l.Info("summary", "uptime", st.Elapsed.Round(time.Millisecond), "threads", st.Threads,
		"accepted", st.Accepted, "rejected", st.Rejected, "stale", st.Stale, "submit_errors", st.SubmitErrors,
		"hashes", st.Hashes, "avg_hashrate", miner.FormatRate(st.AvgHashrate), "templates", st.Templates,
		"rolls", st.Rolls, "height", st.Height)
}

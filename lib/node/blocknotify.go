package node

import (
	"context"
	"log/slog"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"sync"
	"time"

	"github.com/cointoolkit/coin/lib/types"
)

// --blocknotify (docs/operations.md, "Notifications"): as Bitcoin Core's -blocknotify, each
// new tip runs the command with every %s replaced by the tip's hash, through the shell
// (/bin/sh -c), so the command may use the shell's syntax. What reaches the shell is the
// operator's own command and 64 hex digits: no text from the network. The commands run
// beside the node, at most blockNotifyWorkers at once; tips that come while blockNotifyQueue
// wait are skipped with a warning (the next tip's command still runs), so a slow command
// never holds the node back nor piles up processes. Each run is killed after
// BlockNotifyTimeout.

const (
	blockNotifyWorkers = 4
	blockNotifyQueue   = 64
	// BlockNotifyTimeout bounds one run of the command.
	BlockNotifyTimeout = 5 * time.Minute
)

// blockNotifier runs Config.BlockNotify for each new tip.
type blockNotifier struct {
	cmd  string
	log  *slog.Logger
	jobs chan types.Hash
	wg   sync.WaitGroup
	stop context.CancelFunc
	ctx  context.Context
}

func newBlockNotifier(cmd string, log *slog.Logger) *blockNotifier {
	ctx, cancel := context.WithCancel(context.Background())
	b := &blockNotifier{cmd: cmd, log: log, jobs: make(chan types.Hash, blockNotifyQueue), ctx: ctx, stop: cancel}
	for range blockNotifyWorkers {
		b.wg.Add(1)
		go b.work()
	}
	return b
}

// notify queues a run for tip; it never waits.
func (b *blockNotifier) notify(tip types.Hash) {
	select {
	case b.jobs <- tip:
	default:
		b.log.Warn("blocknotify: skipped a tip: the earlier commands are still running", "tip", tip,
			"running", blockNotifyWorkers, "queued", blockNotifyQueue)
	}
}

func (b *blockNotifier) work() {
	defer b.wg.Done()
	for {
		select {
		case <-b.ctx.Done():
			return
		case tip := <-b.jobs:
			b.run(tip)
		}
	}
}

func (b *blockNotifier) run(tip types.Hash) {
	ctx, cancel := context.WithTimeout(b.ctx, BlockNotifyTimeout)
	defer cancel()
	line := strings.ReplaceAll(b.cmd, "%s", tip.String())
	var c *exec.Cmd
	if runtime.GOOS == "windows" {
		c = exec.CommandContext(ctx, "cmd", "/C", line)
	} else {
		c = exec.CommandContext(ctx, "/bin/sh", "-c", line)
	}
	c.Stdout, c.Stderr = os.Stdout, os.Stderr
	start := time.Now()
	if err := c.Run(); err != nil {
		b.log.Warn("blocknotify: command failed", "tip", tip, "err", err)
		return
	}
	b.log.Debug("blocknotify: command ran", "tip", tip, "took", time.Since(start).Round(time.Millisecond).String())
}

// close stops taking tips, kills the runs under way and waits for the workers.
func (b *blockNotifier) close() {
	b.stop()
	b.wg.Wait()
}

package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/big"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/cointoolkit/coin/lib/amount"
	"github.com/cointoolkit/coin/lib/miner"
	"github.com/cointoolkit/coin/lib/pow"
	"github.com/cointoolkit/coin/lib/rpcapi"
)

// coin-cli dashboard: bitcoin-cli -getinfo's idea as a live screen. One snapshot is read
// from several calls (getblockchaininfo, getmempoolinfo, getsyncstatus, getconductinfo and
// the headers of the last --blocks blocks); on a terminal it is redrawn in place every
// --interval until SIGINT, otherwise printed once as JSON.

const (
	defaultDashInterval = 2 * time.Second
	defaultDashBlocks   = 60
	maxDashBlocks       = 2016
)

// Dashboard is one snapshot, the JSON printed when standard output is not a terminal.
type Dashboard struct {
	Time          string       `json:"time"` // RFC 3339, when the snapshot was taken
	Network       string       `json:"network"`
	Height        uint64       `json:"height"`
	BestBlockHash string       `json:"best_block_hash"`
	Peers         int          `json:"peers"`
	Mempool       DashMempool  `json:"mempool"`
	Sync          DashSync     `json:"sync"`
	Hashrate      DashHashrate `json:"hashrate"`
	DecayPool     uint64       `json:"decay_pool"`      // subunits
	DecayPoolCoin string       `json:"decay_pool_coin"` // the same in COIN
	Agents        DashAgents   `json:"agents"`
	Errors        []string     `json:"errors,omitempty"` // parts the node did not answer
	hashrateNote  string       // why no estimate (terminal only)
}

// DashMempool is getmempoolinfo's counts.
type DashMempool struct {
	Size     int    `json:"size"`
	Bytes    int    `json:"bytes"`
	TotalFee uint64 `json:"total_fee"`
}

// DashSync is getsyncstatus's state.
type DashSync struct {
	Syncing      bool    `json:"syncing"`
	Progress     float64 `json:"progress"`
	TargetHeight uint64  `json:"target_height"`
}

// DashHashrate is the network hashrate seen: the expected hashes of the window's blocks
// (2^256 / (target+1) each) over the time between its first and last timestamps.
type DashHashrate struct {
	HashesPerSecond float64 `json:"hashes_per_second"`
	Formatted       string  `json:"formatted"`
	Blocks          uint64  `json:"blocks"`  // blocks in the window
	Seconds         uint64  `json:"seconds"` // their timespan
	// AvgBlockSeconds is Seconds / Blocks (the target is 60).
	AvgBlockSeconds float64 `json:"avg_block_seconds"`
}

// DashAgents is getconductinfo's counts.
type DashAgents struct {
	Agents        uint64 `json:"agents"`
	OpenContracts uint64 `json:"open_contracts"`
}

func dashboardCommand() *cli.Command {
	return &cli.Command{
		Name:      "dashboard",
		Category:  "util",
		Usage:     "A live summary of the node: height, peers, mempool, sync, hashrate seen, decay pool, agents.",
		UsageText: manUsage("dashboard", "[--interval DURATION] [--blocks N] [--json]"),
		Description: strings.TrimSpace(`
Reads getblockchaininfo, getmempoolinfo, getsyncstatus, getconductinfo and the headers of
the last --blocks blocks, and shows the chain height and tip, the peers, the mempool
(transactions, bytes, fees), the sync state with a progress bar, the hashrate seen (the
expected hashes of those blocks, 2^256/(target+1) each, over the time between their
timestamps: an estimate that is rough over few blocks), the decay pool and the agents.

On a terminal the screen is redrawn in place every --interval until Ctrl-C. When standard
output is not a terminal (or with --json) one snapshot prints as a JSON object and the
command exits, so it can feed scripts and monitoring:

    coin-cli --network regtest dashboard
    coin-cli dashboard | jq .hashrate.hashes_per_second`),
		Flags: []cli.Flag{
			&cli.DurationFlag{Name: "interval", Value: defaultDashInterval, Usage: "redraw every `DURATION` on a terminal"},
			&cli.IntFlag{Name: "blocks", Value: defaultDashBlocks, Usage: fmt.Sprintf("estimate the hashrate over the last `N` blocks (1 to %d)", maxDashBlocks)},
			&cli.BoolFlag{Name: "json", Usage: "print one JSON snapshot and exit, even on a terminal"},
		},
		Action: func(c *cli.Context) error {
			if c.Args().Present() {
				return fmt.Errorf("dashboard: unexpected argument %q\nusage: %s", c.Args().First(), usageLine("dashboard", "[--interval DURATION] [--blocks N] [--json]"))
			}
			o, err := globalOptions(c)
			if err != nil {
				return err
			}
			interval, blocks := c.Duration("interval"), c.Int("blocks")
			if interval < 100*time.Millisecond {
				return errors.New("dashboard: --interval must be at least 100ms")
			}
			if blocks < 1 || blocks > maxDashBlocks {
				return fmt.Errorf("dashboard: --blocks %d: want 1 to %d", blocks, maxDashBlocks)
			}
			d := &dashReader{o: o, blocks: uint64(blocks), headers: map[string]rpcapi.Header{}}
			if !o.terminal || c.Bool("json") {
				snap, err := d.read(c.Context)
				if err != nil {
					return err
				}
				enc := json.NewEncoder(c.App.Writer)
				enc.SetIndent("", "  ")
				return enc.Encode(snap)
			}
			ctx, stop := signal.NotifyContext(c.Context, os.Interrupt, syscall.SIGTERM)
			defer stop()
			return d.live(ctx, c.App.Writer, interval)
		},
	}
}

// dashReader reads snapshots, keeping the headers it fetched (by hash) between redraws.
type dashReader struct {
	o       *options
	blocks  uint64
	headers map[string]rpcapi.Header
}

// call is one RPC call decoded into out, with coin-cli's error explanations.
func (d *dashReader) call(ctx context.Context, method string, out any, params ...any) error {
	ps := make([]json.RawMessage, len(params))
	for i, p := range params {
		b, err := json.Marshal(p)
		if err != nil {
			return err
		}
		ps[i] = b
	}
	raw, err := d.o.call(ctx, method, ps)
	if err != nil {
		return err
	}
	return json.Unmarshal(raw, out)
}

// read takes one snapshot. getblockchaininfo must answer; a part another call fails for is
// left empty and named in Errors.
func (d *dashReader) read(ctx context.Context) (*Dashboard, error) {
	var bc rpcapi.BlockchainInfo
	if err := d.call(ctx, "getblockchaininfo", &bc); err != nil {
		return nil, err
	}
	s := &Dashboard{Time: time.Now().UTC().Format(time.RFC3339), Network: bc.Network, Height: bc.Height,
		BestBlockHash: bc.BestBlockHash, Peers: bc.PeerCount, DecayPool: bc.DecayPoolBalance,
		DecayPoolCoin: amount.Format(bc.DecayPoolBalance),
		Sync:          DashSync{Syncing: bc.InitialBlockDownload, Progress: 1, TargetHeight: bc.Height}}
	fail := func(what string, err error) { s.Errors = append(s.Errors, what+": "+err.Error()) }
	var mp rpcapi.MempoolInfo
	if err := d.call(ctx, "getmempoolinfo", &mp); err != nil {
		fail("getmempoolinfo", err)
	}
	s.Mempool = DashMempool{Size: mp.Size, Bytes: mp.Bytes, TotalFee: mp.TotalFee}
	var ss rpcapi.SyncStatus
	if err := d.call(ctx, "getsyncstatus", &ss); err != nil {
		fail("getsyncstatus", err)
	} else {
		s.Sync = DashSync{Syncing: ss.Syncing, Progress: ss.Progress, TargetHeight: max(ss.TargetHeight, ss.CurrentHeight)}
	}
	var ci rpcapi.ConductInfo
	if err := d.call(ctx, "getconductinfo", &ci); err != nil {
		fail("getconductinfo", err)
	}
	s.Agents = DashAgents{Agents: ci.Agents, OpenContracts: ci.OpenContracts}
	if err := d.hashrate(ctx, s); err != nil {
		fail("hashrate", err)
	}
	return s, nil
}

// header is the header of hash, from the cache when it was read before.
func (d *dashReader) header(ctx context.Context, hash string) (rpcapi.Header, error) {
	if h, ok := d.headers[hash]; ok {
		return h, nil
	}
	var h rpcapi.Header
	if err := d.call(ctx, "getblockheader", &h, hash); err != nil {
		return rpcapi.Header{}, err
	}
	d.headers[hash] = h
	return h, nil
}

// hashrate estimates the hashrate from the last d.blocks blocks (fewer on a short chain).
// The window is walked back from the tip through the headers' parents, so a refresh asks
// the node only for the headers it has not seen yet.
func (d *dashReader) hashrate(ctx context.Context, s *Dashboard) error {
	if s.Height == 0 {
		s.hashrateNote = "no blocks yet"
		return nil
	}
	n := min(d.blocks, s.Height)
	last, err := d.header(ctx, s.BestBlockHash)
	if err != nil {
		return err
	}
	work := new(big.Int)
	first := last
	for range n {
		work.Add(work, pow.Work(first.DifficultyTarget))
		if first, err = d.header(ctx, first.PrevHash); err != nil {
			return err
		}
	}
	if len(d.headers) > 4*int(d.blocks)+16 { // forget what fell out of the window
		keep := map[string]rpcapi.Header{}
		for k, v := range d.headers {
			if v.Timestamp >= first.Timestamp {
				keep[k] = v
			}
		}
		d.headers = keep
	}
	s.Hashrate.Blocks = n
	if last.Timestamp <= first.Timestamp {
		s.hashrateNote = "block timestamps do not advance"
		s.Hashrate.Formatted = "-"
		return nil
	}
	secs := last.Timestamp - first.Timestamp
	rate, _ := new(big.Float).Quo(new(big.Float).SetInt(work), new(big.Float).SetUint64(secs)).Float64()
	s.Hashrate = DashHashrate{HashesPerSecond: rate, Formatted: miner.FormatRate(rate), Blocks: n, Seconds: secs,
		AvgBlockSeconds: float64(secs) / float64(n)}
	return nil
}

// live redraws the screen every interval until ctx ends. A failed read shows the error
// and keeps trying.
func (d *dashReader) live(ctx context.Context, w io.Writer, interval time.Duration) error {
	io.WriteString(w, "\x1b[?25l") // hide the cursor while redrawing
	defer io.WriteString(w, "\x1b[?25h\n")
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		snap, err := d.read(ctx)
		if ctx.Err() != nil {
			return nil
		}
		var screen string
		if err != nil {
			screen = fmt.Sprintf("coin-cli dashboard  %s  (%s)\n\n%v\n", d.o.url, time.Now().Format(time.TimeOnly), err)
		} else {
			screen = renderDashboard(snap, d.o.url, interval)
		}
		// Home, the screen, then clear what the previous one left below.
		io.WriteString(w, "\x1b[H"+strings.ReplaceAll(screen, "\n", "\x1b[K\n")+"\x1b[J")
		select {
		case <-ctx.Done():
			return nil
		case <-t.C:
		}
	}
}

// renderDashboard is the terminal screen of a snapshot.
func renderDashboard(s *Dashboard, url string, interval time.Duration) string {
	var b strings.Builder
	fmt.Fprintf(&b, "coin-cli dashboard  %s  %s  (every %s, Ctrl-C to quit)\n\n", url, s.Time, interval)
	row := func(k, format string, a ...any) {
		fmt.Fprintf(&b, "%-12s "+format+"\n", append([]any{k + ":"}, a...)...)
	}
	row("network", "%s", s.Network)
	row("height", "%d  %s", s.Height, s.BestBlockHash)
	row("peers", "%d", s.Peers)
	row("mempool", "%d transactions, %s, fees %s COIN", s.Mempool.Size, formatBytes(s.Mempool.Bytes), amount.Format(s.Mempool.TotalFee))
	state := "synced"
	if s.Sync.Syncing {
		state = fmt.Sprintf("syncing to %d", s.Sync.TargetHeight)
	}
	row("sync", "%s %6.2f%%  %s", progressBar(s.Sync.Progress, 30), 100*s.Sync.Progress, state)
	switch {
	case s.Hashrate.Seconds > 0:
		row("hashrate", "%s  (last %d blocks, %.1f s per block)", s.Hashrate.Formatted, s.Hashrate.Blocks, s.Hashrate.AvgBlockSeconds)
	case s.hashrateNote != "":
		row("hashrate", "- (%s)", s.hashrateNote)
	default:
		row("hashrate", "-")
	}
	row("decay pool", "%s COIN", s.DecayPoolCoin)
	row("agents", "%d  (%d open contracts)", s.Agents.Agents, s.Agents.OpenContracts)
	for _, e := range s.Errors {
		row("error", "%s", e)
	}
	return b.String()
}

// progressBar is [#####-----] for p in [0, 1].
func progressBar(p float64, width int) string {
	p = min(max(p, 0), 1)
	n := int(p*float64(width) + 0.5)
	return "[" + strings.Repeat("#", n) + strings.Repeat("-", width-n) + "]"
}

// formatBytes is n in B, kB or MB.
func formatBytes(n int) string {
	switch {
	case n >= 1_000_000:
		return fmt.Sprintf("%.1f MB", float64(n)/1e6)
	case n >= 1_000:
		return fmt.Sprintf("%.1f kB", float64(n)/1e3)
	}
	return fmt.Sprintf("%d B", n)
}

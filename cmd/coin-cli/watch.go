package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"slices"
	"strings"
	"syscall"

	"github.com/urfave/cli/v2"

	"github.com/cointoolkit/coin/lib/cliutil"
	"github.com/cointoolkit/coin/lib/jsonrpc"
	"github.com/cointoolkit/coin/lib/rpcapi"
)

// coin-cli watch: the node's notification stream (GET /stream on its RPC listener, as Bitcoin
// Core's ZMQ "sequence" topic), one JSON object a line, through rpcapi.Client.Follow: it
// reconnects and resumes by itself and prints a "gap" line when events were missed.

// watchTypes are the event types --type takes.
var watchTypes = []string{rpcapi.EventBlockConnected, rpcapi.EventBlockDisconnected, rpcapi.EventTxAdded,
	rpcapi.EventTxRemoved, rpcapi.EventGap, rpcapi.EventHello}

func watchCommand() *cli.Command {
	return &cli.Command{
		Name:      "watch",
		Category:  "util",
		Usage:     "Follow the node's events (blocks connected and disconnected, mempool transactions added and removed) as JSON lines.",
		UsageText: manUsage("watch", "[--from N] [--type TYPE]... [--count N]"),
		Description: strings.TrimSpace(`
Prints each event of the node's notification stream as one JSON object a line, as it
happens, until Ctrl-C: {"sequence":N,"type":"block_connected","hash":...,"height":...},
block_disconnected, {"type":"tx_added","txid":...} and tx_removed (with "reason": block,
conflict, evicted or invalid). Every event has the next sequence number. When the
connection breaks, watch reconnects and resumes after the last event it printed; when
events were missed (the node restarted, or its backlog of 10,000 events moved on) it
prints {"type":"gap","from":FIRST_MISSING,"sequence":NEXT} first, so a script can
resynchronise (getbestblockhash, getrawmempool). --from N starts with the backlog from
sequence N. A node that refuses the first connection is an error (exit 1) unless
--rpcwait is given; a node that goes away later is waited for. The stream is served at
GET /stream on the RPC listener, with the same access rules as the calls
(docs/operations.md, "Notifications").

Examples:

    coin-cli --network regtest watch
    coin-cli watch --type block_connected --count 1     # wait for the next block
    coin-cli watch --from 1200 | jq -c 'select(.type=="tx_added")'`),
		Flags: []cli.Flag{
			&cli.Uint64Flag{Name: "from", Usage: "start with the node's backlog from sequence `N` (0: only new events)"},
			&cli.StringSliceFlag{Name: "type", Usage: "print only events of this `TYPE` (" + strings.Join(watchTypes, ", ") + "); repeatable"},
			&cli.IntFlag{Name: "count", Usage: "exit after printing `N` events (0: never)"},
		},
		Action: func(c *cli.Context) error {
			usage := func(format string, a ...any) error {
				return &cliutil.ExitError{Code: cliutil.ExitUsage, Message: "error: watch: " + fmt.Sprintf(format, a...) +
					"\nusage: " + usageLine("watch", "[--from N] [--type TYPE]... [--count N]")}
			}
			if c.Args().Present() {
				return usage("unexpected argument %q", c.Args().First())
			}
			types := c.StringSlice("type")
			for _, t := range types {
				if !slices.Contains(watchTypes, t) {
					return usage("--type %q: want one of %s", t, strings.Join(watchTypes, ", "))
				}
			}
			if c.Int("count") < 0 {
				return usage("--count must not be negative")
			}
			o, err := globalOptions(c)
			if err != nil {
				return err
			}
			cl := rpcapi.NewClient(o.url, o.auth...)
			defer cl.Close()
			ctx, stop := signal.NotifyContext(c.Context, os.Interrupt, syscall.SIGTERM)
			defer stop()
			// A node that refuses the first connection is not running (coin-cli's usual
			// error, unless --rpcwait); once followed, a node that goes away is waited for.
			ctx, giveUp := context.WithCancel(ctx)
			defer giveUp()
			connected := false
			var refused error
			enc := json.NewEncoder(c.App.Writer)
			printed, limit := 0, c.Int("count")
			errDone := errors.New("done")
			err = cl.Follow(ctx, rpcapi.FollowOptions{From: c.Uint64("from"), OnError: func(err error) {
				switch {
				case !connected && !o.rpcwait && jsonrpc.IsConnRefused(err):
					refused = err
					giveUp()
				case !jsonrpc.IsConnRefused(err) || connected:
					fmt.Fprintf(c.App.ErrWriter, "coin-cli watch: %v (reconnecting)\n", err)
				}
			}}, func(ev rpcapi.Event) error {
				connected = true
				if ev.Type == rpcapi.EventPing || ev.Type == rpcapi.EventDropped {
					return nil
				}
				if ev.Type == rpcapi.EventHello && !slices.Contains(types, rpcapi.EventHello) {
					return nil
				}
				if len(types) > 0 && !slices.Contains(types, ev.Type) {
					return nil
				}
				if err := enc.Encode(ev); err != nil {
					return err
				}
				if printed++; limit > 0 && printed >= limit {
					return errDone
				}
				return nil
			})
			switch {
			case refused != nil:
				return o.explain("watch", refused)
			case errors.Is(err, errDone), ctx.Err() != nil && c.Context.Err() == nil:
				return nil
			case errors.Is(err, rpcapi.ErrStreamRefused):
				return fmt.Errorf("watch: %w (check --rpc and the credentials)", err)
			}
			return err
		},
	}
}

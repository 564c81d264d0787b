package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"

	"github.com/urfave/cli/v2"

	"github.com/cointoolkit/coin/lib/cliutil"
	"github.com/cointoolkit/coin/lib/devnet"
)

// devnetCommand is `coin-node devnet`: a whole local network (nodes, a miner, a funded
// faucet) from one command; lib/devnet does the work.
func devnetCommand() *cli.Command {
	return &cli.Command{
		Name:  "devnet",
		Usage: "run a whole local regtest network: node, miner, funded faucet (page, MCP, events)",
		Description: `Starts, with the executables beside this coin-node, a regtest node (RPC and metrics), a
miner that finds one block per --interval (paid to the faucet, so block time follows the
clock), and coin-faucetd with its wallet created and funded (its coins mature before it
opens), its page, MCP and event stream on and no claim limits. Then it prints the URLs, a
ready coin.conf, a funded example wallet and three commands to try.

Ctrl-C stops every process it started and keeps the data: running it again resumes the
same network; --fresh starts over. Ports are offsets from --base-port (node 0's RPC port):
node i RPC base+10i, P2P base+10i+1, metrics base+10i+2; faucet base+8, its metrics base+9.
A taken port is named, with what it was for. docs/devnet.md has the details.

   make devnet                              # builds, then runs this
   bin/coin-node devnet --nodes 3 --interval 5s
   bin/coin-node devnet --fresh`,
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "dir", Value: ".devnet", EnvVars: []string{"COIN_DEVNET_DIR"}, Usage: "`DIR` that holds every process's data, the keys and the logs"},
			&cli.IntFlag{Name: "nodes", Value: 1, EnvVars: []string{"COIN_DEVNET_NODES"}, Usage: fmt.Sprintf("`N` connected nodes (1 to %d); node 0 has the miner and the faucet", devnet.MaxNodes)},
			&cli.DurationFlag{Name: "interval", Value: devnet.DefaultInterval, EnvVars: []string{"COIN_DEVNET_INTERVAL"}, Usage: "one block per `DURATION` at most"},
			&cli.BoolFlag{Name: "fresh", EnvVars: []string{"COIN_DEVNET_FRESH"}, Usage: "remove --dir's data first and start a new network"},
			&cli.IntFlag{Name: "base-port", Value: devnet.DefaultBasePort, EnvVars: []string{"COIN_DEVNET_BASE_PORT"}, Usage: "`PORT` of node 0's RPC; every other port is an offset from it"},
		},
		Action: runDevnet,
	}
}

func runDevnet(c *cli.Context) error {
	if c.NArg() > 0 {
		return cliutil.Exitf(2, "devnet takes no arguments, got %q", c.Args().First())
	}
	exe, err := os.Executable()
	if err != nil {
		return err
	}
	exe, _ = filepath.EvalSymlinks(exe)
	dir, err := filepath.Abs(c.String("dir"))
	if err != nil {
		return err
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	log := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelInfo}))
	err = devnet.Run(ctx, devnet.Config{
		Dir:      dir,
		BinDir:   filepath.Dir(exe),
		Nodes:    c.Int("nodes"),
		Interval: c.Duration("interval"),
		Fresh:    c.Bool("fresh"),
		BasePort: c.Int("base-port"),
		Out:      os.Stdout,
		Logger:   log,
	})
	switch {
	case errors.Is(err, devnet.ErrConfig):
		return cliutil.Exitf(2, "%v", err)
	case err != nil:
		return cliutil.Exitf(1, "%v", err)
	}
	return nil
}

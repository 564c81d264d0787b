package main

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cointoolkit/coin/lib/confile"
	"github.com/cointoolkit/coin/lib/proctest"
)

// tools are the six executables.
var tools = confile.Tools

// bins builds the six executables once per test process.
func bins(t *testing.T) string {
	t.Helper()
	var pkgs []string
	for _, name := range tools {
		pkgs = append(pkgs, "./cmd/"+name)
	}
	return proctest.Build(t, pkgs...)
}

// isolate gives the test a home without a configuration file and clears the environment
// variables the tools read, so that the machine's own settings cannot change the outcome.
func isolate(t *testing.T) string {
	t.Helper()
	home := t.TempDir()
	t.Setenv("HOME", home)
	for _, kv := range os.Environ() {
		if k, _, _ := strings.Cut(kv, "="); strings.HasPrefix(k, "COIN_") {
			t.Setenv(k, "")
			os.Unsetenv(k)
		}
	}
	return home
}

// TestUsageErrorsExit2: the common usage errors of every executable (an unknown option or
// command, a missing or bad value, an unexpected argument, a missing required option, a bad
// network, a malformed configuration file) exit 2 with an "error: ..." line on standard
// error and nothing on standard output, before any work. On the old code coin-node and
// coin-miner's unexpected arguments, coin-miner without --address, a bad --network and
// coin-node --log-file PATH exited 1.
func TestUsageErrorsExit2(t *testing.T) {
	bin := bins(t)
	home := isolate(t)
	bad := filepath.Join(home, "bad.conf")
	if err := os.WriteFile(bad, []byte("# a comment\nnetwork=regtest\nrpc-bind 127.0.0.1:1\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	cases := map[string][][]string{
		"coin-node": {
			{"--bogus"}, {"extra"}, {"--network", "foo"}, {"--log-level", "loud"}, {"--p2p-port"},
			{"--p2p-port", "abc"}, {"--coin-cache-mb", "-1"}, {"--log-file", filepath.Join(home, "n.log"), "extra"},
			{"--conf", filepath.Join(home, "missing.conf")},
		},
		"coin-cli": {
			{}, {"--bogus", "getblockcount"}, {"nosuchmethod"}, {"getblock"}, {"getblockcount", "extra"},
			{"--network", "foo", "getblockcount"}, {"getblockcount", "--network", "foo"}, {"--timeout", "soon", "getblockcount"},
		},
		"coin-miner": {
			{}, {"extra"}, {"--bogus"}, {"--address", "bad"}, {"--threads", "99999", "--address", "x"},
			{"--network", "foo"}, {"--log-file", filepath.Join(home, "m.log"), "extra"},
		},
		"coin-wallet": {
			{}, {"nosuch"}, {"--bogus", "balance"}, {"send"}, {"--network", "foo", "derive"},
		},
		"coin-faucetd": {
			{"--bogus"}, {"extra"}, {"--network", "foo"}, {"--network", "mainnet"}, {"--cooldown", "5"},
			{"--network", "regtest", "--amount", "lots"},
		},
		"coin-faucet": {
			{}, {"nosuch"}, {"claim"}, {"claim", "a", "b"}, {"--bogus", "status"},
		},
	}
	for _, tool := range tools {
		cases[tool] = append(cases[tool], []string{"--conf", bad})
		for _, args := range cases[tool] {
			t.Run(tool+" "+strings.Join(args, " "), func(t *testing.T) {
				cmd := exec.Command(filepath.Join(bin, tool), args...)
				var stdout, stderr strings.Builder
				cmd.Stdout, cmd.Stderr = &stdout, &stderr
				err := cmd.Run()
				var ee *exec.ExitError
				if !errors.As(err, &ee) || ee.ExitCode() != 2 {
					t.Errorf("exit %v, want 2; stderr:\n%s", err, stderr.String())
				}
				// One line, but coin-cli's argument counts, which add the method's usage.
				if msg := stderr.String(); !strings.HasPrefix(msg, "error: ") || strings.Count(msg, "\n") > 3 {
					t.Errorf("stderr %q, want an error: line", msg)
				}
				if stdout.Len() != 0 {
					t.Errorf("stdout %q, want nothing", stdout.String())
				}
			})
		}
	}
	// The malformed file's error names the file and the line.
	out, _ := exec.Command(filepath.Join(bin, "coin-cli"), "--conf", bad, "getblockcount").CombinedOutput()
	if want := bad + ":3: "; !strings.Contains(string(out), want) {
		t.Errorf("coin-cli with a malformed file said %q, want %q", out, want)
	}
}

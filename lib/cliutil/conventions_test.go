package cliutil

import (
	"bytes"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/urfave/cli/v2"
)

// seen is what a command's action read: each global option from its own context and from the
// app's, which must agree.
type seen map[string]string

func testApp(out *bytes.Buffer, got *seen) *cli.App {
	record := func(c *cli.Context) error {
		root := c.Lineage()[len(c.Lineage())-2] // the last is urfave/cli's empty base context
		s := seen{}
		for _, name := range []string{"network", "json", "timeout", "threads", "connect"} {
			here, there := fmt.Sprint(c.Value(name)), fmt.Sprint(root.Value(name))
			if name == "connect" {
				here, there = strings.Join(c.StringSlice(name), ","), strings.Join(root.StringSlice(name), ",")
			}
			if here != there {
				return fmt.Errorf("--%s: the command sees %q, the app %q", name, here, there)
			}
			s[name] = here
		}
		s["args"] = strings.Join(c.Args().Slice(), " ")
		*got = s
		return nil
	}
	leaf := &cli.Command{Name: "create", Usage: "make one", ArgsUsage: "[NAME]",
		Flags:  []cli.Flag{&cli.StringFlag{Name: "amount", Required: true}},
		Action: record}
	return Conventions(&cli.App{
		Name: "coin-test", Writer: out, ErrWriter: out, HideHelpCommand: true,
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "network", Value: "mainnet", EnvVars: []string{"COIN_TEST_NETWORK"}},
			&cli.BoolFlag{Name: "json", EnvVars: []string{"COIN_TEST_JSON"}},
			&cli.DurationFlag{Name: "timeout", Value: 30 * time.Second},
			&cli.IntFlag{Name: "threads", Aliases: []string{"t"}},
			&cli.StringSliceFlag{Name: "connect"},
		},
		Commands: []*cli.Command{
			{Name: "balance", Action: record, Flags: []cli.Flag{&cli.BoolFlag{Name: "json"}}},
			{Name: "agent", Usage: "agents", Subcommands: []*cli.Command{
				{Name: "contract", Usage: "contracts", Subcommands: []*cli.Command{leaf}},
			}},
		},
	})
}

func runTest(t *testing.T, args ...string) (seen, string, error) {
	t.Helper()
	var out bytes.Buffer
	var got seen
	err := Run(testApp(&out, &got), append([]string{"coin-test"}, args...))
	return got, out.String(), err
}

func TestConventionsGlobalFlagsEverywhere(t *testing.T) {
	contract := []string{"agent", "contract", "create", "--amount", "1"}
	at := func(i int, flags ...string) []string { // contract with flags after word i
		return append(append(append([]string{}, contract[:i]...), flags...), contract[i:]...)
	}
	for _, c := range []struct {
		name string
		env  map[string]string
		args []string
		want seen
	}{
		{"defaults", nil, contract, seen{"network": "mainnet", "json": "false", "timeout": "30s", "threads": "0"}},
		{"before everything", nil, at(0, "--network", "regtest", "--json", "--timeout=5s", "-t", "3", "--connect", "a"),
			seen{"network": "regtest", "json": "true", "timeout": "5s", "threads": "3", "connect": "a"}},
		{"after the first command", nil, at(1, "--network", "regtest", "--json", "--timeout=5s", "-t", "3", "--connect", "a"),
			seen{"network": "regtest", "json": "true", "timeout": "5s", "threads": "3", "connect": "a"}},
		{"after the second command", nil, at(2, "--network=regtest", "--json", "--timeout", "5s", "--threads", "3"),
			seen{"network": "regtest", "json": "true", "timeout": "5s", "threads": "3"}},
		{"after the leaf command", nil, append(contract, "--network", "regtest", "--json", "--timeout", "5s", "-t", "3", "--connect", "a", "--connect", "b"),
			seen{"network": "regtest", "json": "true", "timeout": "5s", "threads": "3", "connect": "a,b"}},
		{"environment", map[string]string{"COIN_TEST_NETWORK": "testnet", "COIN_TEST_JSON": "1"}, contract,
			seen{"network": "testnet", "json": "true"}},
		{"flag before beats environment", map[string]string{"COIN_TEST_NETWORK": "testnet"}, at(0, "--network", "regtest"),
			seen{"network": "regtest"}},
		{"flag after beats environment", map[string]string{"COIN_TEST_NETWORK": "testnet"}, append(contract, "--network", "regtest"),
			seen{"network": "regtest"}},
		{"nearest the command wins", nil, append(at(0, "--network", "testnet", "--json=false"), "--network", "regtest", "--json"),
			seen{"network": "regtest", "json": "true"}},
		{"positional arguments stay", nil, append(at(3, "--network", "regtest"), "NAME"), seen{"network": "regtest", "args": "NAME"}},
		{"after the arguments", nil, append(contract, "NAME", "--json", "--network", "regtest"), seen{"network": "regtest", "json": "true", "args": "NAME"}},
		{"command's own option of a global name", nil, []string{"balance", "--json"}, seen{"json": "true"}},
		{"global before a command's own option", nil, []string{"--json", "balance"}, seen{"json": "true"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			for k, v := range c.env {
				t.Setenv(k, v)
			}
			got, out, err := runTest(t, c.args...)
			if err != nil {
				t.Fatalf("%v: %v\n%s", c.args, err, out)
			}
			for k, v := range c.want {
				if got[k] != v {
					t.Errorf("%v: --%s = %q, want %q", c.args, k, got[k], v)
				}
			}
		})
	}
}

func TestConventionsUsageErrors(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--bogus", "balance"}, "error: unknown option --bogus (see 'coin-test --help')"},
		{[]string{"balance", "--bogus"}, "error: unknown option --bogus (see 'coin-test balance --help')"},
		{[]string{"agent", "contract", "create", "--network"}, "error: flag needs an argument: -network (see 'coin-test agent contract create --help')"},
		{[]string{"agent", "contract", "create"}, "error: option --amount is required (see 'coin-test agent contract create --help')"},
		{[]string{"agent", "contract", "create", "--amount", "1", "--timeout", "x"}, "(see 'coin-test agent contract create --help')"},
		{[]string{"--timeout", "5", "balance"}, "error: invalid value \"5\" for option --timeout: want a duration such as 30s, 5m, 1h or 24h (see 'coin-test --help')"},
		{[]string{"--threads", "many", "balance"}, "error: invalid value \"many\" for option --threads: parse error"},
		{nil, "error: no command given: want one of balance, agent (see 'coin-test --help')"},
		{[]string{"frobnicate"}, "error: unknown command \"frobnicate\": want one of balance, agent (see 'coin-test --help')"},
		{[]string{"agent"}, "error: no command given: want contract (see 'coin-test agent --help')"},
		{[]string{"agent", "nope"}, "error: unknown command \"nope\": want contract (see 'coin-test agent --help')"},
	} {
		_, out, err := runTest(t, c.args...)
		var ee *ExitError
		if !errors.As(err, &ee) || ee.Code != ExitUsage || !strings.Contains(ee.Message, c.want) || strings.Contains(ee.Message, "\n") {
			t.Errorf("%v: %v, want exit %d with %q", c.args, err, ExitUsage, c.want)
		}
		if out != "" {
			t.Errorf("%v: printed %q besides the error", c.args, out)
		}
	}
}

func TestConventionsHelpWhenAsked(t *testing.T) {
	for _, args := range [][]string{
		{"--help"}, {"help"}, {"-h"},
		{"agent", "contract", "create", "--help"},
		{"help", "agent", "contract", "create"},
		{"agent", "contract", "create", "--amount", "1", "NAME", "--help"},
		{"--network", "regtest", "agent", "contract", "create", "-h"},
	} {
		_, out, err := runTest(t, args...)
		if err != nil || !strings.Contains(out, "coin-test") {
			t.Errorf("%v: %v, help %q", args, err, out)
		}
		if strings.Contains(strings.Join(args, " "), "create") &&
			(!strings.Contains(out, "--amount") || !strings.Contains(out, GlobalCategory) || !strings.Contains(out, "[$COIN_TEST_NETWORK]")) {
			t.Errorf("%v: the command's help lacks its options or the global ones:\n%s", args, out)
		}
	}
}

func TestTakeGlobalFlags(t *testing.T) {
	var got []string
	var net string
	var json bool
	app := Conventions(&cli.App{Name: "coin-test", Writer: &bytes.Buffer{},
		Flags: []cli.Flag{&cli.StringFlag{Name: "network", Value: "mainnet"}, &cli.BoolFlag{Name: "json"}},
		Commands: []*cli.Command{{Name: "m", SkipFlagParsing: true, Action: func(c *cli.Context) error {
			var err error
			if got, err = TakeGlobalFlags(c, c.Args().Slice()); err != nil {
				return err
			}
			net, json = c.String("network"), c.Bool("json")
			return nil
		}}},
	})
	for _, c := range []struct {
		args []string
		rest string
		net  string
		json bool
	}{
		{[]string{"m", "1", "-5"}, "1 -5", "mainnet", false},
		{[]string{"m", "1", "--network", "regtest", "x"}, "1 x", "regtest", false},
		{[]string{"m", "--json", "1", "-network=testnet"}, "1", "testnet", true},
		{[]string{"--network", "testnet", "m", "--network", "regtest"}, "", "regtest", false},
		{[]string{"m", "--", "--network", "regtest"}, "-- --network regtest", "mainnet", false},
		{[]string{"m", "--other", "v"}, "--other v", "mainnet", false},
	} {
		if err := app.Run(append([]string{"coin-test"}, c.args...)); err != nil {
			t.Fatalf("%v: %v", c.args, err)
		}
		if strings.Join(got, " ") != c.rest || net != c.net || json != c.json {
			t.Errorf("%v: %q %s %v, want %q %s %v", c.args, got, net, json, c.rest, c.net, c.json)
		}
	}
	err := app.Run([]string{"coin-test", "m", "--network"})
	var ee *ExitError
	if !errors.As(err, &ee) || ee.Code != ExitUsage || !strings.Contains(ee.Message, "option --network needs a value") {
		t.Errorf("missing value: %v", err)
	}
}

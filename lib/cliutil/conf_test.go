package cliutil

import (
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/urfave/cli/v2"
)

// confApp is an app with the kinds of global options the executables have, and a command;
// its actions record what the code would read.
type confApp struct {
	app    *cli.App
	stderr strings.Builder
	got    map[string]any
}

func newConfApp() *confApp {
	a := &confApp{got: map[string]any{}}
	record := func(c *cli.Context) error {
		for _, n := range []string{"network", "threads", "rpc", "log-level", "quiet"} {
			a.got[n] = c.Value(n)
		}
		a.got["connect"] = c.StringSlice("connect")
		return nil
	}
	a.app = Conventions(&cli.App{
		Name: "coin-test",
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "network", Value: "mainnet", EnvVars: []string{"COIN_TEST_NETWORK"}},
			&cli.IntFlag{Name: "threads", Value: 1, EnvVars: []string{"COIN_TEST_THREADS"}},
			&cli.StringSliceFlag{Name: "connect", EnvVars: []string{"COIN_TEST_CONNECT"}},
			&cli.StringFlag{Name: "rpc", EnvVars: []string{"COIN_TEST_RPC"}},
			&cli.StringFlag{Name: "log-level", Aliases: []string{"debuglevel"}, Value: "info"},
			&cli.BoolFlag{Name: "quiet"},
		},
		Commands: []*cli.Command{{Name: "sub", Action: record}},
		Action:   record,
	})
	a.app.Writer, a.app.ErrWriter = &strings.Builder{}, &a.stderr
	return a
}

func (a *confApp) run(args ...string) error {
	return a.app.Run(append([]string{"coin-test"}, args...))
}

// writeConf writes a configuration file and returns its path.
func writeConf(t *testing.T, text string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "coin.conf")
	if err := os.WriteFile(p, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// TestConfPrecedence: command line, then environment, then the network's section, then the
// top of the file, then the default; the network from the command line (before or after the
// command), the environment, or the file's top.
func TestConfPrecedence(t *testing.T) {
	const file = "threads=2\n[regtest]\nthreads=3\n[testnet]\nthreads=4\n"
	for _, tc := range []struct {
		name string
		conf string
		env  map[string]string
		args []string
		want int
	}{
		{"default", "", nil, nil, 1},
		{"top", "threads=2\n", nil, nil, 2},
		{"top, other network's section", file, nil, nil, 2}, // mainnet by default
		{"section of --network", file, nil, []string{"--network", "regtest"}, 3},
		{"section of --network after the command", file, nil, []string{"sub", "--network=testnet"}, 4},
		{"section of the env network", file, map[string]string{"COIN_TEST_NETWORK": "testnet"}, nil, 4},
		{"section of the file's network", "network=regtest\n" + file, nil, nil, 3},
		{"--network beats the file's", "network=regtest\n" + file, nil, []string{"--network", "testnet"}, 4},
		{"environment beats the section", file, map[string]string{"COIN_TEST_THREADS": "5"}, []string{"--network", "regtest"}, 5},
		{"command line beats the environment", file, map[string]string{"COIN_TEST_THREADS": "5"}, []string{"--threads", "6"}, 6},
		{"command line after the command", file, nil, []string{"--network", "regtest", "sub", "--threads", "7"}, 7},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for k, v := range tc.env {
				t.Setenv(k, v)
			}
			args := tc.args
			if tc.conf != "" {
				args = append([]string{"--conf", writeConf(t, tc.conf)}, args...)
			}
			a := newConfApp()
			if err := a.run(args...); err != nil {
				t.Fatal(err)
			}
			if a.got["threads"] != tc.want {
				t.Errorf("threads = %v, want %d", a.got["threads"], tc.want)
			}
		})
	}
}

// TestConfRepeatedKeys: a repeatable option takes every line; the section's lines replace
// the top's, and the command line replaces the file's.
func TestConfRepeatedKeys(t *testing.T) {
	conf := writeConf(t, "connect=a:1\nconnect=b:2\n[regtest]\nconnect=c:3\nconnect=d:4\n")
	for _, tc := range []struct {
		args []string
		want []string
	}{
		{nil, []string{"a:1", "b:2"}},
		{[]string{"--network", "regtest"}, []string{"c:3", "d:4"}},
		{[]string{"--connect", "e:5"}, []string{"e:5"}},
		{[]string{"sub", "--connect", "e:5"}, []string{"e:5"}},
	} {
		a := newConfApp()
		if err := a.run(append([]string{"--conf", conf}, tc.args...)...); err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(a.got["connect"], tc.want) {
			t.Errorf("%v: connect = %v, want %v", tc.args, a.got["connect"], tc.want)
		}
	}
}

// TestConfAliasesAndBools: an alias is a key too; a boolean takes true/false/1/0.
func TestConfAliasesAndBools(t *testing.T) {
	a := newConfApp()
	if err := a.run("--conf", writeConf(t, "debuglevel=debug\nquiet=1\n")); err != nil {
		t.Fatal(err)
	}
	if a.got["log-level"] != "debug" || a.got["quiet"] != true {
		t.Errorf("log-level %v, quiet %v", a.got["log-level"], a.got["quiet"])
	}
}

// TestConfErrors: a malformed line, a value that does not parse, a single-valued option twice
// in one section, or a missing --conf file is a usage error (exit 2) naming the file and line,
// and the action does not run.
func TestConfErrors(t *testing.T) {
	for _, tc := range []struct {
		conf, want string
	}{
		{"threads=2\nthreads 3\n", ":2: \"threads 3\" is not key=value"},
		{"# x\nthreads=many\n", ":2: invalid value \"many\" for threads"},
		{"threads=2\n[regtest]\nthreads=3\n\nthreads=4\n", ":5: threads given again (line 3 too)"},
		{"[signet]\n", ":1: section [signet]"},
	} {
		conf := writeConf(t, tc.conf)
		a := newConfApp()
		err := a.run("--conf", conf, "--network", "regtest")
		var ee *ExitError
		if !errors.As(err, &ee) || ee.Code != ExitUsage || !strings.Contains(ee.Message, conf+tc.want) {
			t.Errorf("%q: error %v, want exit %d with %q", tc.conf, err, ExitUsage, conf+tc.want)
		}
		if len(a.got) != 0 {
			t.Errorf("%q: the action ran", tc.conf)
		}
	}
	a := newConfApp()
	err := a.run("--conf", filepath.Join(t.TempDir(), "nope.conf"))
	var ee *ExitError
	if !errors.As(err, &ee) || ee.Code != ExitUsage || !strings.Contains(ee.Message, "nope.conf") {
		t.Errorf("missing --conf file: %v", err)
	}
}

// TestConfUnknownKeyWarns: a key no coin executable takes is a warning naming the file and
// line, and the rest of the file applies; a key another executable takes is silent.
func TestConfUnknownKeyWarns(t *testing.T) {
	conf := writeConf(t, "threads=2\nrpc-auth=alice:salt$hash\nwallet-dir=w\nthreadz=3\n[regtest]\nfaucet=http://x\n")
	a := newConfApp()
	if err := a.run("--conf", conf); err != nil {
		t.Fatal(err)
	}
	if a.got["threads"] != 2 {
		t.Errorf("threads = %v", a.got["threads"])
	}
	want := "warning: " + conf + ":4: unknown key \"threadz\""
	if got := a.stderr.String(); !strings.Contains(got, want) || strings.Count(got, "warning") != 1 {
		t.Errorf("stderr %q, want one warning %q", got, want)
	}
}

// TestConfRPCFromRPCBind: a client without --rpc calls the node at the file's rpc-bind (of its
// network's section), with an unspecified host as loopback; --rpc and its environment
// variable win.
func TestConfRPCFromRPCBind(t *testing.T) {
	conf := writeConf(t, "network=regtest\nrpc-bind=127.0.0.1:1\n[regtest]\nrpc-bind=0.0.0.0:38332\n[testnet]\nrpc-bind=[::1]:28332\n")
	for _, tc := range []struct {
		env  string
		args []string
		want string
	}{
		{"", nil, "http://127.0.0.1:38332"},
		{"", []string{"--network", "testnet"}, "http://[::1]:28332"},
		{"", []string{"--network", "mainnet"}, "http://127.0.0.1:1"},
		{"", []string{"--rpc", "http://h:1"}, "http://h:1"},
		{"http://e:2", nil, "http://e:2"},
	} {
		if tc.env != "" {
			t.Setenv("COIN_TEST_RPC", tc.env)
		}
		a := newConfApp()
		if err := a.run(append([]string{"--conf", conf}, tc.args...)...); err != nil {
			t.Fatal(err)
		}
		if a.got["rpc"] != tc.want {
			t.Errorf("%v env %q: rpc = %v, want %s", tc.args, tc.env, a.got["rpc"], tc.want)
		}
	}
}

// TestConfDefaultFileAndEnv: without --conf, COIN_CONF names the file, else ~/.coin/coin.conf
// is read when it exists; in a test process only when the test asks (readDefaultConf).
func TestConfDefaultFileAndEnv(t *testing.T) {
	readDefaultConf = true // as in the executables
	defer func() { readDefaultConf = false }()
	home := t.TempDir()
	t.Setenv("HOME", home)
	a := newConfApp()
	if err := a.run(); err != nil || a.got["threads"] != 1 {
		t.Fatalf("no file: %v, threads %v", err, a.got["threads"])
	}
	if err := os.MkdirAll(filepath.Join(home, ".coin"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(home, ".coin", "coin.conf"), []byte("threads=8\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	a = newConfApp()
	if err := a.run("sub"); err != nil || a.got["threads"] != 8 {
		t.Fatalf("default file: %v, threads %v", err, a.got["threads"])
	}
	readDefaultConf = false
	a = newConfApp()
	if err := a.run("sub"); err != nil || a.got["threads"] != 1 {
		t.Fatalf("default file in a test process: %v, threads %v", err, a.got["threads"])
	}
	readDefaultConf = true
	t.Setenv("COIN_CONF", writeConf(t, "threads=9\n"))
	a = newConfApp()
	if err := a.run(); err != nil || a.got["threads"] != 9 {
		t.Fatalf("COIN_CONF: %v, threads %v", err, a.got["threads"])
	}
	a = newConfApp() // --conf after the command beats COIN_CONF
	if err := a.run("sub", "--conf", writeConf(t, "threads=10\n")); err != nil || a.got["threads"] != 10 {
		t.Fatalf("sub --conf: %v, threads %v", err, a.got["threads"])
	}
}

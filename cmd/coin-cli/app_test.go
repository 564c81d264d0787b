package main

import (
	"fmt"
	"github.com/cointoolkit/coin/lib/proctest"
	"net"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/cointoolkit/coin/lib/rpcapi"
)

const utxosJSON = `[
  {
    "txid": "aa11",
    "index": 0,
    "value": 5000000000,
    "block_height": 1,
    "is_coinbase": true,
    "cluster_id": "c1",
    "pubkey_hash": "p1",
    "effective_value": 5000000000,
    "locked": true,
    "confirmations": 1
  },
  {
    "txid": "bb22",
    "index": 1,
    "value": 250,
    "block_height": 2,
    "is_coinbase": false,
    "cluster_id": "c2",
    "pubkey_hash": "p1",
    "effective_value": 249,
    "locked": false,
    "confirmations": 0
  }
]
`

const utxosTable = `┌──────┬───────┬────────────┬──────────────┬─────────────┬────────────┬─────────────┬─────────────────┬────────┬───────────────┐
│ TXID │ INDEX │   VALUE    │ BLOCK HEIGHT │ IS COINBASE │ CLUSTER ID │ PUBKEY HASH │ EFFECTIVE VALUE │ LOCKED │ CONFIRMATIONS │
├──────┼───────┼────────────┼──────────────┼─────────────┼────────────┼─────────────┼─────────────────┼────────┼───────────────┤
│ aa11 │ 0     │ 5000000000 │ 1            │ true        │ c1         │ p1          │ 5000000000      │ true   │ 1             │
│ bb22 │ 1     │ 250        │ 2            │ false       │ c2         │ p1          │ 249             │ false  │ 0             │
└──────┴───────┴────────────┴──────────────┴─────────────┴────────────┴─────────────┴─────────────────┴────────┴───────────────┘
`

// utxosMempoolJSON is utxosJSON with mempoolUTXO added.
var utxosMempoolJSON = utxosJSON[:len(utxosJSON)-3] + ",\n" + mempoolUTXOJSON

// appCase is one run of coin-cli against the fake node. {url} in args is its URL.
type appCase struct {
	name   string
	stdin  string
	args   []string
	stdout string
	code   int
	stderr string // exact, or a prefix when prefix is set
	prefix bool
	// offline: the run must be refused before any request is sent.
	offline bool
}

func runCases(t *testing.T, f *fakeNode, cases []appCase) {
	t.Helper()
	for _, tc := range cases {
		args := make([]string, len(tc.args))
		for i, a := range tc.args {
			args[i] = strings.ReplaceAll(a, "{url}", f.URL)
		}
		before := f.requests.Load()
		r := runApp(t, tc.stdin, args...)
		if r.stdout != tc.stdout {
			t.Errorf("%s: stdout\n%q\nwant\n%q", tc.name, r.stdout, tc.stdout)
		}
		if r.code != tc.code {
			t.Errorf("%s: exit %d, want %d (stderr %q)", tc.name, r.code, tc.code, r.stderr)
		}
		if tc.prefix && !strings.HasPrefix(r.stderr, tc.stderr) || !tc.prefix && r.stderr != tc.stderr {
			t.Errorf("%s: stderr\n%q\nwant\n%q", tc.name, r.stderr, tc.stderr)
		}
		if tc.offline && f.requests.Load() != before {
			t.Errorf("%s: a request was sent", tc.name)
		}
	}
}

func TestAppCalls(t *testing.T) {
	f := newFakeNode(t)
	f.warmups.Store(1 << 30) // "warmingup" never gets ready in this test
	rpc := []string{"--rpc", "{url}"}
	with := func(args ...string) []string { return append(append([]string{}, rpc...), args...) }
	runCases(t, f, []appCase{
		{name: "integer bare", args: with("getblockcount"), stdout: "42\n"},
		{name: "string raw", args: with("getblockhash", "0"), stdout: hash0 + "\n"},
		{name: "object indented", args: with("getblock", hash0), stdout: block0JSON},
		{name: "array of strings", args: with("generatetoaddress", "2", addr1), stdout: "[\n  \"" + hash0 + "\",\n  \"" + hash0 + "\"\n]\n"},
		{name: "array of objects as JSON when piped", args: with("getutxosbyaddress", addr1), stdout: utxosJSON},
		{name: "array of objects as a table", args: append([]string{"--table"}, with("getutxosbyaddress", addr1)...), stdout: utxosTable},
		{name: "boolean argument sent as true", args: with("getutxosbyaddress", addr1, "1"),
			stdout: utxosMempoolJSON},
		{name: "boolean argument sent as false", args: with("getutxosbyaddress", addr1, "false"), stdout: utxosJSON},

		{name: "RPC domain error", args: with("getblock", strings.Repeat("f", 64)), code: 1,
			stderr: "error code: -1\nerror message:\nblock not found\n"},
		{name: "RPC error from a typed call", args: with("getblockhash", "5"), code: 1,
			stderr: "error code: -1\nerror message:\nblock height out of range\n"},
		{name: "method not found", args: with("gettxoutsetinfo"), code: 89,
			stderr: "error code: -32601\nerror message:\nMethod not found\n"},
		{name: "invalid params from the server", args: with("call", "getblockhash", `"x"`), code: 90,
			stderr: "error code: -32602\nerror message:\n", prefix: true},
		{name: "warm-up code without --rpcwait", args: with("call", "warmingup"), code: 28,
			stderr: "error code: -28\nerror message:\nLoading block index...\n"},

		{name: "call parses JSON", args: with("call", "echo", "1", `"0123"`, "abc", "true", `{"k":[1]}`, "null", "-5"),
			stdout: "[\n  1,\n  \"0123\",\n  \"abc\",\n  true,\n  {\n    \"k\": [\n      1\n    ]\n  },\n  null,\n  -5\n]\n"},
		{name: "call with no params", args: with("call", "echo"), stdout: "[]\n"},
		{name: "call of a known method", args: with("call", "getblockhash", "0"), stdout: hash0 + "\n"},
		{name: "null prints nothing", args: with("call", "nothing"), stdout: ""},
		{name: "call without a method", args: with("call"), code: 2, offline: true,
			stderr: "error: call: no method given\nusage: coin-cli [global options] call <method> [params...]\n(see 'coin-cli call --help')\n"},

		{name: "--stdin hex", stdin: "00ff\n", args: append([]string{"--stdin"}, with("sendrawtransaction")...), stdout: "txid-of-00FF\n"},
		{name: "-stdin single dash", stdin: "0\n", args: append([]string{"-stdin"}, with("getblockhash")...), stdout: hash0 + "\n"},
		{name: "--stdin is the last argument", stdin: "true", args: append([]string{"--stdin"}, with("getutxosbyaddress", addr1)...),
			stdout: utxosMempoolJSON},
		{name: "--stdin reads one line", stdin: "0\n1\n", args: append([]string{"--stdin"}, with("getblockhash")...), stdout: hash0 + "\n"},
		{name: "--stdin with call", stdin: " 5 \n", args: append([]string{"--stdin"}, with("call", "echo", "a")...), stdout: "[\n  \"a\",\n  5\n]\n"},
		{name: "--stdin counts", stdin: "0\n", args: append([]string{"--stdin"}, with("getblockhash", "0")...), code: 2, offline: true,
			stderr: "error: too many arguments for getblockhash: got 2, want 1\n", prefix: true},
		{name: "--stdin empty", stdin: "", args: append([]string{"--stdin"}, with("sendrawtransaction")...), code: 1, offline: true,
			stderr: "error: --stdin: nothing on standard input\n"},

		{name: "non-integer refused client-side", args: with("getblockhash", "1.5"), code: 1, offline: true,
			stderr: "error: getblockhash: argument 1 (height): \"1.5\" is not a non-negative integer\n"},
		{name: "negative refused client-side", args: with("getblockhash", "-1"), code: 1, offline: true,
			stderr: "error: getblockhash: argument 1 (height): \"-1\" is not a non-negative integer\n"},
		{name: "bad boolean refused client-side", args: with("getutxosbyaddress", addr1, "yes"), code: 1, offline: true,
			stderr: "error: getutxosbyaddress: argument 2 (include_mempool): \"yes\" is not a boolean (use true, false, 1 or 0)\n"},
		{name: "too few", args: with("getblock"), code: 2, offline: true,
			stderr: "error: too few arguments for getblock: got 0, want 1\nusage: coin-cli [global options] getblock <hash>\n(see 'coin-cli getblock --help')\n"},
		{name: "too many", args: with("getblockcount", "1"), code: 2, offline: true,
			stderr: "error: too many arguments for getblockcount: got 1, want none\n", prefix: true},
		{name: "unknown method", args: with("getfoo"), code: 2, offline: true,
			stderr: "error: unknown method \"getfoo\": see 'coin-cli --help' for the methods, or use 'coin-cli call getfoo [PARAMS...]' for a method coin-cli does not list\n"},
		{name: "bad network", args: []string{"--network", "simnet", "getblockcount"}, code: 2, offline: true,
			stderr: "error: --network: unknown network \"simnet\" (want mainnet, testnet or regtest) (see 'coin-cli --help')\n"},
		{name: "bad --rpc", args: []string{"--rpc", "ftp://x", "getblockcount"}, code: 1, offline: true,
			stderr: "error: --rpc \"ftp://x\": want a URL such as http://127.0.0.1:18332\n"},
		{name: "unknown global option", args: with("--bogus", "getblockcount"), code: 2, offline: true,
			stderr: "error: unknown option --bogus (see 'coin-cli --help')\n"},
		{name: "-- makes the rest literal", args: with("getblockhash", "--", "--help"), code: 1, offline: true,
			stderr: "error: getblockhash: argument 1 (height): \"--help\" is not a non-negative integer\n"},

		{name: "--timeout", args: append([]string{"--timeout", "200ms"}, with("call", "slow")...), code: 1,
			stderr: "error: slow: no answer from the node at " + f.URL + " within 200ms (raise --timeout)\n"},
	})
}

func TestAppRPCWait(t *testing.T) {
	f := newFakeNode(t)
	f.warmups.Store(2)
	r := runApp(t, "", "--rpc", f.URL, "--rpcwait", "call", "warmingup")
	if r.code != 0 || r.stdout != "ready\n" {
		t.Errorf("--rpcwait through warm-up: %+v", r)
	}

	// The port opens while coin-cli waits.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	type opening struct {
		srv *httptest.Server
		err error
	}
	opened := make(chan opening, 1)
	go func() {
		time.Sleep(400 * time.Millisecond)
		ln, err := net.Listen("tcp", addr)
		if err != nil {
			opened <- opening{err: err}
			return
		}
		late := httptest.NewUnstartedServer(f.Config.Handler)
		late.Listener.Close()
		late.Listener = ln
		late.Start()
		opened <- opening{srv: late}
	}()
	r = runApp(t, "", "--rpc", "http://"+addr, "--rpcwait", "--rpcwait-timeout", "20s", "getblockcount")
	if o := <-opened; o.err != nil {
		t.Logf("could not reopen %s (%v): skipping the late-start case", addr, o.err)
	} else {
		o.srv.Close()
		if r.code != 0 || r.stdout != "42\n" {
			t.Errorf("--rpcwait until the port opens: %+v", r)
		}
	}

	// Nothing ever listens: --rpcwait gives up after --rpcwait-timeout.
	u := closedURL()
	r = runApp(t, "", "--rpc", u, "--rpcwait", "--rpcwait-timeout", "600ms", "getblockcount")
	if r.code != 1 || !strings.HasPrefix(r.stderr, "error: cannot connect to the node at "+u+": connection refused (still refused after waiting 600ms with --rpcwait).\n") {
		t.Errorf("--rpcwait gives up: %+v", r)
	}
	// Without --rpcwait a refused connection fails at once.
	r = runApp(t, "", "--rpc", u, "getblockcount")
	if r.code != 1 || !strings.HasPrefix(r.stderr, "error: cannot connect to the node at "+u+": connection refused.\n") ||
		!strings.Contains(r.stderr, "--rpc-bind") || !strings.Contains(r.stderr, "The address came from --rpc") {
		t.Errorf("refused: %+v", r)
	}
}

func TestAppEnv(t *testing.T) {
	f := newFakeNode(t)
	t.Setenv("COIN_RPC", strings.TrimPrefix(f.URL, "http://")) // host:port is accepted too
	if r := runApp(t, "", "getblockcount"); r.stdout != "42\n" || r.code != 0 {
		t.Errorf("COIN_RPC: %+v", r)
	}
	t.Setenv("COIN_TABLE", "1")
	if r := runApp(t, "", "getutxosbyaddress", addr1); r.stdout != utxosTable {
		t.Errorf("COIN_TABLE: %+v", r)
	}
	t.Setenv("COIN_TIMEOUT", "150ms")
	if r := runApp(t, "", "call", "slow"); r.code != 1 || !strings.Contains(r.stderr, "within 150ms") {
		t.Errorf("COIN_TIMEOUT: %+v", r)
	}
	t.Setenv("COIN_STDIN", "true")
	if r := runApp(t, "0\n", "getblockhash"); r.stdout != hash0+"\n" {
		t.Errorf("COIN_STDIN: %+v", r)
	}
	t.Setenv("COIN_NETWORK", "nonet")
	if r := runApp(t, "", "getblockcount"); r.code != 2 || !strings.Contains(r.stderr, `unknown network "nonet"`) { // a usage error
		t.Errorf("COIN_NETWORK: %+v", r)
	}
}

// The default URL is the loopback address with the RPC port of --network.
func TestDefaultURL(t *testing.T) {
	for _, tt := range []struct {
		args []string
		want string
	}{
		{nil, "http://127.0.0.1:18332"},
		{[]string{"--network", "mainnet"}, "http://127.0.0.1:18332"},
		{[]string{"--network", "testnet"}, "http://127.0.0.1:28332"},
		{[]string{"-network", "regtest"}, "http://127.0.0.1:38332"},
		{[]string{"--network", "regtest", "--rpc", "http://h:1/x"}, "http://h:1/x"},
		{[]string{"--rpc", "h:1"}, "http://h:1"},
	} {
		var got *options
		app := &cli.App{HideHelp: true, Flags: globalFlags(), Action: func(c *cli.Context) (err error) {
			got, err = globalOptions(c)
			return err
		}}
		if err := app.Run(append([]string{appName}, tt.args...)); err != nil || got.url != tt.want {
			t.Errorf("%q: %v %v, want %s", tt.args, got, err, tt.want)
		}
	}
}

func TestHelp(t *testing.T) {
	r := runApp(t, "", "--help")
	if r.code != 0 {
		t.Fatalf("--help: %+v", r)
	}
	for _, want := range []string{"COIN_RPC", "COIN_NETWORK", "--rpcwait-timeout", "--stdin", "--table", "Examples:",
		"h=$(coin-cli getblockhash 0)", "error code: N", "--rpc-bind"} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("app help lacks %q", want)
		}
	}
	for _, m := range rpcapi.Methods {
		if !strings.Contains(r.stdout, "     "+m.Name+" ") {
			t.Errorf("app help does not list %s", m.Name)
		}
	}
	if r := runApp(t, ""); r.code != 2 || r.stdout != "" || !strings.Contains(r.stderr, "no method given") {
		t.Errorf("no arguments: %+v", r)
	}

	for _, m := range rpcapi.Methods {
		for _, flag := range []string{"--help", "-h"} {
			r := runApp(t, "", "--rpc", closedURL(), m.Name, flag)
			if r.code != 0 || r.stderr != "" {
				t.Errorf("%s %s: %+v", m.Name, flag, r)
				continue
			}
			for _, want := range []string{
				usageLine(m.Name, argsUsage(m)), m.Summary, "Arguments:", "Result: " + m.Result, "Example:\n\n       coin-cli ",
			} {
				if !strings.Contains(r.stdout, want) {
					t.Errorf("%s --help lacks %q:\n%s", m.Name, want, r.stdout)
				}
			}
			for i, p := range m.Params {
				if !strings.Contains(r.stdout, fmt.Sprintf("%d. %s (", i+1, p.Name)) || !strings.Contains(r.stdout, p.Help) {
					t.Errorf("%s --help does not describe %s", m.Name, p.Name)
				}
			}
		}
	}
	r = runApp(t, "", "call", "--help")
	if r.code != 0 || !strings.Contains(r.stdout, "valid JSON") {
		t.Errorf("call --help: %+v", r)
	}
}

// Every method of the catalogue is a subcommand described from the table.
func TestEveryMethodHasCommand(t *testing.T) {
	app := newApp()
	for _, m := range rpcapi.Methods {
		c := app.Command(m.Name)
		if c == nil {
			t.Errorf("no subcommand %s", m.Name)
			continue
		}
		if c.Usage != m.Summary || c.ArgsUsage != argsUsage(m) || c.Category != m.Category || !c.SkipFlagParsing {
			t.Errorf("%s: %+v", m.Name, c)
		}
		if ex := methodExample(m); !strings.HasPrefix(ex, "coin-cli ") || !strings.Contains(ex, " "+m.Name) {
			t.Errorf("%s: example %q", m.Name, ex)
		}
	}
	if app.Command("call") == nil || app.Command("gendoc") == nil || !app.EnableBashCompletion {
		t.Error("call, gendoc or completion missing")
	}
}

func TestDocsFresh(t *testing.T) { proctest.DocsFresh(t, newApp()) }

package main

import (
	"bytes"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/cointoolkit/coin/lib/cliutil"
	"github.com/cointoolkit/coin/lib/keys"
	"github.com/cointoolkit/coin/lib/miner"
	"github.com/cointoolkit/coin/lib/params"
	"github.com/cointoolkit/coin/lib/proctest"
)

func TestDocsFresh(t *testing.T) { proctest.DocsFresh(t, newApp()) }

// runApp runs coin-miner in-process with args and returns stdout, stderr and the error.
func runApp(t *testing.T, args ...string) (string, string, error) {
	t.Helper()
	app := newApp()
	var out, errw bytes.Buffer
	app.Writer, app.ErrWriter = &out, &errw
	err := cliutil.Run(app, append([]string{appName}, args...))
	return out.String(), errw.String(), err
}

func addressFor(t *testing.T, hrp string, seed byte) string {
	t.Helper()
	var pkh keys.PubKeyHash
	pkh[0], pkh[31] = seed, seed
	s, err := keys.EncodeAddress(hrp, pkh)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// TestAddressCheckedFirst: a bad address or one of another network fails at once, before
// the (unreachable) node is contacted.
func TestAddressCheckedFirst(t *testing.T) {
	test := addressFor(t, keys.HRPTestnet, 1)
	main := addressFor(t, keys.HRPMainnet, 1)
	const rpc = "127.0.0.1:1" // nothing listens: a node contact would retry, not fail
	cases := []struct {
		args []string
		want string
		is   error
	}{
		{[]string{"--rpc", rpc, "--address", test[:len(test)-1] + "x"}, "--address", keys.ErrBadAddress},
		{[]string{"--rpc", rpc, "--address", main, "--network", "regtest"}, "not a regtest one", keys.ErrWrongNetwork},
		{[]string{"--rpc", rpc, "--address", test, "--network", "mainnet"}, "not a mainnet one", keys.ErrWrongNetwork},
		{[]string{"--rpc", rpc, "--address", "bc1qw508d6qejxtdg4y5r3zarvary0c5xw7kv8f3t4"}, "unknown address prefix", miner.ErrUnknownHRP},
		{[]string{"--rpc", rpc}, "no mining address", nil},
		{[]string{"--rpc", rpc, "--address", test, "--network", "moonnet"}, "--network", params.ErrUnknownNetwork},
		{[]string{"--rpc", rpc, "--address", test, "--threads", "-1"}, "--threads", nil},
		{[]string{"--rpc", rpc, "--address", test, "--log-level", "loud"}, "--log-level", nil},
		{[]string{"--rpc", "ftp://x", "--address", test}, "--rpc", nil},
		{[]string{"--address", test}, "give --rpc URL or --network", nil},
		{[]string{"--rpc", rpc, "--address", test, "extra"}, "unexpected argument", nil},
	}
	for _, tc := range cases {
		start := time.Now()
		_, _, err := runApp(t, tc.args...)
		if err == nil || !strings.Contains(err.Error(), tc.want) || (tc.is != nil && !errors.Is(err, tc.is)) {
			t.Errorf("%v: err %v, want %q", tc.args, err, tc.want)
		}
		if d := time.Since(start); d > 2*time.Second {
			t.Errorf("%v: took %v", tc.args, d)
		}
	}
}

func TestNodeURL(t *testing.T) {
	main, _ := miner.ParseAddress(addressFor(t, keys.HRPMainnet, 2), nil)
	test, _ := miner.ParseAddress(addressFor(t, keys.HRPTestnet, 2), nil)
	for _, tc := range []struct {
		raw  string
		net  *params.Network
		addr miner.Address
		want string
	}{
		{"", nil, main, "http://127.0.0.1:18332"},
		{"", params.Regtest, test, "http://127.0.0.1:38332"},
		{"", params.Testnet, test, "http://127.0.0.1:28332"},
		{"127.0.0.1:38332", nil, test, "http://127.0.0.1:38332"},
		{"https://node.example/rpc", nil, test, "https://node.example/rpc"},
	} {
		got, err := nodeURL(tc.raw, tc.net, tc.addr)
		if err != nil || got != tc.want {
			t.Errorf("nodeURL(%q, %v) = %q, %v; want %q", tc.raw, tc.net, got, err, tc.want)
		}
	}
}

// TestBenchmark runs --benchmark briefly without openssl on the PATH.
func TestBenchmark(t *testing.T) {
	t.Setenv("PATH", "")
	out, _, err := runApp(t, "--benchmark", "--benchmark-time", "200ms", "--threads", "2")
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"kernel ", "per CPU-second", "\n1 thread ", "\n2 threads ", "\n  thread 0 ", "\n  thread 1 ", "\nscaling: ", "\nopenssl: not measured"} {
		if !strings.Contains(out, want) {
			t.Errorf("benchmark output lacks %q:\n%s", want, out)
		}
	}
}

func TestStatusLine(t *testing.T) {
	st := miner.Stats{Hashrate: 25.5e6, Accepted: 3, Rejected: 1, Height: 120, Threads: 8, Elapsed: 65 * time.Second,
		NodeUp: true, Mining: true}
	got := statusLine(st)
	want := "25.50 MH/s | accepted 3 | rejected 1 | height 120 | 8 threads | up 1m5s"
	if got != want {
		t.Fatalf("status %q, want %q", got, want)
	}
	st.Pausing, st.Mining = true, false
	if !strings.Contains(statusLine(st), "pausing (--interval)") {
		t.Fatalf("no pause note: %q", statusLine(st))
	}
	st.NodeUp = false
	if !strings.Contains(statusLine(st), "node unreachable") {
		t.Fatal("no unreachable note")
	}
}

// TestConsole: on a terminal, log records and block hashes go above the status line.
func TestConsole(t *testing.T) {
	var out, errw bytes.Buffer
	c := &console{out: &out, errw: &errw, tty: true, outTTY: true}
	c.setStatus("S1")
	c.Write([]byte("log line\n"))
	c.printBlock("abcd")
	c.setStatus("")
	want := "\rS1\x1b[K" + "\r\x1b[K" + "log line\n" + "\rS1\x1b[K" + "\r\x1b[K" + "\rS1\x1b[K" + "\r\x1b[K"
	if errw.String() != want {
		t.Fatalf("stderr %q, want %q", errw.String(), want)
	}
	if out.String() != "abcd\n" {
		t.Fatalf("stdout %q", out.String())
	}
}

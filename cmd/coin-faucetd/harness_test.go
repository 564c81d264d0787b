package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/cointoolkit/coin/lib/params"
	"github.com/cointoolkit/coin/lib/proctest"
	"github.com/cointoolkit/coin/lib/wallet"
)

// buildBinaries builds the executables once for all tests and benchmarks of this package.
func buildBinaries(t testing.TB) string {
	t.Helper()
	return proctest.Build(t, "./cmd/coin-node", "./cmd/coin-faucetd", "./cmd/coin-faucet", "./cmd/coin-wallet")
}

func TestMain(m *testing.M) {
	code := m.Run()
	proctest.Cleanup()
	os.Exit(code)
}

// node is a regtest coin-node.
type node struct{ *proctest.Node }

func startNode(t testing.TB, extra ...string) *node {
	t.Helper()
	return &node{proctest.StartNode(t, filepath.Join(buildBinaries(t), "coin-node"), extra...)}
}

func (n *node) generate(t testing.TB, blocks int, addr string) {
	t.Helper()
	for blocks > 0 {
		k := min(blocks, 100)
		if _, err := n.RPC.GenerateToAddress(context.Background(), k, addr); err != nil {
			t.Fatalf("generatetoaddress: %v", err)
		}
		blocks -= k
	}
}

// faucetd is a coin-faucetd process.
type faucetd struct {
	*proctest.Proc
	url  string
	args []string
}

func startFaucetd(t testing.TB, args ...string) *faucetd {
	t.Helper()
	bin := buildBinaries(t)
	listen := fmt.Sprintf("127.0.0.1:%d", proctest.FreePort(t))
	f := &faucetd{url: "http://" + listen, args: append([]string{"--listen", listen}, args...)}
	f.Proc = proctest.Start(t, filepath.Join(bin, "coin-faucetd"), f.args...)
	f.waitReady(t)
	return f
}

// limitsOff is args with protocol §14's per-client limits and hourly budget off: the tests'
// clients all come from 127.0.0.1 and claim more than a public faucet allows one client.
func limitsOff(args ...string) []string {
	return append(args, "--claims-per-ip", "0", "--budget-per-hour", "0", "--requests-per-second", "0")
}

// waitReady waits until the faucet answers and has read a non-zero balance.
func (f *faucetd) waitReady(t testing.TB) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		code, body, _ := httpJSON(http.MethodGet, f.url+"/api/status", "")
		if code == 200 && body["faucet_balance"] != "0.00000000" {
			return
		}
		if f.Exited() {
			t.Fatalf("coin-faucetd exited:\n%s", f.Out.String())
		}
		if time.Now().After(deadline) {
			t.Fatalf("coin-faucetd not ready (last status %d %v):\n%s", code, body, f.Out.String())
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// restart stops the faucet and starts it again on the same address, with args replacing
// its other arguments when given.
func (f *faucetd) restart(t testing.TB, args ...string) {
	t.Helper()
	if code := f.Stop(t, 20*time.Second); code != 0 {
		t.Fatalf("exit code %d after SIGTERM:\n%s", code, f.Out.String())
	}
	if len(args) > 0 {
		f.args = append(f.args[:2:2], args...)
	}
	f.Proc = proctest.Start(t, f.Cmd.Path, f.args...)
	f.waitReady(t)
}

var httpClient = &http.Client{Timeout: time.Minute, Transport: &http.Transport{MaxIdleConnsPerHost: 200}}

// httpJSON does a request and decodes a JSON object answer.
func httpJSON(method, url, body string) (int, map[string]any, http.Header) {
	var r io.Reader
	if body != "" {
		r = strings.NewReader(body)
	}
	req, err := http.NewRequest(method, url, r)
	if err != nil {
		return 0, nil, nil
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := httpClient.Do(req)
	if err != nil {
		return 0, map[string]any{"transport": err.Error()}, nil
	}
	defer resp.Body.Close()
	var m map[string]any
	raw, _ := io.ReadAll(resp.Body)
	if json.Unmarshal(raw, &m) != nil {
		m = map[string]any{"raw": string(raw)}
	}
	return resp.StatusCode, m, resp.Header
}

// sh runs a shell pipeline with the binaries on PATH; it returns stdout, stderr and the
// exit code.
func sh(t testing.TB, env []string, pipeline string) (string, string, int) {
	t.Helper()
	cmd := exec.Command("sh", "-c", pipeline)
	cmd.Env = append(append(os.Environ(), "PATH="+buildBinaries(t)+string(os.PathListSeparator)+os.Getenv("PATH")), env...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	var ee *exec.ExitError
	code := 0
	if errors.As(err, &ee) {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	return out.String(), errb.String(), code
}

func mustRun(t testing.TB, env []string, pipeline string) string {
	t.Helper()
	out, errs, code := sh(t, env, pipeline)
	if code != 0 {
		t.Fatalf("%s: exit %d\nstdout: %s\nstderr: %s", pipeline, code, out, errs)
	}
	return out
}

func decodeObject(t testing.TB, s string) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal([]byte(s), &m); err != nil {
		t.Fatalf("not a JSON object: %q", s)
	}
	return m
}

// faucetNet is a regtest node whose first blocks paid a new faucet wallet, and the next 100
// a burn address so that those coinbases are mature: the start of the end-to-end tests that
// run coin-faucetd's agent API.
type faucetNet struct {
	*node
	dir        string // the test's temporary directory
	mfile      string // the faucet wallet's mnemonic file
	faucetAddr string // the faucet wallet's address
	burn       string // an address no one spends from, for the blocks the tests mine
}

// startFaucetNet starts a regtest node and mines coinbases blocks to a new faucet wallet,
// then 100 to a burn address.
func startFaucetNet(t *testing.T, coinbases int) *faucetNet {
	t.Helper()
	e := &faucetNet{node: startNode(t), dir: t.TempDir()}
	fm, faucetAddr, err := wallet.NewMnemonic(12, params.Regtest)
	if err != nil {
		t.Fatal(err)
	}
	e.faucetAddr = faucetAddr
	e.mfile = filepath.Join(e.dir, "faucet-mnemonic")
	if err := os.WriteFile(e.mfile, []byte(fm+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	_, e.burn, _ = wallet.NewMnemonic(12, params.Regtest)
	e.generate(t, coinbases, e.faucetAddr)
	e.generate(t, 100, e.burn)
	return e
}

// faucetdArgs is coin-faucetd's arguments for the faucet of e (per-client limits off, no
// per-IP rate), extra after them.
func (e *faucetNet) faucetdArgs(extra ...string) []string {
	return limitsOff(append([]string{"--network", "regtest", "--rpc", e.URL(), "--data-dir", filepath.Join(e.dir, "faucet-data"),
		"--mnemonic-file", e.mfile, "--ip-rate", "0"}, extra...)...)
}

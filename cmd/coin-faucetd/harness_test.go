package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/cointoolkit/coin/lib/jsonrpc"
	"github.com/cointoolkit/coin/lib/rpcapi"
)

// The binaries are built once for all tests and benchmarks of this package.
var (
	binOnce sync.Once
	binDir  string
	binErr  error
)

func buildBinaries(t testing.TB) string {
	t.Helper()
	binOnce.Do(func() {
		binDir, binErr = os.MkdirTemp("", "coin-faucet-e2e")
		if binErr != nil {
			return
		}
		cmd := exec.Command("go", "build", "-o", binDir+string(os.PathSeparator),
			"../coin-node", "../coin-faucetd", "../coin-faucet", "../coin-wallet")
		if out, err := cmd.CombinedOutput(); err != nil {
			binErr = fmt.Errorf("go build: %v\n%s", err, out)
		}
	})
	if binErr != nil {
		t.Fatal(binErr)
	}
	return binDir
}

func TestMain(m *testing.M) {
	code := m.Run()
	if binDir != "" {
		os.RemoveAll(binDir)
	}
	os.Exit(code)
}

func freePort(t testing.TB) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// lockedBuffer collects a process's output safely.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// proc is a running process of ours, killed at cleanup.
type proc struct {
	cmd  *exec.Cmd
	out  *lockedBuffer
	done chan struct{}
}

func start(t testing.TB, bin string, args ...string) *proc {
	t.Helper()
	p := &proc{cmd: exec.Command(bin, args...), out: &lockedBuffer{}, done: make(chan struct{})}
	p.cmd.Stdout, p.cmd.Stderr = p.out, p.out
	if err := p.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { _ = p.cmd.Wait(); close(p.done) }()
	t.Cleanup(p.kill)
	return p
}

func (p *proc) kill() {
	select {
	case <-p.done:
	default:
		_ = p.cmd.Process.Kill()
		<-p.done
	}
}

// stop sends SIGTERM and waits for the exit.
func (p *proc) stop(t testing.TB) {
	t.Helper()
	_ = p.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-p.done:
	case <-time.After(20 * time.Second):
		t.Fatalf("process did not stop on SIGTERM:\n%s", p.out.String())
	}
	if code := p.cmd.ProcessState.ExitCode(); code != 0 {
		t.Fatalf("exit code %d after SIGTERM:\n%s", code, p.out.String())
	}
}

// node is a regtest coin-node.
type node struct {
	*proc
	rpc *rpcapi.Client
	url string
}

func startNode(t testing.TB, extra ...string) *node {
	t.Helper()
	bin := buildBinaries(t)
	rpcAddr := fmt.Sprintf("127.0.0.1:%d", freePort(t))
	args := append([]string{"--network", "regtest", "--data-dir", t.TempDir(), "--rpc-bind", rpcAddr,
		"--p2p-port", strconv.Itoa(freePort(t))}, extra...)
	n := &node{proc: start(t, filepath.Join(bin, "coin-node"), args...), url: "http://" + rpcAddr}
	n.rpc = rpcapi.NewClient(n.url, jsonrpc.WithTimeout(time.Minute))
	t.Cleanup(n.rpc.Close)
	deadline := time.Now().Add(30 * time.Second)
	for {
		if _, err := n.rpc.GetBlockCount(context.Background()); err == nil {
			return n
		}
		if time.Now().After(deadline) {
			t.Fatalf("node did not come up:\n%s", n.out.String())
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func (n *node) generate(t testing.TB, blocks int, addr string) {
	t.Helper()
	for blocks > 0 {
		k := min(blocks, 100)
		if _, err := n.rpc.GenerateToAddress(context.Background(), k, addr); err != nil {
			t.Fatalf("generatetoaddress: %v", err)
		}
		blocks -= k
	}
}

// faucetd is a coin-faucetd process.
type faucetd struct {
	*proc
	url  string
	args []string
}

func startFaucetd(t testing.TB, args ...string) *faucetd {
	t.Helper()
	bin := buildBinaries(t)
	listen := fmt.Sprintf("127.0.0.1:%d", freePort(t))
	f := &faucetd{url: "http://" + listen, args: append([]string{"--listen", listen}, args...)}
	f.proc = start(t, filepath.Join(bin, "coin-faucetd"), f.args...)
	f.waitReady(t)
	return f
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
		select {
		case <-f.done:
			t.Fatalf("coin-faucetd exited:\n%s", f.out.String())
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("coin-faucetd not ready (last status %d %v):\n%s", code, body, f.out.String())
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// restart stops the faucet and starts it again on the same address, with args replacing
// its other arguments when given.
func (f *faucetd) restart(t testing.TB, args ...string) {
	t.Helper()
	f.stop(t)
	if len(args) > 0 {
		f.args = append(f.args[:2:2], args...)
	}
	f.proc = start(t, f.cmd.Path, f.args...)
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

package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/cointoolkit/coin/lib/proctest"
	"github.com/cointoolkit/coin/lib/rpcapi"
)

// rawPost sends a JSON-RPC body to url with the given headers and returns the status and body.
func rawPost(t *testing.T, url, body string, header map[string]string) (int, string) {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range header {
		if k == "Host" {
			req.Host = v
		} else {
			req.Header.Set(k, v)
		}
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

const stopBody = `{"jsonrpc":"2.0","method":"stop","params":[],"id":1}`

// TestE2EWhoMayCall: protocol §11's who may call, against the real node. What a web page can
// send (text/plain, a foreign Origin, a rebound Host name) gets 403 and does nothing: a
// "stop" sent that way leaves the node running. A spec client and an allowed origin work.
func TestE2EWhoMayCall(t *testing.T) {
	n := newTestNode(t, "--rpc-allow-origin", "https://wallet.example")
	port := strings.TrimPrefix(n.RPCAddr, "127.0.0.1:")
	for _, c := range []struct {
		name   string
		header map[string]string
	}{
		{"text/plain (a browser's simple request)", map[string]string{"Content-Type": "text/plain"}},
		{"form content type", map[string]string{"Content-Type": "application/x-www-form-urlencoded"}},
		{"foreign Origin", map[string]string{"Content-Type": "application/json", "Origin": "https://evil.example"}},
		{"rebinding Host", map[string]string{"Content-Type": "application/json", "Host": "evil.example:" + port}},
	} {
		status, body := rawPost(t, n.URL(), stopBody, c.header)
		if status != http.StatusForbidden {
			t.Errorf("%s: stop answered %d %s, want 403", c.name, status, body)
		}
		time.Sleep(100 * time.Millisecond)
		if n.Proc.Exited() {
			t.Fatalf("%s: the node stopped\n%s", c.name, n.Proc.Out.Tail(30))
		}
		if got := n.ok("getblockcount"); got != "0" {
			t.Fatalf("%s: getblockcount %q", c.name, got)
		}
	}
	// An allowed origin and the spec's client are served.
	status, body := rawPost(t, n.URL(), `{"jsonrpc":"2.0","method":"getblockcount","params":[],"id":1}`,
		map[string]string{"Content-Type": "application/json", "Origin": "https://wallet.example"})
	if status != 200 || !strings.Contains(body, `"result":0`) {
		t.Fatalf("allowed origin: %d %s", status, body)
	}
	status, body = rawPost(t, n.URL(), `{"jsonrpc":"2.0","method":"getblockcount","params":[],"id":1}`,
		map[string]string{"Content-Type": "application/json", "Host": "localhost:" + port})
	if status != 200 || !strings.Contains(body, `"result":0`) {
		t.Fatalf("Host localhost: %d %s", status, body)
	}
	// coin-cli explains a refusal it cannot cause itself: none here, it sends JSON.
	if !strings.Contains(n.Proc.Out.String(), "request refused") {
		t.Errorf("refusals not logged:\n%s", n.Proc.Out.Tail(20))
	}
	// The spec's stop still works.
	if got := n.ok("stop"); !strings.Contains(got, "stopping") {
		t.Fatalf("stop: %q", got)
	}
	if code := n.Proc.Wait(t, 20*time.Second); code != 0 {
		t.Fatalf("exit %d after stop", code)
	}
}

// TestE2ENonLoopbackNeedsAuth: --rpc-bind on all interfaces without --rpc-auth refuses to
// start, before opening anything, and says what to do.
func TestE2ENonLoopbackNeedsAuth(t *testing.T) {
	bin := filepath.Join(bins(t), "coin-node")
	for _, bind := range []string{fmt.Sprintf("0.0.0.0:%d", proctest.FreePort(t)), fmt.Sprintf(":%d", proctest.FreePort(t))} {
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		out, err := exec.CommandContext(ctx, bin, "--network", "regtest", "--data-dir", t.TempDir(), "--rpc-bind", bind,
			"--p2p-port", strconv.Itoa(proctest.FreePort(t))).CombinedOutput()
		cancel()
		if err == nil || !strings.Contains(string(out), "is not a loopback address") || !strings.Contains(string(out), "--rpc-auth") ||
			!strings.Contains(string(out), "coin-cli rpcauth") {
			t.Fatalf("--rpc-bind %s without --rpc-auth: %v\n%s", bind, err, out)
		}
	}
	// A malformed --rpc-auth is refused too.
	out, err := exec.Command(bin, "--network", "regtest", "--data-dir", t.TempDir(), "--rpc-bind", "127.0.0.1:1",
		"--rpc-auth", "alice:salt").CombinedOutput()
	if err == nil || !strings.Contains(string(out), "--rpc-auth") {
		t.Fatalf("malformed --rpc-auth: %v\n%s", err, out)
	}
}

// TestE2ECredentials: a node bound to all interfaces with --rpc-auth from coin-cli rpcauth.
// Missing and wrong credentials get 401 (with WWW-Authenticate); the right ones work, given in
// the URL or with --rpc-user and --rpc-password-file; coin-cli never prints the password.
func TestE2ECredentials(t *testing.T) {
	dir := bins(t)
	cli := filepath.Join(dir, "coin-cli")
	out, err := exec.Command(cli, "rpcauth", "--json", "alice").Output()
	if err != nil {
		t.Fatal(err)
	}
	var gen struct{ User, Password, RPCAuth string }
	if err := json.Unmarshal(out, &gen); err != nil {
		t.Fatal(err)
	}
	port := proctest.FreePort(t)
	addr := fmt.Sprintf("127.0.0.1:%d", port)
	p := proctest.Start(t, filepath.Join(dir, "coin-node"), "--network", "regtest", "--data-dir", t.TempDir(),
		"--rpc-bind", fmt.Sprintf("0.0.0.0:%d", port), "--rpc-auth", gen.RPCAuth, "--p2p-port", strconv.Itoa(proctest.FreePort(t)))
	good := rpcapi.NewClient("http://alice:" + gen.Password + "@" + addr)
	defer good.Close()
	deadline := time.Now().Add(proctest.NodeTimeout)
	for {
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		_, err := good.GetBlockCount(ctx)
		cancel()
		if err == nil {
			break
		}
		if p.Exited() || time.Now().After(deadline) {
			t.Fatalf("node with --rpc-auth not up: %v\n%s", err, p.Out.Tail(30))
		}
		time.Sleep(50 * time.Millisecond)
	}
	url := "http://" + addr
	// Raw: missing and wrong credentials.
	for name, h := range map[string]map[string]string{
		"missing": {"Content-Type": "application/json"},
		"wrong":   {"Content-Type": "application/json", "Authorization": "Basic " + basic("alice", "nope")},
	} {
		req, _ := http.NewRequest(http.MethodPost, url, strings.NewReader(stopBody))
		for k, v := range h {
			req.Header.Set(k, v)
		}
		start := time.Now()
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusUnauthorized || !strings.HasPrefix(resp.Header.Get("WWW-Authenticate"), "Basic") {
			t.Errorf("%s credentials: %d %v", name, resp.StatusCode, resp.Header)
		}
		if time.Since(start) < 200*time.Millisecond {
			t.Errorf("%s credentials refused without delay", name)
		}
	}
	if p.Exited() {
		t.Fatal("the node stopped")
	}
	run := func(env []string, args ...string) (string, string, int) {
		cmd := exec.Command(cli, args...)
		cmd.Env = append(os.Environ(), env...)
		var o, e strings.Builder
		cmd.Stdout, cmd.Stderr = &o, &e
		err := cmd.Run()
		code := 0
		if ee, ok := err.(*exec.ExitError); ok {
			code = ee.ExitCode()
		}
		return o.String(), e.String(), code
	}
	pwFile := filepath.Join(t.TempDir(), "pw")
	os.WriteFile(pwFile, []byte(gen.Password+"\n"), 0o600)
	for _, c := range []struct {
		name string
		env  []string
		args []string
		ok   bool
		want string
	}{
		{"URL", nil, []string{"--rpc", "http://alice:" + gen.Password + "@" + addr}, true, "0"},
		{"COIN_RPC URL", []string{"COIN_RPC=http://alice:" + gen.Password + "@" + addr}, nil, true, "0"},
		{"password file", nil, []string{"--rpc", url, "--rpc-user", "alice", "--rpc-password-file", pwFile}, true, "0"},
		{"environment", []string{"COIN_RPC_USER=alice", "COIN_RPC_PASSWORD_FILE=" + pwFile}, []string{"--rpc", url}, true, "0"},
		{"none", nil, []string{"--rpc", url}, false, "HTTP 401"},
		{"wrong", nil, []string{"--rpc", "http://alice:WRONGPASS@" + addr}, false, "HTTP 401"},
	} {
		stdout, stderr, code := run(c.env, append(c.args, "getblockcount")...)
		if c.ok && (code != 0 || strings.TrimSpace(stdout) != c.want) || !c.ok && (code != 1 || !strings.Contains(stderr, c.want)) {
			t.Errorf("coin-cli with %s credentials: exit %d, %q %q", c.name, code, stdout, stderr)
		}
		if strings.Contains(stdout+stderr, gen.Password) || strings.Contains(stdout+stderr, "WRONGPASS") {
			t.Errorf("coin-cli with %s credentials prints a password: %q %q", c.name, stdout, stderr)
		}
	}
	if strings.Contains(p.Out.String(), gen.Password) {
		t.Error("the node logs the password")
	}
	if _, _, code := run(nil, "--rpc", "http://alice:"+gen.Password+"@"+addr, "stop"); code != 0 {
		t.Fatal("stop with credentials failed")
	}
	if code := p.Wait(t, 20*time.Second); code != 0 {
		t.Fatalf("exit %d after stop", code)
	}
}

func basic(user, pass string) string {
	req, _ := http.NewRequest(http.MethodGet, "http://x", nil)
	req.SetBasicAuth(user, pass)
	return strings.TrimPrefix(req.Header.Get("Authorization"), "Basic ")
}

// openFDs counts the file descriptors of process pid (Linux).
func openFDs(t *testing.T, pid int) int {
	t.Helper()
	es, err := os.ReadDir(fmt.Sprintf("/proc/%d/fd", pid))
	if err != nil {
		t.Fatal(err)
	}
	return len(es)
}

// TestE2ERPCMaxConnections: with --rpc-max-connections 3, many idle connections cost the node
// no more than 3 descriptors (the others wait in the kernel's accept queue), and a fresh
// client queued behind them is answered once the accepted idle ones time out (the header
// timeout, 5 s).
func TestE2ERPCMaxConnections(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("counts descriptors in /proc")
	}
	const maxConns, idle = 3, 30
	n := newTestNode(t, "--rpc-max-connections", strconv.Itoa(maxConns))
	n.RPC.Close() // no keep-alive connection of the test's own client holds a slot
	time.Sleep(200 * time.Millisecond)
	pid := n.Proc.Cmd.Process.Pid
	base := openFDs(t, pid)
	conns := make([]net.Conn, 0, idle)
	for i := 0; i < idle; i++ {
		c, err := net.Dial("tcp", n.RPCAddr)
		if err != nil {
			t.Fatalf("dial %d: %v", i, err)
		}
		conns = append(conns, c)
	}
	defer func() {
		for _, c := range conns {
			c.Close()
		}
	}()
	time.Sleep(500 * time.Millisecond)
	if got := openFDs(t, pid); got > base+maxConns+2 {
		t.Fatalf("%d idle connections took %d descriptors (from %d to %d), want at most %d", idle, got-base, base, got, maxConns)
	}
	// Leave the accepted ones idle; the queued ones go away.
	for _, c := range conns[maxConns:] {
		c.Close()
	}
	start := time.Now()
	fresh := rpcapi.NewClient(n.URL())
	defer fresh.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if _, err := fresh.GetBlockCount(ctx); err != nil {
		t.Fatalf("fresh client: %v", err)
	}
	if d := time.Since(start); d > 12*time.Second {
		t.Fatalf("fresh client answered after %s", d)
	}
	if n.Proc.Exited() {
		t.Fatal("node exited")
	}
}

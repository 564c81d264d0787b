package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/cointoolkit/coin/lib/devnet"
	"github.com/cointoolkit/coin/lib/proctest"
	"github.com/cointoolkit/coin/lib/rpcapi"
)

// devnetTools are the executables `coin-node devnet` runs (and the test's clients).
var devnetTools = []string{"./cmd/coin-node", "./cmd/coin-miner", "./cmd/coin-wallet", "./cmd/coin-faucetd", "./cmd/coin-faucet", "./cmd/coin-cli"}

// freeBase finds a --base-port whose whole layout (one node) is free on loopback.
func freeBase(t *testing.T) int {
	t.Helper()
	for range 50 {
		base := proctest.FreePort(t)
		if base+devnet.MaxNodes*10+2 > 65535 {
			continue
		}
		ok := true
		for _, p := range []int{base, base + 1, base + 2, base + 8, base + 9, base + 10, base + 11, base + 12} {
			l, err := net.Listen("tcp", "127.0.0.1:"+strconv.Itoa(p))
			if err != nil {
				ok = false
				break
			}
			l.Close()
		}
		if ok {
			return base
		}
	}
	t.Fatal("no free port range")
	return 0
}

// startDevnet runs `coin-node devnet` and waits for its screen; it returns the process and
// the screen's URLs by label.
func startDevnet(t *testing.T, bin string, args ...string) (*proctest.Proc, map[string]string) {
	t.Helper()
	p := proctest.Start(t, filepath.Join(bin, "coin-node"), append([]string{"devnet"}, args...)...)
	deadline := time.Now().Add(3 * time.Minute)
	for !strings.Contains(p.Stdout.String(), "Try:") {
		if p.Exited() || time.Now().After(deadline) {
			t.Fatalf("no devnet screen (exited %v):\n%s", p.Exited(), p.Out.Tail(60))
		}
		time.Sleep(100 * time.Millisecond)
	}
	time.Sleep(100 * time.Millisecond) // the rest of the screen
	urls := map[string]string{}
	re := regexp.MustCompile(`^\s+(node RPC|faucet page|MCP|events)\s+(http://\S+)`)
	sc := bufio.NewScanner(strings.NewReader(p.Stdout.String()))
	for sc.Scan() {
		if m := re.FindStringSubmatch(sc.Text()); m != nil {
			urls[m[1]] = m[2]
		}
	}
	for _, k := range []string{"node RPC", "faucet page", "MCP", "events"} {
		if urls[k] == "" {
			t.Fatalf("the screen has no %s URL:\n%s", k, p.Stdout.String())
		}
	}
	return p, urls
}

// stopDevnet sends SIGINT as Ctrl-C would and checks a clean exit.
func stopDevnet(t *testing.T, p *proctest.Proc) {
	t.Helper()
	_ = p.Cmd.Process.Signal(syscall.SIGINT)
	if code := p.Wait(t, 90*time.Second); code != 0 {
		t.Fatalf("devnet exit %d after SIGINT:\n%s", code, p.Out.Tail(40))
	}
}

// processesUnder lists the running processes whose command line names dir.
func processesUnder(dir string) []string {
	var found []string
	ents, _ := os.ReadDir("/proc")
	for _, e := range ents {
		if _, err := strconv.Atoi(e.Name()); err != nil {
			continue
		}
		b, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if err == nil && bytes.Contains(b, []byte(dir)) {
			found = append(found, e.Name()+": "+strings.ReplaceAll(string(b), "\x00", " "))
		}
	}
	return found
}

// TestDevnet runs `coin-node devnet` as `make devnet` does: from its screen alone it claims
// through the printed faucet URL (and sees the claim on the node's notification stream),
// registers an agent through the printed MCP URL and sees the registration in the printed
// event stream; SIGINT stops every process and keeps the data,
// and a second start resumes the same network.
func TestDevnet(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end test")
	}
	bin := proctest.Build(t, devnetTools...)
	dir := filepath.Join(t.TempDir(), "devnet")
	base := freeBase(t)
	args := []string{"--dir", dir, "--interval", "1s", "--base-port", strconv.Itoa(base)}
	p, urls := startDevnet(t, bin, args...)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()

	// A claim through the faucet URL, for a fresh wallet's address.
	client := sdk.NewClient(&sdk.Implementation{Name: "devnet-test", Version: "0"}, nil)
	s, err := client.Connect(ctx, &sdk.StreamableClientTransport{Endpoint: urls["MCP"]}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	tool := func(name string, args map[string]any, out any) error {
		res, err := s.CallTool(ctx, &sdk.CallToolParams{Name: name, Arguments: args})
		if err != nil {
			return err
		}
		text := res.Content[0].(*sdk.TextContent).Text
		if res.IsError {
			return fmt.Errorf("%s: %s", name, text)
		}
		return json.Unmarshal([]byte(text), out)
	}
	var w struct{ Address, Mnemonic string }
	if err := tool("wallet_new", map[string]any{}, &w); err != nil {
		t.Fatal(err)
	}
	// The node's notification stream, from before the claim: the claim must show as tx_added.
	sreq, _ := http.NewRequestWithContext(ctx, http.MethodGet, urls["node RPC"]+"/stream", nil)
	sresp, err := http.DefaultClient.Do(sreq)
	if err != nil || sresp.StatusCode != http.StatusOK {
		t.Fatalf("node stream: %v %v", err, sresp)
	}
	defer sresp.Body.Close()
	added := make(chan string, 4096)
	go func() {
		sc := bufio.NewScanner(sresp.Body)
		for sc.Scan() {
			var e rpcapi.Event
			if json.Unmarshal(sc.Bytes(), &e) == nil && e.Type == "tx_added" {
				select {
				case added <- e.TxID:
				default:
				}
			}
		}
	}()
	body, _ := json.Marshal(map[string]string{"address": w.Address})
	resp, err := http.Post(strings.TrimSuffix(urls["faucet page"], "/")+"/api/faucet", "application/json", bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	var claim struct {
		Txid string `json:"txid"`
	}
	json.NewDecoder(resp.Body).Decode(&claim)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || claim.Txid == "" {
		t.Fatalf("claim: HTTP %d, txid %q", resp.StatusCode, claim.Txid)
	}
	for seen := false; !seen; {
		select {
		case id := <-added:
			seen = id == claim.Txid
		case <-ctx.Done():
			t.Fatalf("the claim %s never showed on the node's stream", claim.Txid)
		}
	}

	// The event stream, from the start, filtered to the new agent.
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, urls["events"]+"?address="+w.Address, nil)
	ev, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer ev.Body.Close()
	registered := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(ev.Body)
		for sc.Scan() {
			if strings.HasPrefix(sc.Text(), "data: ") && strings.Contains(sc.Text(), `"type":"agent_registered"`) {
				registered <- sc.Text()
				return
			}
		}
	}()

	// The claim is mined by the devnet's miner; then the agent registers through MCP.
	node := rpcapi.NewClient(urls["node RPC"])
	var reg struct {
		StakeTxid string `json:"stake_txid"`
	}
	for {
		err := tool("agent_register", map[string]any{"mnemonic": w.Mnemonic}, &reg)
		if err == nil {
			break
		}
		if ctx.Err() != nil {
			t.Fatalf("agent_register never succeeded: %v\n%s", err, p.Out.Tail(40))
		}
		time.Sleep(500 * time.Millisecond)
	}
	select {
	case line := <-registered:
		if !strings.Contains(line, reg.StakeTxid) {
			t.Fatalf("agent_registered event %s is not of %s", line, reg.StakeTxid)
		}
	case <-ctx.Done():
		t.Fatal("no agent_registered event in the stream")
	}
	if tx, err := node.GetTransaction(ctx, claim.Txid); err != nil || tx == nil {
		t.Fatalf("the claim %s is not known to the node: %v", claim.Txid, err)
	}
	h1, err := node.GetBlockCount(ctx)
	if err != nil {
		t.Fatal(err)
	}

	// Ctrl-C: every process gone, the data kept.
	stopDevnet(t, p)
	if left := processesUnder(dir); len(left) > 0 {
		t.Fatalf("processes left after SIGINT:\n%s", strings.Join(left, "\n"))
	}
	state, err := os.ReadFile(filepath.Join(dir, "state.json"))
	if err != nil {
		t.Fatal(err)
	}

	// Again: the same network resumes (same keys, the chain kept).
	p, urls = startDevnet(t, bin, args...)
	if again, _ := os.ReadFile(filepath.Join(dir, "state.json")); !bytes.Equal(again, state) {
		t.Fatalf("state.json changed on resume:\n%s\n%s", state, again)
	}
	h2, err := rpcapi.NewClient(urls["node RPC"]).GetBlockCount(ctx)
	if err != nil || h2 < h1 {
		t.Fatalf("height after resume %d (%v), before %d", h2, err, h1)
	}
	stopDevnet(t, p)
}

// TestDevnetPortBusy: a second devnet on the same ports says which port is taken (exit 1),
// and a bad --nodes is a usage error (exit 2).
func TestDevnetPortBusy(t *testing.T) {
	bin := proctest.Build(t, devnetTools...)
	base := freeBase(t)
	l, err := net.Listen("tcp", "127.0.0.1:"+strconv.Itoa(base+8))
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	p := proctest.Start(t, filepath.Join(bin, "coin-node"), "devnet", "--dir", t.TempDir(), "--base-port", strconv.Itoa(base))
	if code := p.Wait(t, time.Minute); code != 1 || !strings.Contains(p.Out.String(), fmt.Sprintf("127.0.0.1:%d (faucet HTTP) is taken", base+8)) {
		t.Fatalf("exit %d:\n%s", code, p.Out.String())
	}
	p = proctest.Start(t, filepath.Join(bin, "coin-node"), "devnet", "--dir", t.TempDir(), "--nodes", "0")
	if code := p.Wait(t, time.Minute); code != 2 {
		t.Fatalf("--nodes 0: exit %d:\n%s", code, p.Out.String())
	}
}

package main

import (
	"bufio"
	"context"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cointoolkit/coin/lib/params"
	"github.com/cointoolkit/coin/lib/proctest"
	"github.com/cointoolkit/coin/lib/wallet"
)

// The probes of docs/security.md, repeated against the real executables.

// openRawStream dials the faucet from the loopback address from, asks for the event
// stream, and returns the connection and the status code of the answer (0 when none came
// within wait: the connection is held, waiting to be accepted or answered). It may run in
// any goroutine: a failed dial is t.Error and a nil connection.
func openRawStream(t *testing.T, url, from string, wait time.Duration) (net.Conn, int) {
	t.Helper()
	d := net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(from)}, Timeout: 5 * time.Second}
	conn, err := d.Dial("tcp", strings.TrimPrefix(url, "http://"))
	if err != nil {
		t.Errorf("dial from %s: %v", from, err)
		return nil, 0
	}
	t.Cleanup(func() { conn.Close() })
	fmt.Fprintf(conn, "GET /api/agent/events HTTP/1.1\r\nHost: faucet\r\nAccept: text/event-stream\r\n\r\n")
	if wait == 0 {
		return conn, 0
	}
	_ = conn.SetReadDeadline(time.Now().Add(wait))
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	_ = conn.SetReadDeadline(time.Time{})
	if err != nil {
		return conn, 0
	}
	return conn, resp.StatusCode
}

// One client holds its share of event streams while ten other loopback addresses flood the
// faucet with stream requests they never close: the streams take at most three quarters of
// --max-connections, so /api/status from yet another client is still answered at once.
// Before the bound, the flood took every connection and /api/status waited for one.
func TestFaucetdStreamFloodLeavesSlots(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end test")
	}
	_, f, _ := fundedFaucet(t, 1, "--max-connections", "32", "--max-streams-per-client", "4")
	for i := 0; i < 4; i++ {
		if _, code := openRawStream(t, f.url, "127.0.0.2", 5*time.Second); code != 200 {
			t.Fatalf("stream %d of the holder: %d, want 200", i+1, code)
		}
	}
	if _, code := openRawStream(t, f.url, "127.0.0.2", 5*time.Second); code != http.StatusTooManyRequests {
		t.Fatalf("a 5th stream of one client: %d, want 429", code)
	}
	// The flood: each connection waits up to 2 s for its answer and is then held open.
	var wg sync.WaitGroup
	for a := 3; a < 13; a++ {
		for i := 0; i < 8; i++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				openRawStream(t, f.url, fmt.Sprintf("127.0.0.%d", a), 2*time.Second)
			}()
		}
	}
	wg.Wait()
	d := net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP("127.0.0.200")}}
	client := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{DialContext: d.DialContext}}
	for i := 0; i < 5; i++ {
		start := time.Now()
		resp, err := client.Get(f.url + "/api/status")
		if err != nil {
			t.Fatalf("/api/status during the flood: %v", err)
		}
		resp.Body.Close()
		// Generous for a loaded machine: without the bound the request never got a connection.
		if took := time.Since(start); resp.StatusCode != 200 || took > 3*time.Second {
			t.Fatalf("/api/status during the flood: %d in %v, want 200 at once", resp.StatusCode, took)
		}
	}
}

// Agent operations answered 200 survive a crash: agents create contracts as fast as the
// faucet answers while coin-node, and then coin-faucetd, are killed (SIGKILL); after both
// restart, every contract whose creation was answered 200 is known to the node (the faucet
// journaled each transaction before sending it and sends it again). Before the journal,
// the creations the node had only in its mempool were gone (contract_not_found). One round
// here; COIN_SOAK=1 (make soak) runs COIN_SOAK_ROUNDS (default 5).
func TestCrashKeepsAgentOperations(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end test")
	}
	rounds := 1
	if os.Getenv("COIN_SOAK") != "" {
		rounds = envInt("COIN_SOAK_ROUNDS", 5)
	}
	fx := startFaucetNet(t, 14) // 700 COIN: five claims of 100
	f := startFaucetd(t, fx.faucetdArgs("--access-log", "off")...)
	ok := func(path, body string) map[string]any {
		t.Helper()
		code, m, _ := httpJSON("POST", f.url+path, body)
		if code != 200 {
			t.Fatalf("%s: %d %v", path, code, m)
		}
		return m
	}
	type agent struct{ mnemonic, address string }
	var agents []agent
	for i := 0; i < 5; i++ {
		_, w, _ := httpJSON("GET", f.url+"/api/wallet/new", "")
		a := agent{w["mnemonic"].(string), w["address"].(string)}
		ok("/api/faucet", fmt.Sprintf(`{"address":%q}`, a.address))
		agents = append(agents, a)
	}
	for _, a := range agents {
		ok("/api/agent/register", fmt.Sprintf(`{"mnemonic":%q}`, a.mnemonic))
	}
	fx.generate(t, 1, fx.burn)
	counterparty, initiators := agents[0], agents[1:]

	var answered []string // contract ids answered 200
	ctx := context.Background()
	// allKnown waits until every contract answered 200 is known to the node: the restarted
	// faucet sends its journal again.
	allKnown := func() {
		t.Helper()
		deadline := time.Now().Add(30 * time.Second)
		for {
			missing := 0
			for _, id := range answered {
				if _, err := fx.RPC.GetContract(ctx, id); err != nil {
					missing++
				}
			}
			if missing == 0 {
				return
			}
			if time.Now().After(deadline) {
				t.Fatalf("%d of %d contracts answered 200 are not known to the node 30 s after the restart\nfaucetd:\n%s",
					missing, len(answered), f.Out.Tail(20))
			}
			time.Sleep(200 * time.Millisecond)
		}
	}
	for round := 0; round < rounds; round++ {
		var mu sync.Mutex
		stop := make(chan struct{})
		var wg sync.WaitGroup
		for _, a := range initiators {
			wg.Add(1)
			go func() {
				defer wg.Done()
				body := fmt.Sprintf(`{"mnemonic":%q,"counterparty":%q,"value_coin":0.1}`, a.mnemonic, counterparty.address)
				for {
					select {
					case <-stop:
						return
					default:
					}
					code, m, _ := httpJSON("POST", f.url+"/api/agent/contract/create", body)
					if code == 200 {
						mu.Lock()
						answered = append(answered, m["contract_id"].(string))
						mu.Unlock()
					}
				}
			}()
		}
		// Kill the node once some creations were answered, the faucet a moment later.
		for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(5 * time.Millisecond) {
			mu.Lock()
			n := len(answered)
			mu.Unlock()
			if n >= 12*(round+1) {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("only %d creations answered 200 in 30 s", n)
			}
		}
		fx.Proc.Kill()
		time.Sleep(20 * time.Millisecond) // the requests in flight meet the dead node
		f.Kill()
		close(stop)
		wg.Wait()
		mu.Lock()
		t.Logf("round %d: %d creations answered 200 so far", round, len(answered))
		mu.Unlock()
		fx.Start(t)
		f.Proc = proctest.Start(t, f.Cmd.Path, f.args...)
		f.waitReady(t)
		allKnown()
		if round < rounds-1 {
			fx.generate(t, 1, fx.burn) // the next round starts from confirmed coins
		}
	}

	// And a block mines them all.
	fx.generate(t, 1, fx.burn)
	if mi, err := fx.RPC.GetMempoolInfo(ctx); err != nil || mi.Size != 0 {
		t.Fatalf("mempool after a block: %+v %v", mi, err)
	}
	for _, id := range answered {
		if _, err := fx.RPC.GetContract(ctx, id); err != nil {
			t.Fatalf("contract %s after a block: %v", id, err)
		}
	}
}

// coin-faucetd refuses a --mnemonic-file that others can read (the faucet's funds in plain
// text), with the chmod to run, before it opens anything; the same file at 0600 is read.
func TestFaucetdRefusesLooseMnemonicFile(t *testing.T) {
	dir := t.TempDir()
	m, _, _ := wallet.NewMnemonic(12, params.Regtest)
	mfile := filepath.Join(dir, "mnemonic")
	if err := os.WriteFile(mfile, []byte(m+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	os.Chmod(mfile, 0o644)
	_, errs, code := sh(t, nil, "coin-faucetd --network regtest --rpc http://127.0.0.1:1 --listen 127.0.0.1:0 --data-dir "+
		filepath.Join(dir, "data")+" --mnemonic-file "+mfile)
	if code == 0 || !strings.Contains(errs, "chmod 600 "+mfile) || strings.Contains(errs, strings.Join(strings.Fields(m)[:3], " ")) {
		t.Fatalf("a 0644 --mnemonic-file: exit %d\n%s", code, errs)
	}
}

// --max-streams beyond three quarters of --max-connections is a usage error: exit 2.
func TestMaxStreamsShareExit2(t *testing.T) {
	_, errs, code := sh(t, nil, "coin-faucetd --network regtest --max-connections 8 --max-streams 7 --mnemonic-file /nonexistent")
	if code != 2 || !strings.Contains(errs, "--max-streams") {
		t.Fatalf("--max-streams 7 of 8: exit %d\n%s", code, errs)
	}
}

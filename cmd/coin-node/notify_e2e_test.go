package main

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/cointoolkit/coin/lib/rpcapi"
)

// TestE2ENotifications: through the real executables, coin-node --blocknotify runs its
// command for each new tip, coin-cli watch prints the blocks from the node's stream, and the
// RPC staples answer from coin-cli.
func TestE2ENotifications(t *testing.T) {
	if testing.Short() {
		t.Skip("runs coin-node and coin-cli")
	}
	tips := filepath.Join(t.TempDir(), "tips")
	n := newTestNode(t, "--blocknotify", "echo %s >> '"+tips+"'")
	k := newWallet(t, 3)

	// The watcher asks for the backlog from the first event, so it sees the blocks however
	// soon it connects.
	watch := exec.Command(n.cliBin, "--rpc", n.URL(), "watch", "--from", "1", "--type", "block_connected", "--count", "3")
	var wout, werr bytes.Buffer
	watch.Stdout, watch.Stderr = &wout, &werr
	if err := watch.Start(); err != nil {
		t.Fatal(err)
	}
	waited := make(chan error, 1)
	go func() { waited <- watch.Wait() }()
	defer watch.Process.Kill()

	var hashes []string
	if err := json.Unmarshal([]byte(n.ok("generatetoaddress", "3", k.addr)), &hashes); err != nil || len(hashes) != 3 {
		t.Fatalf("generatetoaddress: %v %v", hashes, err)
	}
	select {
	case err := <-waited:
		if err != nil {
			t.Fatalf("coin-cli watch: %v\n%s", err, werr.String())
		}
	case <-time.After(20 * time.Second):
		t.Fatalf("coin-cli watch printed %q in 20 s", wout.String())
	}
	var seen []string
	for _, line := range strings.Split(strings.TrimSpace(wout.String()), "\n") {
		var ev rpcapi.Event
		if err := json.Unmarshal([]byte(line), &ev); err != nil || ev.Type != rpcapi.EventBlockConnected || ev.Sequence == 0 {
			t.Fatalf("watch line %q: %v", line, err)
		}
		seen = append(seen, ev.Hash)
	}
	if !slices.Equal(seen, hashes) {
		t.Fatalf("watch printed %v, generated %v", seen, hashes)
	}

	deadline := time.Now().Add(20 * time.Second)
	for {
		b, _ := os.ReadFile(tips)
		got := strings.Fields(string(b))
		if len(got) == 3 {
			slices.Sort(got)
			want := slices.Sorted(slices.Values(hashes))
			if !slices.Equal(got, want) {
				t.Fatalf("blocknotify wrote %v, want %v", got, want)
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("blocknotify wrote %q in 20 s", b)
		}
		time.Sleep(10 * time.Millisecond)
	}

	// The staples from the command line.
	if got := n.ok("getbestblockhash"); got != hashes[2] {
		t.Fatalf("getbestblockhash %s, want %s", got, hashes[2])
	}
	if got := n.ok("getdifficulty"); got != "1" {
		t.Fatalf("getdifficulty %s", got)
	}
	mi := n.obj("getmininginfo")
	fields(t, "getmininginfo", mi, map[string]string{"blocks": "integer", "difficulty": "number", "networkhashps": "number",
		"pooledtx": "integer", "chain": "string"})
	if got := n.obj("waitforblockheight", "3", "1000"); got["hash"] != hashes[2] {
		t.Fatalf("waitforblockheight 3: %v", got)
	}
	st := n.obj("getblockstats", "2")
	if st["blockhash"] != hashes[1] || st["txs"] != json.Number("1") {
		t.Fatalf("getblockstats 2: %v", st)
	}
	fee := n.obj("estimatesmartfee", "2")
	if fee["feerate_per_byte"] != json.Number("1") || fee["feerate"] != json.Number("0.00001000") {
		t.Fatalf("estimatesmartfee 2: %v", fee)
	}
	blk := n.obj("getblock", hashes[0])
	cb := blk["tx"].([]any)[0].(string)
	raw := n.ok("getrawtransaction", cb)
	if d := n.obj("decoderawtransaction", raw); d["txid"] != cb || d["kind"] == "" {
		t.Fatalf("decoderawtransaction: %v", d)
	}
	if _, errs, code := n.cli("getmempoolentry", cb); code != 1 || !strings.Contains(errs, "not in mempool") {
		t.Fatalf("getmempoolentry of a mined transaction: exit %d, %s", code, errs)
	}
	if up := n.ok("uptime"); up == "" || strings.ContainsAny(up, ".-") {
		t.Fatalf("uptime %q", up)
	}
	var tipsOut []map[string]any
	if err := json.Unmarshal([]byte(n.ok("getchaintips")), &tipsOut); err != nil || len(tipsOut) != 1 || tipsOut[0]["status"] != "active" {
		t.Fatalf("getchaintips: %v %v", tipsOut, err)
	}
}

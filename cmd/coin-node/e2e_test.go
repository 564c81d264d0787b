package main

import (
	"bytes"
	"crypto/ed25519"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/cointoolkit/coin/lib/keys"
	"github.com/cointoolkit/coin/lib/params"
	"github.com/cointoolkit/coin/lib/proctest"
	"github.com/cointoolkit/coin/lib/rpcapi"
	"github.com/cointoolkit/coin/lib/types"
)

// bins builds coin-node and coin-cli once for all end-to-end tests of this package.
func bins(t *testing.T) string {
	t.Helper()
	return proctest.Build(t, "./cmd/coin-node", "./cmd/coin-cli")
}

func TestMain(m *testing.M) {
	code := m.Run()
	proctest.Cleanup()
	os.Exit(code)
}

// testNode is a coin-node process and the coin-cli to drive it.
type testNode struct {
	*proctest.Node
	t      *testing.T
	cliBin string
}

func newTestNode(t *testing.T, extra ...string) *testNode {
	t.Helper()
	dir := bins(t)
	return &testNode{Node: proctest.StartNode(t, filepath.Join(dir, "coin-node"), append([]string{"--log-level", "debug"}, extra...)...),
		t: t, cliBin: filepath.Join(dir, "coin-cli")}
}

// restart starts the stopped node again on its data dir and waits for it with
// coin-cli --rpcwait.
func (n *testNode) restart() {
	n.t.Helper()
	n.Proc = proctest.Start(n.t, n.Bin, n.Args()...)
	if _, _, code := n.cli("--rpcwait", "--rpcwait-timeout", "20s", "getblockcount"); code != 0 {
		n.t.Fatalf("node did not come up:\n%s", n.Proc.Out.String())
	}
}

// cli runs coin-cli against the node and returns stdout, stderr and the exit code.
func (n *testNode) cli(args ...string) (string, string, int) {
	n.t.Helper()
	cmd := exec.Command(n.cliBin, append([]string{"--rpc", n.URL()}, args...)...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	code := 0
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		code = ee.ExitCode()
	} else if err != nil {
		n.t.Fatal(err)
	}
	return out.String(), errb.String(), code
}

// ok runs coin-cli and fails the test on a non-zero exit; it returns trimmed stdout.
func (n *testNode) ok(args ...string) string {
	n.t.Helper()
	out, errs, code := n.cli(args...)
	if code != 0 {
		n.t.Fatalf("coin-cli %s: exit %d\n%s", strings.Join(args, " "), code, errs)
	}
	return strings.TrimSpace(out)
}

// obj runs coin-cli and decodes a JSON object result.
func (n *testNode) obj(args ...string) map[string]any {
	n.t.Helper()
	var m map[string]any
	dec := json.NewDecoder(strings.NewReader(n.ok(args...)))
	dec.UseNumber()
	if err := dec.Decode(&m); err != nil {
		n.t.Fatalf("coin-cli %v: not a JSON object: %v", args, err)
	}
	return m
}

// fields checks that m has each field with the JSON type the spec gives.
func fields(t *testing.T, what string, m map[string]any, spec map[string]string) {
	t.Helper()
	for name, typ := range spec {
		v, ok := m[name]
		if !ok {
			t.Errorf("%s: field %q missing", what, name)
			continue
		}
		good := false
		switch typ {
		case "string":
			_, good = v.(string)
		case "integer":
			num, isNum := v.(json.Number)
			good = isNum && !strings.ContainsAny(num.String(), ".eE")
		case "number":
			_, good = v.(json.Number)
		case "boolean":
			_, good = v.(bool)
		case "array":
			_, good = v.([]any)
		case "object":
			_, good = v.(map[string]any)
		}
		if !good {
			t.Errorf("%s: field %q = %#v is not a JSON %s", what, name, v, typ)
		}
	}
}

var (
	specBlock = map[string]string{"hash": "string", "height": "integer", "version": "integer", "prev_hash": "string",
		"merkle_root": "string", "timestamp": "integer", "difficulty_target": "integer", "nonce": "integer",
		"tx_count": "integer", "tx": "array"}
	specHeader = map[string]string{"hash": "string", "version": "integer", "prev_hash": "string", "merkle_root": "string",
		"timestamp": "integer", "difficulty_target": "integer", "nonce": "integer"}
	specTx      = map[string]string{"txid": "string", "version": "integer", "vin_count": "integer", "vout_count": "integer", "lock_time": "integer"}
	specMempool = map[string]string{"size": "integer", "bytes": "integer", "total_fee": "integer"}
	specPeer    = map[string]string{"connected": "integer"}
	specInfo    = map[string]string{"blocks": "integer", "bestblockhash": "string", "connections": "integer",
		"circulating_supply": "number", "decay_pool": "number"}
	specChainInfo = map[string]string{"height": "integer", "best_block_hash": "string", "circulating_supply": "integer",
		"decay_pool_balance": "integer", "initial_block_download": "boolean", "utxo_count": "integer",
		"mempool_size": "integer", "peer_count": "integer"}
	specSync     = map[string]string{"syncing": "boolean", "current_height": "integer", "peer_count": "integer", "best_block_hash": "string"}
	specTemplate = map[string]string{"version": "integer", "prev_hash": "string", "merkle_root": "string", "timestamp": "integer",
		"difficulty_target": "integer", "nonce": "integer", "height": "integer", "transactions": "array"}
	specUTXO = map[string]string{"txid": "string", "index": "integer", "value": "integer", "block_height": "integer",
		"is_coinbase": "boolean", "cluster_id": "string", "pubkey_hash": "string"}
)

// wallet is a key of the test's own, derived from a fixed mnemonic through the library.
type wallet struct {
	key  ed25519.PrivateKey
	pkh  types.Hash
	addr string
}

func newWallet(t *testing.T, index uint32) wallet {
	seed, err := keys.SeedFromMnemonic("abandon abandon abandon abandon abandon abandon abandon abandon abandon abandon abandon about", "")
	if err != nil {
		t.Fatal(err)
	}
	k := keys.DeriveAccountKey(seed, params.Regtest.CoinType, 0, index)
	pkh := keys.HashPubKey(k.PublicKey())
	addr, err := keys.EncodeAddress(params.Regtest.HRP, pkh)
	if err != nil {
		t.Fatal(err)
	}
	return wallet{k.PrivateKey(), types.Hash(pkh), addr}
}

func TestNodeAndCLIEndToEnd(t *testing.T) {
	n := newTestNode(t)
	miner, payee := newWallet(t, 0), newWallet(t, 1)

	// Chain basics on a fresh node.
	if got := n.ok("getblockcount"); got != "0" {
		t.Fatalf("getblockcount = %q", got)
	}
	genesis := n.ok("getblockhash", "0")
	if genesis != params.Regtest.GenesisHash.String() {
		t.Fatalf("getblockhash 0 = %s", genesis)
	}
	fields(t, "getblock", n.obj("getblock", genesis), specBlock)
	fields(t, "getblockheader", n.obj("getblockheader", genesis), specHeader)

	// Mine 101 blocks so the first coinbase matures.
	var hashes []string
	if err := json.Unmarshal([]byte(n.ok("generatetoaddress", "101", miner.addr)), &hashes); err != nil || len(hashes) != 101 {
		t.Fatalf("generatetoaddress: %v %d", err, len(hashes))
	}
	if got := n.ok("getblockcount"); got != "101" {
		t.Fatalf("height %s after 101 blocks", got)
	}
	b1 := n.obj("getblock", hashes[0])
	fields(t, "getblock", b1, specBlock)
	cbid := b1["tx"].([]any)[0].(string)
	fields(t, "gettransaction", n.obj("gettransaction", cbid), specTx)
	fields(t, "getmempoolinfo", n.obj("getmempoolinfo"), specMempool)
	fields(t, "getpeerinfo", n.obj("getpeerinfo"), specPeer)
	info := n.obj("getinfo")
	fields(t, "getinfo", info, specInfo)
	if info["circulating_supply"].(json.Number).String() != "5050.00000000" {
		t.Fatalf("circulating_supply %v", info["circulating_supply"])
	}
	ci := n.obj("getblockchaininfo")
	fields(t, "getblockchaininfo", ci, specChainInfo)
	fields(t, "getsyncstatus", n.obj("getsyncstatus"), specSync)
	tmpl := n.obj("getblocktemplate", miner.addr)
	fields(t, "getblocktemplate", tmpl, specTemplate)
	var utxos []map[string]any
	dec := json.NewDecoder(strings.NewReader(n.ok("getutxosbyaddress", miner.addr)))
	dec.UseNumber()
	if err := dec.Decode(&utxos); err != nil || len(utxos) != 101 {
		t.Fatalf("getutxosbyaddress: %v, %d outputs", err, len(utxos))
	}
	fields(t, "utxo", utxos[0], specUTXO)
	cluster := utxos[0]["cluster_id"].(string)
	if got := n.ok("getclusterbalance", cluster); got != strconv.FormatUint(101*50*100_000_000, 10) {
		t.Fatalf("getclusterbalance = %s", got)
	}
	va := n.obj("validateaddress", miner.addr)
	if va["isvalid"] != true {
		t.Fatalf("validateaddress: %v", va)
	}
	if n.obj("validateaddress", "coin1qqqq")["isvalid"] != false {
		t.Fatal("validateaddress accepted garbage")
	}
	if !strings.Contains(n.ok("help"), "getblocktemplate") || !strings.Contains(n.ok("help", "getblock"), "hash") {
		t.Fatal("help")
	}

	// A block mined from a template is accepted as is.
	submitFromTemplate(t, n, miner.addr)
	if got := n.ok("getblockcount"); got != "102" {
		t.Fatalf("height %s after submitblock", got)
	}

	// Spend the first coinbase with a transaction built and signed here. The miner's cluster
	// holds the whole supply, so the coinbase has decayed (protocol §8): its effective value at
	// the next block is what the transaction can spend, and a spend of its nominal value is
	// refused.
	prev, err := types.ParseHash(cbid)
	if err != nil {
		t.Fatal(err)
	}
	var now []rpcapi.UTXO
	json.Unmarshal([]byte(n.ok("getutxosbyaddress", miner.addr)), &now)
	var cbEff uint64
	for _, u := range now {
		if u.TxID == cbid && u.Index == 0 {
			cbEff = u.EffectiveValue
		}
	}
	if cbEff == 0 || cbEff >= 50*100_000_000 {
		t.Fatalf("coinbase %s: effective value %d, want below its 50 COIN", cbid, cbEff)
	}
	nominal := &types.Transaction{Version: 1, Kind: types.KindTransfer,
		Inputs:  []types.TxInput{{PrevTxID: prev, PrevIndex: 0}},
		Outputs: []types.TxOutput{{Value: 50*100_000_000 - 1_000, PubKeyHash: payee.pkh}}}
	types.SignInputs(nominal, miner.key, params.Regtest.Magic)
	if _, errs, _ := n.cli("sendrawtransaction", hex.EncodeToString(nominal.Bytes())); !strings.Contains(errs, "insufficient funds") {
		t.Fatalf("a spend of the nominal value: %s", errs)
	}
	tx := &types.Transaction{Version: 1, Kind: types.KindTransfer,
		Inputs:  []types.TxInput{{PrevTxID: prev, PrevIndex: 0}},
		Outputs: []types.TxOutput{{Value: 20 * 100_000_000, PubKeyHash: payee.pkh}, {Value: cbEff - 20*100_000_000 - 1_000, PubKeyHash: miner.pkh}}}
	types.SignInputs(tx, miner.key, params.Regtest.Magic)
	txid := n.ok("sendrawtransaction", hex.EncodeToString(tx.Bytes()))
	if txid != tx.TxID().String() {
		t.Fatalf("sendrawtransaction returned %s, want %s", txid, tx.TxID())
	}
	mp := n.obj("getmempoolinfo")
	if mp["size"].(json.Number).String() != "1" || mp["total_fee"].(json.Number).String() != "1000" {
		t.Fatalf("mempool after send: %v", mp)
	}
	if inPool := n.obj("gettransaction", txid); inPool["in_mempool"] != true {
		t.Fatalf("gettransaction before mining: %v", inPool)
	}
	// The same transaction again, and a conflicting one, are refused with their messages.
	_, errs, code := n.cli("sendrawtransaction", hex.EncodeToString(tx.Bytes()))
	if code != 1 || !strings.Contains(errs, "error code: -1") || !strings.Contains(errs, "already in mempool") {
		t.Fatalf("duplicate send: exit %d, %s", code, errs)
	}
	conflict := *tx
	conflict.Inputs = append([]types.TxInput(nil), tx.Inputs...)
	conflict.Outputs = []types.TxOutput{{Value: 49 * 100_000_000, PubKeyHash: payee.pkh}}
	types.SignInputs(&conflict, miner.key, params.Regtest.Magic)
	if _, errs, _ := n.cli("sendrawtransaction", hex.EncodeToString(conflict.Bytes())); !strings.Contains(errs, "conflicts with a mempool transaction") {
		t.Fatalf("conflict: %s", errs)
	}

	var mined []string
	json.Unmarshal([]byte(n.ok("generatetoaddress", "1", miner.addr)), &mined)
	got := n.obj("gettransaction", txid)
	if got["confirmations"].(json.Number).String() != "1" || got["in_mempool"] != false || got["block_hash"] != mined[0] {
		t.Fatalf("gettransaction after mining: %v", got)
	}
	if blk := n.obj("getblock", mined[0]); !containsString(blk["tx"].([]any), txid) {
		t.Fatalf("getblock does not list %s", txid)
	}
	var payeeUtxos []rpcapi.UTXO
	json.Unmarshal([]byte(n.ok("getutxosbyaddress", payee.addr)), &payeeUtxos)
	if len(payeeUtxos) != 1 || payeeUtxos[0].TxID != txid || payeeUtxos[0].Value != 20*100_000_000 {
		t.Fatalf("payee utxos %+v", payeeUtxos)
	}
	if raw := n.ok("getrawtransaction", txid); raw != hex.EncodeToString(tx.Bytes()) {
		t.Fatalf("getrawtransaction differs: %q", raw)
	}
	setBefore := n.obj("gettxoutsetinfo")
	chainBefore := n.obj("getblockchaininfo")

	// Restart: the same state comes back.
	if out := n.ok("stop"); !strings.Contains(out, "stopping") {
		t.Fatalf("stop: %q", out)
	}
	if code := n.Proc.Wait(t, 20*time.Second); code != 0 {
		t.Fatalf("node exit code %d after stop\n%s", code, n.Proc.Out.String())
	}
	n.restart()
	if after := n.obj("gettxoutsetinfo"); fmt.Sprint(after) != fmt.Sprint(setBefore) {
		t.Fatalf("UTXO set changed across restart: %v vs %v", after, setBefore)
	}
	if after := n.obj("getblockchaininfo"); fmt.Sprint(after) != fmt.Sprint(chainBefore) {
		t.Fatalf("chain info changed across restart: %v vs %v", after, chainBefore)
	}
	if got := n.obj("gettransaction", txid); got["block_hash"] != mined[0] {
		t.Fatalf("transaction lost across restart: %v", got)
	}
	if mp := n.obj("getmempoolinfo"); mp["size"].(json.Number).String() != "0" {
		t.Fatalf("mempool after restart: %v", mp)
	}
}

func containsString(list []any, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}

// submitFromTemplate builds a block from getblocktemplate exactly as a miner would, solves it
// and submits it with coin-cli.
func submitFromTemplate(t *testing.T, n *testNode, addr string) {
	t.Helper()
	var tmpl rpcapi.BlockTemplate
	if err := json.Unmarshal([]byte(n.ok("getblocktemplate", addr)), &tmpl); err != nil {
		t.Fatal(err)
	}
	if tmpl.Transactions[0].Fee != 0 {
		t.Fatal("coinbase fee not 0")
	}
	b := &types.Block{}
	for _, tt := range tmpl.Transactions {
		raw, _ := hex.DecodeString(tt.Data)
		tx, err := types.DecodeTransaction(raw)
		if err != nil {
			t.Fatal(err)
		}
		b.Transactions = append(b.Transactions, tx)
	}
	prev, _ := types.ParseHash(tmpl.PrevHash)
	root, _ := types.ParseHash(tmpl.MerkleRoot)
	b.Header = types.BlockHeader{Version: tmpl.Version, PrevHash: prev, MerkleRoot: root, Timestamp: tmpl.Timestamp,
		DifficultyTarget: tmpl.DifficultyTarget, Nonce: tmpl.Nonce}
	if types.MerkleRoot(b.TxIDs()) != root {
		t.Fatal("template merkle_root does not match its transactions")
	}
	if err := types.SolveBlock(b, 1<<24); err != nil {
		t.Fatal(err)
	}
	if got := n.ok("submitblock", hex.EncodeToString(b.Bytes())); got != "ok" {
		t.Fatalf("submitblock: %q", got)
	}
	// The same block again is no longer on the tip's template.
	_, errs, code := n.cli("submitblock", hex.EncodeToString(b.Bytes()))
	if code == 0 || !strings.Contains(errs, "error code: -1") {
		t.Fatalf("resubmission: exit %d %s", code, errs)
	}
}

func TestRPCErrorsAndBadInput(t *testing.T) {
	n := newTestNode(t)
	miner := newWallet(t, 0)
	n.ok("generatetoaddress", "2", miner.addr)
	zero := strings.Repeat("0", 64)
	cases := []struct {
		args []string
		code int
		msg  string
	}{
		{[]string{"getblock", zero}, 1, "block not found"},
		{[]string{"gettransaction", zero}, 1, "transaction not found"},
		{[]string{"getblockhash", "99"}, 1, "out of range"},
		{[]string{"getblocktemplate", "coin1notanaddress"}, 1, "invalid address"},
		{[]string{"sendrawtransaction", "zz"}, 32602 & 0xff, "hex"},
		{[]string{"sendrawtransaction", "0102"}, 1, "decode"},
		{[]string{"submitblock", "00"}, 1, "decode"},
	}
	for _, c := range cases {
		_, errs, code := n.cli(c.args...)
		if code != c.code || !strings.Contains(errs, c.msg) || !strings.HasPrefix(errs, "error code: ") {
			t.Errorf("coin-cli %v: exit %d (want %d), stderr %q (want %q)", c.args, code, c.code, errs, c.msg)
		}
	}
	// A block with a bad proof of work on the tip.
	var tmpl rpcapi.BlockTemplate
	json.Unmarshal([]byte(n.ok("getblocktemplate", miner.addr)), &tmpl)
	b := &types.Block{}
	for _, tt := range tmpl.Transactions {
		raw, _ := hex.DecodeString(tt.Data)
		tx, _ := types.DecodeTransaction(raw)
		b.Transactions = append(b.Transactions, tx)
	}
	prev, _ := types.ParseHash(tmpl.PrevHash)
	b.Header = types.BlockHeader{Version: 1, PrevHash: prev, MerkleRoot: types.MerkleRoot(b.TxIDs()), Timestamp: tmpl.Timestamp,
		DifficultyTarget: tmpl.DifficultyTarget}
	for nonce := uint64(0); ; nonce++ {
		b.Header.Nonce = nonce
		h := b.Hash()
		if h[0] >= 0x80 { // above the regtest target 0x7fffff…
			break
		}
	}
	if _, errs, _ := n.cli("submitblock", hex.EncodeToString(b.Bytes())); !strings.Contains(errs, "invalid proof of work") {
		t.Fatalf("bad pow: %s", errs)
	}

	// Raw HTTP abuse: the node answers each with a JSON-RPC error and keeps running.
	url := n.URL()
	post := func(body string) (int, string) {
		resp, err := http.Post(url, "application/json", strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	for body, want := range map[string]string{
		`{"jsonrpc":"2.0","method":"getblockcount"`:                       "-32700",
		`{"jsonrpc":"2.0","method":"nosuch","id":1}`:                      "-32601",
		`{"jsonrpc":"2.0","method":"getblockhash","params":["x"],"id":1}`: "-32602",
		`{"jsonrpc":"2.0","method":"getblockhash","params":[1,2],"id":1}`: "-32602",
		`[]`:                                "-32600",
		`{"method":"getblockcount","id":1}`: "-32600",
	} {
		if _, got := post(body); !strings.Contains(got, want) {
			t.Errorf("%s: %s (want %s)", body, got, want)
		}
	}
	if status, _ := post(`"` + strings.Repeat("a", 5<<20) + `"`); status != http.StatusRequestEntityTooLarge {
		t.Errorf("huge body: status %d", status)
	}
	_, batch := post(`[{"jsonrpc":"2.0","method":"getblockcount","id":1},{"jsonrpc":"2.0","method":"getblockcount"},{"jsonrpc":"2.0","method":"nosuch","id":"x"}]`)
	var replies []map[string]any
	if err := json.Unmarshal([]byte(batch), &replies); err != nil || len(replies) != 2 {
		t.Fatalf("batch: %s", batch)
	}
	if got := n.ok("getblockcount"); got != "2" {
		t.Fatalf("height changed by bad input: %s", got)
	}
}

func TestSignalsLockAndDiskGuard(t *testing.T) {
	n := newTestNode(t, "--log-file")
	miner := newWallet(t, 0)
	n.ok("generatetoaddress", "3", miner.addr)

	// A second node on the same data dir fails at once with a clear message.
	second := exec.Command(n.Bin, "--network", "regtest", "--data-dir", n.DataDir,
		"--p2p-port", strconv.Itoa(proctest.FreePort(t)))
	out, err := second.CombinedOutput()
	if err == nil || !strings.Contains(string(out), "in use by another process") {
		t.Fatalf("second node on the same dir: %v\n%s", err, out)
	}

	// SIGTERM: clean exit 0, and the log file exists without secrets.
	if code := n.Proc.Stop(t, 20*time.Second); code != 0 {
		t.Fatalf("exit %d after SIGTERM", code)
	}
	logText, err := os.ReadFile(filepath.Join(n.DataDir, "node.log"))
	if err != nil || !strings.Contains(string(logText), "block connected") || !strings.Contains(string(logText), "node stopped") {
		t.Fatalf("node.log: %v\n%s", err, logText)
	}
	if _, err := os.Stat(filepath.Join(n.DataDir, "db")); err != nil {
		t.Fatal("no db/ in the data dir")
	}

	// SIGKILL in the middle of mining, then restart: a consistent tip.
	n.restart()
	go n.cli("generatetoaddress", "200", miner.addr)
	time.Sleep(300 * time.Millisecond)
	n.Proc.Kill()
	n.restart()
	h, _ := strconv.Atoi(n.ok("getblockcount"))
	if h < 3 {
		t.Fatalf("height %d after kill -9", h)
	}
	n.ok("generatetoaddress", "1", miner.addr)

	// Disk guard: a node that must keep more free space than there is stops with an error.
	n.ok("stop")
	n.Proc.Wait(t, 20*time.Second)
	guard := exec.Command(n.Bin, "--network", "regtest", "--data-dir", n.DataDir,
		"--p2p-port", strconv.Itoa(proctest.FreePort(t)), "--min-free-disk", "100")
	out, err = guard.CombinedOutput()
	if err == nil || !strings.Contains(string(out), "disk space low") {
		t.Fatalf("disk guard: %v\n%s", err, out)
	}
}

func TestRPCOffWithoutBind(t *testing.T) {
	bin := bins(t)
	port := proctest.FreePort(t)
	proctest.Start(t, filepath.Join(bin, "coin-node"), "--network", "regtest", "--data-dir", t.TempDir(),
		"--p2p-port", strconv.Itoa(proctest.FreePort(t)))
	time.Sleep(500 * time.Millisecond)
	// coin-cli explains a refused connection.
	c := exec.Command(filepath.Join(bin, "coin-cli"), "--rpc", fmt.Sprintf("http://127.0.0.1:%d", port), "getblockcount")
	out, err := c.CombinedOutput()
	if err == nil || !strings.Contains(string(out), "--rpc-bind") {
		t.Fatalf("refused connection: %v\n%s", err, out)
	}
}

package rpcserver_test

import (
	"context"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/cointoolkit/coin/lib/amount"
	"github.com/cointoolkit/coin/lib/consensus"
	"github.com/cointoolkit/coin/lib/jsonrpc"
	"github.com/cointoolkit/coin/lib/keys"
	"github.com/cointoolkit/coin/lib/params"
	"github.com/cointoolkit/coin/lib/pow"
	"github.com/cointoolkit/coin/lib/rpcapi"
	"github.com/cointoolkit/coin/lib/types"
)

// The RPC result tables of protocol §11, field → JSON type.
var (
	specBlock = map[string]string{"hash": tString, "height": tInteger, "version": tInteger, "prev_hash": tString,
		"merkle_root": tString, "timestamp": tInteger, "difficulty_target": tInteger, "nonce": tInteger,
		"tx_count": tInteger, "tx": tArray}
	specHeader = map[string]string{"hash": tString, "version": tInteger, "prev_hash": tString,
		"merkle_root": tString, "timestamp": tInteger, "difficulty_target": tInteger, "nonce": tInteger}
	specTransaction = map[string]string{"txid": tString, "version": tInteger, "vin_count": tInteger,
		"vout_count": tInteger, "lock_time": tInteger}
	specMempoolInfo = map[string]string{"size": tInteger, "bytes": tInteger, "total_fee": tInteger}
	specPeerInfo    = map[string]string{"connected": tInteger}
	specNodeInfo    = map[string]string{"blocks": tInteger, "bestblockhash": tString, "connections": tInteger,
		"circulating_supply": tCoin, "decay_pool": tCoin}
	specBlockchainInfo = map[string]string{"height": tInteger, "best_block_hash": tString,
		"circulating_supply": tInteger, "decay_pool_balance": tInteger, "initial_block_download": tBool,
		"utxo_count": tInteger, "mempool_size": tInteger, "peer_count": tInteger}
	specSyncStatus = map[string]string{"syncing": tBool, "current_height": tInteger, "peer_count": tInteger,
		"best_block_hash": tString}
	specBlockTemplate = map[string]string{"version": tInteger, "prev_hash": tString, "merkle_root": tString,
		"timestamp": tInteger, "difficulty_target": tInteger, "nonce": tInteger, "height": tInteger,
		"transactions": tArray}
	specTemplateTx = map[string]string{"txid": tString, "data": tString, "fee": tInteger}
	// UTXO: the spec's fields and protocol §11's extensions.
	specUTXO = map[string]string{"txid": tString, "index": tInteger, "value": tInteger, "block_height": tInteger,
		"is_coinbase": tBool, "cluster_id": tString, "pubkey_hash": tString,
		"effective_value": tInteger, "locked": tBool, "confirmations": tInteger}
)

func TestEveryMethodRegistered(t *testing.T) {
	e := newEnv(t, params.Regtest)
	got := e.rpc.Methods()
	var names []string
	for _, m := range got {
		names = append(names, m.Name)
	}
	var want []string
	for _, m := range rpcapi.Methods {
		want = append(want, m.Name)
	}
	slices.Sort(want)
	if !slices.Equal(names, want) {
		t.Fatalf("registered methods %v\nwant the catalogue %v", names, want)
	}
	for _, m := range rpcapi.Methods {
		r, ok := e.rpc.Lookup(m.Name)
		if !ok {
			t.Fatalf("%s not registered", m.Name)
		}
		if len(r.Params) != len(m.Params) {
			t.Fatalf("%s: %d params registered, catalogue has %d", m.Name, len(r.Params), len(m.Params))
		}
		for i, p := range m.Params {
			if r.Params[i].Name != p.Name || r.Params[i].Optional != p.Optional || r.Params[i].Type != p.Type {
				t.Fatalf("%s param %d: registered %+v, catalogue %+v", m.Name, i, r.Params[i], p)
			}
		}
		if r.Help != m.Summary || r.Result != m.Result {
			t.Fatalf("%s: help/result differ from the catalogue", m.Name)
		}
	}
	// Over HTTP: every catalogue method is found (a call without params gives a result or
	// -32602, never -32601), and a name outside the catalogue is not.
	for _, m := range rpcapi.Methods {
		if m.Name == "stop" {
			continue // it would ask the node to stop; it is called in TestStop
		}
		if _, err := e.call(m.Name); err != nil && err.Code == jsonrpc.CodeMethodNotFound {
			t.Fatalf("%s: method not found over HTTP", m.Name)
		}
	}
	for _, name := range []string{"getnewaddress", "getagentprofiles", "GETBLOCKCOUNT", ""} {
		e.wantError(jsonrpc.CodeMethodNotFound, "Method not found", true, name)
	}
	// help lists every method.
	var help string
	if err := json.Unmarshal(e.mustCall("help"), &help); err != nil {
		t.Fatal(err)
	}
	for _, m := range rpcapi.Methods {
		if !strings.Contains(help, m.Name) {
			t.Fatalf("help does not list %s", m.Name)
		}
		// Each category's header once.
		if n := strings.Count(help, "== "+m.Category+" =="); n != 1 {
			t.Fatalf("help has %d headers for %s", n, m.Category)
		}
	}
}

func TestStop(t *testing.T) {
	e := newEnv(t, params.Regtest)
	var s string
	if err := json.Unmarshal(e.mustCall("stop"), &s); err != nil || s == "" {
		t.Fatalf("stop: %q %v", s, err)
	}
	// RequestStop is idempotent.
	e.mustCall("stop")
}

func TestResultFieldsMatchSpec(t *testing.T) {
	e := newFundedEnv(t)
	chain := e.node.Chain()
	tip := chain.Tip()
	// Mempool: two transfers, one the parent of the other.
	p := e.transfer(e.take(1), 20_000, 2)
	c := e.transfer([]coin{out(p, 0)}, 30_000, 1)
	e.send(p, c)

	t.Run("getblockcount", func(t *testing.T) {
		var n uint64
		if err := json.Unmarshal(e.mustCall("getblockcount"), &n); err != nil || n != tip.Height {
			t.Fatalf("getblockcount = %d %v, want %d", n, err, tip.Height)
		}
	})
	t.Run("getblockhash", func(t *testing.T) {
		for _, h := range []uint64{0, 1, tip.Height} {
			var s string
			json.Unmarshal(e.mustCall("getblockhash", h), &s)
			if s != chain.NodeAt(h).Hash.String() {
				t.Fatalf("getblockhash %d = %s", h, s)
			}
		}
	})
	t.Run("getblock", func(t *testing.T) {
		for _, h := range []uint64{0, tip.Height} {
			n := chain.NodeAt(h)
			obj := decodeObject(t, e.mustCall("getblock", n.Hash.String()))
			checkFields(t, "Block", obj, specBlock)
			b, _ := chain.Block(n.Hash)
			if obj["hash"] != n.Hash.String() || num(t, obj["height"]) != h || num(t, obj["tx_count"]) != uint64(len(b.Transactions)) ||
				obj["prev_hash"] != n.BlockHeader().PrevHash.String() || obj["merkle_root"] != n.Header.MerkleRoot.String() ||
				num(t, obj["timestamp"]) != n.Header.Timestamp || num(t, obj["difficulty_target"]) != uint64(n.Header.DifficultyTarget) ||
				num(t, obj["nonce"]) != n.Header.Nonce || num(t, obj["version"]) != uint64(n.Header.Version) {
				t.Fatalf("getblock %d: %v", h, obj)
			}
			txs := obj["tx"].([]any)
			for i, id := range txs {
				if !isHash(id) || id != b.Transactions[i].TxID().String() {
					t.Fatalf("getblock %d: tx[%d] = %v", h, i, id)
				}
			}
			if num(t, obj["confirmations"]) != tip.Height-h+1 {
				t.Fatalf("getblock %d: confirmations %v", h, obj["confirmations"])
			}
		}
	})
	t.Run("getblockheader", func(t *testing.T) {
		obj := decodeObject(t, e.mustCall("getblockheader", tip.Hash.String()))
		checkFields(t, "Header", obj, specHeader)
		for _, absent := range []string{"height", "tx_count", "tx"} {
			if _, ok := obj[absent]; ok {
				t.Errorf("Header has %q", absent)
			}
		}
		if obj["hash"] != tip.Hash.String() || num(t, obj["nonce"]) != tip.Header.Nonce {
			t.Fatalf("getblockheader: %v", obj)
		}
	})
	t.Run("gettransaction", func(t *testing.T) {
		// Confirmed (the fan-out in the tip) and in the mempool.
		tb, _ := chain.Block(tip.Hash)
		fan := tb.Transactions[1]
		obj := decodeObject(t, e.mustCall("gettransaction", fan.TxID().String()))
		checkFields(t, "Transaction", obj, specTransaction)
		if obj["txid"] != fan.TxID().String() || num(t, obj["vin_count"]) != 1 || num(t, obj["vout_count"]) != 50 ||
			num(t, obj["lock_time"]) != 0 || num(t, obj["version"]) != 1 || obj["block_hash"] != tip.Hash.String() ||
			num(t, obj["confirmations"]) != 1 || obj["in_mempool"] != false {
			t.Fatalf("gettransaction (confirmed): %v", obj)
		}
		obj = decodeObject(t, e.mustCall("gettransaction", c.TxID().String()))
		checkFields(t, "Transaction", obj, specTransaction)
		if obj["in_mempool"] != true || num(t, obj["fee"]) != 30_000 || num(t, obj["vout_count"]) != 1 || num(t, obj["confirmations"]) != 0 {
			t.Fatalf("gettransaction (mempool): %v", obj)
		}
		var raw string
		json.Unmarshal(e.mustCall("getrawtransaction", c.TxID().String()), &raw)
		if raw != txHex(c) {
			t.Fatal("getrawtransaction does not return the transaction's bincode")
		}
	})
	t.Run("getmempoolinfo", func(t *testing.T) {
		obj := decodeObject(t, e.mustCall("getmempoolinfo"))
		checkFields(t, "MempoolInfo", obj, specMempoolInfo)
		if num(t, obj["size"]) != 2 || num(t, obj["bytes"]) != uint64(p.SerializeSize()+c.SerializeSize()) ||
			num(t, obj["total_fee"]) != 50_000 {
			t.Fatalf("getmempoolinfo: %v", obj)
		}
	})
	t.Run("getpeerinfo", func(t *testing.T) {
		obj := decodeObject(t, e.mustCall("getpeerinfo"))
		checkFields(t, "PeerInfo", obj, specPeerInfo)
		if num(t, obj["connected"]) != 0 {
			t.Fatalf("getpeerinfo: %v", obj)
		}
		if peers, ok := obj["peers"].([]any); !ok || len(peers) != 0 {
			t.Fatalf("getpeerinfo peers: %v", obj["peers"])
		}
	})
	t.Run("getinfo", func(t *testing.T) {
		raw := e.mustCall("getinfo")
		obj := decodeObject(t, raw)
		checkFields(t, "NodeInfo", obj, specNodeInfo)
		s := chain.Stats()
		want := fmt.Sprintf(`"circulating_supply":%s`, amount.Format(s.UtxoTotal))
		if !strings.Contains(string(raw), want) || !strings.Contains(string(raw), `"decay_pool":0.00000000`) {
			t.Fatalf("getinfo: %s, want %s", raw, want)
		}
		if num(t, obj["blocks"]) != tip.Height || obj["bestblockhash"] != tip.Hash.String() || num(t, obj["connections"]) != 0 {
			t.Fatalf("getinfo: %v", obj)
		}
	})
	t.Run("getblockchaininfo", func(t *testing.T) {
		obj := decodeObject(t, e.mustCall("getblockchaininfo"))
		checkFields(t, "BlockchainInfo", obj, specBlockchainInfo)
		s := chain.Stats()
		if num(t, obj["height"]) != tip.Height || obj["best_block_hash"] != tip.Hash.String() ||
			num(t, obj["circulating_supply"]) != s.UtxoTotal || num(t, obj["utxo_count"]) != s.UtxoCount ||
			num(t, obj["mempool_size"]) != 2 || obj["initial_block_download"] != false || obj["network"] != "regtest" {
			t.Fatalf("getblockchaininfo: %v", obj)
		}
	})
	t.Run("getsyncstatus", func(t *testing.T) {
		obj := decodeObject(t, e.mustCall("getsyncstatus"))
		checkFields(t, "SyncStatus", obj, specSyncStatus)
		if obj["syncing"] != false || num(t, obj["current_height"]) != tip.Height || obj["best_block_hash"] != tip.Hash.String() {
			t.Fatalf("getsyncstatus: %v", obj)
		}
	})
	t.Run("getblocktemplate", func(t *testing.T) {
		obj := decodeObject(t, e.mustCall("getblocktemplate", e.addr))
		checkFields(t, "BlockTemplate", obj, specBlockTemplate)
		txs := obj["transactions"].([]any)
		if len(txs) != 3 {
			t.Fatalf("template has %d transactions, want coinbase + 2", len(txs))
		}
		for i, x := range txs {
			checkFields(t, fmt.Sprintf("transactions[%d]", i), x.(map[string]any), specTemplateTx)
		}
		if num(t, obj["nonce"]) != 0 || num(t, obj["height"]) != tip.Height+1 || obj["prev_hash"] != tip.Hash.String() {
			t.Fatalf("getblocktemplate: %v", obj)
		}
	})
	t.Run("getutxosbyaddress", func(t *testing.T) {
		arr := decodeArray(t, e.mustCall("getutxosbyaddress", e.addr))
		utxos, _ := chain.UtxosByAddress(testPKH)
		if len(arr) != len(utxos) || len(arr) == 0 {
			t.Fatalf("getutxosbyaddress: %d entries, the chain has %d", len(arr), len(utxos))
		}
		for i, x := range arr {
			checkFields(t, fmt.Sprintf("UTXO[%d]", i), x.(map[string]any), specUTXO)
		}
		// With the mempool: p's input is gone, p's unspent output 1 and c's output are added.
		arr2 := decodeArray(t, e.mustCall("getutxosbyaddress", e.addr, true))
		if len(arr2) != len(arr)-1+2 {
			t.Fatalf("with the mempool: %d entries, want %d", len(arr2), len(arr)+1)
		}
		seen := map[string]bool{}
		for _, x := range arr2 {
			u := x.(map[string]any)
			checkFields(t, "UTXO", u, specUTXO)
			op := fmt.Sprintf("%s:%s", u["txid"], u["index"])
			seen[op] = true
			if u["txid"] == p.TxID().String() || u["txid"] == c.TxID().String() {
				if num(t, u["confirmations"]) != 0 || num(t, u["block_height"]) != 0 {
					t.Fatalf("mempool output: %v", u)
				}
			}
		}
		if seen[p.Inputs[0].Outpoint().String()] || seen[out(p, 0).op.String()] || !seen[out(p, 1).op.String()] || !seen[out(c, 0).op.String()] {
			t.Fatalf("mempool view of the address is wrong: %v", seen)
		}
	})
	t.Run("getclusterbalance", func(t *testing.T) {
		var v uint64
		id := consensus.ClusterIDOf(testPKH)
		json.Unmarshal(e.mustCall("getclusterbalance", id.String()), &v)
		want, _ := chain.ClusterBalance(id)
		if v != want || v == 0 {
			t.Fatalf("getclusterbalance = %d, want %d", v, want)
		}
	})
	t.Run("gettxoutsetinfo", func(t *testing.T) {
		obj := decodeObject(t, e.mustCall("gettxoutsetinfo"))
		checkFields(t, "TxOutSetInfo", obj, map[string]string{"height": tInteger, "best_block_hash": tString,
			"utxo_count": tInteger, "total_amount": tInteger, "hash": tString})
	})
	t.Run("validateaddress", func(t *testing.T) {
		obj := decodeObject(t, e.mustCall("validateaddress", e.addr))
		if obj["isvalid"] != true || obj["pubkey_hash"] != testPKH.String() {
			t.Fatalf("validateaddress: %v", obj)
		}
		obj = decodeObject(t, e.mustCall("validateaddress", "tcoin1nope"))
		if obj["isvalid"] != false || obj["error"] == "" {
			t.Fatalf("validateaddress (bad): %v", obj)
		}
	})
}

// TestMineFromTemplate mines a block from getblocktemplate as a miner would: decode the
// transactions, build the header from the template's fields, solve, submit.
func TestMineFromTemplate(t *testing.T) {
	e := newFundedEnv(t)
	ctx := context.Background()
	// Independent transactions at different fee rates, sent in no particular order.
	var sent []*types.Transaction
	for _, rate := range []uint64{3, 11, 1, 7, 5, 2, 9} {
		tx := e.atRate(e.take(1), rate, 1)
		sent = append(sent, tx)
	}
	// A parent at 1/byte with a child at 40/byte: the parent must come first.
	parent := e.atRate(e.take(1), 1, 1)
	child := e.atRate([]coin{out(parent, 0)}, 40, 1)
	sent = append(sent, parent, child)
	e.send(sent...)

	tmpl, err := e.client.GetBlockTemplate(ctx, e.addr)
	if err != nil {
		t.Fatal(err)
	}
	tip := e.node.Chain().Tip()
	if tmpl.Height != tip.Height+1 || tmpl.PrevHash != tip.Hash.String() || tmpl.Nonce != 0 {
		t.Fatalf("template: height %d prev %s nonce %d", tmpl.Height, tmpl.PrevHash, tmpl.Nonce)
	}
	if len(tmpl.Transactions) != len(sent)+1 {
		t.Fatalf("template has %d transactions, want %d", len(tmpl.Transactions), len(sent)+1)
	}
	b := blockFromTemplate(t, tmpl)
	// transactions[0] is the coinbase, fee 0, paying the mining address subsidy + fees.
	cb := b.Transactions[0]
	var fees uint64
	for _, tt := range tmpl.Transactions[1:] {
		fees += tt.Fee
	}
	if !cb.IsCoinbase() || tmpl.Transactions[0].Fee != 0 || len(cb.Outputs) != 1 || cb.Outputs[0].PubKeyHash != testPKH ||
		cb.Outputs[0].Value != consensus.Subsidy(tmpl.Height)+fees || tmpl.CoinbaseValue != cb.Outputs[0].Value {
		t.Fatalf("coinbase: %+v (fees %d)", cb.Outputs, fees)
	}
	// Fees are the transactions' own, and the order is by fee rate, parents first.
	pos := map[string]int{}
	for i, tt := range tmpl.Transactions[1:] {
		id := b.Transactions[i+1].TxID()
		if tt.Fee != e.fees[id] {
			t.Fatalf("transactions[%d] fee %d, want %d", i+1, tt.Fee, e.fees[id])
		}
		pos[tt.TxID] = i + 1
	}
	if pos[parent.TxID().String()] > pos[child.TxID().String()] {
		t.Fatal("child before parent in the template")
	}
	rate := func(i int) float64 {
		return float64(tmpl.Transactions[i].Fee) / float64(len(tmpl.Transactions[i].Data)/2)
	}
	for i := 2; i < len(tmpl.Transactions); i++ {
		if tmpl.Transactions[i].TxID == child.TxID().String() {
			continue // follows its parent, whatever its rate
		}
		if rate(i) > rate(i-1) && tmpl.Transactions[i-1].TxID != child.TxID().String() {
			t.Fatalf("transactions[%d] pays %.2f/byte after %.2f/byte", i, rate(i), rate(i-1))
		}
	}
	// The target field is the full target of difficulty_target.
	target, _, _ := pow.CompactToBig(tmpl.DifficultyTarget)
	tb := pow.TargetBytes(target)
	if tmpl.Target != hex.EncodeToString(tb[:]) || tmpl.MinTime != e.node.Chain().NextBlock().MinTimestamp {
		t.Fatalf("target %s mintime %d", tmpl.Target, tmpl.MinTime)
	}

	if err := types.SolveBlock(b, 1<<24); err != nil {
		t.Fatal(err)
	}
	var ok string
	if err := json.Unmarshal(e.mustCall("submitblock", blockHex(b)), &ok); err != nil || ok != "ok" {
		t.Fatalf("submitblock = %q %v", ok, err)
	}
	if e.node.Chain().Tip().Hash != b.Hash() {
		t.Fatal("the submitted block is not the tip")
	}
	if info, _ := e.client.GetMempoolInfo(ctx); info.Size != 0 || info.Bytes != 0 || info.TotalFee != 0 {
		t.Fatalf("mempool after the block: %+v", info)
	}
	tx, err := e.client.GetTransaction(ctx, child.TxID().String())
	if err != nil || tx.BlockHash != b.Hash().String() || tx.Confirmations != 1 || tx.InMempool {
		t.Fatalf("gettransaction after mining: %+v %v", tx, err)
	}
	// The same block again is a duplicate, and changes nothing.
	e.wantError(jsonrpc.CodeMisc, "duplicate", false, "submitblock", blockHex(b))
}

// blockFromTemplate builds the unsolved block a template describes.
func blockFromTemplate(t testing.TB, tmpl *rpcapi.BlockTemplate) *types.Block {
	t.Helper()
	prev, err1 := types.ParseHash(tmpl.PrevHash)
	root, err2 := types.ParseHash(tmpl.MerkleRoot)
	if err1 != nil || err2 != nil {
		t.Fatalf("template hashes: %v %v", err1, err2)
	}
	b := &types.Block{Header: types.BlockHeader{Version: tmpl.Version, PrevHash: prev, MerkleRoot: root,
		Timestamp: tmpl.Timestamp, DifficultyTarget: tmpl.DifficultyTarget, Nonce: tmpl.Nonce}}
	for i, tt := range tmpl.Transactions {
		raw, err := hex.DecodeString(tt.Data)
		if err != nil {
			t.Fatal(err)
		}
		tx, err := types.DecodeTransaction(raw)
		if err != nil {
			t.Fatal(err)
		}
		if tx.TxID().String() != tt.TxID {
			t.Fatalf("transactions[%d]: txid %s, data hashes to %s", i, tt.TxID, tx.TxID())
		}
		b.Transactions = append(b.Transactions, tx)
	}
	if types.MerkleRoot(b.TxIDs()) != root {
		t.Fatal("template merkle_root does not match its transactions")
	}
	return b
}

func TestGenerateToAddress(t *testing.T) {
	t.Run("testnet", func(t *testing.T) {
		e := newEnv(t, params.Testnet)
		e.wantError(jsonrpc.CodeMisc, "generatetoaddress is only available on regtest", true, "generatetoaddress", 1, e.addr)
		if e.node.Chain().Tip().Height != 0 {
			t.Fatal("the chain grew")
		}
		// getblocktemplate is served on testnet.
		if _, err := e.client.GetBlockTemplate(context.Background(), e.addr); err != nil {
			t.Fatal(err)
		}
	})
	t.Run("regtest", func(t *testing.T) {
		e := newEnv(t, params.Regtest)
		hashes, err := e.client.GenerateToAddress(context.Background(), 3, e.addr)
		if err != nil || len(hashes) != 3 {
			t.Fatalf("generatetoaddress: %v %v", hashes, err)
		}
		for i, h := range hashes {
			n := e.node.Chain().NodeAt(uint64(i + 1))
			if n == nil || n.Hash.String() != h {
				t.Fatalf("block %d: %s", i+1, h)
			}
			b, _ := e.node.Chain().Block(n.Hash)
			if b.Transactions[0].Outputs[0].PubKeyHash != testPKH {
				t.Fatal("the coinbase does not pay the address")
			}
		}
		var none []string
		if err := json.Unmarshal(e.mustCall("generatetoaddress", 0, e.addr), &none); err != nil || len(none) != 0 {
			t.Fatalf("generatetoaddress 0: %v %v", none, err)
		}
	})
}

// TestGenerateWhileBlocksArrive: two generatetoaddress calls race each other for every height;
// each reports only blocks that are on the main chain, and the height grows by what both asked.
func TestGenerateWhileBlocksArrive(t *testing.T) {
	e := newEnv(t, params.Regtest)
	const each = 60
	var wg sync.WaitGroup
	got := make([][]string, 2)
	errs := make([]error, 2)
	for i := range got {
		wg.Add(1)
		go func() {
			defer wg.Done()
			got[i], errs[i] = e.client.GenerateToAddress(context.Background(), each, e.addr)
		}()
	}
	wg.Wait()
	for i := range got {
		if errs[i] != nil || len(got[i]) != each {
			t.Fatalf("call %d: %d hashes, %v", i, len(got[i]), errs[i])
		}
		for _, h := range got[i] {
			hash, _ := types.ParseHash(h)
			n := e.node.Chain().NodeByHash(hash)
			if n == nil || e.node.Chain().NodeAt(n.Height).Hash != hash {
				t.Fatalf("call %d reported %s, which is not on the main chain", i, h)
			}
		}
	}
	if h := e.node.Chain().Tip().Height; h != 2*each {
		t.Fatalf("height %d, want %d", h, 2*each)
	}
}

func TestUtxosByAddressIncludeMempool(t *testing.T) {
	e := newFundedEnv(t)
	other, _ := keys.EncodeAddress(e.net.HRP, keys.PubKeyHash(otherPKH))
	in := e.take(1)
	tx := e.transfer(in, 10_000, 2)
	tx.Outputs[1].PubKeyHash = otherPKH
	types.SignInputs(tx, testKey, e.net.Magic)
	e.fees[tx.TxID()] = 10_000
	e.send(tx)
	ctx := context.Background()
	confirmed, err := e.client.GetUtxosByAddress(ctx, other, false)
	if err != nil || len(confirmed) != 0 {
		t.Fatalf("other address, confirmed only: %v %v", confirmed, err)
	}
	pending, err := e.client.GetUtxosByAddress(ctx, other, true)
	if err != nil || len(pending) != 1 {
		t.Fatalf("other address with the mempool: %v %v", pending, err)
	}
	u := pending[0]
	if u.TxID != tx.TxID().String() || u.Index != 1 || u.Value != tx.Outputs[1].Value || u.Confirmations != 0 ||
		u.IsCoinbase || u.PubKeyHash != otherPKH.String() || u.ClusterID != consensus.ClusterIDOf(otherPKH).String() ||
		u.EffectiveValue != u.Value {
		t.Fatalf("pending output: %+v", u)
	}
	mine, _ := e.client.GetUtxosByAddress(ctx, e.addr, true)
	for _, m := range mine {
		if m.TxID == in[0].op.TxID.String() && m.Index == in[0].op.Index {
			t.Fatal("an output the mempool spends is still listed")
		}
	}
	e.mineBlock(tx)
	confirmed, _ = e.client.GetUtxosByAddress(ctx, other, false)
	if len(confirmed) != 1 || confirmed[0].Confirmations != 1 || confirmed[0].BlockHeight != e.node.Chain().Tip().Height {
		t.Fatalf("after mining: %+v", confirmed)
	}
}

// TestTemplateConsistentWhileBlocksArrive asks for templates while blocks arrive: every
// template must describe one block, its height being its parent's height + 1 and the height
// in its coinbase. (getblocktemplate used to read the tip twice and could mix two tips.)
func TestTemplateConsistentWhileBlocksArrive(t *testing.T) {
	e := newEnv(t, params.Regtest)
	done, stop := make(chan struct{}), make(chan struct{})
	defer func() { close(stop); <-done }() // before the cleanup closes the chain
	go func() {
		defer close(done)
		for i := 0; i < 60; i++ {
			select {
			case <-stop:
				return
			default:
			}
			next := e.node.Chain().NextBlock()
			b := types.NewBlock(types.BlockSpec{Parent: next.Parent, Height: next.Height, Target: next.Target,
				Timestamp: next.MinTimestamp + 1, PayTo: otherPKH, Reward: consensus.Subsidy(next.Height)})
			if err := types.SolveBlock(b, 1<<24); err != nil {
				t.Error(err)
				return
			}
			if _, err := e.node.SubmitBlock(context.Background(), b); err != nil {
				t.Error(err)
				return
			}
		}
	}()
	for n := 0; ; n++ {
		select {
		case <-done:
			if n == 0 {
				t.Fatal("no template fetched")
			}
			return
		default:
		}
		tmpl, err := e.client.GetBlockTemplate(context.Background(), e.addr)
		if err != nil {
			t.Fatal(err)
		}
		b := blockFromTemplate(t, tmpl)
		prev, _ := types.ParseHash(tmpl.PrevHash)
		parent := e.node.Chain().NodeByHash(prev)
		cbp, err := types.DecodeCoinbasePayload(b.Transactions[0].Payload)
		if err != nil || parent == nil || tmpl.Height != parent.Height+1 || cbp.Height != tmpl.Height {
			t.Fatalf("template %d: height %d, parent %v, coinbase height %d (%v)", n, tmpl.Height, parent, cbp.Height, err)
		}
	}
}

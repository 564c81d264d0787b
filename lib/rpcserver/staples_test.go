package rpcserver_test

import (
	"context"
	"encoding/json"
	"errors"
	"math/big"
	"strings"
	"testing"
	"time"

	"github.com/cointoolkit/coin/lib/amount"
	"github.com/cointoolkit/coin/lib/chaingen"
	"github.com/cointoolkit/coin/lib/consensus"
	"github.com/cointoolkit/coin/lib/jsonrpc"
	"github.com/cointoolkit/coin/lib/params"
	"github.com/cointoolkit/coin/lib/policy"
	"github.com/cointoolkit/coin/lib/pow"
	"github.com/cointoolkit/coin/lib/reason"
	"github.com/cointoolkit/coin/lib/rpcapi"
	"github.com/cointoolkit/coin/lib/types"
)

// decodeInto decodes raw into v or fails.
func decodeInto(t testing.TB, raw json.RawMessage, v any) {
	t.Helper()
	if err := json.Unmarshal(raw, v); err != nil {
		t.Fatalf("decoding %s: %v", raw, err)
	}
}

// TestChainStaples: getbestblockhash, getdifficulty, getmininginfo and getnetworkhashps agree
// with the chain they read.
func TestChainStaples(t *testing.T) {
	e := newFundedEnv(t)
	tip := e.node.Chain().Tip()
	var best string
	decodeInto(t, e.mustCall("getbestblockhash"), &best)
	if best != tip.Hash.String() {
		t.Fatalf("getbestblockhash %s, tip %s", best, tip.Hash)
	}
	// Regtest mines at the easiest target: difficulty 1.
	var diff float64
	decodeInto(t, e.mustCall("getdifficulty"), &diff)
	if diff != 1 {
		t.Fatalf("getdifficulty %v on regtest, want 1", diff)
	}
	// The hash rate: the work of the last 10 blocks over the time they span (with the block
	// before), computed here from the headers.
	var ts []uint64
	work := new(big.Int)
	for n, i := tip, 0; i <= 10; n, i = n.Parent, i+1 {
		ts = append(ts, n.Header.Timestamp)
		if i < 10 {
			work.Add(work, pow.Work(n.Header.DifficultyTarget))
		}
	}
	lo, hi := ts[0], ts[0]
	for _, x := range ts {
		lo, hi = min(lo, x), max(hi, x)
	}
	want := 0.0
	if hi > lo {
		want, _ = new(big.Rat).SetFrac(work, new(big.Int).SetUint64(hi-lo)).Float64()
	}
	var hps float64
	decodeInto(t, e.mustCall("getnetworkhashps", 10), &hps)
	if hps != want {
		t.Fatalf("getnetworkhashps 10: %v, want %v", hps, want)
	}
	decodeInto(t, e.mustCall("getnetworkhashps", 10, tip.Height), &hps)
	if hps != want {
		t.Fatalf("getnetworkhashps 10 at the tip's height: %v, want %v", hps, want)
	}
	e.wantReason(reason.HeightOutOfRange, "getnetworkhashps", 10, tip.Height+1)

	e.send(e.transfer(e.take(1), 10_000, 1))
	raw := decodeObject(t, e.mustCall("getmininginfo"))
	checkFields(t, "getmininginfo", raw, map[string]string{"blocks": tInteger, "bits": tString, "difficulty": tNumber,
		"target": tString, "networkhashps": tNumber, "pooledtx": tInteger, "chain": tString, "warnings": tArray})
	var mi rpcapi.MiningInfo
	decodeInto(t, e.mustCall("getmininginfo"), &mi)
	if mi.Blocks != tip.Height || mi.PooledTx != 1 || mi.Chain != "regtest" || mi.Difficulty != 1 ||
		mi.Bits != "207fffff" || len(mi.Target) != 64 || !strings.HasPrefix(mi.Target, "7fffff") {
		t.Fatalf("getmininginfo %+v", mi)
	}
}

// TestGetChainTips: a fork shows as valid-headers beside the active tip; once it has more
// work, it is active and the old tip a valid-fork.
func TestGetChainTips(t *testing.T) {
	e := newEnv(t, params.Regtest)
	for i := 0; i < 5; i++ {
		e.mineBlock()
	}
	c := e.node.Chain()
	tip := c.Tip()
	next := c.NextBlock()
	side := func(parent *types.Block, height uint64, ts uint64) *types.Block {
		b := e.gen.NextOn("", chaingen.Template{Parent: parent.Hash(), Height: height, Target: next.Target, Timestamp: ts}, nil)
		if _, err := e.node.SubmitBlock(context.Background(), b); err != nil {
			t.Fatalf("side block: %v", err)
		}
		return b
	}
	parent, err := c.Block(tip.Parent.Hash)
	if err != nil {
		t.Fatal(err)
	}
	f1 := side(parent, tip.Height, next.MinTimestamp+7)
	tips := func() []rpcapi.ChainTip {
		var ts []rpcapi.ChainTip
		decodeInto(t, e.mustCall("getchaintips"), &ts)
		return ts
	}
	got := tips()
	if len(got) != 2 || got[0] != (rpcapi.ChainTip{Height: tip.Height, Hash: tip.Hash.String(), Status: "active"}) ||
		got[1] != (rpcapi.ChainTip{Height: tip.Height, Hash: f1.Hash().String(), BranchLen: 1, Status: "valid-headers"}) {
		t.Fatalf("after a fork: %+v", got)
	}
	f2 := side(f1, tip.Height+1, next.MinTimestamp+8)
	if c.Tip().Hash != f2.Hash() {
		t.Fatal("the longer fork did not become the tip")
	}
	got = tips()
	if len(got) != 2 || got[0] != (rpcapi.ChainTip{Height: tip.Height + 1, Hash: f2.Hash().String(), Status: "active"}) ||
		got[1] != (rpcapi.ChainTip{Height: tip.Height, Hash: tip.Hash.String(), BranchLen: 1, Status: "valid-fork"}) {
		t.Fatalf("after the reorganisation: %+v", got)
	}
}

// TestGetBlockStats: the statistics of a block of known transactions, by height (number or
// string) and by hash.
func TestGetBlockStats(t *testing.T) {
	e := newFundedEnv(t)
	tx1 := e.transfer(e.take(1), 2_000, 2)
	tx2 := e.transfer(e.take(2), 9_000, 1)
	b := e.mineBlock(tx1, tx2)
	h := e.node.Chain().Tip().Height
	var byNum, byStr, byHash rpcapi.BlockStats
	decodeInto(t, e.mustCall("getblockstats", h), &byNum)
	decodeInto(t, e.mustCall("getblockstats", "102"), &byStr) // the fan-out's block
	decodeInto(t, e.mustCall("getblockstats", b.Hash().String()), &byHash)
	if byNum != byHash {
		t.Fatalf("by height %+v, by hash %+v", byNum, byHash)
	}
	s1, s2 := uint64(tx1.SerializeSize()), uint64(tx2.SerializeSize())
	r1, r2 := 2_000/s1, 9_000/s2
	want := rpcapi.BlockStats{BlockHash: b.Hash().String(), Height: h, Time: b.Header.Timestamp, Txs: 3,
		TotalFee: 11_000, MinFee: 2_000, MaxFee: 9_000, MedianFee: 2_000, AvgFee: 5_500,
		MinTxSize: min(s1, s2), MaxTxSize: max(s1, s2), MedianTxSize: min(s1, s2), AvgTxSize: (s1 + s2) / 2,
		MinFeeRate: min(r1, r2), MaxFeeRate: max(r1, r2), AvgFeeRate: 11_000 / (s1 + s2),
		Ins: 3, Outs: 1 + 3, TotalOut: sumOut(tx1) + sumOut(tx2), Subsidy: consensus.Subsidy(h),
		TotalSize: s1 + s2, UtxoIncrease: 1}
	want.FeeRatePercentiles = [5]uint64{min(r1, r2), min(r1, r2), min(r1, r2), min(r1, r2), min(r1, r2)}
	got := byNum
	got.MedianTime = 0
	if got != want {
		t.Fatalf("getblockstats\n got %+v\nwant %+v", got, want)
	}
	if byNum.MedianTime == 0 || byNum.MedianTime > byNum.Time {
		t.Fatalf("mediantime %d, time %d", byNum.MedianTime, byNum.Time)
	}
	if byStr.Height != 102 || byStr.Txs != 2 || byStr.TotalFee != 100_000 {
		t.Fatalf("block 101: %+v", byStr)
	}
	e.wantReason(reason.BlockNotFound, "getblockstats", strings.Repeat("ab", 32))
	e.wantReason(reason.HeightOutOfRange, "getblockstats", h+1)
	if _, err := e.call("getblockstats", "nonsense"); err == nil || err.Code != jsonrpc.CodeInvalidParams {
		t.Fatalf("getblockstats nonsense: %v", err)
	}
}

func sumOut(tx *types.Transaction) uint64 {
	var s uint64
	for _, o := range tx.Outputs {
		s += o.Value
	}
	return s
}

// TestUptime: seconds since the node was made, as an integer.
func TestUptime(t *testing.T) {
	start := time.Now()
	e := newEnv(t, params.Regtest)
	var up int64
	decodeInto(t, e.mustCall("uptime"), &up)
	if up < 0 || up > int64(time.Since(start).Seconds())+1 {
		t.Fatalf("uptime %d after %v", up, time.Since(start))
	}
}

// TestGetMempoolEntry: a parent and its child in the pool, each with its fees, its
// ancestors and its descendants.
func TestGetMempoolEntry(t *testing.T) {
	e := newFundedEnv(t)
	parent := e.transfer(e.take(1), 3_000, 2)
	child := e.transfer([]coin{out(parent, 0)}, 4_000, 1)
	e.send(parent, child)
	var pe, ce rpcapi.MempoolEntry
	decodeInto(t, e.mustCall("getmempoolentry", parent.TxID().String()), &pe)
	decodeInto(t, e.mustCall("getmempoolentry", child.TxID().String()), &ce)
	ps, cs := parent.SerializeSize(), child.SerializeSize()
	if pe.Fee != 3_000 || pe.Size != ps || pe.VSize != ps || pe.AncestorCount != 1 || pe.AncestorSize != ps ||
		pe.DescendantCount != 2 || pe.DescendantSize != ps+cs || len(pe.Depends) != 0 ||
		len(pe.SpentBy) != 1 || pe.SpentBy[0] != child.TxID().String() ||
		pe.Fees.Base != "0.00003000" || pe.Fees.Descendant != "0.00007000" || pe.Fees.Ancestor != "0.00003000" {
		t.Fatalf("parent: %+v", pe)
	}
	if ce.Fee != 4_000 || ce.AncestorCount != 2 || ce.AncestorSize != ps+cs || ce.DescendantCount != 1 ||
		len(ce.Depends) != 1 || ce.Depends[0] != parent.TxID().String() || len(ce.SpentBy) != 0 ||
		ce.Fees.Ancestor != "0.00007000" || ce.Height != e.node.Chain().Tip().Height || ce.Time == 0 {
		t.Fatalf("child: %+v", ce)
	}
	raw := decodeObject(t, e.mustCall("getmempoolentry", parent.TxID().String()))
	checkFields(t, "getmempoolentry", raw, map[string]string{"vsize": tInteger, "time": tInteger, "height": tInteger,
		"fees": tObject, "depends": tArray, "spentby": tArray, "ancestorcount": tInteger, "descendantcount": tInteger})
	e.wantReason(reason.TxNotFound, "getmempoolentry", strings.Repeat("cd", 32))
}

// TestTestMempoolAccept: a valid transaction is allowed and the pool does not change; a
// refusal carries its reason; the array form checks each; bad input is -32602.
func TestTestMempoolAccept(t *testing.T) {
	e := newFundedEnv(t)
	in := e.take(1)
	ok := e.transfer(in, 5_000, 1)
	dup := e.transfer(in, 6_000, 2) // the same input: conflicts once ok is in the pool
	before := e.state()
	var res []rpcapi.TestAccept
	decodeInto(t, e.mustCall("testmempoolaccept", txHex(ok)), &res)
	if len(res) != 1 || !res[0].Allowed || res[0].TxID != ok.TxID().String() || res[0].VSize != ok.SerializeSize() ||
		res[0].Fees == nil || res[0].Fees.Base != json.Number(amount.Format(5_000)) || res[0].RejectReason != "" {
		t.Fatalf("valid: %+v", res)
	}
	if after := e.state(); after != before {
		t.Fatalf("testmempoolaccept changed the node: %+v -> %+v", before, after)
	}
	e.send(ok)
	decodeInto(t, e.mustCall("testmempoolaccept", []string{txHex(dup), txHex(ok), "00"}), &res)
	if len(res) != 3 || res[0].Allowed || res[0].RejectReason != string(reason.Conflict) || res[0].RejectDetails == "" ||
		res[1].Allowed || res[1].RejectReason != string(reason.AlreadyInMempool) ||
		res[2].Allowed || res[2].RejectReason != string(reason.DecodeFailed) {
		t.Fatalf("refusals: %+v", res)
	}
	// The array as one string, as coin-cli sends what is typed.
	decodeInto(t, e.mustCall("testmempoolaccept", `["`+txHex(dup)+`"]`), &res)
	if len(res) != 1 || res[0].RejectReason != string(reason.Conflict) {
		t.Fatalf("array in a string: %+v", res)
	}
	many := make([]string, 26)
	for i := range many {
		many[i] = txHex(ok)
	}
	for _, bad := range []any{many, []string{}, `[1,2`} {
		if _, err := e.call("testmempoolaccept", bad); err == nil || err.Code != jsonrpc.CodeInvalidParams {
			t.Fatalf("testmempoolaccept %.40v: %v, want -32602", bad, err)
		}
	}
}

// TestDecodeRawTransaction: the fields of a transaction, decoded without the chain.
func TestDecodeRawTransaction(t *testing.T) {
	e := newFundedEnv(t)
	c := e.take(1)
	tx := e.transfer(c, 1_000, 2)
	var d rpcapi.DecodedTx
	decodeInto(t, e.mustCall("decoderawtransaction", txHex(tx)), &d)
	if d.TxID != tx.TxID().String() || d.Hash != d.TxID || d.Size != tx.SerializeSize() || d.Kind != tx.Kind.String() ||
		len(d.Vin) != 1 || d.Vin[0].TxID != c[0].op.TxID.String() || d.Vin[0].Vout != c[0].op.Index ||
		len(d.Vin[0].Signature) != 128 || len(d.Vin[0].PubKey) != 64 || len(d.Vout) != 2 {
		t.Fatalf("decoded %+v", d)
	}
	for i, o := range d.Vout {
		if o.N != i || o.ValueSubunits != tx.Outputs[i].Value || o.Value != json.Number(amount.Format(tx.Outputs[i].Value)) ||
			o.Address != e.addr || o.PubKeyHash != testPKH.String() {
			t.Fatalf("output %d: %+v", i, o)
		}
	}
	e.wantReason(reason.DecodeFailed, "decoderawtransaction", "00ff")
}

// TestEstimateSmartFee: the relay minimum on a quiet chain; the median rate of a recent
// block that was more than half full; the rate to be ahead of a mempool deeper than the
// target's blocks.
func TestEstimateSmartFee(t *testing.T) {
	e := newEnv(t, params.Regtest)
	var blocks []*types.Block
	for i := 0; i < 160; i++ {
		blocks = append(blocks, e.mineBlock())
	}
	coinbase := func(i int) []coin {
		cb := blocks[i].Transactions[0]
		return []coin{{types.Outpoint{TxID: cb.TxID()}, cb.Outputs[0].Value}}
	}
	est := func(target uint64) rpcapi.FeeEstimate {
		var f rpcapi.FeeEstimate
		decodeInto(t, e.mustCall("estimatesmartfee", target), &f)
		if f.Blocks != target || f.FeeRate != json.Number(amount.Format(f.FeeRatePerByte*1000)) {
			t.Fatalf("estimatesmartfee %d: %+v", target, f)
		}
		return f
	}
	if f := est(1); f.FeeRatePerByte != policy.MinRelayFeePerByte || f.FeeRate != "0.00001000" {
		t.Fatalf("quiet chain: %+v", f)
	}
	// A block more than half full of transactions paying 20 a byte.
	var txs []*types.Transaction
	size := 0
	for i := 0; size*2 < consensus.MaxBlockSize; i++ {
		tx := e.atRate(coinbase(i), 20, consensus.MaxTxOutputs)
		txs = append(txs, tx)
		size += tx.SerializeSize()
	}
	e.mineBlock(txs...)
	if f := est(3); f.FeeRatePerByte != 20 {
		t.Fatalf("after a full block at 20/byte: %+v", f)
	}
	// A pool deeper than one block at 30 a byte, and one transaction at 25 on top of it.
	size = 0
	i := len(txs)
	for ; size <= consensus.MaxBlockSize; i++ {
		tx := e.atRate(coinbase(i), 30, consensus.MaxTxOutputs)
		e.send(tx)
		size += tx.SerializeSize()
	}
	e.send(e.atRate(coinbase(i), 25, 10))
	if f := est(1); f.FeeRatePerByte != 31 {
		t.Fatalf("one block's target behind a deeper pool at 30/byte: %+v", f)
	}
	if f := est(2); f.FeeRatePerByte != 20 {
		t.Fatalf("two blocks' target (the pool fits): %+v, want the recent block's 20", f)
	}
	for _, bad := range [][]any{{0}, {1009}, {2, "fast"}} {
		if _, err := e.call("estimatesmartfee", bad...); err == nil || err.Code != jsonrpc.CodeInvalidParams {
			t.Fatalf("estimatesmartfee %v: %v, want -32602", bad, err)
		}
	}
	est(6) // conservative is accepted
	decodeInto(t, e.mustCall("estimatesmartfee", 6, "conservative"), new(rpcapi.FeeEstimate))
}

// TestWaitForBlocks: waitfornewblock returns the new tip once a block comes, or the tip at
// its timeout; waitforblockheight returns once the height is reached.
func TestWaitForBlocks(t *testing.T) {
	e := newEnv(t, params.Regtest)
	e.mineBlock()
	type answer struct {
		ref rpcapi.BlockRef
		err error
	}
	call := func(method string, params ...any) <-chan answer {
		ch := make(chan answer, 1)
		go func() {
			var a answer
			a.err = e.client.Call(context.Background(), method, params, &a.ref)
			ch <- a
		}()
		return ch
	}
	tip := e.node.Chain().Tip()
	start := time.Now()
	var ref rpcapi.BlockRef
	decodeInto(t, e.mustCall("waitfornewblock", 50), &ref)
	if ref.Hash != tip.Hash.String() || time.Since(start) < 50*time.Millisecond {
		t.Fatalf("timeout: %+v after %v", ref, time.Since(start))
	}
	decodeInto(t, e.mustCall("waitforblockheight", tip.Height, 10_000), &ref)
	if ref.Height != tip.Height {
		t.Fatalf("a height reached: %+v", ref)
	}
	newBlock := call("waitfornewblock", 20_000)
	height := call("waitforblockheight", tip.Height+2, 20_000)
	// Each call registers with the server before the blocks come: wait until both run.
	waitFor(t, func() bool { return e.node.Notifier().Waiters() >= 2 })
	b1 := e.mineBlock()
	a := <-newBlock
	if a.err != nil || a.ref.Hash != b1.Hash().String() || a.ref.Height != tip.Height+1 {
		t.Fatalf("waitfornewblock: %+v", a)
	}
	select {
	case a := <-height:
		t.Fatalf("waitforblockheight returned one block early: %+v", a)
	default:
	}
	b2 := e.mineBlock()
	if a := <-height; a.err != nil || a.ref.Hash != b2.Hash().String() || a.ref.Height != tip.Height+2 {
		t.Fatalf("waitforblockheight: %+v", a)
	}
}

// waitFor polls cond until it holds, for at most 10 seconds.
func waitFor(t testing.TB, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatal("condition not reached in 10 s")
		}
		time.Sleep(time.Millisecond)
	}
}

// TestStapleClient: rpcapi's typed calls of the staples decode what the node answers.
func TestStapleClient(t *testing.T) {
	e := newFundedEnv(t)
	ctx := context.Background()
	c := e.client
	tip := e.node.Chain().Tip()
	if h, err := c.GetBestBlockHash(ctx); err != nil || h != tip.Hash.String() {
		t.Fatalf("GetBestBlockHash %s %v", h, err)
	}
	if mi, err := c.GetMiningInfo(ctx); err != nil || mi.Blocks != tip.Height {
		t.Fatalf("GetMiningInfo %+v %v", mi, err)
	}
	if ts, err := c.GetChainTips(ctx); err != nil || len(ts) != 1 || ts[0].Status != "active" {
		t.Fatalf("GetChainTips %+v %v", ts, err)
	}
	if st, err := c.GetBlockStats(ctx, tip.Hash.String()); err != nil || st.Height != tip.Height {
		t.Fatalf("GetBlockStats %+v %v", st, err)
	}
	tx := e.transfer(e.take(1), 1_000, 1)
	if r, err := c.TestMempoolAccept(ctx, []string{txHex(tx)}); err != nil || len(r) != 1 || !r[0].Allowed {
		t.Fatalf("TestMempoolAccept %+v %v", r, err)
	}
	e.send(tx)
	if me, err := c.GetMempoolEntry(ctx, tx.TxID().String()); err != nil || me.Fee != 1_000 {
		t.Fatalf("GetMempoolEntry %+v %v", me, err)
	}
	if _, err := c.GetMempoolEntry(ctx, strings.Repeat("00", 32)); !errors.Is(err, reason.TxNotFound) {
		t.Fatalf("GetMempoolEntry of nothing: %v", err)
	}
	if f, err := c.EstimateSmartFee(ctx, 2); err != nil || f.FeeRatePerByte != policy.MinRelayFeePerByte {
		t.Fatalf("EstimateSmartFee %+v %v", f, err)
	}
	if r, err := c.WaitForBlockHeight(ctx, tip.Height, 1); err != nil || r.Hash != tip.Hash.String() {
		t.Fatalf("WaitForBlockHeight %+v %v", r, err)
	}
	if r, err := c.WaitForNewBlock(ctx, 1); err != nil || r.Height != tip.Height {
		t.Fatalf("WaitForNewBlock %+v %v", r, err)
	}
}

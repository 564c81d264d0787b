package chainstate

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"sort"
	"testing"
	"time"

	"github.com/cointoolkit/coin/lib/amount"
	"github.com/cointoolkit/coin/lib/chaingen"
	"github.com/cointoolkit/coin/lib/consensus"
	"github.com/cointoolkit/coin/lib/params"
	"github.com/cointoolkit/coin/lib/types"
	"github.com/syndtr/goleveldb/leveldb/util"
)

// The cluster forest and concentration decay (protocol §8) through real blocks, with the
// consensus value model (decay on, the default). chaingen builds spends at nominal value, so
// dchain sizes every spend and every coinbase from the chain's own Chain.InputValue as of
// the block's parent, which must be the chain's tip when the block is built.

// dchain is a decaying chain fed by a generator that other chains may share (a reference
// chain that never sees a fork builds the other branch).
type dchain struct {
	t   *testing.T
	g   *chaingen.Generator
	c   *Chain
	dir string
}

func openDecayChain(t *testing.T, g *chaingen.Generator) *dchain {
	t.Helper()
	dir := t.TempDir()
	c, err := Open(context.Background(), dir, params.Regtest, Options{Now: func() time.Time { return time.Unix(1<<40, 0) }})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return &dchain{t: t, g: g, c: c, dir: dir}
}

// play submits the named blocks in order (each accepted, becoming the tip or stored on a side
// branch) and checks the supply invariant after each one.
func (d *dchain) play(names ...string) {
	d.t.Helper()
	for _, name := range names {
		if _, err := d.c.ProcessBlock(context.Background(), d.g.Block(name)); err != nil {
			d.t.Fatalf("block %s: %v", name, err)
		}
		checkInvariants(d.t, d.c)
	}
}

// playBranch submits the blocks from genesis to name that the chain does not hold yet.
func (d *dchain) playBranch(name string) {
	d.t.Helper()
	for _, b := range d.g.Branch(name) {
		if d.c.NodeByHash(b.Hash()) != nil {
			continue
		}
		d.play(d.g.NameOf(b.Hash()))
	}
}

func (d *dchain) tipIs(name string) {
	d.t.Helper()
	if got := d.c.Tip().Hash; got != d.g.Block(name).Hash() {
		d.t.Fatalf("tip is %s, want %s", d.g.NameOf(got), name)
	}
}

// reject submits the named block and expects kind; the tip and the stats stay as they were.
func (d *dchain) reject(name string, kind consensus.ErrorKind) {
	d.t.Helper()
	tip, stats := d.c.Tip(), d.c.Stats()
	_, err := d.c.ProcessBlock(context.Background(), d.g.Block(name))
	if !errors.Is(err, kind) {
		d.t.Fatalf("block %s: got %v, want %s", name, err, kind)
	}
	if d.c.Tip() != tip || d.c.Stats() != stats {
		d.t.Fatalf("block %s: a rejected block moved the tip or the stats", name)
	}
	checkInvariants(d.t, d.c)
}

// value is what output op is worth in the block after the tip: its effective value when it
// is in the UTXO set, its nominal value when an earlier transaction of the same block makes
// it (spent in the block that made it, it does not decay).
func (d *dchain) value(op types.Outpoint) uint64 {
	d.t.Helper()
	e, ok, err := d.c.Utxo(op)
	if err != nil {
		d.t.Fatal(err)
	}
	if !ok {
		o, known := d.g.Lookup(op)
		if !known {
			d.t.Fatalf("output %s is neither unspent nor built", op)
		}
		return o.Value
	}
	v, err := d.c.InputValue(e, d.c.Tip().Height+1)
	if err != nil {
		d.t.Fatal(err)
	}
	return v
}

// spend is a transfer of ins paying pays and leaving fee, with the change (of the effective
// value) to change; its outputs add up to exactly Σ effective − fee.
func (d *dchain) spend(ins []chaingen.Output, change types.Hash, fee uint64, pays ...types.TxOutput) *types.Transaction {
	d.t.Helper()
	var nominal, eff uint64
	for _, in := range ins {
		nominal += in.Value
		eff += d.value(in.Outpoint)
	}
	b := d.g.Spend(ins...).Fee(nominal-eff+fee).Change(change, 1)
	for _, p := range pays {
		b.Pay(p.PubKeyHash, p.Value)
	}
	return b.Tx()
}

// blockSums is what a block built by next may claim and what its inputs pay to the pool.
type blockSums struct {
	fees, decay, release, max uint64
}

// sums values the inputs of txs in a block on the tip.
func (d *dchain) sums(txs []*types.Transaction) blockSums {
	d.t.Helper()
	var s blockSums
	for _, tx := range txs {
		var in, nominal, out uint64
		for i := range tx.Inputs {
			op := tx.Inputs[i].Outpoint()
			in += d.value(op)
			o, _ := d.g.Lookup(op)
			nominal += o.Value
		}
		for _, o := range tx.Outputs {
			out += o.Value
		}
		if in >= out { // else the block is invalid, and a test wants it refused
			s.fees += in - out
		}
		s.decay += nominal - in
	}
	pool := d.c.Stats().Pool
	s.release = consensus.PoolRelease(pool)
	max, err := consensus.MaxCoinbaseValue(d.c.Tip().Height+1, s.fees, pool)
	if err != nil {
		d.t.Fatal(err)
	}
	s.max = max
	return s
}

// next builds the block name on the tip (parent must be it) with txs, its coinbase claiming
// the most it may (subsidy + fees at effective value + release) plus delta.
func (d *dchain) next(name, parent string, delta int64, txs ...*types.Transaction) blockSums {
	d.t.Helper()
	if d.c.Tip().Hash != d.g.Block(parent).Hash() {
		d.t.Fatalf("block %s: parent %s is not the tip %s", name, parent, d.g.NameOf(d.c.Tip().Hash))
	}
	s := d.sums(txs)
	d.g.Next(name, parent, txs, chaingen.CoinbaseValue(uint64(int64(s.max)+delta)))
	return s
}

// mine builds the block name on the tip with txs and connects it.
func (d *dchain) mine(name, parent string, txs ...*types.Transaction) blockSums {
	d.t.Helper()
	s := d.next(name, parent, 0, txs...)
	d.play(name)
	d.tipIs(name)
	return s
}

func (d *dchain) cluster(w *chaingen.Wallet) ClusterSummary {
	d.t.Helper()
	s, err := d.c.ClusterOfAddress(w.PKH)
	if err != nil {
		d.t.Fatal(err)
	}
	if id, err := d.c.ClusterOf(w.PKH); err != nil || id != s.ID {
		d.t.Fatalf("ClusterOf %s = %s (%v), ClusterOfAddress says %s", w.Name, id, err, s.ID)
	}
	return s
}

// byID is ClusterByID, failing the test on a storage error.
func (d *dchain) byID(id types.Hash) (ClusterSummary, bool) {
	d.t.Helper()
	s, ok, err := d.c.ClusterByID(id)
	if err != nil {
		d.t.Fatal(err)
	}
	return s, ok
}

// expectCluster checks that every wallet of ws is in one cluster called id of len(ws) or
// size addresses, found by its id with the same summary, and holding the nominal value of
// its unspent outputs.
func (d *dchain) expectCluster(id types.Hash, size uint64, ws ...*chaingen.Wallet) ClusterSummary {
	d.t.Helper()
	var sum ClusterSummary
	for i, w := range ws {
		s := d.cluster(w)
		if s.ID != id || s.Addresses != size {
			d.t.Fatalf("%s is in cluster %s of %d addresses, want %s of %d", w.Name, s.ID, s.Addresses, id, size)
		}
		if i == 0 {
			sum = s
		} else if s != sum {
			d.t.Fatalf("%s and %s see cluster %s differently: %+v vs %+v", ws[0].Name, w.Name, id, sum, s)
		}
	}
	got, ok := d.byID(id)
	if !ok || got != sum {
		d.t.Fatalf("ClusterByID(%s) = %+v, %v; by address %+v", id, got, ok, sum)
	}
	return sum
}

// expectGone checks that no cluster has id any more (it merged into another).
func (d *dchain) expectGone(id types.Hash) {
	d.t.Helper()
	if s, ok := d.byID(id); ok {
		d.t.Fatalf("ClusterByID(%s) found %+v after it merged away", id, s)
	}
}

// balanceOf is the nominal value of every unspent output paying one of ws (a cluster's
// balance when ws are its addresses).
func (d *dchain) balanceOf(ws ...*chaingen.Wallet) uint64 {
	d.t.Helper()
	var total uint64
	for _, w := range ws {
		us, err := d.c.UtxosByAddress(w.PKH)
		if err != nil {
			d.t.Fatal(err)
		}
		for _, u := range us {
			total += u.Entry.Value
		}
	}
	return total
}

// survivor is consensus.Survivor over the clusters of ws as the chain's tip has them.
func (d *dchain) survivor(ws ...*chaingen.Wallet) types.Hash {
	d.t.Helper()
	var cs []consensus.ClusterState
	for _, w := range ws {
		s := d.cluster(w)
		cs = append(cs, consensus.ClusterState{ID: s.ID, Balance: s.Balance})
	}
	return cs[consensus.Survivor(cs)].ID
}

func cid(w *chaingen.Wallet) types.Hash { return consensus.ClusterIDOf(w.PKH) }

func pay(w *chaingen.Wallet, coins uint64) types.TxOutput {
	return types.TxOutput{Value: coins * amount.Coin, PubKeyHash: w.PKH}
}

// funding is a decaying chain at height 103 whose block 103 paid each named wallet one
// output of the given number of COIN (from the coinbases of blocks 1 to 3, change to the
// miner).
type funding struct {
	*dchain
	w   map[string]*chaingen.Wallet
	out map[string]chaingen.Output
}

type grant struct {
	name  string
	coins uint64
}

func fund(t *testing.T, grants ...grant) *funding {
	t.Helper()
	g := chaingen.New(t, nil)
	d := openDecayChain(t, g)
	g.Chain("a", "genesis", 102)
	d.playBranch("a102")
	return fundOn(d, "a102", "fund", coinbases(g, 1, 3), grants...)
}

// coinbases is the coinbase outputs of blocks a<from>…a<to>.
func coinbases(g *chaingen.Generator, from, to int) []chaingen.Output {
	var out []chaingen.Output
	for h := from; h <= to; h++ {
		out = append(out, g.Coinbase(fmt.Sprintf("a%d", h)))
	}
	return out
}

// fundOn mines the block name on parent (the tip) paying the grants from ins.
func fundOn(d *dchain, parent, name string, ins []chaingen.Output, grants ...grant) *funding {
	d.t.Helper()
	f := &funding{dchain: d, w: map[string]*chaingen.Wallet{}, out: map[string]chaingen.Output{}}
	var pays []types.TxOutput
	for _, gr := range grants {
		w := d.g.Wallet(gr.name)
		f.w[gr.name] = w
		pays = append(pays, pay(w, gr.coins))
	}
	tx := d.spend(ins, d.g.Miner().PKH, 0, pays...)
	d.mine(name, parent, tx)
	for i, gr := range grants {
		f.out[gr.name] = chaingen.OutputOf(tx, i)
	}
	return f
}

// TestClusterMerges follows clusters through merges block by block: two addresses spent
// together end in one cluster named by the larger balance, a tie goes to the smaller id, the
// payee never merges, a three-way merge, a cluster with few addresses and a large balance
// names a larger tree (the forest's root by size, the name by balance, through the name
// table), and a merge of merged clusters; sizes count addresses; merged-away ids are gone.
func TestClusterMerges(t *testing.T) {
	f := fund(t, grant{"A", 10}, grant{"B", 20}, grant{"C", 5}, grant{"D", 10}, grant{"G", 10},
		grant{"E", 30}, grant{"F", 3}, grant{"H", 40})
	w := f.w
	miner := f.g.Miner()
	for name, gw := range w {
		s := f.expectCluster(cid(gw), 1, gw)
		if s.Balance != f.out[name].Value || s.Supply != f.c.Stats().UtxoTotal {
			t.Fatalf("%s: cluster %+v, want balance %d of supply %d", name, s, f.out[name].Value, f.c.Stats().UtxoTotal)
		}
	}
	P, P2, Q, R, S := f.g.Wallet("P"), f.g.Wallet("P2"), f.g.Wallet("Q"), f.g.Wallet("R"), f.g.Wallet("S")
	if _, ok := f.byID(cid(P)); ok {
		t.Fatal("an address that never received anything has a cluster")
	}

	// A (10) and B (20) spent together: B's name survives; the payee P stays alone.
	if got := f.survivor(w["A"], w["B"]); got != cid(w["B"]) {
		t.Fatalf("survivor of A and B is %s, want B's", got)
	}
	ab := f.spend([]chaingen.Output{f.out["A"], f.out["B"]}, w["A"].PKH, 1000, pay(P, 25))
	f.mine("b1", "fund", ab)
	s := f.expectCluster(cid(w["B"]), 2, w["A"], w["B"])
	if s.Balance != f.balanceOf(w["A"], w["B"]) || s.Balance != ab.Outputs[1].Value {
		t.Fatalf("cluster {A,B} holds %d, its outputs %d", s.Balance, ab.Outputs[1].Value)
	}
	f.expectGone(cid(w["A"]))
	f.expectCluster(cid(P), 1, P)
	if s := f.cluster(P); s.Balance != 25*amount.Coin {
		t.Fatalf("payee's cluster holds %d", s.Balance)
	}

	// A tie (D and G both 10) goes to the smaller id; in the same block, a three-way merge.
	small, big := cid(w["D"]), cid(w["G"])
	if bytes.Compare(small[:], big[:]) > 0 {
		small, big = big, small
	}
	if got := f.survivor(w["D"], w["G"]); got != small {
		t.Fatalf("survivor of the tie is %s, want the smaller id %s", got, small)
	}
	dg := f.spend([]chaingen.Output{f.out["D"], f.out["G"]}, w["D"].PKH, 1000, pay(P2, 5))
	cef := f.spend([]chaingen.Output{f.out["C"], f.out["E"], f.out["F"]}, w["C"].PKH, 1000, pay(Q, 1))
	f.mine("b2", "b1", dg, cef)
	f.expectCluster(small, 2, w["D"], w["G"])
	f.expectGone(big)
	f.expectCluster(cid(w["E"]), 3, w["C"], w["E"], w["F"])
	f.expectGone(cid(w["C"]))
	f.expectGone(cid(w["F"]))
	f.expectCluster(cid(P2), 1, P2)
	f.expectCluster(cid(Q), 1, Q)

	// {D,G} (2 addresses, ~15 COIN) with H (1 address, 40 COIN): H names the cluster, while
	// the forest keeps {D,G}'s root (union by size), so the name table finds it.
	if got := f.survivor(w["D"], w["H"]); got != cid(w["H"]) {
		t.Fatalf("survivor of {D,G} and H is %s, want H's", got)
	}
	dgh := f.spend([]chaingen.Output{chaingen.OutputOf(dg, 1), f.out["H"]}, w["D"].PKH, 1000, pay(R, 50))
	f.mine("b3", "b2", dgh)
	s = f.expectCluster(cid(w["H"]), 3, w["D"], w["G"], w["H"])
	if s.Balance != f.balanceOf(w["D"], w["G"], w["H"]) {
		t.Fatalf("cluster {D,G,H} holds %d, its outputs %d", s.Balance, f.balanceOf(w["D"], w["G"], w["H"]))
	}
	f.expectGone(small)
	f.c.mu.RLock()
	ci, err := findCluster(f.c.getLocked, w["H"].PKH)
	f.c.mu.RUnlock()
	if err != nil || ci.Root == ci.Name || ci.Name != cid(w["H"]) || ci.Size != 3 {
		t.Fatalf("forest: %+v, %v; want a root other than H's node, named by H", ci, err)
	}

	// Three merged clusters merge: {A,B} (~5 COIN), {C,E,F} (~37), {D,G,H} (~5): 8 addresses
	// named E; the name H had is gone with its name record.
	want := f.survivor(w["A"], w["C"], w["D"])
	if want != cid(w["E"]) {
		t.Fatalf("survivor of the three is %s, want E's", want)
	}
	all := f.spend([]chaingen.Output{chaingen.OutputOf(ab, 1), chaingen.OutputOf(cef, 1), chaingen.OutputOf(dgh, 1)},
		w["A"].PKH, 1000, pay(S, 1))
	f.mine("b4", "b3", all)
	eight := []*chaingen.Wallet{w["A"], w["B"], w["C"], w["D"], w["E"], w["F"], w["G"], w["H"]}
	s = f.expectCluster(cid(w["E"]), 8, eight...)
	if s.Balance != f.balanceOf(eight...) {
		t.Fatalf("cluster of 8 holds %d, its outputs %d", s.Balance, f.balanceOf(eight...))
	}
	for _, id := range []types.Hash{cid(w["A"]), cid(w["B"]), cid(w["D"]), cid(w["G"]), cid(w["H"])} {
		f.expectGone(id)
	}
	f.c.mu.RLock()
	_, named, err := clusterByID(f.c.getLocked, cid(w["H"]))
	v, err2 := f.c.getLocked(hashKey(pfxClusterName, cid(w["H"])))
	f.c.mu.RUnlock()
	if err != nil || err2 != nil || named || v != nil {
		t.Fatalf("H's name record survives its merge: %v %v %v %v", named, v, err, err2)
	}
	// Payees never joined: each is its own one-address cluster.
	for _, p := range []*chaingen.Wallet{P, P2, Q, R, S} {
		f.expectCluster(cid(p), 1, p)
	}
	// A payee spending alone merges nothing.
	alone := f.spend(f.g.Spendable("b4", P), P.PKH, 1000)
	f.mine("b5", "b4", alone)
	f.expectCluster(cid(P), 1, P)
	f.expectCluster(cid(w["E"]), 8, eight...)
	// The miner's outputs all pay one address: one cluster of one address all along.
	f.expectCluster(cid(miner), 1, miner)
}

// TestClusterMergeSeesBlockOrder: a merge compares balances as the block's earlier
// transactions left them, not as the parent block did (protocol §8), in both directions: a
// cluster that an earlier transaction paid wins, and one that an earlier transaction
// emptied loses.
func TestClusterMergeSeesBlockOrder(t *testing.T) {
	f := fund(t, grant{"A", 10}, grant{"B", 20}, grant{"C", 30}, grant{"D", 25})
	w := f.w
	P := f.g.Wallet("P")
	// Before the block B (20) beats A (10) and C (30) beats D (25).
	if f.survivor(w["A"], w["B"]) != cid(w["B"]) || f.survivor(w["C"], w["D"]) != cid(w["C"]) {
		t.Fatal("the parent block's balances do not order the pairs as the test needs")
	}
	tx1 := f.spend([]chaingen.Output{f.g.Coinbase("a4")}, f.g.Miner().PKH, 0, pay(w["A"], 15)) // A: 25
	tx2 := f.spend([]chaingen.Output{f.out["A"], f.out["B"]}, w["B"].PKH, 1000)                // A+B
	tx3 := f.spend([]chaingen.Output{f.out["C"]}, w["C"].PKH, 1000, pay(P, 29))                // C: ~1
	tx4 := f.spend([]chaingen.Output{chaingen.OutputOf(tx3, 1), f.out["D"]}, w["D"].PKH, 1000) // C+D
	f.mine("b1", "fund", tx1, tx2, tx3, tx4)
	f.expectCluster(cid(w["A"]), 2, w["A"], w["B"])
	f.expectGone(cid(w["B"]))
	f.expectCluster(cid(w["D"]), 2, w["C"], w["D"])
	f.expectGone(cid(w["C"]))
	f.expectCluster(cid(P), 1, P)
	if s := f.cluster(w["A"]); s.Balance != f.balanceOf(w["A"], w["B"]) {
		t.Fatalf("cluster {A,B} holds %d, its outputs %d", s.Balance, f.balanceOf(w["A"], w["B"]))
	}
	if s := f.cluster(w["D"]); s.Balance != f.balanceOf(w["C"], w["D"]) {
		t.Fatalf("cluster {C,D} holds %d, its outputs %d", s.Balance, f.balanceOf(w["C"], w["D"]))
	}
}

// clusterTables is every record of the cluster tables (forest nodes, names and
// balances), key → value, as written to the database.
func clusterTables(t *testing.T, c *Chain) map[string]string {
	t.Helper()
	flushForTest(t, c)
	out := map[string]string{}
	for _, pfx := range []byte{pfxClusterNode, pfxClusterName, pfxCluster} {
		it := c.db.NewIterator(util.BytesPrefix([]byte{pfx}), nil)
		for it.Next() {
			out[string(it.Key())] = string(it.Value())
		}
		it.Release()
		if err := it.Error(); err != nil {
			t.Fatal(err)
		}
	}
	return out
}

// sameClusters compares the cluster tables, the stats (pool, burned, supply) and the UTXO
// sets of two chains byte for byte.
func sameClusters(t *testing.T, what string, a, b *Chain) {
	t.Helper()
	ta, tb := clusterTables(t, a), clusterTables(t, b)
	var keys []string
	for k := range ta {
		keys = append(keys, k)
	}
	for k := range tb {
		if _, ok := ta[k]; !ok {
			keys = append(keys, k)
		}
	}
	sort.Strings(keys)
	for _, k := range keys {
		if ta[k] != tb[k] {
			t.Fatalf("%s: cluster record %x: %x vs %x", what, k, ta[k], tb[k])
		}
	}
	if len(ta) == 0 {
		t.Fatalf("%s: no cluster records at all", what)
	}
	if a.Stats() != b.Stats() {
		t.Fatalf("%s: stats %+v vs %+v", what, a.Stats(), b.Stats())
	}
	if err := sameSet(utxoSet(t, a), utxoSet(t, b)); err != nil {
		t.Fatalf("%s: %v", what, err)
	}
}

// TestClusterMergesUndoneOnReorg: a chain that saw branch b (merges in three blocks, every
// spend decaying) reorganises to branch c (other merges) and back; after each reorg its
// cluster tables, stats and UTXO set are byte for byte those of a chain that only ever saw
// the winning branch. The supply invariant holds after every block on every chain.
func TestClusterMergesUndoneOnReorg(t *testing.T) {
	g := chaingen.New(t, nil)
	x, y, z := openDecayChain(t, g), openDecayChain(t, g), openDecayChain(t, g)
	g.Chain("a", "genesis", 102)
	grants := []grant{{"A", 10}, {"B", 20}, {"C", 4}, {"D", 10}, {"E", 30}, {"F", 3}, {"H", 40}}
	for _, d := range []*dchain{x, y, z} {
		d.playBranch("a102")
	}
	f := fundOn(x, "a102", "fund", coinbases(g, 1, 3), grants...)
	y.play("fund")
	z.play("fund")
	w, out := f.w, f.out
	P, Q := g.Wallet("P"), g.Wallet("Q")

	// Branch b, built on x (z follows it): A+B; then {A,B}+C and D+E+F; then H+{D,E,F}.
	b1ab := x.spend([]chaingen.Output{out["A"], out["B"]}, w["A"].PKH, 1000, pay(P, 25))
	x.mine("b1", "fund", b1ab)
	b2 := x.spend([]chaingen.Output{chaingen.OutputOf(b1ab, 1), out["C"]}, w["C"].PKH, 1000)
	b2def := x.spend([]chaingen.Output{out["D"], out["E"], out["F"]}, w["D"].PKH, 1000, pay(Q, 2))
	x.mine("b2", "b1", b2, b2def)
	// {D,E,F} (named E, ~41 COIN) outweighs H (40).
	if got := x.survivor(w["H"], w["D"]); got != cid(w["E"]) {
		t.Fatalf("survivor of H and {D,E,F} is %s, want E's", got)
	}
	b3 := x.spend([]chaingen.Output{out["H"], chaingen.OutputOf(b2def, 1)}, w["H"].PKH, 1000, pay(P, 1))
	x.mine("b3", "b2", b3)
	x.expectCluster(cid(w["E"]), 4, w["D"], w["E"], w["F"], w["H"])
	x.expectGone(cid(w["H"]))
	x.expectCluster(cid(w["B"]), 3, w["A"], w["B"], w["C"])
	if x.c.Stats().Pool == 0 {
		t.Fatal("branch b paid nothing to the decay pool")
	}
	z.play("b1", "b2", "b3")

	// Branch c, built on y (which never sees b), one block longer: C+H, then B+D+A.
	c1 := y.spend([]chaingen.Output{out["C"], out["H"]}, w["C"].PKH, 1000)
	y.mine("c1", "fund", c1)
	y.mine("c2", "c1")
	c3 := y.spend([]chaingen.Output{out["B"], out["D"], out["A"]}, w["D"].PKH, 1000, pay(Q, 3))
	y.mine("c3", "c2", c3)
	y.mine("c4", "c3")
	y.expectCluster(cid(w["H"]), 2, w["C"], w["H"])
	y.expectCluster(cid(w["B"]), 3, w["A"], w["B"], w["D"])

	x.play("c1", "c2", "c3")
	x.tipIs("b3")
	x.play("c4")
	x.tipIs("c4")
	sameClusters(t, "after the reorg to c", x.c, y.c)
	x.expectCluster(cid(w["H"]), 2, w["C"], w["H"])
	x.expectCluster(cid(w["B"]), 3, w["A"], w["B"], w["D"])
	x.expectCluster(cid(w["E"]), 1, w["E"])
	x.expectCluster(cid(w["F"]), 1, w["F"])
	x.expectGone(cid(w["A"]))

	// Back to b: z (which never saw c) builds b4 and b5.
	z.mine("b4", "b3")
	zb := z.spend(g.Spendable("b4", P), P.PKH, 1000)
	z.mine("b5", "b4", zb)
	x.play("b4")
	x.tipIs("c4")
	x.play("b5")
	x.tipIs("b5")
	sameClusters(t, "after the reorg back to b", x.c, z.c)
	x.expectCluster(cid(w["E"]), 4, w["D"], w["E"], w["F"], w["H"])
	x.expectCluster(cid(w["B"]), 3, w["A"], w["B"], w["C"])
	x.expectGone(cid(w["D"]))
	x.expectGone(cid(w["H"]))

	// And a reopened chain reads the same tables.
	dir := x.dir
	if err := x.c.Close(); err != nil {
		t.Fatal(err)
	}
	re, err := Open(context.Background(), dir, params.Regtest, Options{Now: func() time.Time { return time.Unix(1<<40, 0) }})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { re.Close() })
	sameClusters(t, "after a reopen", re, z.c)
}

// TestDecayThroughBlocks: a spend above its effective value is refused, one at it accepted;
// the pool grows by exactly Σ(nominal − effective) of a block's inputs (each effective value
// recomputed here from protocol §8's formula); the next coinbase may claim 1% of the pool and
// not one subunit more; a stake (locked) keeps its value while its owner's other outputs
// decay.
func TestDecayThroughBlocks(t *testing.T) {
	g := chaingen.New(t, nil)
	d := openDecayChain(t, g)
	g.Chain("a", "genesis", 100)
	d.playBranch("a100")
	miner := g.Miner()

	// One miner holds the whole supply: concentration 10^9 ppb.
	cb := g.Coinbase("a1")
	e, _, err := d.c.Utxo(cb.Outpoint)
	if err != nil || e == nil {
		t.Fatal(err)
	}
	ms := d.cluster(miner)
	if consensus.Concentration(ms.Balance, ms.Supply) != 1_000_000_000 {
		t.Fatalf("miner holds %d of %d", ms.Balance, ms.Supply)
	}
	rate := consensus.DecayRate(1_000_000_000, consensus.TierNone)
	want := consensus.EffectiveValue(cb.Value, rate, 101-1)
	eff := d.value(cb.Outpoint)
	if eff != want || eff >= cb.Value {
		t.Fatalf("effective value of a1's coinbase at 101: %d, formula %d, nominal %d", eff, want, cb.Value)
	}

	// Outputs one subunit above the effective value: refused.
	over := g.Spend(cb).Pay(miner.PKH, eff+1).Fee(cb.Value - eff - 1).Tx()
	d.next("over", "a100", 0, over)
	d.reject("over", consensus.ErrInsufficientFunds)
	// At the effective value (fee 0): accepted; the pool was empty, so it holds the decay.
	exact := g.Spend(cb).Pay(miner.PKH, eff).Fee(cb.Value - eff).Tx()
	s := d.mine("b101", "a100", exact)
	if s.decay != cb.Value-eff || d.c.Stats().Pool != cb.Value-eff || s.release != 0 {
		t.Fatalf("pool %d, want the decay %d (sums %+v)", d.c.Stats().Pool, cb.Value-eff, s)
	}

	// The next coinbase may claim subsidy + 1% of the pool, not a subunit more.
	pool := d.c.Stats().Pool
	d.next("greedy", "b101", 1)
	d.reject("greedy", consensus.ErrBadCoinbaseValue)
	s = d.mine("b102", "b101")
	if s.release != pool*100/10_000 || s.max != consensus.Subsidy(102)+s.release || s.release == 0 {
		t.Fatalf("release %d of pool %d, coinbase %d", s.release, pool, s.max)
	}
	if got := d.c.Stats().Pool; got != pool-s.release {
		t.Fatalf("pool %d after a release of %d from %d", got, s.release, pool)
	}

	// Several decaying inputs of different ages and clusters in one block: the pool grows by
	// Σ(nominal − effective) less the release, each effective value from the formula with
	// the cluster balance and the supply as of the parent.
	fw := fundOn(d, "b102", "fund", coinbases(g, 2, 3), grant{"W", 60}, grant{"V", 2}, grant{"U", 30})
	W, V := fw.w["W"], fw.w["V"]
	d.mine("b104", "fund")
	ins := []chaingen.Output{g.Coinbase("a4"), chaingen.OutputOf(exact, 0), fw.out["V"], fw.out["U"]}
	tip := d.c.Tip().Height
	var sumDecay uint64
	for _, in := range ins {
		e, ok, err := d.c.Utxo(in.Outpoint)
		if err != nil || !ok {
			t.Fatal(err)
		}
		cs, err := d.c.ClusterOfAddress(in.PKH)
		if err != nil {
			t.Fatal(err)
		}
		want := consensus.EffectiveValue(e.Value, consensus.DecayRate(consensus.Concentration(cs.Balance, d.c.Stats().UtxoTotal), consensus.TierNone), tip+1-e.Height)
		if got := d.value(in.Outpoint); got != want {
			t.Fatalf("input %s: InputValue %d, formula %d", in.Outpoint, got, want)
		}
		sumDecay += e.Value - want
	}
	if d.value(fw.out["V"].Outpoint) != fw.out["V"].Value {
		t.Fatal("V's 2 COIN (below the threshold) decayed")
	}
	if d.value(fw.out["U"].Outpoint) >= fw.out["U"].Value {
		t.Fatal("U's 30 COIN (above the threshold) did not decay")
	}
	pool = d.c.Stats().Pool
	mixed := d.spend(ins, miner.PKH, 5000, pay(V, 1))
	s = d.mine("b105", "b104", mixed)
	if s.decay != sumDecay || d.c.Stats().Pool != pool-s.release+sumDecay {
		t.Fatalf("pool %d → %d, release %d, decay %d (sums %+v)", pool, d.c.Stats().Pool, s.release, sumDecay, s)
	}

	// W registers as an agent: its stake is locked and keeps its value at any age, while
	// W's change (same cluster, well above the threshold) decays.
	reg := g.Spend(fw.out["W"]).Kind(types.KindAgentRegister, nil).Pay(W.PKH, consensus.AgentStake).
		Fee(fw.out["W"].Value-d.value(fw.out["W"].Outpoint)).Change(W.PKH, 1).Tx()
	d.mine("b106", "b105", reg)
	stake, ok, err := d.c.Utxo(types.Outpoint{TxID: reg.TxID(), Index: 0})
	if err != nil || !ok || !stake.Locked {
		t.Fatalf("stake %+v %v %v", stake, ok, err)
	}
	change, _, _ := d.c.Utxo(types.Outpoint{TxID: reg.TxID(), Index: 1})
	d.mine("b107", "b106")
	d.mine("b108", "b107")
	for _, h := range []uint64{109, 1000, 1_000_000} {
		if v, err := d.c.InputValue(stake, h); err != nil || v != stake.Value {
			t.Fatalf("stake worth %d at height %d (%v), nominal %d", v, h, err, stake.Value)
		}
		if v, err := d.c.InputValue(change, h); err != nil || v >= change.Value {
			t.Fatalf("W's change worth %d at height %d (%v), nominal %d", v, h, err, change.Value)
		}
	}
	if cs := d.cluster(W); consensus.Concentration(cs.Balance, cs.Supply) <= consensus.DecayThresholdPPB {
		t.Fatalf("W's cluster %+v is below the threshold", cs)
	}
	if d.c.Stats().Burned != 0 {
		t.Fatalf("burned %d: every coinbase here claims all it may", d.c.Stats().Burned)
	}
}

// TestDecayPoolAcrossReorg: the pool, burned and issued amounts follow a reorg from a branch
// of decaying spends to one with other spends and a coinbase that burns; the invariant holds
// after every block and the stats equal those of a chain that only saw the winner.
func TestDecayPoolAcrossReorg(t *testing.T) {
	g := chaingen.New(t, nil)
	x, y := openDecayChain(t, g), openDecayChain(t, g)
	g.Chain("a", "genesis", 102)
	x.playBranch("a102")
	y.playBranch("a102")
	miner := g.Miner()
	x.mine("b103", "a102", x.spend([]chaingen.Output{g.Coinbase("a1"), g.Coinbase("a2")}, miner.PKH, 700))
	x.mine("b104", "b103", x.spend([]chaingen.Output{g.Coinbase("a3")}, miner.PKH, 0))
	poolB := x.c.Stats().Pool
	y.mine("c103", "a102", y.spend([]chaingen.Output{g.Coinbase("a3")}, miner.PKH, 100))
	y.next("c104", "c103", -12345) // burns 12,345 subunits
	y.play("c104")
	y.mine("c105", "c104", y.spend([]chaingen.Output{g.Coinbase("a1")}, miner.PKH, 0))
	x.play("c103", "c104", "c105")
	x.tipIs("c105")
	if y.c.Stats().Burned != 12345 || x.c.Stats().Pool == poolB {
		t.Fatalf("stats %+v", x.c.Stats())
	}
	sameClusters(t, "after the reorg", x.c, y.c)
}

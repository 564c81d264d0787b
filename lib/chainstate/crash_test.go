package chainstate

import (
	"bytes"
	"crypto/ed25519"
	"errors"
	"fmt"
	"math/big"
	"math/rand/v2"
	"os"
	"os/exec"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/cointoolkit/coin/lib/bincode"
	"github.com/cointoolkit/coin/lib/consensus"
	"github.com/cointoolkit/coin/lib/miner"
	"github.com/cointoolkit/coin/lib/params"
	"github.com/cointoolkit/coin/lib/types"
	"github.com/syndtr/goleveldb/leveldb"
	"github.com/syndtr/goleveldb/leveldb/util"
)

// The crash test runs this test binary again as a child (TestCrashWorker) that connects blocks
// into a data directory as fast as it can, kills it with SIGKILL after a random delay, and checks
// that the directory reopens at a consistent state. Then the next child continues the same
// directory.
const (
	crashDirEnv  = "COIN_CHAINSTATE_CRASH_DIR"  // data directory of the worker
	crashSeedEnv = "COIN_CHAINSTATE_CRASH_SEED" // the worker's seed; for the parent, a seed to replay
)

// crashClock is the chain clock of the crash test: far enough ahead for any number of blocks
// 60 s apart.
func crashClock() time.Time { return time.Unix(1<<40, 0) }

func TestCrashRecovery(t *testing.T) {
	if os.Getenv(crashDirEnv) != "" {
		t.Skip("running as a crash worker")
	}
	rounds := 20
	if testing.Short() {
		rounds = 5
	}
	seed := uint64(time.Now().UnixNano())
	if s := os.Getenv(crashSeedEnv); s != "" {
		var err error
		if seed, err = strconv.ParseUint(s, 10, 64); err != nil {
			t.Fatal(err)
		}
	}
	t.Logf("seed %d (set %s to repeat the blocks; kill times vary anyway)", seed, crashSeedEnv)
	rng := rand.New(rand.NewPCG(seed, 0))
	dir := t.TempDir()

	// Start with mature coinbases so that every child makes transfers from its first block.
	c, err := Open(dir, params.Regtest, Options{Now: crashClock})
	if err != nil {
		t.Fatal(err)
	}
	w, err := newCrashWorker(c, seed)
	if err != nil {
		t.Fatal(err)
	}
	for c.Tip().Height < 110 {
		if err := w.step(); err != nil {
			t.Fatal(err)
		}
	}
	ref := &replayer{}
	defer ref.close()
	checkRecovered(t, c, ref)
	prevHeight, prevNodes := c.Tip().Height, len(c.index)
	setupNodes, setupSide := prevNodes, sideValid(c)
	c.Close()

	var midWrite, reorgs int
	var checking time.Duration
	start := time.Now()
	for r := 1; r <= rounds; r++ {
		delay := 5*time.Millisecond + time.Duration(rng.IntN(296))*time.Millisecond
		cmd := exec.Command(os.Args[0], "-test.run=^TestCrashWorker$", "-test.count=1")
		cmd.Env = append(os.Environ(), crashDirEnv+"="+dir, crashSeedEnv+"="+strconv.FormatUint(seed+uint64(r), 10))
		var out bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &out
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		time.Sleep(delay)
		_ = cmd.Process.Signal(syscall.SIGKILL) // fails only when the worker is gone already
		err := cmd.Wait()
		ws, ok := cmd.ProcessState.Sys().(syscall.WaitStatus)
		if !ok || !ws.Signaled() || ws.Signal() != syscall.SIGKILL {
			t.Fatalf("round %d: the worker ended by itself (%v) before the kill:\n%s", r, err, out.Bytes())
		}

		c, err := Open(dir, params.Regtest, Options{Now: crashClock})
		if err != nil {
			t.Fatalf("round %d: reopen after kill -9 at %v: %v", r, delay, err)
		}
		checkStart := time.Now()
		checkRecovered(t, c, ref)
		if r == rounds {
			// The replay above reuses the previous round's replay when it is a prefix of the
			// main chain; the last round also replays everything from genesis.
			if err := sameSet(utxoSet(t, c), replaySet(t, c)); err != nil {
				t.Fatal("UTXO set differs from a replay of the main chain:", err)
			}
		}
		checking += time.Since(checkStart)
		tip := c.Tip()
		if best := c.bestCandidate(); best != tip {
			t.Errorf("round %d: reopened at tip %d %s, but stored block %d %s (%s) has more work",
				r, tip.Height, tip.Hash, best.Height, best.Hash, best.Status)
		}
		nodes, side := len(c.index), sideValid(c)
		t.Logf("round %2d: killed after %3d ms: tip %d (%+d), %d blocks stored (%+d), %d reorged out, %d txs",
			r, delay.Milliseconds(), tip.Height, int64(tip.Height)-int64(prevHeight), nodes, nodes-prevNodes, side, c.Stats().TxCount)
		if nodes > prevNodes {
			midWrite++
		}
		reorgs = side - setupSide
		prevHeight, prevNodes = tip.Height, nodes
		if err := c.Close(); err != nil {
			t.Fatal(err)
		}
	}
	t.Logf("%d rounds in %v (checks %v); %d stored new blocks before the kill", rounds,
		time.Since(start).Round(time.Millisecond), checking.Round(time.Millisecond), midWrite)
	// How far a worker gets depends on the machine (its start alone takes tens of
	// milliseconds with -race); a kill during its start is a fine crash too.
	childBlocks := prevNodes - setupNodes
	t.Logf("the workers stored %d blocks, %d of them were connected and then reorganised away", childBlocks, reorgs)
	if midWrite == 0 {
		t.Error("no worker got to store a block before the kill")
	}
	if childBlocks >= 100 && reorgs == 0 {
		t.Error("no reorg in the workers' blocks")
	}
}

// sideValid counts the blocks off the main chain that were connected once: a reorg
// disconnected them.
func sideValid(c *Chain) int {
	n := 0
	for _, node := range c.index {
		if node.Status == StatusValid && !c.InMainChain(node.Hash) {
			n++
		}
	}
	return n
}

// checkRecovered checks a reopened chain: the supply invariant and stats, the UTXO set against
// a replay of the main chain, and every index against the main chain.
func checkRecovered(t *testing.T, c *Chain, ref *replayer) {
	t.Helper()
	checkInvariants(t, c)
	set := utxoSet(t, c)
	if err := sameSet(set, ref.replay(t, c)); err != nil {
		t.Fatal("UTXO set differs from a replay of the main chain:", err)
	}
	checkIndexes(t, c, set)
}

// replayer is replaySet with memory: it connects the main chain of a chain block by block into
// a fresh database, and next time only the blocks past the previous tip when that tip is still
// on the main chain (otherwise it starts again from genesis). It never reorganises.
type replayer struct {
	c *Chain
}

func (r *replayer) close() {
	if r.c != nil {
		r.c.Close()
	}
}

func (r *replayer) replay(t *testing.T, c *Chain) map[types.Outpoint]consensus.UtxoEntry {
	t.Helper()
	if r.c != nil && !c.InMainChain(r.c.Tip().Hash) {
		r.close()
		r.c = nil
	}
	if r.c == nil {
		fresh, err := Open(t.TempDir(), params.Regtest, c.opts)
		if err != nil {
			t.Fatal(err)
		}
		r.c = fresh
	}
	for h := r.c.Tip().Height + 1; h <= c.Tip().Height; h++ {
		b, err := c.Block(c.NodeAt(h).Hash)
		if err != nil {
			t.Fatal(err)
		}
		res, err := r.c.ProcessBlock(b)
		if err != nil || !res.IsTip || len(res.Disconnected) != 0 {
			t.Fatalf("replay of height %d: %v", h, err)
		}
	}
	return utxoSet(t, r.c)
}

// checkIndexes checks the height, undo, transaction, address and cluster indexes against the
// main chain and the UTXO set: a torn connect or disconnect would leave them apart.
func checkIndexes(t testing.TB, c *Chain, set map[types.Outpoint]consensus.UtxoEntry) {
	t.Helper()
	tip := c.Tip()
	each := func(pfx byte, f func(k, v []byte)) int {
		it := c.db.NewIterator(util.BytesPrefix([]byte{pfx}), nil)
		defer it.Release()
		n := 0
		for it.Next() {
			f(it.Key(), it.Value())
			n++
		}
		if err := it.Error(); err != nil {
			t.Fatal(err)
		}
		return n
	}
	var bad []string
	heights := each(pfxHeight, func(k, v []byte) {
		h := uint64(0)
		for _, b := range k[1:] {
			h = h<<8 | uint64(b)
		}
		if n := c.NodeAt(h); n == nil || !bytes.Equal(n.Hash[:], v) {
			bad = append(bad, fmt.Sprintf("height index %d -> %x", h, v))
		}
	})
	if heights != int(tip.Height)+1 {
		bad = append(bad, fmt.Sprintf("%d height records for tip %d", heights, tip.Height))
	}
	undos := each(pfxUndo, func(k, _ []byte) {
		var h types.Hash
		copy(h[:], k[1:])
		if !c.InMainChain(h) {
			bad = append(bad, "undo data of a block off the main chain: "+h.String())
		}
	})
	if undos != int(tip.Height) {
		bad = append(bad, fmt.Sprintf("%d undo records for tip %d", undos, tip.Height))
	}
	txs := each(pfxTx, func([]byte, []byte) {})
	if uint64(txs) != c.Stats().TxCount {
		bad = append(bad, fmt.Sprintf("%d tx index records, stats say %d txs", txs, c.Stats().TxCount))
	}
	for h := uint64(0); h <= tip.Height; h++ {
		n := c.NodeAt(h)
		if n.Status != StatusValid {
			bad = append(bad, fmt.Sprintf("main-chain block %d has status %s", h, n.Status))
		}
		if h < tip.Height-min(tip.Height, 10) {
			continue // the tx index of the last blocks is enough (the count covers the rest)
		}
		b, err := c.Block(n.Hash)
		if err != nil {
			t.Fatal(err)
		}
		for i, id := range b.TxIDs() {
			if loc, err := c.TxLocation(id); err != nil || loc != (TxLocation{n.Hash, h, uint32(i)}) {
				bad = append(bad, fmt.Sprintf("tx %s of block %d: %+v %v", id, h, loc, err))
			}
		}
	}
	addrs := each(pfxAddr, func(k, v []byte) {
		var op types.Outpoint
		copy(op.TxID[:], k[33:65])
		op.Index = uint32(k[65])<<24 | uint32(k[66])<<16 | uint32(k[67])<<8 | uint32(k[68])
		e, ok := set[op]
		if !ok || !bytes.Equal(e.PubKeyHash[:], k[1:33]) {
			bad = append(bad, "address index entry without its output: "+op.String())
		} else if !bytes.Equal(v, entryBytes(&e)) {
			bad = append(bad, "address index entry differs from its output: "+op.String())
		}
	})
	if addrs != len(set) {
		bad = append(bad, fmt.Sprintf("%d address index entries for %d outputs", addrs, len(set)))
	}
	clusters := map[types.Hash]uint64{}
	for _, e := range set {
		clusters[e.ClusterID] += e.Value
	}
	stored := each(pfxCluster, func(k, v []byte) {
		var id types.Hash
		copy(id[:], k[1:])
		r := bincode.NewReader(v)
		if bal := r.U64(); r.Finish() != nil || bal != clusters[id] {
			bad = append(bad, fmt.Sprintf("cluster %s: stored %d, outputs hold %d", id, bal, clusters[id]))
		}
	})
	if stored != len(clusters) {
		bad = append(bad, fmt.Sprintf("%d cluster records for %d clusters", stored, len(clusters)))
	}
	if len(bad) > 0 {
		t.Fatalf("indexes disagree with the chain (%d problems), first: %s", len(bad), bad[0])
	}
}

// TestCrashWorker is the child of TestCrashRecovery; it does nothing in a normal run.
func TestCrashWorker(t *testing.T) {
	dir := os.Getenv(crashDirEnv)
	if dir == "" {
		t.Skip("only run by TestCrashRecovery")
	}
	seed, err := strconv.ParseUint(os.Getenv(crashSeedEnv), 10, 64)
	if err != nil {
		t.Fatal(err)
	}
	// Every other worker connects in bulk mode, with its write cache written every few
	// milliseconds and at every reorg, so kills land before, during and between those writes.
	opts := Options{Now: crashClock}
	bulk := seed%2 == 0
	if bulk {
		opts.WriteCacheAge = time.Duration(5+seed%40) * time.Millisecond
	}
	c, err := Open(dir, params.Regtest, opts)
	if err != nil {
		t.Fatal(err)
	}
	if err := c.SetBulk(bulk); err != nil {
		t.Fatal(err)
	}
	w, err := newCrashWorker(c, seed)
	if err != nil {
		t.Fatal(err)
	}
	// The parent kills the worker within a second; the deadline only bounds a stray one.
	for deadline := time.Now().Add(time.Minute); time.Now().Before(deadline); {
		if err := w.step(); err != nil {
			t.Fatal(err)
		}
	}
	t.Fatal("not killed")
}

// crashWorker builds blocks on a chain from a seed: transfers between three keys (some
// spending an output of the same block), now and then a coinbase that burns part of its
// reward, and now and then a fork from up to three blocks back that wins (reorg) or ties.
type crashWorker struct {
	c      *Chain
	rng    *rand.Rand
	keys   []ed25519.PrivateKey
	pkhs   []types.Hash
	pool   []types.Outpoint // outputs that may be unspent; checked against the chain when picked
	inPool map[types.Outpoint]bool
}

func newCrashWorker(c *Chain, seed uint64) (*crashWorker, error) {
	tip := c.Tip()
	w := &crashWorker{c: c, rng: rand.New(rand.NewPCG(seed, tip.Height)), inPool: map[types.Outpoint]bool{}}
	for i := 0; i < 3; i++ {
		k := ed25519.NewKeyFromSeed(bytes.Repeat([]byte{byte(0x40 + i)}, 32))
		w.keys = append(w.keys, k)
		w.pkhs = append(w.pkhs, types.Blake3(k.Public().(ed25519.PublicKey)))
		list, err := c.UtxosByAddress(w.pkhs[i])
		if err != nil {
			return nil, err
		}
		for _, u := range list {
			w.add(u.Outpoint)
		}
	}
	return w, nil
}

func (w *crashWorker) add(op types.Outpoint) {
	if !w.inPool[op] {
		w.inPool[op] = true
		w.pool = append(w.pool, op)
	}
}

type crashInput struct {
	op  types.Outpoint
	e   *consensus.UtxoEntry
	key int
}

// pick finds an output spendable in a block at height on a branch that has the main chain up
// to maxHeight, not in used.
func (w *crashWorker) pick(height, maxHeight uint64, used map[types.Outpoint]bool) (crashInput, bool, error) {
	for try := 0; try < 16 && len(w.pool) > 0; try++ {
		i := w.rng.IntN(len(w.pool))
		op := w.pool[i]
		e, ok, err := w.c.Utxo(op)
		if err != nil {
			return crashInput{}, false, err
		}
		if !ok { // spent (a disconnect puts it back)
			w.pool[i] = w.pool[len(w.pool)-1]
			w.pool = w.pool[:len(w.pool)-1]
			delete(w.inPool, op)
			continue
		}
		if used[op] || e.Height > maxHeight || (e.Coinbase && height < e.Height+consensus.CoinbaseMaturity) {
			continue
		}
		for k, pkh := range w.pkhs {
			if pkh == e.PubKeyHash {
				used[op] = true
				return crashInput{op, e, k}, true, nil
			}
		}
	}
	return crashInput{}, false, nil
}

// transfer builds a signed transfer of the inputs into n outputs, leaving fee.
func (w *crashWorker) transfer(ins []crashInput, fee uint64, n int) *types.Transaction {
	tx := &types.Transaction{Version: 1, Kind: types.KindTransfer}
	var total uint64
	for _, in := range ins {
		tx.Inputs = append(tx.Inputs, types.TxInput{PrevTxID: in.op.TxID, PrevIndex: in.op.Index})
		total += in.e.Value
	}
	v := total - fee
	n = max(1, min(n, int(v)))
	for i := 0; i < n; i++ {
		part := v / uint64(n)
		if i == n-1 {
			part = v - part*uint64(n-1)
		}
		tx.Outputs = append(tx.Outputs, types.TxOutput{Value: part, PubKeyHash: w.pkhs[w.rng.IntN(len(w.pkhs))]})
	}
	msg := types.SigMessage(w.c.net.Magic, tx.TxID())
	for i, in := range ins {
		copy(tx.Inputs[i].PublicKey[:], w.keys[in.key].Public().(ed25519.PublicKey))
		copy(tx.Inputs[i].Signature[:], ed25519.Sign(w.keys[in.key], msg))
	}
	return tx
}

// txs builds up to n transfers for a block at height on the main chain up to maxHeight.
func (w *crashWorker) txs(height, maxHeight uint64, n int, used map[types.Outpoint]bool) ([]*types.Transaction, uint64, error) {
	var txs []*types.Transaction
	var fees uint64
	for i := 0; i < n; i++ {
		var ins []crashInput
		for j := 1 + w.rng.IntN(2); j > 0; j-- {
			in, ok, err := w.pick(height, maxHeight, used)
			if err != nil {
				return nil, 0, err
			}
			if ok {
				ins = append(ins, in)
			}
		}
		if len(ins) == 0 {
			break
		}
		var total, fee uint64
		for _, in := range ins {
			total += in.e.Value
		}
		if total > 10_000 {
			fee = w.rng.Uint64N(1000)
		}
		tx := w.transfer(ins, fee, 1+w.rng.IntN(3))
		txs, fees = append(txs, tx), fees+fee
		if w.rng.IntN(4) == 0 { // spend its first output in the same block
			out := tx.Outputs[0]
			in := crashInput{types.Outpoint{TxID: tx.TxID()}, &consensus.UtxoEntry{Value: out.Value, PubKeyHash: out.PubKeyHash}, 0}
			for k, pkh := range w.pkhs {
				if pkh == out.PubKeyHash {
					in.key = k
				}
			}
			txs = append(txs, w.transfer([]crashInput{in}, 0, 1))
		}
	}
	return txs, fees, nil
}

// block builds and solves a block on parent.
func (w *crashWorker) block(parent *Node, txs []*types.Transaction, fees uint64) (*types.Block, error) {
	h := parent.Height + 1
	reward := consensus.Subsidy(h) + fees // the decay pool stays empty with nominal values
	if w.rng.IntN(10) == 0 {
		reward -= w.rng.Uint64N(1000)
	}
	extra := make([]byte, 8)
	for i := range extra {
		extra[i] = byte(w.rng.Uint32())
	}
	b := miner.NewBlock(miner.Spec{Parent: parent.Hash, Height: h, Target: parent.Header.DifficultyTarget,
		Timestamp: parent.Header.Timestamp + 60, PayTo: w.pkhs[w.rng.IntN(len(w.pkhs))], Reward: reward,
		Extra: extra, Txs: txs})
	return b, miner.Solve(b, 1<<20)
}

// process hands a block to the chain and keeps the pool up to date.
func (w *crashWorker) process(b *types.Block) (*Node, error) {
	res, err := w.c.ProcessBlock(b)
	if err != nil {
		return nil, fmt.Errorf("block %s: %w", b.Hash(), err)
	}
	for _, d := range res.Disconnected {
		for _, tx := range d.Block.Transactions[1:] {
			for i := range tx.Inputs {
				w.add(tx.Inputs[i].Outpoint())
			}
		}
	}
	for _, cb := range res.Connected {
		for i, tx := range cb.Block.Transactions {
			for j := range tx.Outputs {
				w.add(types.Outpoint{TxID: cb.TxIDs[i], Index: uint32(j)})
			}
		}
	}
	n := w.c.NodeByHash(b.Hash())
	if n == nil {
		return nil, errors.New("processed block not in the index")
	}
	return n, nil
}

// step adds one block on the tip, or a fork.
func (w *crashWorker) step() error {
	tip := w.c.Tip()
	if tip.Height > 5 && w.rng.IntN(10) == 0 {
		depth := uint64(1 + w.rng.IntN(3))
		fork := w.c.NodeAt(tip.Height - depth)
		length := depth + 1 // one more than the blocks it replaces: a reorg
		if w.rng.IntN(4) == 0 {
			length = depth // as much work as the main chain: the first seen stays
		}
		used := map[types.Outpoint]bool{}
		parent := fork
		for i := uint64(0); i < length; i++ {
			txs, fees, err := w.txs(parent.Height+1, fork.Height, w.rng.IntN(3), used)
			if err != nil {
				return err
			}
			b, err := w.block(parent, txs, fees)
			if err != nil {
				return err
			}
			if parent, err = w.process(b); err != nil {
				return err
			}
		}
		return nil
	}
	txs, fees, err := w.txs(tip.Height+1, tip.Height, w.rng.IntN(5), map[types.Outpoint]bool{})
	if err != nil {
		return err
	}
	b, err := w.block(tip, txs, fees)
	if err != nil {
		return err
	}
	_, err = w.process(b)
	return err
}

// storeOnly writes a block and its index record the way ProcessBlock does before it connects
// anything, and stops there: what a crash between the two batches leaves behind.
func storeOnly(t *testing.T, c *Chain, b *types.Block) {
	t.Helper()
	parent := c.index[b.Header.PrevHash]
	c.seq++
	n := &Node{Hash: b.Hash(), Header: b.Header, Height: parent.Height + 1, Status: StatusStored, Parent: parent,
		Work: new(big.Int).Add(parent.Work, workOf(b.Header.DifficultyTarget)), Size: uint32(b.SerializeSize()),
		TxCount: uint32(len(b.Transactions)), seq: c.seq}
	batch := new(leveldb.Batch)
	batch.Put(hashKey(pfxBlock, n.Hash), b.Bytes())
	batch.Put(hashKey(pfxIndex, n.Hash), indexRecord(n))
	if err := c.db.Write(batch, nil); err != nil {
		t.Fatal(err)
	}
}

// TestReopenConnectsStoredBranch: a block stored but not connected when the process died is
// connected by Open when it has the most work; an invalid one found that way is marked.
func TestReopenConnectsStoredBranch(t *testing.T) {
	h := newHarness(t)
	h.chain("a", "genesis", 3)
	for i := 1; i <= 3; i++ {
		h.accept(fmt.Sprintf("a%d", i), fmt.Sprintf("a%d", i))
	}
	// Seen first and invalid (the coinbase pays one subunit too much), then a valid sibling
	// with a child.
	h.next("bad4", "a3", nil, func(b *types.Block) {
		b.Transactions[0].Outputs[0].Value++
		b.Header.MerkleRoot = types.MerkleRoot(b.TxIDs())
	})
	h.next("a4", "a3", nil)
	h.next("a5", "a4", nil)
	for _, name := range []string{"bad4", "a4"} {
		storeOnly(t, h.c, h.blocks[name])
	}
	stats := h.c.Stats()
	h.c.Close()
	c, err := Open(h.dir, params.Regtest, h.c.opts)
	if err != nil {
		t.Fatal(err)
	}
	h.c = c
	t.Cleanup(func() { c.Close() })
	h.expectTip("a4")
	if n := c.NodeByHash(h.blocks["bad4"].Hash()); n == nil || n.Status != StatusInvalid {
		t.Fatalf("bad4: %+v", n)
	}
	if c.Stats().Height != stats.Height+1 {
		t.Fatal("a4 not connected")
	}
	h.accept("a5", "a5")
	if err := sameSet(utxoSet(t, c), replaySet(t, c)); err != nil {
		t.Fatal(err)
	}
	checkIndexes(t, c, utxoSet(t, c))
}

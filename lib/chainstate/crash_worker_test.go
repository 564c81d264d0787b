package chainstate

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/cointoolkit/coin/lib/chaingen"
	"github.com/cointoolkit/coin/lib/consensus"
	"github.com/cointoolkit/coin/lib/params"
	"github.com/cointoolkit/coin/lib/types"
)

// crashWorker builds blocks on a chain from a seed: transfers between three wallets and the
// agent wallets (some spending an output of the same block), agent operations on the tip
// (registrations, contracts, fulfilments, refunds, reviews, vouches), now and then a coinbase
// that burns part of its reward, and now and then a fork from up to three blocks back that
// wins (reorg) or ties. Forks carry transfers only, so a reorg undoes the agent operations of
// the blocks it disconnects. The blocks and transactions come from a chaingen generator on
// the chain's tips.
type crashWorker struct {
	c      *Chain
	g      *chaingen.Generator
	rng    *rand.Rand
	pkhs   []types.Hash
	pool   []types.Outpoint // outputs that may be unspent; checked against the chain when picked
	inPool map[types.Outpoint]bool

	agents  []*chaingen.Wallet              // the wallets that may register, in order
	owned   map[types.Hash][]types.Outpoint // outputs by the wallet they pay (may be spent)
	inOwned map[types.Outpoint]bool
	escrows []types.Hash        // contracts that may be open
	done    []types.Hash        // contracts that may be fulfilled and not reviewed twice
	seen    map[types.Hash]bool // contract ids in escrows or done
}

// crashAgents is the number of agent wallets; agent i may register from height
// crashAgentFrom(i), so that registrations go on throughout a long run.
const crashAgents = 32

func crashAgentFrom(i int) uint64 { return 100 + uint64(max(0, i-3))*80 }

// newCrashWorker is a worker on c; its generator panics on a failure (it has no test).
func newCrashWorker(c *Chain, seed uint64) (*crashWorker, error) {
	tip := c.Tip()
	w := &crashWorker{c: c, g: chaingen.New(nil, c.net), rng: rand.New(rand.NewPCG(seed, tip.Height)),
		inPool: map[types.Outpoint]bool{}, owned: map[types.Hash][]types.Outpoint{}, inOwned: map[types.Outpoint]bool{}, seen: map[types.Hash]bool{}}
	for i := 0; i < crashAgents; i++ {
		w.agents = append(w.agents, w.g.Wallet(fmt.Sprintf("crash-agent-%d", i)))
	}
	for i := 0; i < 3+crashAgents; i++ {
		// The wallets follow from their names: a child finds its parent's outputs.
		var pkh types.Hash
		if i < 3 {
			pkh = w.g.Wallet(fmt.Sprintf("crash-%d", i)).PKH
		} else {
			pkh = w.agents[i-3].PKH
		}
		w.pkhs = append(w.pkhs, pkh)
		list, err := c.UtxosByAddress(pkh)
		if err != nil {
			return nil, err
		}
		for _, u := range list {
			w.add(u.Outpoint, pkh)
			if u.Entry.Locked && u.Outpoint.Index == 0 {
				w.contract(u.Outpoint.TxID, false) // an escrow, or a stake (dropped when picked)
			}
		}
	}
	// The contracts fulfilled in the last blocks can still be reviewed.
	for h := tip.Height; h > 0 && h+30 > tip.Height; h-- {
		b, err := c.Block(c.NodeAt(h).Hash)
		if err != nil {
			return nil, err
		}
		w.scan(b)
	}
	return w, nil
}

// add puts op, an output paying pkh, in the pool.
func (w *crashWorker) add(op types.Outpoint, pkh types.Hash) {
	if !w.inPool[op] {
		w.inPool[op] = true
		w.pool = append(w.pool, op)
	}
	if !w.inOwned[op] {
		w.inOwned[op] = true
		w.owned[pkh] = append(w.owned[pkh], op)
	}
}

// contract notes a contract that may be open (or fulfilled, when done).
func (w *crashWorker) contract(id types.Hash, done bool) {
	if done {
		w.done = append(w.done, id)
		return
	}
	if !w.seen[id] {
		w.seen[id] = true
		w.escrows = append(w.escrows, id)
	}
}

// scan notes the contracts a connected block created and fulfilled.
func (w *crashWorker) scan(b *types.Block) {
	for _, tx := range b.Transactions {
		switch tx.Kind {
		case types.KindContractCreate:
			w.contract(tx.TxID(), false)
		case types.KindContractFulfil:
			if p, err := types.DecodeContractRefPayload(tx.Payload); err == nil {
				w.contract(p.ContractID, true)
			}
		}
	}
}

// pick finds an output spendable in a block at height on a branch that has the main chain up
// to maxHeight, not in used.
func (w *crashWorker) pick(height, maxHeight uint64, used map[types.Outpoint]bool) (chaingen.Output, bool, error) {
	for try := 0; try < 16 && len(w.pool) > 0; try++ {
		i := w.rng.IntN(len(w.pool))
		op := w.pool[i]
		e, ok, err := w.c.Utxo(op)
		if err != nil {
			return chaingen.Output{}, false, err
		}
		if !ok || e.Locked { // spent (a disconnect puts it back), or a stake or an escrow
			w.pool[i] = w.pool[len(w.pool)-1]
			w.pool = w.pool[:len(w.pool)-1]
			delete(w.inPool, op)
			continue
		}
		if used[op] || e.Height > maxHeight || (e.Coinbase && height < e.Height+consensus.CoinbaseMaturity) ||
			!slices.Contains(w.pkhs, e.PubKeyHash) {
			continue
		}
		used[op] = true
		return chaingen.Output{Outpoint: op, Value: e.Value, PKH: e.PubKeyHash, Coinbase: e.Coinbase, Height: e.Height}, true, nil
	}
	return chaingen.Output{}, false, nil
}

// transfer builds a transfer of the inputs (each signed by its owner) into n outputs paying
// random wallets, leaving fee.
func (w *crashWorker) transfer(ins []chaingen.Output, fee uint64, n int) *types.Transaction {
	var total uint64
	for _, in := range ins {
		total += in.Value
	}
	v := total - fee
	n = max(1, min(n, int(v)))
	b := w.g.Spend(ins...).Fee(fee)
	for i := 0; i < n; i++ {
		part := v / uint64(n)
		if i == n-1 {
			part = v - part*uint64(n-1)
		}
		b.Pay(w.pkhs[w.rng.IntN(len(w.pkhs))], part)
	}
	return b.Tx()
}

// txs builds up to n transfers for a block at height on the main chain up to maxHeight.
func (w *crashWorker) txs(height, maxHeight uint64, n int, used map[types.Outpoint]bool) ([]*types.Transaction, error) {
	var txs []*types.Transaction
	for i := 0; i < n; i++ {
		var ins []chaingen.Output
		for j := 1 + w.rng.IntN(2); j > 0; j-- {
			in, ok, err := w.pick(height, maxHeight, used)
			if err != nil {
				return nil, err
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
			total += in.Value
		}
		if total > 10_000 {
			fee = w.rng.Uint64N(1000)
		}
		tx := w.transfer(ins, fee, 1+w.rng.IntN(3))
		txs = append(txs, tx)
		if w.rng.IntN(4) == 0 { // spend its first output in the same block
			txs = append(txs, w.transfer([]chaingen.Output{chaingen.OutputOf(tx, 0)}, 0, 1))
		}
	}
	return txs, nil
}

// block builds and solves a block on parent paying a random wallet the subsidy and the fees
// (the decay pool stays empty with nominal values), now and then less a burned part.
func (w *crashWorker) block(parent *BlockNode, txs []*types.Transaction) *types.Block {
	extra := make([]byte, 8)
	for i := range extra {
		extra[i] = byte(w.rng.Uint32())
	}
	mungers := []chaingen.Munger{chaingen.PayTo(w.pkhs[w.rng.IntN(len(w.pkhs))]), chaingen.Extra(extra)}
	if w.rng.IntN(10) == 0 {
		mungers = append(mungers, chaingen.Burn(w.rng.Uint64N(1000)))
	}
	return w.g.NextOn("", chaingen.Template{Parent: parent.Hash, Height: parent.Height + 1,
		Target: parent.Header.DifficultyTarget, Timestamp: parent.Header.Timestamp + 60}, txs, mungers...)
}

// process hands a block to the chain and keeps the pool up to date.
func (w *crashWorker) process(b *types.Block) (*BlockNode, error) {
	res, err := w.c.ProcessBlock(context.Background(), b)
	if err != nil {
		return nil, fmt.Errorf("block %s: %w", b.Hash(), err)
	}
	for _, d := range res.Disconnected {
		for _, tx := range d.Block.Transactions[1:] {
			switch tx.Kind {
			case types.KindContractFulfil, types.KindContractRefund, types.KindReview:
				// The contract is open (or fulfilled and not reviewed) again on the new tip,
				// unless the new branch closes it too.
				var id types.Hash
				if p, err := types.DecodeContractRefPayload(tx.Payload); err == nil {
					id = p.ContractID
				} else if p, err := types.DecodeReviewPayload(tx.Payload); err == nil {
					id = p.ContractID
				}
				w.contract(id, tx.Kind == types.KindReview)
			}
			for i := range tx.Inputs {
				op := tx.Inputs[i].Outpoint()
				if e, ok, err := w.c.Utxo(op); err != nil {
					return nil, err
				} else if ok { // unspent again (else a block of the new branch spends it too)
					w.add(op, e.PubKeyHash)
				}
			}
		}
	}
	for _, cb := range res.Connected {
		for i, tx := range cb.Block.Transactions {
			for j, o := range tx.Outputs {
				w.add(types.Outpoint{TxID: cb.TxIDs[i], Index: uint32(j)}, o.PubKeyHash)
			}
		}
		w.scan(cb.Block)
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
			txs, err := w.txs(parent.Height+1, fork.Height, w.rng.IntN(3), used)
			if err != nil {
				return err
			}
			if parent, err = w.process(w.block(parent, txs)); err != nil {
				return err
			}
		}
		return nil
	}
	used := map[types.Outpoint]bool{}
	ops, err := w.agentOps(tip.Height+1, w.rng.IntN(5), used)
	if err != nil {
		return err
	}
	txs, err := w.txs(tip.Height+1, tip.Height, w.rng.IntN(5), used)
	if err != nil {
		return err
	}
	_, err = w.process(w.block(tip, append(ops, txs...)))
	return err
}

// coinsOf picks unlocked outputs of owner spendable in a block at height on the tip, not in
// used, until they hold need (at most 20 of them); ok is false when owner has too little.
func (w *crashWorker) coinsOf(owner types.Hash, height, need uint64, used map[types.Outpoint]bool) ([]chaingen.Output, bool, error) {
	list := w.owned[owner]
	var ins []chaingen.Output
	var total uint64
	for i := 0; i < len(list) && len(ins) < 20; {
		op := list[i]
		e, ok, err := w.c.Utxo(op)
		if err != nil {
			return nil, false, err
		}
		if !ok || e.Locked { // spent, a stake or an escrow: forget it (a disconnect adds it back)
			list[i] = list[len(list)-1]
			list = list[:len(list)-1]
			delete(w.inOwned, op)
			continue
		}
		i++
		if used[op] || (e.Coinbase && height < e.Height+consensus.CoinbaseMaturity) {
			continue
		}
		ins = append(ins, chaingen.Output{Outpoint: op, Value: e.Value, PKH: e.PubKeyHash, Coinbase: e.Coinbase, Height: e.Height})
		if total += e.Value; total >= need {
			break
		}
	}
	w.owned[owner] = list
	if total < need || len(ins) == 0 {
		return nil, false, nil
	}
	for _, in := range ins {
		used[in.Outpoint] = true
	}
	return ins, true, nil
}

// agentOps builds up to n agent operations for a block at height on the tip, each acting on
// the tip's conduct state: no two of them involve the same agent (so their order in the
// block does not matter) and none spends an output in used.
func (w *crashWorker) agentOps(height uint64, n int, used map[types.Outpoint]bool) ([]*types.Transaction, error) {
	conduct := w.c.Conduct()
	var registered, waiting []*chaingen.Wallet
	wallets := map[types.Hash]*chaingen.Wallet{}
	scores := map[types.Hash]uint32{}
	for i, a := range w.agents {
		wallets[a.PKH] = a
		rec, ok, err := conduct.Agent(a.PKH)
		switch {
		case err != nil:
			return nil, err
		case ok:
			registered = append(registered, a)
			scores[a.PKH] = rec.Score
		case height >= crashAgentFrom(i):
			waiting = append(waiting, a)
		}
	}
	touched := map[types.Hash]bool{}
	free := func(pkhs ...types.Hash) bool {
		for _, p := range pkhs {
			if touched[p] {
				return false
			}
		}
		return true
	}
	other := func(not types.Hash) *chaingen.Wallet {
		for try := 0; try < 4; try++ {
			if a := registered[w.rng.IntN(len(registered))]; a.PKH != not {
				return a
			}
		}
		return nil
	}
	fee := func() uint64 { return w.rng.Uint64N(500) }
	var txs []*types.Transaction
	for i := 0; i < n; i++ {
		var tx *types.Transaction
		var who []types.Hash
		switch k := w.rng.IntN(10); {
		case k < 2: // registration
			if len(waiting) == 0 {
				continue
			}
			a := waiting[w.rng.IntN(len(waiting))]
			f := fee()
			if !free(a.PKH) {
				continue
			}
			ins, ok, err := w.coinsOf(a.PKH, height, consensus.AgentStake+f, used)
			if err != nil {
				return nil, err
			}
			if !ok {
				continue
			}
			tx = w.g.Spend(ins...).Kind(types.KindAgentRegister, nil).Pay(a.PKH, consensus.AgentStake).Fee(f).Tx()
			who = []types.Hash{a.PKH}
		case k < 5: // a contract, some of them expiring soon enough to be refunded
			if len(registered) < 2 {
				continue
			}
			a := registered[w.rng.IntN(len(registered))]
			cp := other(a.PKH)
			if cp == nil || !free(a.PKH, cp.PKH) {
				continue
			}
			value, f := consensus.MinEscrow+w.rng.Uint64N(50_000), fee()
			expiry := consensus.MinExpiry + w.rng.IntN(200)
			if w.rng.IntN(3) == 0 {
				expiry = consensus.MinExpiry + w.rng.IntN(5)
			}
			ins, ok, err := w.coinsOf(a.PKH, height, value+f, used)
			if err != nil {
				return nil, err
			}
			if !ok {
				continue
			}
			payload := types.ContractCreatePayload{Counterparty: cp.PKH, ExpiryBlocks: uint32(expiry)}.Bytes()
			tx = w.g.Spend(ins...).Kind(types.KindContractCreate, payload).Pay(cp.PKH, value).Fee(f).Tx()
			who = []types.Hash{a.PKH, cp.PKH}
		case k < 8: // the fulfilment of an open contract, or the refund of an expired one
			if len(w.escrows) == 0 {
				continue
			}
			j := w.rng.IntN(len(w.escrows))
			id := w.escrows[j]
			rec, ok, err := conduct.Contract(id)
			if err != nil {
				return nil, err
			}
			if !ok || rec.Status != consensus.ContractOpen {
				w.escrows[j] = w.escrows[len(w.escrows)-1]
				w.escrows = w.escrows[:len(w.escrows)-1]
				delete(w.seen, id)
				continue
			}
			op := types.Outpoint{TxID: id}
			e, ok, err := w.c.Utxo(op)
			if err != nil {
				return nil, err
			}
			if !ok || used[op] || !free(rec.Initiator, rec.Counterparty) {
				continue
			}
			used[op] = true
			escrow := chaingen.Output{Outpoint: op, Value: e.Value, PKH: e.PubKeyHash, Height: e.Height}
			payload := types.ContractRefPayload{ContractID: id}.Bytes()
			f := w.rng.Uint64N(min(500, e.Value-1))
			if height < rec.ExpiresAt {
				tx = w.g.Spend(escrow).Kind(types.KindContractFulfil, payload).Fee(f).Tx()
			} else {
				tx = w.g.Spend(escrow).Kind(types.KindContractRefund, payload).Change(rec.Initiator, 1).Fee(f).
					SignedBy(wallets[rec.Initiator]).Tx()
			}
			who = []types.Hash{rec.Initiator, rec.Counterparty}
		case k < 9: // a review of a fulfilled contract by one of its participants
			if len(w.done) == 0 {
				continue
			}
			j := w.rng.IntN(len(w.done))
			id := w.done[j]
			rec, ok, err := conduct.Contract(id)
			if err != nil {
				return nil, err
			}
			all := uint8(consensus.ReviewedByInitiator | consensus.ReviewedByCounterparty)
			if !ok || rec.Status != consensus.ContractFulfilled || rec.Reviewed == all {
				w.done[j] = w.done[len(w.done)-1]
				w.done = w.done[:len(w.done)-1]
				continue
			}
			if !free(rec.Initiator, rec.Counterparty) {
				continue
			}
			reviewer, subject := rec.Initiator, rec.Counterparty
			if rec.Reviewed&consensus.ReviewedByInitiator != 0 || rec.Reviewed == 0 && w.rng.IntN(2) == 0 {
				reviewer, subject = subject, reviewer
			}
			f := fee()
			ins, ok, err := w.coinsOf(reviewer, height, f+1, used)
			if err != nil {
				return nil, err
			}
			if !ok {
				continue
			}
			payload := types.ReviewPayload{ContractID: id, Subject: subject, Score: uint8(consensus.MinReviewScore + w.rng.IntN(10))}.Bytes()
			tx = w.g.Spend(ins...).Kind(types.KindReview, payload).Fee(f).Tx()
			who = []types.Hash{reviewer, subject}
		default: // a vouch, by an agent that reached the score for it
			var vouchers []*chaingen.Wallet
			for _, a := range registered {
				if scores[a.PKH] >= consensus.VouchMinScore {
					vouchers = append(vouchers, a)
				}
			}
			if len(vouchers) == 0 {
				continue
			}
			a := vouchers[w.rng.IntN(len(vouchers))]
			target := other(a.PKH)
			if target == nil || !free(a.PKH, target.PKH) {
				continue
			}
			if done, err := conduct.Vouched(a.PKH, target.PKH); err != nil || done {
				if err != nil {
					return nil, err
				}
				continue
			}
			f := fee()
			ins, ok, err := w.coinsOf(a.PKH, height, f+1, used)
			if err != nil {
				return nil, err
			}
			if !ok {
				continue
			}
			tx = w.g.Spend(ins...).Kind(types.KindVouch, types.VouchPayload{Target: target.PKH}.Bytes()).Fee(f).Tx()
			who = []types.Hash{a.PKH, target.PKH}
		}
		for _, p := range who {
			touched[p] = true
		}
		txs = append(txs, tx)
	}
	return txs, nil
}

// workedChain opens a chain with the crash test's options in a new temporary directory
// (closed when the test ends) and grows it with a crash worker of seed to height; it returns
// the worker too.
func workedChain(t *testing.T, seed, height uint64) (*Chain, *crashWorker) {
	t.Helper()
	c, err := Open(context.Background(), t.TempDir(), params.Regtest, Options{Now: crashClock, Values: consensus.NominalValue{}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	w, err := newCrashWorker(c, seed)
	if err != nil {
		t.Fatal(err)
	}
	for c.Tip().Height < height {
		if err := w.step(); err != nil {
			t.Fatal(err)
		}
	}
	return c, w
}

// replayMain gives dst the blocks of src's main chain above genesis, lowest first.
func replayMain(t *testing.T, src, dst *Chain) {
	t.Helper()
	for h := uint64(1); h <= src.Tip().Height; h++ {
		b, err := src.Block(src.NodeAt(h).Hash)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := dst.ProcessBlock(context.Background(), b); err != nil {
			t.Fatal(err)
		}
	}
}

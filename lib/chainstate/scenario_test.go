package chainstate

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cointoolkit/coin/lib/blockfile"
	"github.com/cointoolkit/coin/lib/chaingen"
	"github.com/cointoolkit/coin/lib/consensus"
	"github.com/cointoolkit/coin/lib/params"
	"github.com/cointoolkit/coin/lib/types"
	"github.com/syndtr/goleveldb/leveldb/util"
)

// The scenario tests are tables of chaingen steps in the manner of btcd's fullblocktests:
// every step builds (or re-submits) one named block and says what ProcessBlock must do with
// it and which block must be the tip afterwards. After every rejection the runner here checks
// that nothing but, for a block that failed on connect, its own data and invalid mark was
// written.

// stored says what a rejected block leaves in the database.
type stored int

const (
	storedNothing       stored = iota // sanity, header-context and witness failures: nothing at all
	storedInvalid                     // connect failures: the block, marked invalid
	storedAsIs                        // a block already known (duplicate, known invalid): no change
	storedInvalidParent               // a block whose reorg failed at an ancestor (named in marks)
)

// scenarioStep is a chaingen step with what a rejection may leave in the database.
type scenarioStep struct {
	chaingen.Step
	store stored // for rejections
	// forgets names blocks stored earlier that the rejection removes (a tampered side
	// branch found out on a reorg attempt).
	forgets []string
	// marks names stored blocks the rejection marks invalid (storedInvalidParent).
	marks []string
}

// step is a step whose rejection (if any) stores nothing.
func step(st chaingen.Step) scenarioStep { return scenarioStep{Step: st} }

// invalid is a rejection on connect: the block is stored, marked invalid.
func invalid(st chaingen.Step) scenarioStep { return scenarioStep{Step: st, store: storedInvalid} }

// steps wraps chaingen steps whose rejections store nothing.
func steps(sts ...chaingen.Step) []scenarioStep {
	out := make([]scenarioStep, len(sts))
	for i, st := range sts {
		out[i] = step(st)
	}
	return out
}

// resubmit is a step that submits an already built block again.
func resubmit(name string, kind consensus.ErrorKind, tip string) scenarioStep {
	return scenarioStep{Step: chaingen.Reject(name, kind, tip), store: storedAsIs}
}

type scenario struct {
	*harness
	now atomic.Int64 // the chain's clock, unix seconds
}

func newScenario(t *testing.T, net *params.Network, now int64) *scenario {
	s := &scenario{}
	s.now.Store(now)
	dir := t.TempDir()
	c, err := Open(context.Background(), dir, net, Options{Now: func() time.Time { return time.Unix(s.now.Load(), 0) }, Values: consensus.NominalValue{}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	s.harness = &harness{Generator: chaingen.New(t, net), t: t, c: c, dir: dir}
	return s
}

// run plays the steps in order.
func (s *scenario) run(steps []scenarioStep) {
	t := s.t.(*testing.T)
	t.Helper()
	for i, st := range steps {
		if st.Expect == chaingen.ExpectAccept || st.Expect == chaingen.ExpectTip {
			if err := s.Play(&chainRunner{c: s.c}, st.Step); err != nil {
				t.Fatalf("step %d: %v", i, err)
			}
			checkInvariants(t, s.c)
			continue
		}
		if st.Build != nil {
			st.Build(s.Generator)
		}
		s.rejectStep(i, st)
		if st.Check != nil {
			st.Check(s.Generator)
		}
	}
}

func (s *scenario) rejectStep(i int, st scenarioStep) {
	t := s.t.(*testing.T)
	t.Helper()
	if !s.Has(st.Block) {
		t.Fatalf("step %d: no block %q", i, st.Block)
	}
	hash := s.Block(st.Block).Hash()
	known := s.c.NodeByHash(hash) != nil
	stats, tip := s.c.Stats(), s.c.Tip()
	before := dbSnapshot(t, s.c)
	r := &chainRunner{c: s.c}
	play := st.Step
	play.Build, play.Check = nil, nil
	if err := s.Play(r, play); err != nil {
		t.Fatalf("step %d: %v", i, err)
	}
	if !consensus.IsRuleError(r.err) {
		t.Fatalf("step %d: block %s: %v is not a consensus.RuleError", i, st.Block, r.err)
	}
	if res := r.res; res != nil {
		// A failed reorg attempt reconnects what it disconnected, in reverse order.
		ok := !res.IsTip && len(res.Connected) == len(res.Disconnected)
		for j := 0; ok && j < len(res.Connected); j++ {
			ok = res.Connected[j].Hash == res.Disconnected[len(res.Disconnected)-1-j].Hash
		}
		if !ok {
			t.Fatalf("step %d: block %s: rejected block moved the chain: %+v", i, st.Block, res)
		}
	}
	checkInvariants(t, s.c)
	if s.c.Tip() != tip || s.c.Stats() != stats {
		t.Fatalf("step %d: block %s: tip or stats changed by a rejected block", i, st.Block)
	}
	after := dbSnapshot(t, s.c)
	// A block that failed on connect keeps its data and its index record (marked invalid).
	// A block appended to the blk files and then forgotten moves their end and nothing else:
	// its bytes stay there, referred to by no key.
	allowed := map[string]bool{keyBlkEnd: true, keyRevEnd: true}
	switch st.store {
	case storedNothing:
		if n := s.c.NodeByHash(hash); n != nil {
			t.Fatalf("step %d: block %s was stored (status %s)", i, st.Block, n.status)
		}
		if _, err := s.c.Block(hash); !errors.Is(err, ErrNotFound) {
			t.Fatalf("step %d: block %s: data stored (%v)", i, st.Block, err)
		}
	case storedInvalid:
		n := s.c.NodeByHash(hash)
		if n == nil || n.status != StatusInvalid {
			t.Fatalf("step %d: block %s: want it stored as invalid, got %+v", i, st.Block, n)
		}
		if known {
			t.Fatalf("step %d: block %s was known before", i, st.Block)
		}
		allowed[string(hashKey(pfxBlockAt, hash))] = true
		allowed[string(hashKey(pfxIndex, hash))] = true
	case storedInvalidParent:
		if n := s.c.NodeByHash(hash); n == nil || n.status != StatusInvalidParent || known {
			t.Fatalf("step %d: block %s: want it stored as invalid-parent, got %+v", i, st.Block, n)
		}
		allowed[string(hashKey(pfxBlockAt, hash))] = true
		allowed[string(hashKey(pfxIndex, hash))] = true
		for _, name := range st.marks {
			if n := s.c.NodeByHash(s.Block(name).Hash()); n == nil || n.status != StatusInvalid {
				t.Fatalf("step %d: block %s: %s not marked invalid: %+v", i, st.Block, name, n)
			}
			allowed[string(hashKey(pfxIndex, s.Block(name).Hash()))] = true
		}
	case storedAsIs:
		if !known {
			t.Fatalf("step %d: block %s was not known before", i, st.Block)
		}
	}
	for k, v := range after {
		if old, ok := before[k]; (!ok || old != v) && !allowed[k] {
			t.Fatalf("step %d: block %s: rejection wrote key %x", i, st.Block, k)
		}
	}
	for _, name := range st.forgets {
		h := s.Block(name).Hash()
		if s.c.NodeByHash(h) != nil {
			t.Fatalf("step %d: block %s: %s still indexed", i, st.Block, name)
		}
		delete(before, string(hashKey(pfxBlockAt, h)))
		delete(before, string(hashKey(pfxIndex, h)))
	}
	for k := range before {
		if _, ok := after[k]; !ok {
			t.Fatalf("step %d: block %s: rejection deleted key %x", i, st.Block, k)
		}
	}
}

// dbSnapshot is every key and value of the database, after writing the write cache; a
// block's or undo data's position in the files stands for the bytes there (undo data
// written again after a failed reorg is the same at another place).
func dbSnapshot(t testing.TB, c *Chain) map[string]string {
	t.Helper()
	flushForTest(t, c)
	out := map[string]string{}
	it := c.db.NewIterator(&util.Range{}, nil)
	defer it.Release()
	for it.Next() {
		k, v := it.Key(), it.Value()
		if (k[0] == pfxBlockAt || k[0] == pfxUndoAt) && len(k) == 33 {
			p, err := blockfile.DecodePos(v)
			if err == nil && k[0] == pfxBlockAt {
				v, err = c.blk.Read(p)
			} else if err == nil {
				v, err = c.rev.Read(p)
			}
			if err != nil {
				t.Fatalf("%x: %v", k, err)
			}
		}
		out[string(k)] = string(v)
	}
	if err := it.Error(); err != nil {
		t.Fatal(err)
	}
	return out
}

// mtp is the median time past a child of the named block must exceed.
func (s *scenario) mtp(name string) uint64 {
	return medianTimePast(s.c.NodeByHash(s.Block(name).Hash()))
}

func (s *scenario) unspent(op types.Outpoint) bool {
	_, ok, err := s.c.Utxo(op)
	if err != nil {
		s.t.Fatal(err)
	}
	return ok
}

// bigBlockTxs returns transfers of the coinbases of the named blocks into as many 1,000-subunit
// outputs as make the block at least size bytes with an empty coinbase extra; the change of
// the last one absorbs the rest.
func (s *scenario) bigBlockTxs(from []string) []*types.Transaction {
	var txs []*types.Transaction
	pkh := s.Miner().PKH
	for _, name := range from {
		b := s.Spend(s.Coinbase(name)).Change(pkh, 1)
		for i := 0; i < consensus.MaxTxOutputs-1; i++ {
			b.Pay(pkh, 1000)
		}
		txs = append(txs, b.Tx())
	}
	return txs
}

// sizeTo trims outputs off the last transaction and pads the coinbase extra until the block
// is exactly size bytes; it keeps the block valid (the change output takes what is trimmed).
func sizeTo(t testing.TB, s *scenario, b *types.Block, size int) {
	t.Helper()
	cb := b.Transactions[0]
	p, err := types.DecodeCoinbasePayload(cb.Payload)
	if err != nil {
		t.Fatal(err)
	}
	p.Extra = nil
	cb.Payload = p.Bytes()
	last := b.Transactions[len(b.Transactions)-1]
	for b.SerializeSize() > size {
		n := len(last.Outputs)
		last.Outputs[n-1].Value += last.Outputs[n-2].Value
		last.Outputs = append(last.Outputs[:n-2], last.Outputs[n-1])
	}
	p.Extra = make([]byte, size-b.SerializeSize())
	cb.Payload = p.Bytes()
	if got := b.SerializeSize(); got != size || len(p.Extra) > types.MaxCoinbaseExtra {
		t.Fatalf("block is %d bytes (extra %d), want %d", got, len(p.Extra), size)
	}
	s.Sign(last)
	chaingen.FixMerkle(b)
}

package chainstate

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math/rand"
	"os"
	"slices"
	"sort"
	"strconv"
	"testing"
	"time"

	"github.com/cointoolkit/coin/lib/amount"
	"github.com/cointoolkit/coin/lib/bincode"
	"github.com/cointoolkit/coin/lib/chaingen"
	"github.com/cointoolkit/coin/lib/consensus"
	"github.com/cointoolkit/coin/lib/params"
	"github.com/cointoolkit/coin/lib/types"
	"lukechampine.com/blake3"
)

// A model-based test of Proof of Conduct: random sequences of agent operations, valid and
// invalid, with reorgs, run against the real chain and against condModel below, a small
// in-memory model written from protocol §9, 9.1 and 9.2 alone (it does not call CheckConduct,
// the score arithmetic or any other conduct code of lib/consensus). After every block the
// records, counts, contract states, the stats and the conduct hash must agree.
//
// COIN_MODEL_SEED picks another seed, COIN_MODEL_BLOCKS another length.
//
// Same-owner damping (protocol §9.2, clusters) is left out of the model: the test never spends
// two wallets' outputs together, so every address stays its own cluster.

// ---- The model ----------------------------------------------------------------------------

type mAgent struct {
	score                                    uint32
	completed, failed, vouchesIn, vouchesOut uint64
	reviewsIn, reviewSum, regHeight, regTime uint64
	stake                                    types.Outpoint
}

const (
	mOpen      = 0
	mFulfilled = 1
	mExpired   = 2
)

type mContract struct {
	id, initiator, counterparty types.Hash
	value, created, expiresAt   uint64
	status                      uint8
	closedBy                    types.Hash
	reviewed                    uint8 // bit 0 the initiator reviewed, bit 1 the counterparty
}

// mCoin is an unspent output the model knows: who it pays and whether it is locked.
type mCoin struct {
	value    uint64
	owner    types.Hash
	coinbase uint64 // the height of a coinbase output, 0 otherwise
	stake    bool   // AgentRegister output 0
	escrow   bool   // ContractCreate output 0 (the contract id is the outpoint's txid)
}

type pair [2]types.Hash

// condModel is Proof of Conduct as protocol §9 states it: plain maps and plain arithmetic.
type condModel struct {
	agents    map[types.Hash]mAgent
	contracts map[types.Hash]mContract
	vouches   map[pair]bool   // voucher, target
	fulfilled map[pair]uint64 // lower, higher address: fulfilled contracts between the two
	reviews   map[pair]uint64 // reviewer, subject: reviews given
	coins     map[types.Outpoint]mCoin
}

func newCondModel() *condModel {
	return &condModel{agents: map[types.Hash]mAgent{}, contracts: map[types.Hash]mContract{},
		vouches: map[pair]bool{}, fulfilled: map[pair]uint64{}, reviews: map[pair]uint64{},
		coins: map[types.Outpoint]mCoin{}}
}

func cloneMap[K comparable, V any](m map[K]V) map[K]V {
	out := make(map[K]V, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}

func (m *condModel) clone() *condModel {
	return &condModel{agents: cloneMap(m.agents), contracts: cloneMap(m.contracts), vouches: cloneMap(m.vouches),
		fulfilled: cloneMap(m.fulfilled), reviews: cloneMap(m.reviews), coins: cloneMap(m.coins)}
}

// mChange is protocol §9's score change: for d > 0, s + d×(1000−s)/500; for d < 0,
// s − |d|×s/500; integer division, clamped to 0…1000.
func mChange(s uint32, d int64) uint32 {
	v := int64(s)
	if d > 0 {
		v = v + d*(1000-v)/500
	}
	if d < 0 {
		v = v - (-d)*v/500
	}
	if v < 0 {
		v = 0
	}
	if v > 1000 {
		v = 1000
	}
	return uint32(v)
}

// mDamp is protocol §9.2: the k-th repetition counts d / 2^(k−1) (integer division).
func mDamp(d int64, k uint64) int64 {
	div := int64(1)
	for i := uint64(1); i < k; i++ {
		div *= 2
		if div > 1<<40 {
			return 0
		}
	}
	return d / div
}

func lowHigh(a, b types.Hash) pair {
	if bytes.Compare(a[:], b[:]) > 0 {
		return pair{b, a}
	}
	return pair{a, b}
}

func isAgentKind(k types.TxKind) bool { return k >= types.KindAgentRegister && k <= types.KindReview }

// apply applies tx at height h (block time ts) and returns "" or the rule it breaks; a
// refused transaction leaves the model as it was only if the caller applies it to a clone,
// which it does (the model is changed only after every check passed).
func (m *condModel) apply(tx *types.Transaction, h, ts uint64) consensus.ErrorKind {
	txid := tx.TxID()
	key := func(i int) types.Hash { return types.Blake3(tx.Inputs[i].PublicKey[:]) }
	var actor types.Hash
	var refID types.Hash // the contract a fulfil or refund names
	// Context-free shape of the agent kinds (protocol §9 table, 9.1: every input is the actor's).
	if isAgentKind(tx.Kind) {
		actor = key(0)
		for i := range tx.Inputs {
			if key(i) != actor {
				return consensus.ErrForeignInput
			}
		}
		switch tx.Kind {
		case types.KindAgentRegister:
			if tx.Outputs[0].Value != 50*amount.Coin || tx.Outputs[0].PubKeyHash != actor {
				return consensus.ErrBadStake
			}
		case types.KindVouch:
			p, _ := types.DecodeVouchPayload(tx.Payload)
			if p.Target == actor {
				return consensus.ErrSelfTarget
			}
		case types.KindContractCreate:
			p, _ := types.DecodeContractCreatePayload(tx.Payload)
			if p.Counterparty == actor {
				return consensus.ErrSelfTarget
			}
			if p.ExpiryBlocks < 10 || p.ExpiryBlocks > 525_960 {
				return consensus.ErrInvalidExpiry
			}
			if tx.Outputs[0].PubKeyHash != p.Counterparty || tx.Outputs[0].Value < 1000 {
				return consensus.ErrBadEscrow
			}
		case types.KindContractFulfil, types.KindContractRefund:
			p, _ := types.DecodeContractRefPayload(tx.Payload)
			refID = p.ContractID
		case types.KindReview:
			p, _ := types.DecodeReviewPayload(tx.Payload)
			if p.Score < 1 || p.Score > 10 {
				return consensus.ErrInvalidScore
			}
		}
	}
	// Inputs (protocol §5 and 9.1's locked outputs).
	for i := range tx.Inputs {
		op := tx.Inputs[i].Outpoint()
		c, ok := m.coins[op]
		if !ok {
			return consensus.ErrMissingInputs
		}
		switch {
		case c.stake:
			return consensus.ErrLockedOutput
		case c.escrow:
			own := i == 0 && refID == op.TxID
			fulfil := own && tx.Kind == types.KindContractFulfil && key(0) == c.owner
			refund := own && tx.Kind == types.KindContractRefund && key(0) == m.contracts[op.TxID].initiator
			if !fulfil && !refund {
				return consensus.ErrLockedOutput
			}
		default:
			if key(i) != c.owner {
				return consensus.ErrPubKeyMismatch
			}
		}
	}
	// Against the conduct state (protocol §9 table).
	switch tx.Kind {
	case types.KindAgentRegister:
		if _, ok := m.agents[actor]; ok {
			return consensus.ErrAlreadyRegistered
		}
		m.agents[actor] = mAgent{score: 500, regHeight: h, regTime: ts, stake: types.Outpoint{TxID: txid, Index: 0}}

	case types.KindVouch:
		p, _ := types.DecodeVouchPayload(tx.Payload)
		a, ok := m.agents[actor]
		if !ok {
			return consensus.ErrNotAnAgent
		}
		if a.score < 700 {
			return consensus.ErrScoreTooLow
		}
		tg, ok := m.agents[p.Target]
		if !ok {
			return consensus.ErrAgentNotFound
		}
		if m.vouches[pair{actor, p.Target}] {
			return consensus.ErrAlreadyVouched
		}
		m.vouches[pair{actor, p.Target}] = true
		a.vouchesOut++
		m.agents[actor] = a
		tg.vouchesIn++
		tg.score = mChange(tg.score, 30)
		m.agents[p.Target] = tg

	case types.KindContractCreate:
		p, _ := types.DecodeContractCreatePayload(tx.Payload)
		if _, ok := m.agents[actor]; !ok {
			return consensus.ErrNotAnAgent
		}
		if _, ok := m.agents[p.Counterparty]; !ok {
			return consensus.ErrAgentNotFound
		}
		m.contracts[txid] = mContract{id: txid, initiator: actor, counterparty: p.Counterparty,
			value: tx.Outputs[0].Value, created: h, expiresAt: h + uint64(p.ExpiryBlocks), status: mOpen}

	case types.KindContractFulfil, types.KindContractRefund:
		k, ok := m.contracts[refID]
		if !ok {
			return consensus.ErrContractNotFound
		}
		if k.status != mOpen {
			return consensus.ErrContractNotOpen
		}
		if tx.Inputs[0].Outpoint() != (types.Outpoint{TxID: refID, Index: 0}) {
			return consensus.ErrEscrowNotSpent
		}
		if tx.Kind == types.KindContractFulfil {
			if h >= k.expiresAt {
				return consensus.ErrContractExpired
			}
			if actor != k.counterparty {
				return consensus.ErrNotCounterparty
			}
			n := m.fulfilled[lowHigh(k.initiator, k.counterparty)] + 1
			m.fulfilled[lowHigh(k.initiator, k.counterparty)] = n
			cp, in := m.agents[k.counterparty], m.agents[k.initiator]
			cp.completed++
			in.completed++
			cp.score = mChange(cp.score, mDamp(20, n))
			in.score = mChange(in.score, mDamp(10, n))
			m.agents[k.counterparty], m.agents[k.initiator] = cp, in
			k.status = mFulfilled
		} else {
			if actor != k.initiator {
				return consensus.ErrNotInitiator
			}
			if h < k.expiresAt {
				return consensus.ErrContractNotExpired
			}
			for _, o := range tx.Outputs {
				if o.PubKeyHash != k.initiator {
					return consensus.ErrRefundOutputs
				}
			}
			cp := m.agents[k.counterparty]
			cp.failed++
			cp.score = mChange(cp.score, -50)
			m.agents[k.counterparty] = cp
			k.status = mExpired
		}
		k.closedBy = txid
		m.contracts[refID] = k

	case types.KindReview:
		p, _ := types.DecodeReviewPayload(tx.Payload)
		k, ok := m.contracts[p.ContractID]
		if !ok {
			return consensus.ErrContractNotFound
		}
		if k.status != mFulfilled {
			return consensus.ErrContractNotFulfilled
		}
		var bit uint8
		switch {
		case actor == k.initiator && p.Subject == k.counterparty:
			bit = 1
		case actor == k.counterparty && p.Subject == k.initiator:
			bit = 2
		default:
			return consensus.ErrNotParticipant
		}
		if k.reviewed&bit != 0 {
			return consensus.ErrAlreadyReviewed
		}
		k.reviewed |= bit
		m.contracts[p.ContractID] = k
		n := m.reviews[pair{actor, p.Subject}] + 1
		m.reviews[pair{actor, p.Subject}] = n
		s := m.agents[p.Subject]
		s.reviewsIn++
		s.reviewSum += uint64(p.Score)
		s.score = mChange(s.score, mDamp((2*int64(p.Score)-11)*10, n))
		m.agents[p.Subject] = s
	}
	// The UTXO side: inputs go, outputs come (output 0 of a registration or a contract is
	// locked).
	for i := range tx.Inputs {
		delete(m.coins, tx.Inputs[i].Outpoint())
	}
	for j, o := range tx.Outputs {
		m.coins[types.Outpoint{TxID: txid, Index: uint32(j)}] = mCoin{value: o.Value, owner: o.PubKeyHash,
			stake: j == 0 && tx.Kind == types.KindAgentRegister, escrow: j == 0 && tx.Kind == types.KindContractCreate}
	}
	return ""
}

func (m *condModel) openContracts() uint64 {
	var n uint64
	for _, k := range m.contracts {
		if k.status == mOpen {
			n++
		}
	}
	return n
}

// hash is ConductInfo's hash of the model's state. This is the one place the test follows
// the implementation rather than protocol §9: the serialisation below mirrors the table keys
// and value encodings of lib/chainstate/conduct.go (agents 'g', contracts 'k', vouches 'v',
// fulfilled pairs 'f', review counts 'w', each in key order; BLAKE3 over key ‖ value).
func (m *condModel) hash() types.Hash {
	h := blake3.New(32, nil)
	put := func(key []byte, val func(w *bincode.Writer)) {
		w := bincode.NewWriter(nil)
		val(w)
		h.Write(key)
		h.Write(w.Bytes())
	}
	hk := func(p byte, a types.Hash) []byte { return append([]byte{p}, a[:]...) }
	pk := func(p byte, x pair) []byte { return append(append([]byte{p}, x[0][:]...), x[1][:]...) }
	for _, a := range sortedHashes(m.agents) {
		r := m.agents[a]
		put(hk('g', a), func(w *bincode.Writer) {
			w.U32(r.score)
			for _, v := range []uint64{r.completed, r.failed, r.vouchesIn, r.vouchesOut, r.reviewsIn, r.reviewSum, r.regHeight, r.regTime} {
				w.U64(v)
			}
			w.Raw(r.stake.TxID[:])
			w.U32(r.stake.Index)
		})
	}
	for _, id := range sortedHashes(m.contracts) {
		k := m.contracts[id]
		put(hk('k', id), func(w *bincode.Writer) {
			w.Raw(k.id[:])
			w.Raw(k.initiator[:])
			w.Raw(k.counterparty[:])
			w.U64(k.value)
			w.U64(k.created)
			w.U64(k.expiresAt)
			w.U8(k.status)
			w.Raw(k.closedBy[:])
			w.U8(k.reviewed)
		})
	}
	for _, p := range sortedPairKeys(m.vouches) {
		put(pk('v', p), func(w *bincode.Writer) { w.U8(1) })
	}
	for _, p := range sortedPairKeys(m.fulfilled) {
		put(pk('f', p), func(w *bincode.Writer) { w.U64(m.fulfilled[p]) })
	}
	for _, p := range sortedPairKeys(m.reviews) {
		put(pk('w', p), func(w *bincode.Writer) { w.U64(m.reviews[p]) })
	}
	var out types.Hash
	h.Sum(out[:0])
	return out
}

func sortedPairKeys[V any](m map[pair]V) []pair {
	ks := make([]pair, 0, len(m))
	for k := range m {
		ks = append(ks, k)
	}
	slices.SortFunc(ks, func(a, b pair) int { return bytes.Compare(append(a[0][:], a[1][:]...), append(b[0][:], b[1][:]...)) })
	return ks
}

// ---- The run --------------------------------------------------------------------------------

type modelRun struct {
	t        *testing.T
	seed     int64
	rng      *rand.Rand
	g        *chaingen.Generator
	c        *Chain
	dir      string
	opts     Options
	agents   []*chaingen.Wallet // may register
	outsider *chaingen.Wallet   // never registers
	all      []*chaingen.Wallet
	byPKH    map[types.Hash]*chaingen.Wallet
	m        *condModel            // the state at the tip
	snaps    map[uint64]*condModel // the model after each main-chain height
	tip      string
	n        int
	ever     map[types.Hash]bool // every contract id any branch created
	cov      map[string]int
}

const modelFee = 100

func (r *modelRun) height() uint64 { return r.g.Height(r.tip) }

// spendable lists owner's coins a child of the tip may spend in model state m, largest first.
func (r *modelRun) spendable(m *condModel, owner *chaingen.Wallet, h uint64) []chaingen.Output {
	var out []chaingen.Output
	for op, c := range m.coins {
		if c.owner != owner.PKH || c.stake || c.escrow || c.coinbase != 0 && c.coinbase+consensus.CoinbaseMaturity > h {
			continue
		}
		out = append(out, chaingen.Output{Outpoint: op, Value: c.value, PKH: c.owner})
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Value != out[j].Value {
			return out[i].Value > out[j].Value
		}
		return bytes.Compare(out[i].Outpoint.TxID[:], out[j].Outpoint.TxID[:]) < 0 ||
			out[i].Outpoint.TxID == out[j].Outpoint.TxID && out[i].Outpoint.Index < out[j].Outpoint.Index
	})
	return out
}

// pick is owner's largest coins until they hold at least need (nil if they cannot).
func (r *modelRun) pick(m *condModel, owner *chaingen.Wallet, h, need uint64) []chaingen.Output {
	var got []chaingen.Output
	var sum uint64
	for _, o := range r.spendable(m, owner, h) {
		if sum >= need {
			break
		}
		got, sum = append(got, o), sum+o.Value
	}
	if sum < need {
		return nil
	}
	return got
}

func (r *modelRun) registered(m *condModel, yes bool) []*chaingen.Wallet {
	var out []*chaingen.Wallet
	for _, w := range r.agents {
		if _, ok := m.agents[w.PKH]; ok == yes {
			out = append(out, w)
		}
	}
	return out
}

func (r *modelRun) contractsWith(m *condModel, status uint8) []mContract {
	var out []mContract
	for _, id := range sortedHashes(m.contracts) {
		if k := m.contracts[id]; k.status == status {
			out = append(out, k)
		}
	}
	return out
}

func (r *modelRun) one(ws []*chaingen.Wallet) *chaingen.Wallet {
	if len(ws) == 0 {
		return nil
	}
	return ws[r.rng.Intn(len(ws))]
}

func escrowOut(k mContract) chaingen.Output {
	return chaingen.Output{Outpoint: types.Outpoint{TxID: k.id, Index: 0}, Value: k.value, PKH: k.counterparty}
}

// reviewScore leans high, so that some agent reaches trusted (700) and vouches.
func (r *modelRun) reviewScore() uint8 {
	if r.rng.Intn(3) == 0 {
		return uint8(1 + r.rng.Intn(10))
	}
	return uint8(8 + r.rng.Intn(3))
}

// op builds one random operation on model state m for a block at height h: valid or meant
// to break one rule. The label names the intent, for the coverage log; whether it is valid
// is the model's call.
func (r *modelRun) op(m *condModel, h uint64) (*types.Transaction, string) {
	g := r.g
	small := func(w *chaingen.Wallet) []chaingen.Output { return r.pick(m, w, h, modelFee+20_000) }
	agents := r.registered(m, true)
	other := func(not *chaingen.Wallet) *chaingen.Wallet {
		var ws []*chaingen.Wallet
		for _, w := range agents {
			if w != not {
				ws = append(ws, w)
			}
		}
		return r.one(ws)
	}
	high := func() *chaingen.Wallet {
		var ws []*chaingen.Wallet
		for _, w := range agents {
			if m.agents[w.PKH].score >= 700 {
				ws = append(ws, w)
			}
		}
		return r.one(ws)
	}
	switch x := r.rng.Intn(100); {
	case x < 8: // register (valid for an unregistered agent)
		w := r.one(r.registered(m, false))
		if w == nil {
			return nil, ""
		}
		ins := r.pick(m, w, h, 50*amount.Coin+modelFee)
		if ins == nil {
			return nil, ""
		}
		return g.Spend(ins...).Kind(types.KindAgentRegister, nil).Pay(w.PKH, 50*amount.Coin).Fee(modelFee).Tx(), "register"
	case x < 10: // register twice
		w := r.one(agents)
		if w == nil {
			return nil, ""
		}
		ins := r.pick(m, w, h, 50*amount.Coin+modelFee)
		if ins == nil {
			return nil, ""
		}
		return g.Spend(ins...).Kind(types.KindAgentRegister, nil).Pay(w.PKH, 50*amount.Coin).Fee(modelFee).Tx(), "register-again"
	case x < 11: // a stake of 49 COIN
		w := r.one(r.registered(m, false))
		if w == nil {
			return nil, ""
		}
		ins := r.pick(m, w, h, 50*amount.Coin+modelFee)
		if ins == nil {
			return nil, ""
		}
		return g.Spend(ins...).Kind(types.KindAgentRegister, nil).Pay(w.PKH, 49*amount.Coin).Fee(modelFee).Tx(), "register-bad-stake"
	case x < 20: // vouch: by a trusted agent when there is one, else by anyone
		a := high()
		if a == nil || r.rng.Intn(3) == 0 {
			a = r.one(agents)
		}
		if a == nil {
			return nil, ""
		}
		b := other(a)
		if b == nil {
			return nil, ""
		}
		return g.Spend(small(a)...).Kind(types.KindVouch, types.VouchPayload{Target: b.PKH}.Bytes()).Fee(modelFee).Tx(), "vouch"
	case x < 21: // vouch by the outsider, for an agent
		b := r.one(agents)
		if b == nil {
			return nil, ""
		}
		return g.Spend(small(r.outsider)...).Kind(types.KindVouch, types.VouchPayload{Target: b.PKH}.Bytes()).Fee(modelFee).Tx(), "vouch-unregistered"
	case x < 22: // a trusted agent vouches for the outsider
		a := high()
		if a == nil {
			return nil, ""
		}
		return g.Spend(small(a)...).Kind(types.KindVouch, types.VouchPayload{Target: r.outsider.PKH}.Bytes()).Fee(modelFee).Tx(), "vouch-non-agent"
	case x < 23: // vouch for oneself
		a := r.one(agents)
		if a == nil {
			return nil, ""
		}
		return g.Spend(small(a)...).Kind(types.KindVouch, types.VouchPayload{Target: a.PKH}.Bytes()).Fee(modelFee).Tx(), "vouch-self"
	case x < 40: // a contract (short expiries, so some expire during the run)
		a := r.one(agents)
		b := other(a)
		if b == nil {
			return nil, ""
		}
		// Half the time with a fixed partner, so that the same two agents repeat and the
		// damping of protocol §9.2 reaches its third and fourth steps.
		fav := r.agents[(slices.Index(r.agents, a)+1)%len(r.agents)]
		if _, ok := m.agents[fav.PKH]; ok && r.rng.Intn(2) == 0 {
			b = fav
		}
		expiry := uint32(10 + r.rng.Intn(50))
		if r.rng.Intn(10) == 0 {
			expiry = 1440
		}
		p := types.ContractCreatePayload{Counterparty: b.PKH, ExpiryBlocks: expiry}
		value := uint64(1000 + r.rng.Intn(20_000))
		ins := r.pick(m, a, h, value+modelFee+1000)
		if ins == nil {
			return nil, ""
		}
		return g.Spend(ins...).Kind(types.KindContractCreate, p.Bytes()).Pay(b.PKH, value).Fee(modelFee).Tx(), "create"
	case x < 44: // contracts that break one rule each
		a, label := r.one(agents), ""
		b := other(a)
		if b == nil {
			return nil, ""
		}
		p := types.ContractCreatePayload{Counterparty: b.PKH, ExpiryBlocks: 20}
		value := uint64(5000)
		var foreign *chaingen.Wallet
		switch r.rng.Intn(5) {
		case 0:
			a, label = r.outsider, "create-unregistered"
		case 1:
			p.Counterparty, label = r.outsider.PKH, "create-non-agent"
		case 2:
			p.ExpiryBlocks, label = []uint32{9, 525_961, 0}[r.rng.Intn(3)], "create-bad-expiry"
		case 3:
			value, label = 999, "create-small-escrow"
		case 4:
			foreign, label = b, "create-foreign-input"
		}
		ins := r.pick(m, a, h, value+modelFee+1000)
		if ins == nil {
			return nil, ""
		}
		if foreign != nil {
			more := small(foreign)
			if more == nil {
				return nil, ""
			}
			ins = append(ins, more[0])
		}
		return g.Spend(ins...).Kind(types.KindContractCreate, p.Bytes()).Pay(p.Counterparty, value).Fee(modelFee).Change(a.PKH, 1).Tx(), label
	case x < 60: // fulfil an open contract (expired ones are refused)
		open := r.contractsWith(m, mOpen)
		if len(open) == 0 {
			return nil, ""
		}
		k := open[r.rng.Intn(len(open))]
		return g.Spend(escrowOut(k)).Kind(types.KindContractFulfil, types.ContractRefPayload{ContractID: k.id}.Bytes()).Fee(modelFee).Tx(), "fulfil"
	case x < 62: // fulfil without spending the escrow, or of no contract
		open := r.contractsWith(m, mOpen)
		if len(open) == 0 {
			return nil, ""
		}
		k := open[r.rng.Intn(len(open))]
		id, label := k.id, "fulfil-no-escrow"
		if r.rng.Intn(2) == 0 {
			id, label = types.Blake3([]byte(fmt.Sprint("no contract ", r.rng.Int63()))), "fulfil-unknown"
		}
		ins := small(r.byPKH[k.counterparty])
		if ins == nil {
			return nil, ""
		}
		return g.Spend(ins[0]).Kind(types.KindContractFulfil, types.ContractRefPayload{ContractID: id}.Bytes()).Fee(modelFee).Tx(), label
	case x < 70: // refund an open contract (before expiry it is refused); sometimes paying another
		open := r.contractsWith(m, mOpen)
		if len(open) == 0 {
			return nil, ""
		}
		k := open[r.rng.Intn(len(open))]
		init := r.byPKH[k.initiator]
		b := g.Spend(escrowOut(k)).Kind(types.KindContractRefund, types.ContractRefPayload{ContractID: k.id}.Bytes()).
			Fee(modelFee).Change(init.PKH, 1).SignedBy(init)
		if r.rng.Intn(6) == 0 {
			return b.Pay(r.outsider.PKH, 500).Tx(), "refund-pays-another"
		}
		return b.Tx(), "refund"
	case x < 86: // review a fulfilled contract, by one participant of the other
		done := r.contractsWith(m, mFulfilled)
		if len(done) == 0 {
			return nil, ""
		}
		k := done[r.rng.Intn(len(done))]
		rev, sub := k.initiator, k.counterparty
		if r.rng.Intn(2) == 0 {
			rev, sub = sub, rev
		}
		p := types.ReviewPayload{ContractID: k.id, Subject: sub, Score: r.reviewScore()}
		return g.Spend(small(r.byPKH[rev])...).Kind(types.KindReview, p.Bytes()).Fee(modelFee).Tx(), "review"
	case x < 92: // reviews that break one rule each
		done := r.contractsWith(m, mFulfilled)
		open := r.contractsWith(m, mOpen)
		var k mContract
		label := ""
		switch r.rng.Intn(3) {
		case 0:
			if len(done) == 0 {
				return nil, ""
			}
			k, label = done[r.rng.Intn(len(done))], "review-bad-score"
		case 1:
			if len(done) == 0 {
				return nil, ""
			}
			k, label = done[r.rng.Intn(len(done))], "review-not-participant"
		case 2:
			if len(open) == 0 {
				return nil, ""
			}
			k, label = open[r.rng.Intn(len(open))], "review-open"
		}
		rev, sub := k.initiator, k.counterparty
		p := types.ReviewPayload{ContractID: k.id, Subject: sub, Score: r.reviewScore()}
		switch label {
		case "review-bad-score":
			p.Score = []uint8{0, 11, 255}[r.rng.Intn(3)]
		case "review-not-participant":
			var third []*chaingen.Wallet
			for _, w := range agents {
				if w.PKH != k.initiator && w.PKH != k.counterparty {
					third = append(third, w)
				}
			}
			w := r.one(third)
			if w == nil {
				return nil, ""
			}
			rev = w.PKH
		}
		return g.Spend(small(r.byPKH[rev])...).Kind(types.KindReview, p.Bytes()).Fee(modelFee).Tx(), label
	case x < 95: // a transfer spending a locked output: an escrow or a stake
		if r.rng.Intn(2) == 0 {
			open := r.contractsWith(m, mOpen)
			if len(open) == 0 {
				return nil, ""
			}
			return g.Spend(escrowOut(open[r.rng.Intn(len(open))])).Fee(modelFee).Tx(), "transfer-escrow"
		}
		w := r.one(agents)
		if w == nil {
			return nil, ""
		}
		st := m.agents[w.PKH].stake
		return g.Spend(chaingen.Output{Outpoint: st, Value: m.coins[st].value, PKH: w.PKH}).Fee(modelFee).Tx(), "transfer-stake"
	default: // a plain payment between two wallets
		a, b := r.one(r.all), r.one(r.all)
		ins := small(a)
		if ins == nil || a == b {
			return nil, ""
		}
		return g.Spend(ins...).Pay(b.PKH, 5000).Fee(modelFee).Tx(), "transfer"
	}
}

// damped counts the accepted operations that reach the third step of protocol §9.2's damping
// (where integer division rounds): fulfilments, and reviews both ways.
func (r *modelRun) damped(before, after *condModel, tx *types.Transaction) {
	switch tx.Kind {
	case types.KindContractFulfil:
		p, _ := types.DecodeContractRefPayload(tx.Payload)
		k := after.contracts[p.ContractID]
		if after.fulfilled[lowHigh(k.initiator, k.counterparty)] >= 3 {
			r.cov["damped fulfil k≥3"]++
		}
	case types.KindReview:
		p, _ := types.DecodeReviewPayload(tx.Payload)
		actor := types.Blake3(tx.Inputs[0].PublicKey[:])
		if after.reviews[pair{actor, p.Subject}] >= 3 {
			r.cov[fmt.Sprintf("damped review k≥3, positive %v", p.Score > 5)]++
		}
	}
}

// nextName is a fresh block name.
func (r *modelRun) nextName(prefix string) string { r.n++; return fmt.Sprintf("%s%d", prefix, r.n) }

// block fills a block on parent (model state m, which it advances) with up to k random
// operations. With submitInvalid, each refused operation (at most two) is first submitted
// on its own, after the valid ones before it, and must be refused with the model's kind
// while nothing changes.
func (r *modelRun) block(parent string, m *condModel, submitInvalid bool) (string, *condModel) {
	t := r.t
	h := r.g.Height(parent) + 1
	ts := r.g.Block(parent).Header.Timestamp + 60
	work := m.clone()
	var txs []*types.Transaction
	invalid := 0
	for i, k := 0, 1+r.rng.Intn(6); i < k; i++ {
		tx, label := r.op(work, h)
		if tx == nil {
			continue
		}
		try := work.clone()
		kind := try.apply(tx, h, ts)
		if kind == "" {
			r.damped(work, try, tx)
			work = try
			txs = append(txs, tx)
			r.cov["ok "+label]++
			if tx.Kind == types.KindContractCreate {
				r.ever[tx.TxID()] = true
			}
			continue
		}
		r.cov[label+" → "+string(kind)]++
		if !submitInvalid || invalid == 2 {
			continue
		}
		invalid++
		before := r.info()
		name := r.nextName("bad")
		b := r.g.Next(name, parent, append(slices.Clone(txs), tx))
		_, err := r.c.ProcessBlock(context.Background(), b)
		if !errors.Is(err, kind) {
			t.Errorf("seed %d height %d: %s (%s tx %s): the model refuses it with %s, the chain says %v",
				r.seed, h, label, tx.Kind, tx.TxID(), kind, err)
		}
		if after := r.info(); after != before {
			t.Fatalf("seed %d: the refused block %s changed the conduct state: %+v → %+v", r.seed, name, before, after)
		}
		r.compare(r.m, "after refused "+name)
	}
	name := r.nextName("b")
	b := r.g.Next(name, parent, txs)
	if b.Header.Timestamp != ts {
		t.Fatalf("block time %d, the model used %d", b.Header.Timestamp, ts)
	}
	return name, work
}

func (r *modelRun) info() ConductInfo {
	r.t.Helper()
	info, err := r.c.ConductInfo(context.Background())
	if err != nil {
		r.t.Fatal(err)
	}
	return info
}

func (r *modelRun) submit(name string) {
	r.t.Helper()
	if _, err := r.c.ProcessBlock(context.Background(), r.g.Block(name)); err != nil {
		r.t.Fatalf("seed %d: block %s (height %d), valid for the model, refused: %v", r.seed, name, r.g.Height(name), err)
	}
}

// compare checks the chain's confirmed conduct state against m.
func (r *modelRun) compare(m *condModel, where string) {
	t := r.t
	t.Helper()
	fail := func(format string, a ...any) {
		t.Helper()
		t.Fatalf("seed %d, height %d, %s: %s", r.seed, r.c.Tip().Height, where, fmt.Sprintf(format, a...))
	}
	view := r.c.Conduct()
	for _, w := range r.all {
		got, ok, err := view.Agent(w.PKH)
		if err != nil {
			t.Fatal(err)
		}
		want, wok := m.agents[w.PKH]
		if ok != wok {
			fail("agent %s: registered %v, the model says %v", w.Name, ok, wok)
		}
		if !ok {
			continue
		}
		g := mAgent{score: got.Score, completed: got.ContractsCompleted, failed: got.ContractsFailed,
			vouchesIn: got.VouchesReceived, vouchesOut: got.VouchesGiven, reviewsIn: got.ReviewsReceived,
			reviewSum: got.ReviewScoreSum, regHeight: got.RegisteredHeight, regTime: got.RegisteredTime, stake: got.Stake}
		if g != want {
			fail("agent %s:\n chain %+v\n model %+v", w.Name, g, want)
		}
		for _, v := range r.all {
			vouched, err := view.Vouched(w.PKH, v.PKH)
			if err != nil {
				t.Fatal(err)
			}
			if vouched != m.vouches[pair{w.PKH, v.PKH}] {
				fail("vouch %s→%s: chain %v", w.Name, v.Name, vouched)
			}
			n, err := view.ReviewsOf(w.PKH, v.PKH)
			if err != nil {
				t.Fatal(err)
			}
			if n != m.reviews[pair{w.PKH, v.PKH}] {
				fail("reviews %s→%s: chain %d, model %d", w.Name, v.Name, n, m.reviews[pair{w.PKH, v.PKH}])
			}
			n, err = view.FulfilledBetween(w.PKH, v.PKH)
			if err != nil {
				t.Fatal(err)
			}
			if n != m.fulfilled[lowHigh(w.PKH, v.PKH)] {
				fail("fulfilled %s–%s: chain %d, model %d", w.Name, v.Name, n, m.fulfilled[lowHigh(w.PKH, v.PKH)])
			}
		}
	}
	for _, id := range sortedHashes(r.ever) {
		got, ok, err := view.Contract(id)
		if err != nil {
			t.Fatal(err)
		}
		want, wok := m.contracts[id]
		if ok != wok {
			fail("contract %s: exists %v, the model says %v", id, ok, wok)
		}
		if !ok {
			continue
		}
		g := mContract{id: got.ID, initiator: got.Initiator, counterparty: got.Counterparty, value: got.Value,
			created: got.CreatedHeight, expiresAt: got.ExpiresAt, status: uint8(got.Status), closedBy: got.ClosedBy,
			reviewed: got.Reviewed}
		if g != want {
			fail("contract %s:\n chain %+v\n model %+v", id, g, want)
		}
	}
	s := r.c.Stats()
	if s.Agents != uint64(len(m.agents)) || s.OpenContracts != m.openContracts() {
		fail("stats: %d agents, %d open contracts; the model %d, %d", s.Agents, s.OpenContracts, len(m.agents), m.openContracts())
	}
	// The directory index (not part of the hash) lists the agents by score, highest first,
	// then by address (protocol §9.4), each with its current record.
	var want []types.Hash
	for a := range m.agents {
		want = append(want, a)
	}
	sort.Slice(want, func(i, j int) bool {
		si, sj := m.agents[want[i]].score, m.agents[want[j]].score
		return si > sj || si == sj && bytes.Compare(want[i][:], want[j][:]) < 0
	})
	var dir []DirectoryEntry
	if err := r.c.Directory(func(e DirectoryEntry) bool { dir = append(dir, e); return true }); err != nil {
		t.Fatal(err)
	}
	if len(dir) != len(want) {
		fail("directory lists %d agents, the model has %d", len(dir), len(want))
	}
	for i, e := range dir {
		if e.Address != want[i] || e.Record.Score != m.agents[want[i]].score || e.Record.ContractsCompleted != m.agents[want[i]].completed {
			fail("directory entry %d: %s with score %d, the model's %s with %d", i, e.Address, e.Record.Score, want[i], m.agents[want[i]].score)
		}
	}
	info := r.info()
	if info.Agents != s.Agents || info.OpenContracts != s.OpenContracts {
		fail("ConductInfo %+v disagrees with the stats %+v", info, s)
	}
	if want := m.hash(); info.Hash != want {
		fail("conduct hash %s, the model's %s", info.Hash, want)
	}
}

// accept submits the block called name, which must become the tip with state m.
func (r *modelRun) accept(name string, m *condModel) {
	r.t.Helper()
	r.submit(name)
	if r.c.Tip().Hash != r.g.Block(name).Hash() {
		r.t.Fatalf("seed %d: %s did not become the tip", r.seed, name)
	}
	r.tip, r.m = name, m
	r.snaps[r.g.Height(name)] = m
	r.compare(m, "after "+name)
}

// reorg builds a branch from depth blocks below the tip, one block longer than the part it
// replaces, with other random operations; the chain must switch to it when its last block
// arrives (equal work keeps the first seen).
func (r *modelRun) reorg(depth int) {
	t := r.t
	base := r.tip
	for i := 0; i < depth; i++ {
		base = r.g.NameOf(r.g.Block(base).Header.PrevHash)
	}
	m := r.snaps[r.g.Height(base)]
	parent := base
	oldTip, oldModel := r.tip, r.m
	for i := 0; i <= depth; i++ {
		name, next := r.block(parent, m, false)
		r.submit(name)
		if i < depth {
			if r.c.Tip().Hash != r.g.Block(oldTip).Hash() {
				t.Fatalf("seed %d: side branch block %s took the tip at equal or less work", r.seed, name)
			}
			r.compare(oldModel, "side branch "+name)
		}
		parent, m = name, next
		r.snaps[r.g.Height(name)] = m
	}
	if r.c.Tip().Hash != r.g.Block(parent).Hash() {
		t.Fatalf("seed %d: the heavier branch %s did not become the tip", r.seed, parent)
	}
	r.tip, r.m = parent, m
	r.cov[fmt.Sprintf("reorg depth %d", depth)]++
	if oldModel.hash() != m.hash() {
		r.cov["reorg that changed the conduct state"]++
	}
	r.compare(m, "after reorg to "+parent)
}

func (r *modelRun) reopen() {
	r.t.Helper()
	before := r.info()
	stats := r.c.Stats()
	if err := r.c.Close(); err != nil {
		r.t.Fatal(err)
	}
	c, err := Open(context.Background(), r.dir, params.Regtest, r.opts)
	if err != nil {
		r.t.Fatal(err)
	}
	r.c = c
	if c.Stats() != stats || r.info() != before {
		r.t.Fatalf("seed %d: reopen changed the stats or the conduct info", r.seed)
	}
	r.compare(r.m, "after reopen")
}

func envInt(name string, def int64) int64 {
	if s := os.Getenv(name); s != "" {
		if v, err := strconv.ParseInt(s, 10, 64); err == nil {
			return v
		}
	}
	return def
}

const defaultModelSeed = 20240601

func TestConductModel(t *testing.T) {
	seed := envInt("COIN_MODEL_SEED", defaultModelSeed)
	blocks := int(envInt("COIN_MODEL_BLOCKS", 300))
	t.Logf("seed %d (COIN_MODEL_SEED), %d blocks (COIN_MODEL_BLOCKS)", seed, blocks)
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("failed with seed %d: rerun with COIN_MODEL_SEED=%d", seed, seed)
		}
	})
	dir := t.TempDir()
	// Inputs are valued at their nominal value: this test is about conduct, and the model
	// does not follow concentration decay (protocol §8), only the agent rules.
	opts := Options{Now: func() time.Time { return time.Unix(1<<40, 0) }, Values: consensus.NominalValue{}}
	c, err := Open(context.Background(), dir, params.Regtest, opts)
	if err != nil {
		t.Fatal(err)
	}
	r := &modelRun{t: t, seed: seed, rng: rand.New(rand.NewSource(seed)), g: chaingen.New(t, nil), c: c, dir: dir,
		opts: opts, byPKH: map[types.Hash]*chaingen.Wallet{}, m: newCondModel(), snaps: map[uint64]*condModel{},
		tip: "genesis", ever: map[types.Hash]bool{}, cov: map[string]int{}}
	t.Cleanup(func() { r.c.Close() })
	for i := 0; i < 6; i++ {
		r.agents = append(r.agents, r.g.Wallet(fmt.Sprintf("agent%d", i)))
	}
	r.outsider = r.g.Wallet("outsider")
	r.all = append(slices.Clone(r.agents), r.outsider)
	for _, w := range r.all {
		r.byPKH[w.PKH] = w
	}
	r.snaps[0] = r.m

	// Funding: each wallet mines three blocks, then the miner matures them.
	for _, w := range r.all {
		r.g.SetMiner(w)
		for i := 0; i < 3; i++ {
			name := r.nextName("fund")
			b := r.g.Next(name, r.tip, nil)
			m := r.m.clone()
			cb := b.Transactions[0]
			m.coins[types.Outpoint{TxID: cb.TxID(), Index: 0}] = mCoin{value: cb.Outputs[0].Value, owner: w.PKH, coinbase: r.g.Height(name)}
			r.accept(name, m)
		}
	}
	r.g.SetMiner(r.g.Wallet("miner"))
	for i := 0; i < int(consensus.CoinbaseMaturity); i++ {
		name := r.nextName("mature")
		r.g.Next(name, r.tip, nil)
		r.accept(name, r.m)
	}
	// Each wallet splits one coinbase into ten coins, so it has several to spend.
	{
		h := r.height() + 1
		m := r.m.clone()
		var txs []*types.Transaction
		for _, w := range r.all {
			ins := r.spendable(m, w, h)
			tx := r.g.Spend(ins[0]).Fee(modelFee).Change(w.PKH, 10).Tx()
			if k := m.apply(tx, h, 0); k != "" {
				t.Fatalf("split refused by the model: %s", k)
			}
			txs = append(txs, tx)
		}
		name := r.nextName("split")
		r.g.Next(name, r.tip, txs)
		r.accept(name, m)
	}

	start := time.Now()
	for i := 0; i < blocks; i++ {
		if i > 10 && r.rng.Intn(12) == 0 {
			r.reorg(1 + r.rng.Intn(4))
			continue
		}
		name, m := r.block(r.tip, r.m, true)
		r.accept(name, m)
		if i == blocks/2 {
			r.reopen()
		}
	}
	r.reopen()

	// A second chain that never saw a reorg or a refused block: the main chain replayed
	// block by block into a fresh database has the same conduct hash.
	fresh, err := Open(context.Background(), t.TempDir(), params.Regtest, opts)
	if err != nil {
		t.Fatal(err)
	}
	defer fresh.Close()
	for h := uint64(1); h <= r.c.Tip().Height; h++ {
		b, err := r.c.Block(r.c.NodeAt(h).Hash)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := fresh.ProcessBlock(context.Background(), b); err != nil {
			t.Fatalf("replay of height %d: %v", h, err)
		}
	}
	replayed, err := fresh.ConductInfo(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if got := r.info(); replayed.Hash != got.Hash || replayed.Agents != got.Agents || replayed.OpenContracts != got.OpenContracts {
		t.Fatalf("seed %d: the replayed chain's conduct info %+v differs from %+v", seed, replayed, got)
	}

	keys := make([]string, 0, len(r.cov))
	for k := range r.cov {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var log bytes.Buffer
	for _, k := range keys {
		fmt.Fprintf(&log, "\n  %-50s %d", k, r.cov[k])
	}
	maxScore := uint32(0)
	for _, a := range r.m.agents {
		maxScore = max(maxScore, a.score)
	}
	t.Logf("height %d, %d agents, %d contracts (%d open), highest score %d, %s; outcomes:%s",
		r.height(), len(r.m.agents), len(r.m.contracts), r.m.openContracts(), maxScore, time.Since(start).Round(time.Millisecond), log.String())
	if seed == defaultModelSeed && blocks >= 200 {
		for _, want := range []string{"ok register", "ok vouch", "ok create", "ok fulfil", "ok refund", "ok review",
			"vouch → score_too_low", "vouch-unregistered → not_an_agent", "create-bad-expiry → invalid_expiry",
			"fulfil → contract_expired", "refund → contract_not_expired", "review → already_reviewed",
			"review-not-participant → not_participant", "transfer-escrow → locked_output",
			"damped fulfil k≥3", "damped review k≥3, positive true", "damped review k≥3, positive false",
			"reorg that changed the conduct state"} {
			if r.cov[want] == 0 {
				t.Errorf("the default seed never produced %q", want)
			}
		}
	}
}

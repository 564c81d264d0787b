package consensus_test

import (
	"math"
	"testing"

	"github.com/cointoolkit/coin/lib/consensus"
	"github.com/cointoolkit/coin/lib/types"
)

// ---------------------------------------------------------------------------------------------
// Conduct views and builders.
// ---------------------------------------------------------------------------------------------

// dave is never an agent in these tests.
var dave = newKey(5)

// memConduct is an in-memory ConductView.
type memConduct struct {
	agents    map[types.Hash]*consensus.AgentRecord
	contracts map[types.Hash]*consensus.ContractRecord
	vouches   map[consensus.HashPair]bool
	pairs     map[consensus.HashPair]uint64 // by PairOf
	reviews   map[consensus.HashPair]uint64 // by (reviewer, subject)
}

func newMemConduct() *memConduct {
	return &memConduct{agents: map[types.Hash]*consensus.AgentRecord{}, contracts: map[types.Hash]*consensus.ContractRecord{},
		vouches: map[consensus.HashPair]bool{}, pairs: map[consensus.HashPair]uint64{}, reviews: map[consensus.HashPair]uint64{}}
}

func (m *memConduct) Agent(pkh types.Hash) (*consensus.AgentRecord, bool, error) {
	a, ok := m.agents[pkh]
	return a, ok, nil
}

func (m *memConduct) Contract(id types.Hash) (*consensus.ContractRecord, bool, error) {
	c, ok := m.contracts[id]
	return c, ok, nil
}

func (m *memConduct) Vouched(voucher, target types.Hash) (bool, error) {
	return m.vouches[consensus.HashPair{voucher, target}], nil
}

func (m *memConduct) FulfilledBetween(a, b types.Hash) (uint64, error) {
	return m.pairs[consensus.PairOf(a, b)], nil
}

func (m *memConduct) ReviewsOf(reviewer, subject types.Hash) (uint64, error) {
	return m.reviews[consensus.HashPair{reviewer, subject}], nil
}

// clone is a deep copy of m (records included), to check that nothing changed m.
func (m *memConduct) clone() *memConduct {
	c := newMemConduct()
	for k, v := range m.agents {
		cp := *v
		c.agents[k] = &cp
	}
	for k, v := range m.contracts {
		cp := *v
		c.contracts[k] = &cp
	}
	for k, v := range m.vouches {
		c.vouches[k] = v
	}
	for k, v := range m.pairs {
		c.pairs[k] = v
	}
	for k, v := range m.reviews {
		c.reviews[k] = v
	}
	return c
}

// errConduct fails every lookup with errStorage.
type errConduct struct{}

func (errConduct) Agent(types.Hash) (*consensus.AgentRecord, bool, error) {
	return nil, false, errStorage
}
func (errConduct) Contract(types.Hash) (*consensus.ContractRecord, bool, error) {
	return nil, false, errStorage
}
func (errConduct) Vouched(types.Hash, types.Hash) (bool, error)            { return false, errStorage }
func (errConduct) FulfilledBetween(types.Hash, types.Hash) (uint64, error) { return 0, errStorage }
func (errConduct) ReviewsOf(types.Hash, types.Hash) (uint64, error)        { return 0, errStorage }

// conductState is a StateView with a conduct state and, optionally, clusters of several
// addresses (owner maps an address to the address whose cluster it is in).
type conductState struct {
	consensus.ValuedView
	conduct consensus.ConductView
	owner   map[types.Hash]types.Hash
}

func (s conductState) Conduct() consensus.ConductView { return s.conduct }

func (s conductState) ClusterOf(pkh types.Hash) (types.Hash, error) {
	if o, ok := s.owner[pkh]; ok {
		pkh = o
	}
	return consensus.ClusterIDOf(pkh), nil
}

// agentTx is an unsigned agent transaction of kind k.
func agentTx(k types.TxKind, payload []byte, ins []types.TxInput, outs ...types.TxOutput) *types.Transaction {
	return &types.Transaction{Version: consensus.TxVersion, Kind: k, Inputs: ins, Outputs: outs, Payload: payload}
}

func vouchPayload(target key) []byte { return types.VouchPayload{Target: target.pkh}.Bytes() }

func createPayload(cp key, expiry uint32) []byte {
	return types.ContractCreatePayload{Counterparty: cp.pkh, ExpiryBlocks: expiry}.Bytes()
}

func refPayload(id types.Hash) []byte { return types.ContractRefPayload{ContractID: id}.Bytes() }

func reviewPayload(id types.Hash, subject key, score uint8) []byte {
	return types.ReviewPayload{ContractID: id, Subject: subject.pkh, Score: score}.Bytes()
}

// escrowOf is the escrow outpoint of a contract.
func escrowOf(id types.Hash) types.Outpoint { return types.Outpoint{TxID: id} }

// ---------------------------------------------------------------------------------------------
// CheckAgentKind: the context-free rules.
// ---------------------------------------------------------------------------------------------

func TestCheckAgentKind(t *testing.T) {
	cid := types.Blake3([]byte("contract"))
	in0 := func(k key) []types.TxInput { return []types.TxInput{input(op("own", 0), k)} }
	register := func() *types.Transaction {
		return agentTx(types.KindAgentRegister, nil, in0(alice), pay(consensus.AgentStake, alice), pay(7, alice))
	}
	vouch := func() *types.Transaction {
		return agentTx(types.KindVouch, vouchPayload(bob), in0(alice), pay(1, alice))
	}
	create := func() *types.Transaction {
		return agentTx(types.KindContractCreate, createPayload(bob, consensus.DefaultExpiry), in0(alice), pay(consensus.MinEscrow, bob), pay(5, alice))
	}
	fulfil := func() *types.Transaction {
		return agentTx(types.KindContractFulfil, refPayload(cid), []types.TxInput{input(escrowOf(cid), bob)}, pay(900, bob))
	}
	refund := func() *types.Transaction {
		return agentTx(types.KindContractRefund, refPayload(cid), []types.TxInput{input(escrowOf(cid), alice)}, pay(900, alice))
	}
	review := func() *types.Transaction {
		return agentTx(types.KindReview, reviewPayload(cid, bob, 7), in0(alice), pay(1, alice))
	}
	bases := map[types.TxKind]func() *types.Transaction{
		types.KindAgentRegister: register, types.KindVouch: vouch, types.KindContractCreate: create,
		types.KindContractFulfil: fulfil, types.KindContractRefund: refund, types.KindReview: review,
	}
	for k := types.KindAgentRegister; k <= types.KindReview; k++ {
		t.Run(k.String()+" accepted", func(t *testing.T) {
			tx := bases[k]()
			noErr(t, consensus.CheckAgentKind(tx))
			noErr(t, checkSanity(tx))
			// More inputs of the same agent are fine.
			actor := consensus.Actor(tx)
			for _, kk := range []key{alice, bob} {
				if kk.pkh == actor {
					tx.Inputs = append(tx.Inputs, input(op("more", 1), kk), input(op("more", 2), kk))
				}
			}
			noErr(t, checkSanity(tx))
		})
		t.Run(k.String()+" foreign input", func(t *testing.T) {
			// Input 1 (or the last of several) signed by anyone but the owner of input 0.
			for _, n := range []int{1, 3} {
				tx := bases[k]()
				actor := tx.Inputs[0]
				for i := 1; i < n; i++ {
					tx.Inputs = append(tx.Inputs, input(op("same", uint32(i)), key{pub: actor.PublicKey}))
				}
				tx.Inputs = append(tx.Inputs, input(op("foreign", 0), carol))
				wantKind(t, checkSanity(tx), consensus.ErrForeignInput)
				wantKind(t, consensus.CheckAgentKind(tx), consensus.ErrForeignInput)
			}
		})
		t.Run(k.String()+" payload", func(t *testing.T) {
			tx := bases[k]()
			tx.Payload = append(tx.Payload, 0) // one byte too many
			wantKind(t, checkSanity(tx), consensus.ErrAgentPayload)
			if len(tx.Payload) > 1 {
				tx.Payload = tx.Payload[:len(tx.Payload)-2] // one byte short
				wantKind(t, checkSanity(tx), consensus.ErrAgentPayload)
				tx.Payload = nil
				wantKind(t, checkSanity(tx), consensus.ErrAgentPayload)
			}
		})
	}

	type rule struct {
		name   string
		base   func() *types.Transaction
		mutate func(tx *types.Transaction)
		want   consensus.ErrorKind // "" : accepted
	}
	tests := []rule{
		// AgentRegister: output 0 stakes exactly 50 COIN to the signer.
		{"stake one subunit short", register, func(tx *types.Transaction) { tx.Outputs[0].Value-- }, consensus.ErrBadStake},
		{"stake one subunit over", register, func(tx *types.Transaction) { tx.Outputs[0].Value++ }, consensus.ErrBadStake},
		{"stake to another address", register, func(tx *types.Transaction) { tx.Outputs[0].PubKeyHash = bob.pkh }, consensus.ErrBadStake},
		{"stake as output 1", register, func(tx *types.Transaction) {
			tx.Outputs[0], tx.Outputs[1] = tx.Outputs[1], tx.Outputs[0]
		}, consensus.ErrBadStake},
		{"stake alone", register, func(tx *types.Transaction) { tx.Outputs = tx.Outputs[:1] }, ""},
		// Vouch.
		{"vouch for oneself", vouch, func(tx *types.Transaction) { tx.Payload = vouchPayload(alice) }, consensus.ErrSelfTarget},
		// ContractCreate.
		{"contract with oneself", create, func(tx *types.Transaction) {
			tx.Payload = createPayload(alice, consensus.DefaultExpiry)
			tx.Outputs[0].PubKeyHash = alice.pkh
		}, consensus.ErrSelfTarget},
		{"expiry 0", create, func(tx *types.Transaction) { tx.Payload = createPayload(bob, 0) }, consensus.ErrInvalidExpiry},
		{"expiry 9", create, func(tx *types.Transaction) { tx.Payload = createPayload(bob, 9) }, consensus.ErrInvalidExpiry},
		{"expiry 10", create, func(tx *types.Transaction) { tx.Payload = createPayload(bob, 10) }, ""},
		{"expiry 525,960", create, func(tx *types.Transaction) { tx.Payload = createPayload(bob, 525_960) }, ""},
		{"expiry 525,961", create, func(tx *types.Transaction) { tx.Payload = createPayload(bob, 525_961) }, consensus.ErrInvalidExpiry},
		{"expiry 2^32-1", create, func(tx *types.Transaction) { tx.Payload = createPayload(bob, math.MaxUint32) }, consensus.ErrInvalidExpiry},
		{"escrow of 999", create, func(tx *types.Transaction) { tx.Outputs[0].Value = 999 }, consensus.ErrBadEscrow},
		{"escrow of 1,000,000", create, func(tx *types.Transaction) { tx.Outputs[0].Value = 1_000_000 }, ""},
		{"escrow to a third address", create, func(tx *types.Transaction) { tx.Outputs[0].PubKeyHash = carol.pkh }, consensus.ErrBadEscrow},
		{"escrow to the initiator", create, func(tx *types.Transaction) { tx.Outputs[0].PubKeyHash = alice.pkh }, consensus.ErrBadEscrow},
		{"escrow as output 1", create, func(tx *types.Transaction) {
			tx.Outputs[0], tx.Outputs[1] = tx.Outputs[1], tx.Outputs[0]
		}, consensus.ErrBadEscrow},
		// Review.
		{"score 0", review, func(tx *types.Transaction) { tx.Payload = reviewPayload(cid, bob, 0) }, consensus.ErrInvalidScore},
		{"score 1", review, func(tx *types.Transaction) { tx.Payload = reviewPayload(cid, bob, 1) }, ""},
		{"score 10", review, func(tx *types.Transaction) { tx.Payload = reviewPayload(cid, bob, 10) }, ""},
		{"score 11", review, func(tx *types.Transaction) { tx.Payload = reviewPayload(cid, bob, 11) }, consensus.ErrInvalidScore},
		{"score 255", review, func(tx *types.Transaction) { tx.Payload = reviewPayload(cid, bob, 255) }, consensus.ErrInvalidScore},
		{"review of oneself", review, func(tx *types.Transaction) { tx.Payload = reviewPayload(cid, alice, 9) }, consensus.ErrSelfTarget},
		// Fulfil and refund carry only the contract id.
		{"fulfil payload short", fulfil, func(tx *types.Transaction) { tx.Payload = tx.Payload[:31] }, consensus.ErrAgentPayload},
		{"refund payload empty", refund, func(tx *types.Transaction) { tx.Payload = nil }, consensus.ErrAgentPayload},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tx := tc.base()
			tc.mutate(tx)
			if tc.want == "" {
				noErr(t, consensus.CheckAgentKind(tx))
				noErr(t, checkSanity(tx))
				return
			}
			wantKind(t, consensus.CheckAgentKind(tx), tc.want)
			wantKind(t, checkSanity(tx), tc.want)
		})
	}
	t.Run("not an agent kind", func(t *testing.T) {
		for _, k := range []types.TxKind{types.KindTransfer, types.KindReview + 1} {
			tx := vouch()
			tx.Kind = k
			wantKind(t, consensus.CheckAgentKind(tx), consensus.ErrAgentPayload)
		}
	})
}

// ---------------------------------------------------------------------------------------------
// Score arithmetic (DESIGN 9, 9.2), every expected value worked out by hand from the formulas.
// ---------------------------------------------------------------------------------------------

func TestScoreChange(t *testing.T) {
	tests := []struct {
		s    uint32
		d    int64
		want uint32
	}{
		{500, 0, 500},
		{500, 30, 530},   // 500 + 30×500/500
		{500, 20, 520},   // 500 + 20×500/500
		{500, 10, 510},   // 500 + 10×500/500
		{500, -50, 450},  // 500 − 50×500/500
		{750, 30, 765},   // 750 + 30×250/500
		{600, 10, 608},   // 600 + 10×400/500
		{520, 70, 587},   // 520 + 70×480/500 = 520 + 67 (33,600/500 = 67.2)
		{300, -90, 246},  // 300 − 90×300/500 = 300 − 54
		{450, -10, 441},  // 450 − 10×450/500 = 450 − 9
		{333, -7, 329},   // 333 − 7×333/500 = 333 − 4 (2,331/500 = 4.66)
		{0, 90, 180},     // 0 + 90×1000/500
		{0, -90, 0},      // 0 − 90×0/500
		{1000, 90, 1000}, // 1000 + 90×0/500
		{1000, -90, 820}, // 1000 − 90×1000/500
		{999, 10, 999},   // 999 + 10×1/500 = 999 + 0
		{999, 50, 999},   // 999 + 50×1/500 = 999 + 0
		{1, -1, 1},       // 1 − 1×1/500 = 1 − 0
		{1, -499, 1},     // 1 − 499×1/500 = 1 − 0
		{1, -500, 0},     // 1 − 500×1/500 = 0
		{0, 1000, 1000},  // 0 + 1000×1000/500 = 2000, clamped
		{500, -1000, 0},  // 500 − 1000×500/500 = −500, clamped
		{1500, 0, 1000},  // out of range in, clamped
	}
	for _, tc := range tests {
		if got := consensus.ScoreChange(tc.s, tc.d); got != tc.want {
			t.Errorf("ScoreChange(%d, %d) = %d, want %d", tc.s, tc.d, got, tc.want)
		}
	}
	// A gain never lowers and a loss never raises a score, and the result stays in 0…1000.
	for s := uint32(0); s <= 1000; s++ {
		for _, d := range []int64{1, 10, 30, 90, 1000, -1, -10, -50, -90, -1000} {
			got := consensus.ScoreChange(s, d)
			if got > 1000 || (d > 0 && got < s) || (d < 0 && got > s) {
				t.Fatalf("ScoreChange(%d, %d) = %d", s, d, got)
			}
		}
	}
}

func TestReviewDelta(t *testing.T) {
	want := map[uint8]int64{1: -90, 2: -70, 3: -50, 4: -30, 5: -10, 6: 10, 7: 30, 8: 50, 9: 70, 10: 90} // (2·score − 11) × 10
	for s, d := range want {
		if got := consensus.ReviewDelta(s); got != d {
			t.Errorf("ReviewDelta(%d) = %d, want %d", s, got, d)
		}
	}
}

func TestDamped(t *testing.T) {
	tests := []struct {
		d    int64
		k    uint64
		want int64
	}{
		{20, 1, 20}, {20, 2, 10}, {20, 3, 5}, {20, 4, 2}, {20, 5, 1}, {20, 6, 0},
		{10, 1, 10}, {10, 2, 5}, {10, 3, 2}, {10, 4, 1}, {10, 5, 0},
		{30, 2, 15}, {90, 3, 22}, {90, 7, 1}, {90, 8, 0},
		// Losses are damped the same way; Go's division truncates towards zero.
		{-90, 1, -90}, {-90, 2, -45}, {-90, 3, -22}, {-90, 4, -11}, {-10, 2, -5}, {-10, 3, -2}, {-10, 5, 0},
		// Far repetitions count nothing (and do not overflow the shift).
		{90, 62, 0}, {90, 63, 0}, {90, 64, 0}, {-90, 200, 0}, {90, math.MaxUint64, 0},
	}
	for _, tc := range tests {
		if got := consensus.Damped(tc.d, tc.k); got != tc.want {
			t.Errorf("Damped(%d, %d) = %d, want %d", tc.d, tc.k, got, tc.want)
		}
	}
}

package consensus_test

import (
	"fmt"
	"math"
	"reflect"
	"strings"
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
			wantKind(t, checkSanity(tx), consensus.ErrBadAgentPayload)
			if len(tx.Payload) > 1 {
				tx.Payload = tx.Payload[:len(tx.Payload)-2] // one byte short
				wantKind(t, checkSanity(tx), consensus.ErrBadAgentPayload)
				tx.Payload = nil
				wantKind(t, checkSanity(tx), consensus.ErrBadAgentPayload)
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
		{"fulfil payload short", fulfil, func(tx *types.Transaction) { tx.Payload = tx.Payload[:31] }, consensus.ErrBadAgentPayload},
		{"refund payload empty", refund, func(tx *types.Transaction) { tx.Payload = nil }, consensus.ErrBadAgentPayload},
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
			wantKind(t, consensus.CheckAgentKind(tx), consensus.ErrBadAgentPayload)
		}
	})
}

// ---------------------------------------------------------------------------------------------
// Score arithmetic (protocol §9, 9.2), every expected value worked out by hand from the formulas.
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

// ---------------------------------------------------------------------------------------------
// CheckConduct: the rules of the protocol §9 table against a conduct state.
// ---------------------------------------------------------------------------------------------

const (
	conductHeight  = 1000
	conductTime    = 1_767_400_000
	conductExpires = 1100 // expires_at of the open contracts
)

var (
	cOpen = types.Blake3([]byte("contract open"))    // alice → bob, open
	cBack = types.Blake3([]byte("contract back"))    // bob → alice, open
	cDone = types.Blake3([]byte("contract done"))    // alice → bob, fulfilled, reviewed by alice
	cGone = types.Blake3([]byte("contract expired")) // alice → bob, expired (refunded)
	cNone = types.Blake3([]byte("contract unknown")) // no contract
)

// conductFixture: alice and bob at 500, carol at 720 (trusted), dave no agent; carol has
// vouched for bob; four contracts between alice and bob.
func conductFixture() *memConduct {
	m := newMemConduct()
	m.agents[alice.pkh] = &consensus.AgentRecord{Score: 500, RegisteredHeight: 10, Stake: op("stake alice", 0)}
	m.agents[bob.pkh] = &consensus.AgentRecord{Score: 500, RegisteredHeight: 11, VouchesReceived: 1, Stake: op("stake bob", 0)}
	m.agents[carol.pkh] = &consensus.AgentRecord{Score: 720, RegisteredHeight: 12, VouchesGiven: 1, Stake: op("stake carol", 0)}
	contract := func(id types.Hash, init, cp key, st consensus.ContractStatus) *consensus.ContractRecord {
		return &consensus.ContractRecord{ID: id, Initiator: init.pkh, Counterparty: cp.pkh, Value: 5_000,
			CreatedHeight: 900, ExpiresAt: conductExpires, Status: st}
	}
	m.contracts[cOpen] = contract(cOpen, alice, bob, consensus.ContractOpen)
	m.contracts[cBack] = contract(cBack, bob, alice, consensus.ContractOpen)
	m.contracts[cDone] = contract(cDone, alice, bob, consensus.ContractFulfilled)
	m.contracts[cDone].ClosedBy = types.Blake3([]byte("fulfil of done"))
	m.contracts[cDone].Reviewed = consensus.ReviewedByInitiator
	m.contracts[cGone] = contract(cGone, alice, bob, consensus.ContractExpired)
	m.contracts[cGone].ClosedBy = types.Blake3([]byte("refund of gone"))
	m.vouches[consensus.HashPair{carol.pkh, bob.pkh}] = true
	m.pairs[consensus.PairOf(alice.pkh, bob.pkh)] = 1
	m.reviews[consensus.HashPair{alice.pkh, bob.pkh}] = 1
	return m
}

func registerTx(k key) *types.Transaction {
	return agentTx(types.KindAgentRegister, nil, []types.TxInput{input(op("fund "+string(k.pub[:4]), 0), k)}, pay(consensus.AgentStake, k))
}

func vouchTx(voucher, target key) *types.Transaction {
	return agentTx(types.KindVouch, vouchPayload(target), []types.TxInput{input(op("fee", 0), voucher)}, pay(1, voucher))
}

func createTx(init, cp key, expiry uint32) *types.Transaction {
	return agentTx(types.KindContractCreate, createPayload(cp, expiry), []types.TxInput{input(op("escrow fund", 0), init)}, pay(5_000, cp))
}

// fulfilTx spends the escrow of id (input 0) with signer's key.
func fulfilTx(id types.Hash, signer key) *types.Transaction {
	return agentTx(types.KindContractFulfil, refPayload(id), []types.TxInput{input(escrowOf(id), signer)}, pay(4_900, signer))
}

// refundTx spends the escrow of id (input 0) with signer's key, paying the signer.
func refundTx(id types.Hash, signer key) *types.Transaction {
	return agentTx(types.KindContractRefund, refPayload(id), []types.TxInput{input(escrowOf(id), signer)}, pay(4_900, signer))
}

func reviewTx(id types.Hash, reviewer, subject key, score uint8) *types.Transaction {
	return agentTx(types.KindReview, reviewPayload(id, subject, score), []types.TxInput{input(op("fee", 0), reviewer)}, pay(1, reviewer))
}

// sameOwners is a SameOwner that puts the given pairs (in either order) in one cluster.
func sameOwners(pairs ...[2]key) func(a, b types.Hash) (bool, error) {
	return func(a, b types.Hash) (bool, error) {
		for _, p := range pairs {
			if (a == p[0].pkh && b == p[1].pkh) || (a == p[1].pkh && b == p[0].pkh) {
				return true, nil
			}
		}
		return false, nil
	}
}

// checkConduct runs CheckConduct on a sane tx at height and checks that it left view alone
// and that a rejection comes with no changes.
func checkConduct(t *testing.T, tx *types.Transaction, height uint64, view *memConduct, same func(a, b types.Hash) (bool, error)) (*consensus.ConductChanges, error) {
	t.Helper()
	noErr(t, checkSanity(tx))
	before := view.clone()
	ch, err := consensus.CheckConduct(tx, tx.TxID(), consensus.ConductContext{Height: height, Time: conductTime, SameOwner: same}, view)
	if !reflect.DeepEqual(view, before) {
		t.Fatal("CheckConduct changed the view it was given")
	}
	if err != nil && ch != nil {
		t.Fatalf("rejected with changes %+v", ch)
	}
	if err == nil && ch == nil {
		t.Fatal("accepted without changes")
	}
	return ch, err
}

func TestCheckConductRules(t *testing.T) {
	// A refund whose second output pays the counterparty.
	refundSplit := refundTx(cOpen, alice)
	refundSplit.Outputs = append(refundSplit.Outputs, pay(50, bob))
	// A fulfil whose input 0 is another output of the counterparty, the escrow being input 1.
	fulfilEscrowSecond := fulfilTx(cOpen, bob)
	fulfilEscrowSecond.Inputs = []types.TxInput{input(op("bob", 0), bob), input(escrowOf(cOpen), bob)}
	// A fulfil and a refund spending output 1 of the contract's transaction.
	fulfilIndex1 := fulfilTx(cOpen, bob)
	fulfilIndex1.Inputs[0].PrevIndex = 1
	refundIndex1 := refundTx(cOpen, alice)
	refundIndex1.Inputs[0].PrevIndex = 1
	// A fulfil naming cOpen but spending cBack's escrow.
	fulfilOther := fulfilTx(cOpen, bob)
	fulfilOther.Inputs[0] = input(escrowOf(cBack), bob)

	tests := []struct {
		name   string
		tx     *types.Transaction
		height uint64
		want   consensus.ErrorKind // "": accepted
	}{
		// AgentRegister: signer not an agent.
		{"register", registerTx(dave), conductHeight, ""},
		{"register an agent", registerTx(alice), conductHeight, consensus.ErrAlreadyRegistered},
		// Vouch: signer an agent with score ≥ 700; target another agent; not vouched before.
		{"vouch", vouchTx(carol, alice), conductHeight, ""},
		{"vouch by no agent", vouchTx(dave, alice), conductHeight, consensus.ErrNotAnAgent},
		{"vouch with score 500", vouchTx(alice, bob), conductHeight, consensus.ErrScoreTooLow},
		{"vouch for no agent", vouchTx(carol, dave), conductHeight, consensus.ErrAgentNotFound},
		{"vouch twice", vouchTx(carol, bob), conductHeight, consensus.ErrAlreadyVouched},
		// ContractCreate: signer an agent, counterparty another agent.
		{"create", createTx(alice, bob, consensus.DefaultExpiry), conductHeight, ""},
		{"create with a new counterparty", createTx(alice, carol, 10), conductHeight, ""},
		{"create by no agent", createTx(dave, bob, 10), conductHeight, consensus.ErrNotAnAgent},
		{"create with no agent", createTx(alice, dave, 10), conductHeight, consensus.ErrAgentNotFound},
		// ContractFulfil: input 0 spends the escrow, signed by the counterparty; open, not expired.
		{"fulfil", fulfilTx(cOpen, bob), conductHeight, ""},
		{"fulfil at expires_at − 1", fulfilTx(cOpen, bob), conductExpires - 1, ""},
		{"fulfil at expires_at", fulfilTx(cOpen, bob), conductExpires, consensus.ErrContractExpired},
		{"fulfil after expires_at", fulfilTx(cOpen, bob), conductExpires + 1000, consensus.ErrContractExpired},
		{"fulfil the other way round", fulfilTx(cBack, alice), conductHeight, ""},
		{"fulfil by the initiator", fulfilTx(cOpen, alice), conductHeight, consensus.ErrNotCounterparty},
		{"fulfil by a third agent", fulfilTx(cOpen, carol), conductHeight, consensus.ErrNotCounterparty},
		{"fulfil an unknown contract", fulfilTx(cNone, bob), conductHeight, consensus.ErrContractNotFound},
		{"fulfil a fulfilled contract", fulfilTx(cDone, bob), conductHeight, consensus.ErrContractNotOpen},
		{"fulfil an expired contract", fulfilTx(cGone, bob), conductHeight, consensus.ErrContractNotOpen},
		{"fulfil with the escrow as input 1", fulfilEscrowSecond, conductHeight, consensus.ErrEscrowNotSpent},
		{"fulfil spending output 1", fulfilIndex1, conductHeight, consensus.ErrEscrowNotSpent},
		{"fulfil spending another contract's escrow", fulfilOther, conductHeight, consensus.ErrEscrowNotSpent},
		// ContractRefund: input 0 spends the escrow, signed by the initiator; height ≥ expires_at;
		// every output pays the initiator.
		{"refund at expires_at", refundTx(cOpen, alice), conductExpires, ""},
		{"refund after expires_at", refundTx(cOpen, alice), conductExpires + 1000, ""},
		{"refund at expires_at − 1", refundTx(cOpen, alice), conductExpires - 1, consensus.ErrContractNotExpired},
		{"refund by the counterparty", refundTx(cOpen, bob), conductExpires, consensus.ErrNotInitiator},
		{"refund by a third agent", refundTx(cOpen, carol), conductExpires, consensus.ErrNotInitiator},
		{"refund paying the counterparty", refundSplit, conductExpires, consensus.ErrRefundOutputs},
		{"refund of an unknown contract", refundTx(cNone, alice), conductExpires, consensus.ErrContractNotFound},
		{"refund of a fulfilled contract", refundTx(cDone, alice), conductExpires, consensus.ErrContractNotOpen},
		{"refund of an expired contract", refundTx(cGone, alice), conductExpires, consensus.ErrContractNotOpen},
		{"refund spending output 1", refundIndex1, conductExpires, consensus.ErrEscrowNotSpent},
		// Review: contract fulfilled; signer and subject its two participants; one per signer.
		{"review by the counterparty", reviewTx(cDone, bob, alice, 10), conductHeight, ""},
		{"review of an unknown contract", reviewTx(cNone, bob, alice, 10), conductHeight, consensus.ErrContractNotFound},
		{"review of an open contract", reviewTx(cOpen, bob, alice, 10), conductHeight, consensus.ErrContractNotFulfilled},
		{"review of an expired contract", reviewTx(cGone, bob, alice, 1), conductHeight, consensus.ErrContractNotFulfilled},
		{"review by a third agent", reviewTx(cDone, carol, alice, 10), conductHeight, consensus.ErrNotParticipant},
		{"review of a third agent", reviewTx(cDone, bob, carol, 10), conductHeight, consensus.ErrNotParticipant},
		{"review by no agent", reviewTx(cDone, dave, bob, 10), conductHeight, consensus.ErrNotParticipant},
		{"review twice", reviewTx(cDone, alice, bob, 3), conductHeight, consensus.ErrAlreadyReviewed},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ch, err := checkConduct(t, tc.tx, tc.height, conductFixture(), nil)
			if tc.want == "" {
				noErr(t, err)
				if ch.Empty() {
					t.Fatal("accepted with empty changes")
				}
				return
			}
			wantKind(t, err, tc.want)
		})
	}

	t.Run("vouch at the score boundary", func(t *testing.T) {
		view := conductFixture()
		view.agents[carol.pkh].Score = consensus.VouchMinScore
		noErr(t, second(checkConduct(t, vouchTx(carol, alice), conductHeight, view, nil)))
		view.agents[carol.pkh].Score = consensus.VouchMinScore - 1
		_, err := checkConduct(t, vouchTx(carol, alice), conductHeight, view, nil)
		wantKind(t, err, consensus.ErrScoreTooLow)
	})
	t.Run("review by each side once", func(t *testing.T) {
		view := conductFixture()
		view.contracts[cDone].Reviewed = 0
		noErr(t, second(checkConduct(t, reviewTx(cDone, alice, bob, 5), conductHeight, view, nil)))
		noErr(t, second(checkConduct(t, reviewTx(cDone, bob, alice, 5), conductHeight, view, nil)))
		view.contracts[cDone].Reviewed = consensus.ReviewedByCounterparty
		_, err := checkConduct(t, reviewTx(cDone, bob, alice, 5), conductHeight, view, nil)
		wantKind(t, err, consensus.ErrAlreadyReviewed)
		noErr(t, second(checkConduct(t, reviewTx(cDone, alice, bob, 5), conductHeight, view, nil)))
	})
	t.Run("not an agent kind", func(t *testing.T) {
		_, err := checkConduct(t, transfer([]types.TxInput{input(op("x", 0), alice)}, pay(1, bob)), conductHeight, conductFixture(), nil)
		wantKind(t, err, consensus.ErrBadAgentPayload)
	})
	t.Run("storage errors pass through", func(t *testing.T) {
		for _, tx := range []*types.Transaction{registerTx(dave), vouchTx(carol, alice), createTx(alice, bob, 10),
			fulfilTx(cOpen, bob), refundTx(cOpen, alice), reviewTx(cDone, bob, alice, 4)} {
			ch, err := consensus.CheckConduct(tx, tx.TxID(), consensus.ConductContext{Height: conductExpires}, errConduct{})
			if err != errStorage || ch != nil {
				t.Fatalf("%s: got %v, %v; want the storage error unchanged", tx.Kind, ch, err)
			}
		}
		// And from SameOwner.
		same := func(a, b types.Hash) (bool, error) { return false, errStorage }
		for _, tx := range []*types.Transaction{vouchTx(carol, alice), fulfilTx(cOpen, bob), reviewTx(cDone, bob, alice, 4)} {
			ch, err := consensus.CheckConduct(tx, tx.TxID(), consensus.ConductContext{Height: conductHeight, SameOwner: same}, conductFixture())
			if err != errStorage || ch != nil {
				t.Fatalf("%s: got %v, %v; want the storage error unchanged", tx.Kind, ch, err)
			}
		}
	})
}

// ---------------------------------------------------------------------------------------------
// CheckConduct: the effects of the protocol §9 table and the damping of protocol §9.2, each expected
// record written out by hand.
// ---------------------------------------------------------------------------------------------

// agentRec is the fixture's record of k with changes applied.
func agentRec(view *memConduct, k key, change func(a *consensus.AgentRecord)) *consensus.AgentRecord {
	a := *view.agents[k.pkh]
	change(&a)
	return &a
}

func contractRec(view *memConduct, id types.Hash, change func(c *consensus.ContractRecord)) *consensus.ContractRecord {
	c := *view.contracts[id]
	change(&c)
	return &c
}

func wantChanges(t *testing.T, got, want *consensus.ConductChanges) {
	t.Helper()
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("changes\n got %s\nwant %s", dumpChanges(got), dumpChanges(want))
	}
}

func dumpChanges(c *consensus.ConductChanges) string {
	if c == nil {
		return "nil"
	}
	s := ""
	for k, a := range c.Agents {
		s += "\n  agent " + k.String()[:8] + ": " + fmtRecord(a)
	}
	for k, v := range c.Contracts {
		s += "\n  contract " + k.String()[:8] + ": " + fmtRecord(v)
	}
	return s + "\n  vouches " + fmtRecord(c.Vouches) + " pairs " + fmtRecord(c.Pairs) + " reviews " + fmtRecord(c.Reviews)
}

func fmtRecord(v any) string { return fmt.Sprintf("%+v", v) }

func TestCheckConductEffects(t *testing.T) {
	ab := consensus.PairOf(alice.pkh, bob.pkh)
	t.Run("register", func(t *testing.T) {
		view := conductFixture()
		tx := registerTx(dave)
		ch, err := checkConduct(t, tx, conductHeight, view, nil)
		noErr(t, err)
		want := consensus.NewConductChanges()
		want.Agents[dave.pkh] = &consensus.AgentRecord{Score: 500, RegisteredHeight: conductHeight, RegisteredTime: conductTime,
			Stake: types.Outpoint{TxID: tx.TxID(), Index: 0}}
		wantChanges(t, ch, want)
	})
	t.Run("vouch: target +30 and both counts", func(t *testing.T) {
		view := conductFixture()
		ch, err := checkConduct(t, vouchTx(carol, alice), conductHeight, view, nil)
		noErr(t, err)
		want := consensus.NewConductChanges()
		want.Agents[alice.pkh] = agentRec(view, alice, func(a *consensus.AgentRecord) {
			a.Score = 530 // 500 + 30×500/500
			a.VouchesReceived = 1
		})
		want.Agents[carol.pkh] = agentRec(view, carol, func(a *consensus.AgentRecord) { a.VouchesGiven = 2 }) // score stays 720
		want.Vouches[consensus.HashPair{carol.pkh, alice.pkh}] = struct{}{}
		wantChanges(t, ch, want)

		// From 750: 750 + 30×250/500 = 765.
		view.agents[alice.pkh].Score = 750
		ch, err = checkConduct(t, vouchTx(carol, alice), conductHeight, view, nil)
		noErr(t, err)
		if s := ch.Agents[alice.pkh].Score; s != 765 {
			t.Fatalf("score %d, want 765", s)
		}
	})
	t.Run("create: an open contract, agents untouched", func(t *testing.T) {
		view := conductFixture()
		tx := createTx(alice, bob, 10)
		ch, err := checkConduct(t, tx, conductHeight, view, nil)
		noErr(t, err)
		want := consensus.NewConductChanges()
		want.Contracts[tx.TxID()] = &consensus.ContractRecord{ID: tx.TxID(), Initiator: alice.pkh, Counterparty: bob.pkh,
			Value: 5_000, CreatedHeight: conductHeight, ExpiresAt: conductHeight + 10, Status: consensus.ContractOpen}
		wantChanges(t, ch, want)
	})
	t.Run("fulfil: counterparty +20, initiator +10, both completed", func(t *testing.T) {
		view := conductFixture()
		delete(view.pairs, ab) // the first contract between them
		tx := fulfilTx(cOpen, bob)
		ch, err := checkConduct(t, tx, conductHeight, view, nil)
		noErr(t, err)
		want := consensus.NewConductChanges()
		want.Agents[bob.pkh] = agentRec(view, bob, func(a *consensus.AgentRecord) {
			a.Score = 520 // 500 + 20×500/500
			a.ContractsCompleted = 1
		})
		want.Agents[alice.pkh] = agentRec(view, alice, func(a *consensus.AgentRecord) {
			a.Score = 510 // 500 + 10×500/500
			a.ContractsCompleted = 1
		})
		want.Contracts[cOpen] = contractRec(view, cOpen, func(c *consensus.ContractRecord) {
			c.Status = consensus.ContractFulfilled
			c.ClosedBy = tx.TxID()
		})
		want.Pairs[ab] = 1
		wantChanges(t, ch, want)
	})
	t.Run("refund: counterparty −50 and failed", func(t *testing.T) {
		view := conductFixture()
		tx := refundTx(cOpen, alice)
		ch, err := checkConduct(t, tx, conductExpires, view, nil)
		noErr(t, err)
		want := consensus.NewConductChanges()
		want.Agents[bob.pkh] = agentRec(view, bob, func(a *consensus.AgentRecord) {
			a.Score = 450 // 500 − 50×500/500
			a.ContractsFailed = 1
		})
		want.Contracts[cOpen] = contractRec(view, cOpen, func(c *consensus.ContractRecord) {
			c.Status = consensus.ContractExpired
			c.ClosedBy = tx.TxID()
		})
		wantChanges(t, ch, want)
		// From 300: 300 − 50×300/500 = 270.
		view.agents[bob.pkh].Score = 300
		ch, err = checkConduct(t, tx, conductExpires, view, nil)
		noErr(t, err)
		if s := ch.Agents[bob.pkh].Score; s != 270 {
			t.Fatalf("score %d, want 270", s)
		}
	})
	t.Run("review: (2·score − 11)×10, count and sum", func(t *testing.T) {
		for _, tc := range []struct {
			score uint8
			want  uint32
		}{
			{8, 550},  // d = 50: 500 + 50×500/500
			{2, 430},  // d = −70: 500 − 70×500/500
			{10, 590}, // d = 90
			{1, 410},  // d = −90
			{5, 490},  // d = −10
			{6, 510},  // d = 10
		} {
			view := conductFixture()
			view.agents[alice.pkh].ReviewsReceived = 3
			view.agents[alice.pkh].ReviewScoreSum = 17
			tx := reviewTx(cDone, bob, alice, tc.score)
			ch, err := checkConduct(t, tx, conductHeight, view, nil)
			noErr(t, err)
			want := consensus.NewConductChanges()
			want.Agents[alice.pkh] = agentRec(view, alice, func(a *consensus.AgentRecord) {
				a.Score = tc.want
				a.ReviewsReceived = 4
				a.ReviewScoreSum = 17 + uint64(tc.score)
			})
			want.Contracts[cDone] = contractRec(view, cDone, func(c *consensus.ContractRecord) {
				c.Reviewed = consensus.ReviewedByInitiator | consensus.ReviewedByCounterparty
			})
			want.Reviews[consensus.HashPair{bob.pkh, alice.pkh}] = 1 // alice's review of bob is another count
			wantChanges(t, ch, want)
		}
	})
}

func TestCheckConductDamping(t *testing.T) {
	ab := consensus.PairOf(alice.pkh, bob.pkh)
	fulfil := func(t *testing.T, view *memConduct, id types.Hash, signer key) *consensus.ConductChanges {
		t.Helper()
		ch, err := checkConduct(t, fulfilTx(id, signer), conductHeight, view, nil)
		noErr(t, err)
		return ch
	}
	scores := func(t *testing.T, ch *consensus.ConductChanges, want map[types.Hash]uint32) {
		t.Helper()
		for k, s := range want {
			if got := ch.Agents[k].Score; got != s {
				t.Fatalf("score %d, want %d", got, s)
			}
		}
	}
	t.Run("k-th fulfilled contract, either direction", func(t *testing.T) {
		view := conductFixture() // one fulfilled contract between alice and bob already
		ch := fulfil(t, view, cOpen, bob)
		// k = 2: bob 20/2 = 10 → 500 + 10×500/500; alice 10/2 = 5 → 500 + 5×500/500.
		scores(t, ch, map[types.Hash]uint32{bob.pkh: 510, alice.pkh: 505})
		if ch.Pairs[ab] != 2 || ch.Agents[bob.pkh].ContractsCompleted != 1 || ch.Agents[alice.pkh].ContractsCompleted != 1 {
			t.Fatalf("pairs %d, completed %d/%d", ch.Pairs[ab], ch.Agents[bob.pkh].ContractsCompleted, ch.Agents[alice.pkh].ContractsCompleted)
		}
		// The other way round counts as the same pair: k = 3, alice (counterparty) 20/4 = 5 →
		// 505, bob (initiator) 10/4 = 2 → 500 + 2×500/500 = 502.
		view.pairs[ab] = 2
		ch = fulfil(t, view, cBack, alice)
		scores(t, ch, map[types.Hash]uint32{alice.pkh: 505, bob.pkh: 502})
		if ch.Pairs[ab] != 3 {
			t.Fatalf("pairs %d, want 3", ch.Pairs[ab])
		}
		// Damping comes before the scaling: k = 3 from 600, initiator 10/4 = 2 → 600 + 2×400/500 = 601
		// (scaling first would give 10×400/500 / 4 = 2 → 602); counterparty 20/4 = 5 → 600 + 5×400/500 = 604.
		view.agents[alice.pkh].Score = 600
		view.agents[bob.pkh].Score = 600
		scores(t, fulfil(t, view, cOpen, bob), map[types.Hash]uint32{alice.pkh: 601, bob.pkh: 604})
		// The 11th: 20/1024 = 10/1024 = 0, no score; the counts still move in full.
		view = conductFixture()
		view.pairs[ab] = 10
		view.agents[bob.pkh].ContractsCompleted = 10
		ch = fulfil(t, view, cOpen, bob)
		scores(t, ch, map[types.Hash]uint32{alice.pkh: 500, bob.pkh: 500})
		if ch.Pairs[ab] != 11 || ch.Agents[bob.pkh].ContractsCompleted != 11 || ch.Agents[alice.pkh].ContractsCompleted != 1 {
			t.Fatalf("pairs %d, completed %d/%d", ch.Pairs[ab], ch.Agents[bob.pkh].ContractsCompleted, ch.Agents[alice.pkh].ContractsCompleted)
		}
		// Contracts with a third agent do not count: carol and bob start at k = 1.
		view = conductFixture()
		view.pairs[ab] = 5
		view.contracts[cOpen].Initiator = carol.pkh
		scores(t, fulfil(t, view, cOpen, bob), map[types.Hash]uint32{bob.pkh: 520, carol.pkh: 725}) // carol 720 + 10×280/500 = 725
	})
	t.Run("k-th review of the same subject by the same reviewer", func(t *testing.T) {
		for _, tc := range []struct {
			before uint64 // reviews bob gave alice before
			score  uint8
			want   uint32
		}{
			{0, 10, 590}, // d = 90
			{1, 10, 545}, // 90/2 = 45
			{2, 10, 522}, // 90/4 = 22
			{2, 1, 478},  // −90/4 = −22 (truncated towards zero)
			{1, 1, 455},  // −90/2 = −45
			{3, 3, 494},  // −50/8 = −6
			{3, 7, 503},  // 30/8 = 3
			{4, 6, 500},  // 10/16 = 0
			{4, 5, 500},  // −10/16 = 0
		} {
			view := conductFixture()
			view.reviews[consensus.HashPair{bob.pkh, alice.pkh}] = tc.before
			view.reviews[consensus.HashPair{bob.pkh, carol.pkh}] = 9   // other subjects do not count
			view.reviews[consensus.HashPair{carol.pkh, alice.pkh}] = 9 // nor other reviewers
			view.agents[alice.pkh].ReviewsReceived = 40
			view.agents[alice.pkh].ReviewScoreSum = 200
			ch, err := checkConduct(t, reviewTx(cDone, bob, alice, tc.score), conductHeight, view, nil)
			noErr(t, err)
			a := ch.Agents[alice.pkh]
			if a.Score != tc.want || a.ReviewsReceived != 41 || a.ReviewScoreSum != 200+uint64(tc.score) ||
				ch.Reviews[consensus.HashPair{bob.pkh, alice.pkh}] != tc.before+1 {
				t.Fatalf("review %d after %d: %+v, count %d; want score %d", tc.score, tc.before, *a,
					ch.Reviews[consensus.HashPair{bob.pkh, alice.pkh}], tc.want)
			}
		}
	})
	t.Run("same owner: no score, counts in full", func(t *testing.T) {
		same := sameOwners([2]key{alice, bob}, [2]key{carol, alice})
		view := conductFixture()
		ch, err := checkConduct(t, vouchTx(carol, alice), conductHeight, view, same)
		noErr(t, err)
		if a, c := ch.Agents[alice.pkh], ch.Agents[carol.pkh]; a.Score != 500 || a.VouchesReceived != 1 || c.VouchesGiven != 2 ||
			len(ch.Vouches) != 1 {
			t.Fatalf("vouch: %+v %+v", *a, *c)
		}
		ch, err = checkConduct(t, fulfilTx(cOpen, bob), conductHeight, view, same)
		noErr(t, err)
		if a, b := ch.Agents[alice.pkh], ch.Agents[bob.pkh]; a.Score != 500 || b.Score != 500 ||
			a.ContractsCompleted != 1 || b.ContractsCompleted != 1 || ch.Contracts[cOpen].Status != consensus.ContractFulfilled {
			t.Fatalf("fulfil: %+v %+v", *a, *b)
		}
		ch, err = checkConduct(t, reviewTx(cDone, bob, alice, 10), conductHeight, view, same)
		noErr(t, err)
		if a := ch.Agents[alice.pkh]; a.Score != 500 || a.ReviewsReceived != 1 || a.ReviewScoreSum != 10 {
			t.Fatalf("review: %+v", *a)
		}
		ch, err = checkConduct(t, reviewTx(cDone, bob, alice, 1), conductHeight, view, same)
		noErr(t, err)
		if a := ch.Agents[alice.pkh]; a.Score != 500 || a.ReviewsReceived != 1 || a.ReviewScoreSum != 1 {
			t.Fatalf("hostile review: %+v", *a)
		}
		// protocol §9.2 spares only the vouch, the fulfilment bonuses and the review: an expired
		// contract costs the counterparty its 50 even within one owner.
		ch, err = checkConduct(t, refundTx(cOpen, alice), conductExpires, view, same)
		noErr(t, err)
		if b := ch.Agents[bob.pkh]; b.Score != 450 || b.ContractsFailed != 1 {
			t.Fatalf("refund: %+v", *b)
		}
		// Other pairs are not affected: carol and bob are two owners.
		ch, err = checkConduct(t, vouchTx(carol, bob), conductHeight, newMemConductWith(view, func(m *memConduct) {
			delete(m.vouches, consensus.HashPair{carol.pkh, bob.pkh})
		}), same)
		noErr(t, err)
		if b := ch.Agents[bob.pkh]; b.Score != 530 {
			t.Fatalf("vouch of another owner: %+v", *b)
		}
	})
}

// newMemConductWith is a copy of m changed by f.
func newMemConductWith(m *memConduct, f func(m *memConduct)) *memConduct {
	c := m.clone()
	f(c)
	return c
}

// ---------------------------------------------------------------------------------------------
// Locked outputs: LockedSpender through CheckTransactionInputs (protocol §9.1).
// ---------------------------------------------------------------------------------------------

var (
	stakeA = op("stake alice", 0)
	coinsA = op("alice coins", 0)
	coinsB = op("bob coins", 0)
)

// lockedState: alice's stake, the escrows of cOpen (pays bob) and cBack (pays alice), and
// 10,000 unlocked subunits each for alice and bob, over the conduct fixture.
func lockedState() conductState {
	utxos := mapView{
		stakeA:          {Value: consensus.AgentStake, PubKeyHash: alice.pkh, Height: 10, Locked: true},
		escrowOf(cOpen): {Value: 5_000, PubKeyHash: bob.pkh, Height: 900, Locked: true},
		escrowOf(cBack): {Value: 5_000, PubKeyHash: alice.pkh, Height: 900, Locked: true},
		coinsA:          {Value: 10_000, PubKeyHash: alice.pkh, Height: 50},
		coinsB:          {Value: 10_000, PubKeyHash: bob.pkh, Height: 50},
	}
	return conductState{ValuedView: consensus.ValuedView{Utxos: utxos}, conduct: conductFixture()}
}

func TestLockedOutputs(t *testing.T) {
	ins := func(pairs ...any) []types.TxInput {
		var r []types.TxInput
		for i := 0; i < len(pairs); i += 2 {
			r = append(r, input(pairs[i].(types.Outpoint), pairs[i+1].(key)))
		}
		return r
	}
	// A fulfil of cOpen with the escrow as input 1.
	fulfilSecond := agentTx(types.KindContractFulfil, refPayload(cOpen), ins(coinsB, bob, escrowOf(cOpen), bob), pay(14_000, bob))
	refundSecond := agentTx(types.KindContractRefund, refPayload(cBack), ins(coinsB, bob, escrowOf(cBack), bob), pay(14_000, bob))
	// A fulfil whose payload names the stake's transaction as its contract.
	fulfilStake := agentTx(types.KindContractFulfil, refPayload(stakeA.TxID), ins(stakeA, alice), pay(1, alice))
	refundStake := agentTx(types.KindContractRefund, refPayload(stakeA.TxID), ins(stakeA, alice), pay(1, alice))
	// A fulfil of cBack spending cOpen's escrow.
	fulfilOther := agentTx(types.KindContractFulfil, refPayload(cBack), ins(escrowOf(cOpen), bob), pay(1, bob))
	fulfilPlus := agentTx(types.KindContractFulfil, refPayload(cOpen), ins(escrowOf(cOpen), bob, coinsB, bob), pay(14_000, bob))

	tests := []struct {
		name string
		tx   *types.Transaction
		want consensus.ErrorKind // "": accepted
		fee  uint64
	}{
		{"transfer of the stake", transfer(ins(stakeA, alice), pay(1, alice)), consensus.ErrLockedOutput, 0},
		{"transfer of the stake as input 1", transfer(ins(coinsA, alice, stakeA, alice), pay(1, alice)), consensus.ErrLockedOutput, 0},
		{"transfer of an escrow by its payee", transfer(ins(escrowOf(cOpen), bob), pay(1, bob)), consensus.ErrLockedOutput, 0},
		{"transfer of an escrow by the initiator", transfer(ins(escrowOf(cOpen), alice), pay(1, alice)), consensus.ErrLockedOutput, 0},
		{"vouch spending the stake", agentTx(types.KindVouch, vouchPayload(bob), ins(stakeA, alice), pay(1, alice)), consensus.ErrLockedOutput, 0},
		{"register spending the stake", agentTx(types.KindAgentRegister, nil, ins(stakeA, alice), pay(consensus.AgentStake, alice)), consensus.ErrLockedOutput, 0},
		{"review spending an escrow", agentTx(types.KindReview, reviewPayload(cDone, alice, 9), ins(escrowOf(cOpen), bob), pay(1, bob)), consensus.ErrLockedOutput, 0},
		{"create spending an escrow", agentTx(types.KindContractCreate, createPayload(alice, 10), ins(escrowOf(cOpen), bob), pay(1_000, alice)), consensus.ErrLockedOutput, 0},
		{"fulfil with the escrow as input 1", fulfilSecond, consensus.ErrLockedOutput, 0},
		{"refund with the escrow as input 1", refundSecond, consensus.ErrLockedOutput, 0},
		{"fulfil spending the stake", fulfilStake, consensus.ErrLockedOutput, 0},
		{"refund spending the stake", refundStake, consensus.ErrLockedOutput, 0},
		{"fulfil spending another contract's escrow", fulfilOther, consensus.ErrLockedOutput, 0},
		{"fulfil by the counterparty", fulfilTx(cOpen, bob), "", 100},
		{"fulfil by the counterparty with more coins", fulfilPlus, "", 1_000},
		{"fulfil with the initiator's key", fulfilTx(cOpen, alice), consensus.ErrPubKeyMismatch, 0},
		{"refund with the initiator's key", refundTx(cOpen, alice), "", 100},
		{"refund with the counterparty's key", refundTx(cOpen, bob), consensus.ErrPubKeyMismatch, 0},
		{"refund by a third key", refundTx(cOpen, carol), consensus.ErrPubKeyMismatch, 0},
		{"refund of cBack by its initiator", refundTx(cBack, bob), "", 100},
		{"fulfil of cBack by its counterparty", fulfilTx(cBack, alice), "", 100},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			res, err := consensus.CheckTransactionInputs(tc.tx, conductExpires, lockedState())
			if tc.want != "" {
				wantKind(t, err, tc.want)
				return
			}
			noErr(t, err)
			if res.Fee != tc.fee {
				t.Fatalf("fee %d, want %d", res.Fee, tc.fee)
			}
		})
	}
	t.Run("an escrow whose contract is unknown", func(t *testing.T) {
		st := lockedState()
		delete(st.conduct.(*memConduct).contracts, cOpen)
		_, err := consensus.CheckTransactionInputs(fulfilTx(cOpen, bob), conductHeight, st)
		wantKind(t, err, consensus.ErrLockedOutput)
	})
	t.Run("LockedSpender names the signer", func(t *testing.T) {
		st := lockedState()
		e := st.Utxos.(mapView)[escrowOf(cOpen)]
		who, err := consensus.LockedSpender(fulfilTx(cOpen, carol), 0, e, st.conduct)
		noErr(t, err)
		if who != bob.pkh {
			t.Fatal("the fulfil's spender is not the escrow's payee")
		}
		who, err = consensus.LockedSpender(refundTx(cOpen, carol), 0, e, st.conduct)
		noErr(t, err)
		if who != alice.pkh {
			t.Fatal("the refund's spender is not the initiator")
		}
		_, err = consensus.LockedSpender(fulfilTx(cOpen, bob), 0, e, errConduct{})
		if err != errStorage {
			t.Fatalf("got %v, want the storage error", err)
		}
	})
	t.Run("refund with the counterparty's key in CheckConduct", func(t *testing.T) {
		_, err := checkConduct(t, refundTx(cOpen, bob), conductExpires, conductFixture(), nil)
		wantKind(t, err, consensus.ErrNotInitiator)
	})
	t.Run("LockedOutput", func(t *testing.T) {
		for k := types.KindCoinbase; k <= types.KindReview; k++ {
			tx := &types.Transaction{Kind: k}
			want := k == types.KindAgentRegister || k == types.KindContractCreate
			if consensus.LockedOutput(tx, 0) != want || consensus.LockedOutput(tx, 1) {
				t.Fatalf("%s: LockedOutput(0) = %v", k, consensus.LockedOutput(tx, 0))
			}
		}
	})
}

// ---------------------------------------------------------------------------------------------
// Agent transactions in a block: CheckBlockConnect layers each one's effect over the next.
// ---------------------------------------------------------------------------------------------

var (
	blkA  = op("blk alice", 0)   // 100 COIN, alice
	blkA2 = op("blk alice 2", 0) // 100 COIN, alice
	blkB  = op("blk bob", 0)     // 100 COIN, bob
)

func agentBlockState(conduct *memConduct) conductState {
	utxos := mapView{
		blkA:  {Value: 100 * coin, PubKeyHash: alice.pkh, Height: 100, ClusterID: consensus.ClusterIDOf(alice.pkh)},
		blkA2: {Value: 100 * coin, PubKeyHash: alice.pkh, Height: 100, ClusterID: consensus.ClusterIDOf(alice.pkh)},
		blkB:  {Value: 100 * coin, PubKeyHash: bob.pkh, Height: 100, ClusterID: consensus.ClusterIDOf(bob.pkh)},
	}
	return conductState{ValuedView: consensus.ValuedView{Utxos: utxos}, conduct: conduct}
}

// agentBlock is a block at height (a coinbase paying the subsidy, then txs) over view.
func agentBlock(height uint64, view consensus.StateView, txs ...*types.Transaction) consensus.BlockInput {
	b := newBlock(append([]*types.Transaction{coinbase(height, pay(consensus.Subsidy(height), miner))}, txs...)...)
	return consensus.BlockInput{Block: b, TxIDs: b.TxIDs(), Height: height, MedianTimePast: connMTP,
		Magic: regtestMagic, View: view, SigWorkers: 1}
}

// agentBlockTxs, all signed:
//
//	reg1:   alice registers from blkA (stake + change)
//	reg2:   bob registers from blkB
//	create: alice, from reg1's change, a contract with bob: escrow 10,000, expiry 1,440
//	fulfil: bob spends the escrow
//	rev1:   alice reviews bob, 9 stars (from create's change)
//	rev2:   bob reviews alice, 4 stars (from reg2's change)
func agentBlockTxs() (reg1, reg2, create, fulfil, rev1, rev2 *types.Transaction) {
	const fee = 1_000
	change := 50*coin - fee
	reg1 = sign(agentTx(types.KindAgentRegister, nil, []types.TxInput{input(blkA, alice)}, pay(consensus.AgentStake, alice), pay(change, alice)), regtestMagic, alice)
	reg2 = sign(agentTx(types.KindAgentRegister, nil, []types.TxInput{input(blkB, bob)}, pay(consensus.AgentStake, bob), pay(change, bob)), regtestMagic, bob)
	create = sign(agentTx(types.KindContractCreate, createPayload(bob, consensus.DefaultExpiry),
		[]types.TxInput{input(types.Outpoint{TxID: reg1.TxID(), Index: 1}, alice)}, pay(10_000, bob), pay(change-10_000-fee, alice)), regtestMagic, alice)
	fulfil = sign(agentTx(types.KindContractFulfil, refPayload(create.TxID()),
		[]types.TxInput{input(types.Outpoint{TxID: create.TxID()}, bob)}, pay(10_000-fee, bob)), regtestMagic, bob)
	rev1 = sign(agentTx(types.KindReview, reviewPayload(create.TxID(), bob, 9),
		[]types.TxInput{input(types.Outpoint{TxID: create.TxID(), Index: 1}, alice)}, pay(change-10_000-2*fee, alice)), regtestMagic, alice)
	rev2 = sign(agentTx(types.KindReview, reviewPayload(create.TxID(), alice, 4),
		[]types.TxInput{input(types.Outpoint{TxID: reg2.TxID(), Index: 1}, bob)}, pay(change-fee, bob)), regtestMagic, bob)
	return
}

func TestCheckBlockConnectConduct(t *testing.T) {
	const h = connHeight
	reg1, reg2, create, fulfil, rev1, rev2 := agentBlockTxs()
	// wantTx checks the kind and that the message names the transaction at index i.
	wantTx := func(t *testing.T, in consensus.BlockInput, i int, kind consensus.ErrorKind) {
		t.Helper()
		_, err := consensus.CheckBlockConnect(in)
		wantKind(t, err, kind)
		if !strings.Contains(err.Error(), in.TxIDs[i].String()) {
			t.Fatalf("message %q does not name transaction %d", err, i)
		}
	}

	t.Run("register, create, fulfil and review in one block", func(t *testing.T) {
		base := newMemConduct()
		in := agentBlock(h, agentBlockState(base), reg1, reg2, create, fulfil, rev1, rev2)
		_, err := sanity(in.Block)
		noErr(t, err)
		eff, err := consensus.CheckBlockConnect(in)
		noErr(t, err)
		if !reflect.DeepEqual(base, newMemConduct()) {
			t.Fatal("CheckBlockConnect changed the conduct view")
		}
		ts := in.Block.Header.Timestamp
		want := consensus.NewConductChanges()
		want.Agents[alice.pkh] = &consensus.AgentRecord{
			Score:              480, // 500 + 10×500/500 = 510 (fulfil); 510 − 30×510/500 = 510 − 30 (review of 4: d = −30)
			ContractsCompleted: 1, ReviewsReceived: 1, ReviewScoreSum: 4,
			RegisteredHeight: h, RegisteredTime: ts, Stake: types.Outpoint{TxID: reg1.TxID()},
		}
		want.Agents[bob.pkh] = &consensus.AgentRecord{
			Score:              587, // 500 + 20×500/500 = 520 (fulfil); 520 + 70×480/500 = 520 + 67 (review of 9: d = 70)
			ContractsCompleted: 1, ReviewsReceived: 1, ReviewScoreSum: 9,
			RegisteredHeight: h, RegisteredTime: ts, Stake: types.Outpoint{TxID: reg2.TxID()},
		}
		want.Contracts[create.TxID()] = &consensus.ContractRecord{ID: create.TxID(), Initiator: alice.pkh, Counterparty: bob.pkh,
			Value: 10_000, CreatedHeight: h, ExpiresAt: h + consensus.DefaultExpiry, Status: consensus.ContractFulfilled,
			ClosedBy: fulfil.TxID(), Reviewed: consensus.ReviewedByInitiator | consensus.ReviewedByCounterparty}
		want.Pairs[consensus.PairOf(alice.pkh, bob.pkh)] = 1
		want.Reviews[consensus.HashPair{alice.pkh, bob.pkh}] = 1
		want.Reviews[consensus.HashPair{bob.pkh, alice.pkh}] = 1
		wantChanges(t, eff.Conduct, want)

		// The stakes stay, locked; the escrow was spent in the block.
		locked := map[types.Outpoint]bool{}
		for _, c := range eff.Created {
			locked[c.Outpoint] = c.Entry.Locked
		}
		wantLocked := map[types.Outpoint]bool{
			{TxID: in.TxIDs[0]}: false,
			{TxID: reg1.TxID()}: true, {TxID: reg2.TxID()}: true,
			{TxID: fulfil.TxID()}: false, {TxID: rev1.TxID()}: false, {TxID: rev2.TxID()}: false,
		}
		if !reflect.DeepEqual(locked, wantLocked) {
			t.Fatalf("created (locked) %v, want %v", locked, wantLocked)
		}
		if eff.Fees != 6*1_000 {
			t.Fatalf("fees %d", eff.Fees)
		}
	})
	t.Run("the escrow comes out locked", func(t *testing.T) {
		in := agentBlock(h, agentBlockState(newMemConduct()), reg1, reg2, create)
		eff, err := consensus.CheckBlockConnect(in)
		noErr(t, err)
		var found bool
		for _, c := range eff.Created {
			want := c.Outpoint == types.Outpoint{TxID: reg1.TxID()} || c.Outpoint == types.Outpoint{TxID: reg2.TxID()} ||
				c.Outpoint == types.Outpoint{TxID: create.TxID()}
			if c.Entry.Locked != want {
				t.Fatalf("%s locked %v", c.Outpoint, c.Entry.Locked)
			}
			if c.Outpoint == (types.Outpoint{TxID: create.TxID()}) {
				found = true
				if c.Entry.Value != 10_000 || c.Entry.PubKeyHash != bob.pkh {
					t.Fatalf("escrow %+v", c.Entry)
				}
			}
		}
		if !found {
			t.Fatal("no escrow created")
		}
		if c := eff.Conduct.Contracts[create.TxID()]; c == nil || c.Status != consensus.ContractOpen {
			t.Fatalf("contract %+v", c)
		}
	})
	t.Run("a block without agent transactions has no conduct effect", func(t *testing.T) {
		tx := sign(transfer([]types.TxInput{input(blkA, alice)}, pay(coin, bob)), regtestMagic, alice)
		eff, err := consensus.CheckBlockConnect(agentBlock(h, agentBlockState(newMemConduct()), tx))
		noErr(t, err)
		if eff.Conduct != nil {
			t.Fatalf("conduct %+v", eff.Conduct)
		}
	})
	t.Run("registering twice in one block", func(t *testing.T) {
		again := sign(agentTx(types.KindAgentRegister, nil, []types.TxInput{input(blkA2, alice)}, pay(consensus.AgentStake, alice)), regtestMagic, alice)
		wantTx(t, agentBlock(h, agentBlockState(newMemConduct()), reg1, reg2, again), 3, consensus.ErrAlreadyRegistered)
		// Alone, it is valid.
		noErr(t, second(consensus.CheckBlockConnect(agentBlock(h, agentBlockState(newMemConduct()), again))))
	})
	t.Run("order matters", func(t *testing.T) {
		st := agentBlockState(newMemConduct())
		// The contract before bob's registration: no counterparty yet.
		wantTx(t, agentBlock(h, st, reg1, create, reg2), 2, consensus.ErrAgentNotFound)
		// The fulfil before the contract.
		wantTx(t, agentBlock(h, st, reg1, reg2, fulfil, create), 3, consensus.ErrContractNotFound)
		// The review before the fulfil.
		wantTx(t, agentBlock(h, st, reg1, reg2, create, rev1, fulfil), 4, consensus.ErrContractNotFulfilled)
	})
	t.Run("the stake cannot be spent in the block that made it", func(t *testing.T) {
		spend := sign(transfer([]types.TxInput{input(types.Outpoint{TxID: reg1.TxID()}, alice)}, pay(coin, bob)), regtestMagic, alice)
		wantTx(t, agentBlock(h, agentBlockState(newMemConduct()), reg1, spend), 2, consensus.ErrLockedOutput)
		// Nor the escrow outside its fulfil.
		spend = sign(transfer([]types.TxInput{input(types.Outpoint{TxID: create.TxID()}, bob)}, pay(1, bob)), regtestMagic, bob)
		wantTx(t, agentBlock(h, agentBlockState(newMemConduct()), reg1, reg2, create, spend), 4, consensus.ErrLockedOutput)
	})
	t.Run("refund over the chain's contract", func(t *testing.T) {
		st := agentBlockState(conductFixture())
		st.Utxos.(mapView)[escrowOf(cOpen)] = &consensus.UtxoEntry{Value: 5_000, PubKeyHash: bob.pkh, Height: 900, Locked: true}
		byBob := sign(refundTx(cOpen, bob), regtestMagic, bob)
		wantTx(t, agentBlock(conductExpires, st, byBob), 1, consensus.ErrNotInitiator)
		byAlice := sign(refundTx(cOpen, alice), regtestMagic, alice)
		wantTx(t, agentBlock(conductExpires-1, st, byAlice), 1, consensus.ErrContractNotExpired)
		eff, err := consensus.CheckBlockConnect(agentBlock(conductExpires, st, byAlice))
		noErr(t, err)
		if b := eff.Conduct.Agents[bob.pkh]; b.Score != 450 || b.ContractsFailed != 1 || eff.Conduct.Contracts[cOpen].Status != consensus.ContractExpired {
			t.Fatalf("conduct %s", dumpChanges(eff.Conduct))
		}
		// And a fulfil of it one block earlier.
		byBobF := sign(fulfilTx(cOpen, bob), regtestMagic, bob)
		noErr(t, second(consensus.CheckBlockConnect(agentBlock(conductExpires-1, st, byBobF))))
		wantTx(t, agentBlock(conductExpires, st, byBobF), 1, consensus.ErrContractExpired)
	})
	t.Run("same owner from the parent's clusters", func(t *testing.T) {
		base := newMemConduct()
		st := agentBlockState(base)
		st.owner = map[types.Hash]types.Hash{bob.pkh: alice.pkh}
		eff, err := consensus.CheckBlockConnect(agentBlock(h, st, reg1, reg2, create, fulfil, rev1, rev2))
		noErr(t, err)
		a, b := eff.Conduct.Agents[alice.pkh], eff.Conduct.Agents[bob.pkh]
		if a.Score != 500 || b.Score != 500 || a.ContractsCompleted != 1 || b.ReviewsReceived != 1 || a.ReviewScoreSum != 4 {
			t.Fatalf("conduct %s", dumpChanges(eff.Conduct))
		}
	})
}

// TestConductOverlay: the overlay's changes shadow its base, CheckConduct over an overlay
// changes neither, and Merge makes a transaction's effect visible to the next one.
func TestConductOverlay(t *testing.T) {
	base := conductFixture()
	before := base.clone()
	o := consensus.NewConductOverlay(base)
	if !o.Empty() {
		t.Fatal("a new overlay is not empty")
	}
	o.Agents[alice.pkh] = &consensus.AgentRecord{Score: 900}
	kept := *o.Agents[alice.pkh]
	ctx := consensus.ConductContext{Height: conductHeight}

	// alice is trusted in the overlay, not in the base.
	tx := vouchTx(alice, bob)
	_, err := consensus.CheckConduct(tx, tx.TxID(), ctx, base)
	wantKind(t, err, consensus.ErrScoreTooLow)
	ch, err := consensus.CheckConduct(tx, tx.TxID(), ctx, o)
	noErr(t, err)
	if *o.Agents[alice.pkh] != kept || !reflect.DeepEqual(base, before) || len(o.Vouches) != 0 {
		t.Fatal("CheckConduct changed the overlay or its base")
	}
	if ch.Agents[bob.pkh].Score != 530 || ch.Agents[alice.pkh].VouchesGiven != 1 {
		t.Fatalf("changes %s", dumpChanges(ch))
	}
	o.Merge(ch)
	if done, _ := o.Vouched(alice.pkh, bob.pkh); !done {
		t.Fatal("the merged vouch is not seen")
	}
	_, err = consensus.CheckConduct(tx, tx.TxID(), ctx, o)
	wantKind(t, err, consensus.ErrAlreadyVouched)

	// Fulfil and review counts: the overlay's count wins over the base's.
	f := fulfilTx(cOpen, bob)
	ch, err = consensus.CheckConduct(f, f.TxID(), ctx, o)
	noErr(t, err)
	o.Merge(ch)
	if n, _ := o.FulfilledBetween(bob.pkh, alice.pkh); n != 2 {
		t.Fatalf("fulfilled between %d, want 2", n)
	}
	if c, _, _ := o.Contract(cOpen); c.Status != consensus.ContractFulfilled || base.contracts[cOpen].Status != consensus.ContractOpen {
		t.Fatal("the fulfilment is not in the overlay alone")
	}
	r := reviewTx(cOpen, bob, alice, 10)
	ch, err = consensus.CheckConduct(r, r.TxID(), ctx, o)
	noErr(t, err)
	// alice 900 (overlay, vouch left her score) + fulfil 10/2 = 5 → 900 + 5×100/500 = 901;
	// then the review 90 → 901 + 90×99/500 = 901 + 17.
	if a := ch.Agents[alice.pkh]; a.Score != 918 || a.ReviewsReceived != 1 {
		t.Fatalf("alice %+v", *a)
	}
	o.Merge(ch)
	if n, _ := o.ReviewsOf(bob.pkh, alice.pkh); n != 1 {
		t.Fatalf("reviews %d", n)
	}
	_, err = consensus.CheckConduct(r, r.TxID(), ctx, o)
	wantKind(t, err, consensus.ErrAlreadyReviewed)
	if !reflect.DeepEqual(base, before) {
		t.Fatal("the base changed")
	}
}

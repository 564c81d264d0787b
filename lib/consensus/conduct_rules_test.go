package consensus_test

import (
	"fmt"
	"reflect"
	"testing"

	"github.com/cointoolkit/coin/lib/consensus"
	"github.com/cointoolkit/coin/lib/types"
)

// wantRule checks that err is a RuleError of kind whose message is exactly msg.
func wantRule(t testing.TB, err error, kind consensus.ErrorKind, msg string) {
	t.Helper()
	wantKind(t, err, kind)
	if err.Error() != msg {
		t.Fatalf("message %q, want %q", err.Error(), msg)
	}
}

// CheckConduct refuses a payload that does not decode with ErrBadAgentPayload and the decoder's
// words, for every kind, and changes nothing: it used to read such a payload as zeros
// (p, _ := ...). CheckTransactionSanity refuses each of these first, so no transaction the
// chain accepted before is refused now.
func TestCheckConductPayloadErrors(t *testing.T) {
	cut := func(tx *types.Transaction, n int) *types.Transaction {
		tx.Payload = append([]byte(nil), tx.Payload[:n]...)
		return tx
	}
	grow := func(tx *types.Transaction) *types.Transaction { tx.Payload = append(tx.Payload, 0); return tx }
	tests := []struct {
		name string
		tx   *types.Transaction
		msg  string
	}{
		{"register with a payload", func() *types.Transaction { tx := registerTx(dave); tx.Payload = []byte{0}; return tx }(),
			"agent registration carries a payload"},
		{"vouch short", cut(vouchTx(carol, alice), 31), "decode vouch payload: bincode: unexpected end of input (at byte 0)"},
		{"vouch empty", cut(vouchTx(carol, alice), 0), "decode vouch payload: bincode: unexpected end of input (at byte 0)"},
		{"vouch long", grow(vouchTx(carol, alice)), "decode vouch payload: bincode: trailing bytes: 1 bytes after the value"},
		{"create short", cut(createTx(alice, bob, 10), 32), "decode contract create payload: bincode: unexpected end of input (at byte 32)"},
		{"create long", grow(createTx(alice, bob, 10)), "decode contract create payload: bincode: trailing bytes: 1 bytes after the value"},
		{"fulfil short", cut(fulfilTx(cOpen, bob), 31), "decode contract payload: bincode: unexpected end of input (at byte 0)"},
		{"fulfil long", grow(fulfilTx(cOpen, bob)), "decode contract payload: bincode: trailing bytes: 1 bytes after the value"},
		{"refund short", cut(refundTx(cOpen, alice), 1), "decode contract payload: bincode: unexpected end of input (at byte 0)"},
		{"refund long", grow(refundTx(cOpen, alice)), "decode contract payload: bincode: trailing bytes: 1 bytes after the value"},
		{"review short", cut(reviewTx(cDone, bob, alice, 5), 64), "decode review payload: bincode: unexpected end of input (at byte 64)"},
		{"review long", grow(reviewTx(cDone, bob, alice, 5)), "decode review payload: bincode: trailing bytes: 1 bytes after the value"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			// The context-free check refuses it with the same kind and words.
			wantRule(t, consensus.CheckAgentKind(tc.tx), consensus.ErrBadAgentPayload, tc.msg)
			wantKind(t, checkSanity(tc.tx), consensus.ErrBadAgentPayload)
			view := conductFixture()
			before := view.clone()
			ch, err := consensus.CheckConduct(tc.tx, tc.tx.TxID(), consensus.ConductContext{Height: conductExpires}, view)
			wantRule(t, err, consensus.ErrBadAgentPayload, tc.msg)
			if ch != nil || !reflect.DeepEqual(view, before) {
				t.Fatalf("a refused payload left changes %+v", ch)
			}
		})
	}
	t.Run("no inputs, no outputs", func(t *testing.T) {
		tx := vouchTx(carol, alice)
		tx.Outputs = nil
		_, err := consensus.CheckConduct(tx, tx.TxID(), consensus.ConductContext{Height: conductHeight}, conductFixture())
		wantRule(t, err, consensus.ErrNoOutputs, "transaction has no outputs")
		tx.Inputs = nil
		_, err = consensus.CheckConduct(tx, tx.TxID(), consensus.ConductContext{Height: conductHeight}, conductFixture())
		wantRule(t, err, consensus.ErrNoInputs, "transaction has no inputs")
		wantRule(t, consensus.CheckAgentTx(conductFixture(), tx, conductHeight), consensus.ErrNoInputs, "transaction has no inputs")
	})
	t.Run("not an agent kind", func(t *testing.T) {
		tx := transfer([]types.TxInput{input(op("x", 0), alice)}, pay(1, bob))
		_, err := consensus.CheckConduct(tx, tx.TxID(), consensus.ConductContext{Height: conductHeight}, conductFixture())
		wantRule(t, err, consensus.ErrBadAgentPayload, "transaction kind transfer is no agent operation")
		wantRule(t, consensus.CheckAgentTx(conductFixture(), tx, conductHeight), consensus.ErrBadAgentPayload,
			"unknown transaction kind transfer")
	})
}

// Every rule against the conduct state, with its exact words, through CheckAgentTx (a
// client's precheck) and CheckConduct (the chain's), which must agree.
func TestConductRuleMessages(t *testing.T) {
	refundSplit := refundTx(cOpen, alice)
	refundSplit.Outputs = append(refundSplit.Outputs, pay(50, bob))
	fulfilIndex1 := fulfilTx(cOpen, bob)
	fulfilIndex1.Inputs[0].PrevIndex = 1
	// A contract whose initiator (or counterparty) is no agent: the records never say so on a
	// real chain, but the rule names the party.
	orphan := types.Blake3([]byte("contract of dave"))
	tests := []struct {
		name   string
		tx     *types.Transaction
		height uint64
		kind   consensus.ErrorKind
		msg    string
	}{
		{"already registered", registerTx(alice), conductHeight, consensus.ErrAlreadyRegistered,
			fmt.Sprintf("%s is already a registered agent", alice.pkh)},
		{"voucher no agent", vouchTx(dave, alice), conductHeight, consensus.ErrNotAnAgent,
			fmt.Sprintf("voucher %s is not a registered agent", dave.pkh)},
		{"score too low", vouchTx(alice, bob), conductHeight, consensus.ErrScoreTooLow, "score 500 is below the 700 needed to vouch"},
		{"target no agent", vouchTx(carol, dave), conductHeight, consensus.ErrAgentNotFound,
			fmt.Sprintf("target %s is not a registered agent", dave.pkh)},
		{"vouched twice", vouchTx(carol, bob), conductHeight, consensus.ErrAlreadyVouched,
			fmt.Sprintf("%s has already vouched for %s", carol.pkh, bob.pkh)},
		{"initiator no agent", createTx(dave, bob, 10), conductHeight, consensus.ErrNotAnAgent,
			fmt.Sprintf("initiator %s is not a registered agent", dave.pkh)},
		{"counterparty no agent", createTx(alice, dave, 10), conductHeight, consensus.ErrAgentNotFound,
			fmt.Sprintf("counterparty %s is not a registered agent", dave.pkh)},
		{"fulfil unknown", fulfilTx(cNone, bob), conductHeight, consensus.ErrContractNotFound, fmt.Sprintf("no contract %s", cNone)},
		{"fulfil not open", fulfilTx(cDone, bob), conductHeight, consensus.ErrContractNotOpen,
			fmt.Sprintf("contract %s is fulfilled, not open", cDone)},
		{"refund not open", refundTx(cGone, alice), conductExpires, consensus.ErrContractNotOpen,
			fmt.Sprintf("contract %s is expired, not open", cGone)},
		{"escrow not spent", fulfilIndex1, conductHeight, consensus.ErrEscrowNotSpent,
			fmt.Sprintf("input 0 must spend the contract's escrow %s:0", cOpen)},
		{"not counterparty", fulfilTx(cOpen, alice), conductHeight, consensus.ErrNotCounterparty,
			fmt.Sprintf("only the counterparty %s may fulfil contract %s", bob.pkh, cOpen)},
		{"expired", fulfilTx(cOpen, bob), conductExpires, consensus.ErrContractExpired,
			fmt.Sprintf("contract %s expired at height %d", cOpen, conductExpires)},
		{"fulfil initiator no agent", fulfilTx(orphan, bob), conductHeight, consensus.ErrNotAnAgent,
			fmt.Sprintf("initiator %s is not a registered agent", dave.pkh)},
		{"not initiator", refundTx(cOpen, bob), conductExpires, consensus.ErrNotInitiator,
			fmt.Sprintf("only the initiator %s may take back the escrow of contract %s", alice.pkh, cOpen)},
		{"not expired", refundTx(cOpen, alice), conductExpires - 1, consensus.ErrContractNotExpired,
			fmt.Sprintf("contract %s expires at height %d; a refund is possible from then on", cOpen, conductExpires)},
		{"refund outputs", refundSplit, conductExpires, consensus.ErrRefundOutputs, "output 1 of a refund does not pay the initiator"},
		{"review unknown", reviewTx(cNone, bob, alice, 5), conductHeight, consensus.ErrContractNotFound, fmt.Sprintf("no contract %s", cNone)},
		{"review open", reviewTx(cOpen, bob, alice, 5), conductHeight, consensus.ErrContractNotFulfilled,
			fmt.Sprintf("contract %s is open; only a fulfilled contract can be reviewed", cOpen)},
		{"review third", reviewTx(cDone, carol, alice, 5), conductHeight, consensus.ErrNotParticipant,
			fmt.Sprintf("reviewer and subject must be the two participants of contract %s", cDone)},
		{"reviewed twice", reviewTx(cDone, alice, bob, 5), conductHeight, consensus.ErrAlreadyReviewed,
			fmt.Sprintf("%s has already reviewed contract %s", alice.pkh, cDone)},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			view := conductFixture()
			view.contracts[orphan] = &consensus.ContractRecord{ID: orphan, Initiator: dave.pkh, Counterparty: bob.pkh,
				Value: 5_000, ExpiresAt: conductExpires, Status: consensus.ContractOpen}
			before := view.clone()
			wantRule(t, consensus.CheckAgentTx(view, tc.tx, tc.height), tc.kind, tc.msg)
			_, err := consensus.CheckConduct(tc.tx, tc.tx.TxID(), consensus.ConductContext{Height: tc.height, Time: conductTime}, view)
			wantRule(t, err, tc.kind, tc.msg)
			if !reflect.DeepEqual(view, before) {
				t.Fatal("the check changed the view")
			}
		})
	}
}

// CheckAgentTx runs the context-free part first (a self-vouch by no agent is a self_target),
// accepts what CheckConduct accepts, and passes a view's error through unchanged.
func TestCheckAgentTx(t *testing.T) {
	self := vouchTx(dave, dave)
	wantRule(t, consensus.CheckAgentTx(conductFixture(), self, conductHeight), consensus.ErrSelfTarget, "an agent cannot vouch for itself")
	for _, tc := range []struct {
		tx     *types.Transaction
		height uint64
	}{
		{registerTx(dave), conductHeight}, {vouchTx(carol, alice), conductHeight}, {createTx(alice, bob, 10), conductHeight},
		{fulfilTx(cOpen, bob), conductExpires - 1}, {refundTx(cOpen, alice), conductExpires}, {reviewTx(cDone, bob, alice, 4), conductHeight},
	} {
		noErr(t, consensus.CheckAgentTx(conductFixture(), tc.tx, tc.height))
		if err := consensus.CheckAgentTx(errConduct{}, tc.tx, tc.height); err != errStorage {
			t.Fatalf("%s: %v, want the view's error unchanged", tc.tx.Kind, err)
		}
	}
}

// The context-free rules a client checks before it has a transaction, with their exact words;
// CheckAgentKind says the same of a transaction.
func TestConductShapeRules(t *testing.T) {
	wantRule(t, consensus.CheckStake(alice.pkh, pay(consensus.AgentStake-1, alice)), consensus.ErrBadStake,
		"output 0 must stake exactly 50.00000000 COIN to the registering address")
	noErr(t, consensus.CheckStake(alice.pkh, pay(consensus.AgentStake, alice)))
	wantRule(t, consensus.CheckVouchPayload(alice.pkh, types.VouchPayload{Target: alice.pkh}), consensus.ErrSelfTarget,
		"an agent cannot vouch for itself")
	noErr(t, consensus.CheckVouchPayload(alice.pkh, types.VouchPayload{Target: bob.pkh}))

	for _, c := range []struct {
		blocks uint64
		ok     bool
	}{{0, false}, {9, false}, {10, true}, {525_960, true}, {525_961, false}, {1 << 40, false}} {
		err := consensus.CheckExpiry(c.blocks)
		if c.ok {
			noErr(t, err)
			continue
		}
		wantRule(t, err, consensus.ErrInvalidExpiry, fmt.Sprintf("expiry of %d blocks is outside 10 to 525960", c.blocks))
	}
	create := types.ContractCreatePayload{Counterparty: bob.pkh, ExpiryBlocks: 10}
	noErr(t, consensus.CheckContractCreate(alice.pkh, create, pay(consensus.MinEscrow, bob)))
	wantRule(t, consensus.CheckContractCreate(alice.pkh, types.ContractCreatePayload{Counterparty: alice.pkh, ExpiryBlocks: 10},
		pay(consensus.MinEscrow, alice)), consensus.ErrSelfTarget, "an agent cannot make a contract with itself")
	wantRule(t, consensus.CheckContractCreate(alice.pkh, types.ContractCreatePayload{Counterparty: bob.pkh, ExpiryBlocks: 9},
		pay(consensus.MinEscrow, bob)), consensus.ErrInvalidExpiry, "expiry of 9 blocks is outside 10 to 525960")
	for _, out := range []types.TxOutput{pay(consensus.MinEscrow-1, bob), pay(consensus.MinEscrow, carol)} {
		wantRule(t, consensus.CheckContractCreate(alice.pkh, create, out), consensus.ErrBadEscrow,
			"output 0 (the escrow) must pay at least 1000 subunits to the counterparty")
	}

	for _, c := range []struct {
		score int64
		ok    bool
	}{{-1, false}, {0, false}, {1, true}, {10, true}, {11, false}, {256, false}} {
		err := consensus.CheckReviewScore(c.score)
		if c.ok {
			noErr(t, err)
			continue
		}
		wantRule(t, err, consensus.ErrInvalidScore, fmt.Sprintf("review score %d is outside 1 to 10", c.score))
	}
	wantRule(t, consensus.CheckReviewPayload(alice.pkh, types.ReviewPayload{Subject: bob.pkh, Score: 11}), consensus.ErrInvalidScore,
		"review score 11 is outside 1 to 10")
	wantRule(t, consensus.CheckReviewPayload(alice.pkh, types.ReviewPayload{Subject: alice.pkh, Score: 5}), consensus.ErrSelfTarget,
		"an agent cannot review itself")
	noErr(t, consensus.CheckReviewPayload(alice.pkh, types.ReviewPayload{Subject: bob.pkh, Score: 5}))

	// The same words from CheckAgentKind.
	tx := createTx(alice, bob, 9)
	wantRule(t, consensus.CheckAgentKind(tx), consensus.ErrInvalidExpiry, "expiry of 9 blocks is outside 10 to 525960")
	wantRule(t, consensus.CheckAgentKind(reviewTx(cDone, alice, bob, 0)), consensus.ErrInvalidScore, "review score 0 is outside 1 to 10")
}

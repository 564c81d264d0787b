package payout

import (
	"context"
	"errors"
	"fmt"
	"github.com/cointoolkit/coin/lib/faucet/internal/faucettest"
	"testing"
	"time"

	"github.com/cointoolkit/coin/lib/amount"
	"github.com/cointoolkit/coin/lib/consensus"
	"github.com/cointoolkit/coin/lib/mempool"
	"github.com/cointoolkit/coin/lib/params"
	"github.com/cointoolkit/coin/lib/reason"
	"github.com/cointoolkit/coin/lib/rpcapi"
	"github.com/cointoolkit/coin/lib/types"
	"github.com/cointoolkit/coin/lib/wallet"
)

// The engine's tests run against a real regtest node in the process (faucettest), its own
// mempool and rules, not a double of them.
func regtestNode(t testing.TB) *rpcapi.Client { return faucettest.NewNode(t).Client }

func newKey(t testing.TB) wallet.Key { return faucettest.NewKey(t) }

// fundedEngine is an engine of cfg (its network, key and journal filled in) on a real
// regtest node where the faucet's key holds one mature coinbase; its claim store and node.
func fundedEngine(t *testing.T, cfg EngineConfig) (*Engine, *ClaimStore, *rpcapi.Client) {
	t.Helper()
	ctx := context.Background()
	rpc := regtestNode(t)
	k, burn := newKey(t), newKey(t)
	if _, err := rpc.GenerateToAddress(ctx, 1, k.Address); err != nil {
		t.Fatal(err)
	}
	if _, err := rpc.GenerateToAddress(ctx, 100, burn.Address); err != nil {
		t.Fatal(err)
	}
	claims, err := OpenClaimStore(t.TempDir(), time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { claims.Close() })
	cfg.Net, cfg.Keys, cfg.Journal = params.Regtest, []wallet.Key{k}, claims
	e, err := NewEngine(rpc, cfg)
	if err != nil {
		t.Fatal(err)
	}
	return e, claims, rpc
}

// A batch larger than the funds pays the claims that fit, in order, and fails the rest.
func TestEnginePartialBatch(t *testing.T) {
	ctx := context.Background()
	e, claims, rpc := fundedEngine(t, EngineConfig{})
	if err := e.sync(ctx); err != nil {
		t.Fatal(err)
	}
	if st := e.Status(); st.Spendable <= 40*amount.Coin || st.Spendable > 60*amount.Coin {
		t.Fatalf("the faucet's one coin: %+v", st)
	}
	var batch []*request
	for i := 0; i < 3; i++ {
		to := newKey(t)
		batch = append(batch, &request{claim: Claim{Address: to.Address, PKH: types.Hash(to.PKH), Amount: 20 * amount.Coin},
			done: make(chan result, 1)})
	}
	e.round(ctx, batch)
	r0, r1, r2 := <-batch[0].done, <-batch[1].done, <-batch[2].done
	if r0.err != nil || r1.err != nil || r0.txid != r1.txid || !errors.Is(r2.err, ErrFaucetEmpty) {
		t.Fatalf("results %+v %+v %+v", r0, r1, r2)
	}
	if _, ok, _ := claims.Last(batch[2].claim.Address); ok {
		t.Fatal("unpaid claim recorded")
	}
	if _, err := rpc.GetTransaction(ctx, r0.txid.String()); err != nil {
		t.Fatalf("the payout is not in the node: %v", err)
	}
}

// The engine classifies the node's refusals by kind, never by text: a stale view (re-read
// the node, try again; inputs decayed below what the engine counted are one), an unconfirmed chain too long for the node (try other outputs), or
// anything else (fail the claims). "transaction already in block chain" is no chain-depth
// limit (issue 11), and a message that merely says "chain" or "missing inputs" without a
// reason is no kind at all.
func TestRefusalKinds(t *testing.T) {
	for _, tc := range []struct {
		err  error
		want refusal
	}{
		{rejectRule(fmt.Errorf("missing inputs: %w", consensus.RuleError{Err: consensus.ErrMissingInputs,
			Description: "output abc:0 is not in the UTXO set"})), refusedStale},
		{reject(mempool.ErrConflict, "conflicts with a mempool transaction (input 0 ...)"), refusedStale},
		{reject(consensus.ErrDoubleSpend, "input 0 spends abc:0, already spent in this block"), refusedStale},
		{reject(consensus.ErrImmatureCoinbase, "immature coinbase"), refusedStale},
		{reject(reason.TooLongChain, "too long a chain of unconfirmed transactions"), refusedChain},
		{reject(nil, "too many descendants"), refusedOther},
		{reject(mempool.ErrAlreadyInChain, "transaction already in block chain"), refusedOther},
		{reject(mempool.ErrMempoolFull, "mempool full: fee rate too low to enter a full pool"), refusedOther},
		// Inputs worth less than the engine counted (decayed over blocks it has not seen yet).
		{reject(mempool.ErrFeeTooLow, "insufficient fee: fee 1 is below"), refusedStale},
		{rejectRule(consensus.RuleError{Err: consensus.ErrInsufficientFunds, Description: "insufficient funds: inputs 1, outputs 2"}),
			refusedStale},
		{reject(nil, "missing inputs: a message without a reason"), refusedOther},
	} {
		if got := refusalOf(tc.err); got != tc.want {
			t.Errorf("%v: %d, want %d", tc.err, got, tc.want)
		}
	}
}

// reject is the error the RPC client returns for a domain error of kind with msg.
func reject(kind reason.Kind, msg string) error {
	return rpcapi.DecodeError(rpcapi.DomainError(kind, msg))
}

// rejectRule is reject for a consensus rule's error, with its message.
func rejectRule(err error) error { return rpcapi.DecodeError(rpcapi.NewDomainError(err)) }

// A journaled payout decodes to what was encoded; every truncation of its record is an error.
func TestPayoutEncoding(t *testing.T) {
	ctx := context.Background()
	e, claims, _ := fundedEngine(t, EngineConfig{PollInterval: 20 * time.Millisecond})
	runCtx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() { e.Run(runCtx); close(done) }()
	defer func() { cancel(); <-done }()
	to := newKey(t)
	if _, err := e.Pay(ctx, Claim{Address: to.Address, PKH: types.Hash(to.PKH), Amount: amount.Coin}); err != nil {
		t.Fatal(err)
	}
	ps, err := claims.Payouts()
	if err != nil || len(ps) != 1 {
		t.Fatalf("%v %v", ps, err)
	}
	p := ps[0]
	if p.Claims[0].Address != to.Address || p.Claims[0].Amount != amount.Coin || p.Tx.TxID() != p.TxID {
		t.Fatalf("%+v", p)
	}
	back, err := decodePayout(p.Seq, encodePayout(p))
	if err != nil || back.TxID != p.TxID || !back.Time.Equal(p.Time) || back.Claims[0] != p.Claims[0] {
		t.Fatalf("round trip: %+v %v", back, err)
	}
	enc := encodePayout(p)
	for _, n := range []int{0, 1, 10, len(enc) - 1} {
		if _, err := decodePayout(0, enc[:n]); err == nil {
			t.Errorf("truncated to %d bytes: no error", n)
		}
	}
}

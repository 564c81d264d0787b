package httpapi

import (
	"context"
	"errors"
	"fmt"
	"github.com/cointoolkit/coin/lib/faucet/internal/faucettest"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/cointoolkit/coin/lib/amount"
	"github.com/cointoolkit/coin/lib/faucet/payout"
	"github.com/cointoolkit/coin/lib/mempool"
	"github.com/cointoolkit/coin/lib/reason"
	"github.com/cointoolkit/coin/lib/types"
	"github.com/cointoolkit/coin/lib/wallet"
)

func claimBody(addr string) string { return fmt.Sprintf(`{"address":%q}`, addr) }

func withAmount(v uint64) harnessOpt {
	return func(_ *payout.EngineConfig, c *Config) { c.Amount = v }
}

// Many concurrent claims for distinct addresses all succeed, never double-spend (the regtest
// node rejects conflicts and checks every transaction), share transactions, and all
// confirm in the next block.
func TestEngineConcurrentClaims(t *testing.T) {
	h, rn, _ := newRegtestHarness(t, 400)
	const n = 150
	addrs := make([]string, n)
	for i := range addrs {
		addrs[i], _ = newAddress(t)
	}
	txids := make([]string, n)
	var wg sync.WaitGroup
	for i := range addrs {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			r := h.do(t, http.MethodPost, "/api/faucet", claimBody(addrs[i]))
			if r.Status != http.StatusOK {
				t.Errorf("claim %d: %d %s", i, r.Status, r.Raw)
				return
			}
			if r.Body["amount"] != "100.00000000" {
				t.Errorf("amount %v", r.Body["amount"])
			}
			txids[i], _ = r.Body["txid"].(string)
		}(i)
	}
	wg.Wait()
	if t.Failed() {
		return
	}
	distinct := map[string]bool{}
	for _, id := range txids {
		if _, err := types.ParseHash(id); err != nil {
			t.Fatalf("txid %q", id)
		}
		distinct[id] = true
	}
	t.Logf("%d claims paid by %d transactions", n, len(distinct))
	if pooled := len(rn.Node.Mempool().TxIDs()); pooled != len(distinct) {
		t.Fatalf("mempool has %d transactions, claims name %d", pooled, len(distinct))
	}
	h.mine(1)
	for _, a := range addrs {
		r := h.do(t, http.MethodGet, "/api/wallet/balance?address="+a, "")
		if r.Status != 200 || r.Body["balance"] != "100.00000000" || r.Body["utxo_count"] != 1.0 {
			t.Fatalf("balance of %s: %d %s", a, r.Status, r.Raw)
		}
	}
	if st := h.engine.Status(); st.Paid != n || st.Txs != uint64(len(distinct)) {
		t.Fatalf("status %+v", st)
	}
}

// The engine keeps its chains of unconfirmed change under MaxChainDepth: at the limit a
// claim fails at once with faucet_busy (no waiting for a block), and the next block frees
// the outputs again.
func TestEngineChainDepthLimit(t *testing.T) {
	h := regtestHarness(t, 1, withAmount(amount.Coin), func(e *payout.EngineConfig, _ *Config) { e.MaxChainDepth = 3 })
	for i := 0; i < 3; i++ {
		a, _ := newAddress(t)
		if r := h.do(t, http.MethodPost, "/api/faucet", claimBody(a)); r.Status != 200 {
			t.Fatalf("claim %d: %d %s", i, r.Status, r.Raw)
		}
	}
	a, _ := newAddress(t)
	start := time.Now()
	r := h.do(t, http.MethodPost, "/api/faucet", claimBody(a))
	if r.Status != http.StatusServiceUnavailable || r.errCode() != "faucet_busy" {
		t.Fatalf("claim at the depth limit: %d %s", r.Status, r.Raw)
	}
	if time.Since(start) > 2*time.Second {
		t.Fatal("the claim waited")
	}
	h.mine(1)
	deadline := time.Now().Add(5 * time.Second)
	for {
		r = h.do(t, http.MethodPost, "/api/faucet", claimBody(a))
		if r.Status == 200 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("claim after a block: %d %s", r.Status, r.Raw)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// When the node refuses a chain (its own limit is lower than the engine's), the engine
// retries at once with other outputs.
func TestEngineNodeChainLimitRetry(t *testing.T) {
	h := newHarness(t, 2, withAmount(amount.Coin))
	// COIN's node has no limit on unconfirmed chains, so this node's limit of 2 is the
	// wrapper's: a transaction with 2 unconfirmed ancestors in the node's mempool is refused
	// as a node with that limit refuses it (reason.TooLongChain); the rest is the node's.
	pool := h.rn.Node.Mempool()
	var depth func(id types.Hash) int
	depth = func(id types.Hash) int {
		e, ok := pool.Get(id)
		if !ok {
			return 0
		}
		d := 1
		for _, in := range e.Tx.Inputs {
			d = max(d, 1+depth(in.PrevTxID))
		}
		return d
	}
	h.cn.Intercept(func(tx *types.Transaction) error {
		for _, in := range tx.Inputs {
			if depth(in.PrevTxID)+1 > 2 {
				return reject(reason.TooLongChain, "too long a chain of unconfirmed transactions")
			}
		}
		return nil
	})
	for i := 0; i < 4; i++ {
		a, _ := newAddress(t)
		if r := h.do(t, http.MethodPost, "/api/faucet", claimBody(a)); r.Status != 200 {
			t.Fatalf("claim %d: %d %s", i, r.Status, r.Raw)
		}
	}
	a, _ := newAddress(t)
	if r := h.do(t, http.MethodPost, "/api/faucet", claimBody(a)); r.Status != 503 || r.errCode() != "faucet_busy" {
		t.Fatalf("claim with both chains at the node's limit: %d %s", r.Status, r.Raw)
	}
}

// A node restart that empties the mempool makes the engine's view stale: the next claim still
// succeeds, and the next block's sync sends the lost payout again, so its claimant is paid
// after all.
func TestEngineRecoversFromDroppedMempool(t *testing.T) {
	h := newHarness(t, 2, withAmount(amount.Coin))
	a, _ := newAddress(t)
	first := h.do(t, http.MethodPost, "/api/faucet", claimBody(a))
	if first.Status != 200 {
		t.Fatalf("claim: %d %s", first.Status, first.Raw)
	}
	id := first.Body["txid"].(string)
	h.rn.Restart(t)
	if h.pooled(id) != nil {
		t.Fatal("the restarted node kept the payout")
	}
	// The next claim finds the engine's view stale; the engine may send the lost payout
	// again right then (its journal) or at the next block: either way it must come back.
	b, _ := newAddress(t)
	if r := h.do(t, http.MethodPost, "/api/faucet", claimBody(b)); r.Status != 200 {
		t.Fatalf("claim after the mempool was dropped: %d %s", r.Status, r.Raw)
	}
	h.mine(1)
	// Sent again: in the pool, or already in a block if it came back before the one mined.
	back := func() bool {
		if h.pooled(id) != nil {
			return true
		}
		tx, err := h.rn.GetTransaction(context.Background(), id)
		return err == nil && tx.BlockHeight != nil
	}
	deadline := time.Now().Add(5 * time.Second)
	for !back() {
		if time.Now().After(deadline) {
			t.Fatal("the first claim's payout was not sent again after the next block")
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// An answer lost after the node accepted the transaction still counts as paid.
func TestEngineLostAnswer(t *testing.T) {
	h, _, cn := newRegtestHarness(t, 2, withAmount(amount.Coin))
	cn.FailSends(errors.New("connection reset by peer"), true)
	a, _ := newAddress(t)
	r := h.do(t, http.MethodPost, "/api/faucet", claimBody(a))
	if r.Status != 200 {
		t.Fatalf("claim: %d %s", r.Status, r.Raw)
	}
	if _, ok, _ := h.claims.Last(a); !ok {
		t.Fatal("paid claim not recorded")
	}
	// A refused transaction is forgotten: the address may claim again.
	cn.FailSends(reject(mempool.ErrMempoolFull, "mempool full"), false)
	b, _ := newAddress(t)
	r = h.do(t, http.MethodPost, "/api/faucet", claimBody(b))
	if r.Status != http.StatusBadGateway || r.errCode() != "node_rejected" {
		t.Fatalf("refused claim: %d %s", r.Status, r.Raw)
	}
	if _, ok, _ := h.claims.Last(b); ok {
		t.Fatal("refused claim is still recorded")
	}
	cn.FailSends(nil, false)
	if r = h.do(t, http.MethodPost, "/api/faucet", claimBody(b)); r.Status != 200 {
		t.Fatalf("claim after a refusal: %d %s", r.Status, r.Raw)
	}
}

func TestEngineFaucetEmpty(t *testing.T) {
	h, rn, _ := newRegtestHarness(t, 1, withAmount(30*amount.Coin))
	a, _ := newAddress(t)
	if r := h.do(t, http.MethodPost, "/api/faucet", claimBody(a)); r.Status != 200 {
		t.Fatalf("claim: %d %s", r.Status, r.Raw)
	}
	b, _ := newAddress(t)
	if r := h.do(t, http.MethodPost, "/api/faucet", claimBody(b)); r.Status != 503 || r.errCode() != "faucet_empty" {
		t.Fatalf("claim from an empty faucet: %d %s", r.Status, r.Raw)
	}
	// The failed claim was not recorded: after a donation it succeeds.
	rn.Fund(t, h.key.Address, 1)
	deadline := time.Now().Add(5 * time.Second)
	for {
		r := h.do(t, http.MethodPost, "/api/faucet", claimBody(b))
		if r.Status == 200 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("claim after a donation: %d %s", r.Status, r.Raw)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func faucetKeys(t *testing.T) []wallet.Key { return []wallet.Key{faucetKey(t)} }

// After the engine stops, claims fail with payout.ErrStopped instead of hanging.
func TestEngineStopped(t *testing.T) {
	node := faucettest.NewNode(t).Client
	claims, err := payout.OpenClaimStore(t.TempDir(), time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	defer claims.Close()
	e, err := payout.NewEngine(node, payout.EngineConfig{Net: testNet, Keys: faucetKeys(t), Journal: claims})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { e.Run(ctx); close(done) }()
	cancel()
	<-done
	a, pkh := newAddress(t)
	for i := 0; i < 20; i++ {
		if _, err := e.Pay(context.Background(), payout.Claim{Address: a, PKH: pkh, Amount: amount.Coin}); !errors.Is(err, payout.ErrStopped) {
			t.Fatalf("pay after stop: %v", err)
		}
	}
}

// Regression (issue 11): the node answering that the faucet's transaction is already in the
// block chain means the claims are paid by it. The engine once read "chain" in the message
// as a chain-depth limit and paid the claims again with other outputs.
func TestEngineAlreadyInChain(t *testing.T) {
	h := newHarness(t, 3, withAmount(amount.Coin))
	// The payout reaches a miner first (by a peer) and is mined before the node gets it
	// from the faucet, so the node answers that it is already in the block chain.
	var refused types.Hash
	var mu sync.Mutex
	h.cn.Intercept(func(tx *types.Transaction) error {
		mu.Lock()
		defer mu.Unlock()
		if refused == (types.Hash{}) {
			refused = tx.TxID()
			return h.rn.MineBlock(tx)
		}
		return nil
	})
	a, _ := newAddress(t)
	r := h.do(t, http.MethodPost, "/api/faucet", claimBody(a))
	h.cn.Intercept(nil)
	mu.Lock()
	defer mu.Unlock()
	if r.Status != http.StatusOK || r.Body["txid"] != refused.String() {
		t.Fatalf("claim: %d %s, want 200 paid by %s", r.Status, r.Raw, refused)
	}
	if sent, pooled := h.sends(), len(h.rn.Node.Mempool().TxIDs()); sent != 0 || pooled != 0 {
		t.Fatalf("the node got %d more transactions (%d in the mempool): the claim was paid twice", sent, pooled)
	}
	if sum, n := h.rn.PaidTo(t, a); sum != amount.Coin || n != 1 {
		t.Fatalf("claimant: %d outputs worth %d, want one", n, sum)
	}
	if _, ok, _ := h.claims.Last(a); !ok {
		t.Fatal("paid claim not recorded")
	}
	// The engine re-reads its view and goes on paying.
	b, _ := newAddress(t)
	if r := h.do(t, http.MethodPost, "/api/faucet", claimBody(b)); r.Status != http.StatusOK {
		t.Fatalf("next claim: %d %s", r.Status, r.Raw)
	}
}

package main

import (
	"context"
	"encoding/hex"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/cointoolkit/coin/lib/amount"
	"github.com/cointoolkit/coin/lib/consensus"
	"github.com/cointoolkit/coin/lib/params"
	"github.com/cointoolkit/coin/lib/proctest"
	"github.com/cointoolkit/coin/lib/types"
	"github.com/cointoolkit/coin/lib/wallet"
)

// TestCrashPaysExactlyOnce is protocol §14's exactly-once payment through real processes on
// regtest: rounds of concurrent claims during which coin-faucetd and coin-node are killed
// (SIGKILL) at random moments, then restarted; at the end, after mining, every address
// answered 200 holds exactly one claim amount from the faucet, no address more than one,
// every output of the faucet's transactions pays a claimant or the faucet's change, and
// the chain's supply adds up. Two rounds of 40 claims here; COIN_SOAK=1 (make soak) runs
// COIN_SOAK_ROUNDS (default 8) rounds of 60. COIN_CRASH_SEED replays a run.
func TestCrashPaysExactlyOnce(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end test")
	}
	rounds, claims := 2, 40
	if os.Getenv("COIN_SOAK") != "" {
		rounds, claims = envInt("COIN_SOAK_ROUNDS", 8), 60
	}
	crashRounds(t, rounds, claims)
}

// claimOutcome is what the client of one claim saw.
type claimOutcome struct {
	addr string
	code int // 0: the connection failed
	txid string
}

func crashRounds(t *testing.T, rounds, claimsPerRound int) {
	seed := uint64(time.Now().UnixNano())
	if s := os.Getenv("COIN_CRASH_SEED"); s != "" {
		seed, _ = strconv.ParseUint(s, 10, 64)
	}
	t.Logf("COIN_CRASH_SEED=%d", seed)
	rng := rand.New(rand.NewPCG(seed, 0))
	ctx := context.Background()

	n := startNode(t)
	dir := t.TempDir()
	m, faucetAddr, _ := wallet.NewMnemonic(12, params.Regtest)
	mfile := filepath.Join(dir, "faucet-mnemonic")
	if err := os.WriteFile(mfile, []byte(m+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	_, burn, _ := wallet.NewMnemonic(12, params.Regtest)
	n.generate(t, 120, faucetAddr)
	n.generate(t, 100, burn)
	const claimAmount = amount.Coin
	f := startFaucetd(t, limitsOff("--network", "regtest", "--rpc", n.URL(), "--data-dir", filepath.Join(dir, "faucet-data"),
		"--mnemonic-file", mfile, "--amount", "1", "--access-log", "off")...)
	restartFaucetd := func() {
		f.Proc = proctest.Start(t, f.Cmd.Path, f.args...)
		f.waitReady(t)
	}

	var outcomes []claimOutcome
	start := time.Now()
	for round := 0; round < rounds; round++ {
		// The claims start one after another over 120 ms; both processes are killed at
		// random moments within that window (in one round of three only coin-faucetd).
		res := make([]claimOutcome, claimsPerRound)
		var wg sync.WaitGroup
		const window = 120 * time.Millisecond
		for i := range res {
			_, res[i].addr, _ = wallet.NewMnemonic(12, params.Regtest)
		}
		for i := range res {
			wg.Add(1)
			go func(o *claimOutcome, delay time.Duration) {
				defer wg.Done()
				time.Sleep(delay)
				code, body, _ := httpJSON("POST", f.url+"/api/faucet", fmt.Sprintf(`{"address":%q}`, o.addr))
				o.code = code
				o.txid, _ = body["txid"].(string)
			}(&res[i], window*time.Duration(i)/time.Duration(claimsPerRound))
		}
		killFaucet := time.Duration(10+rng.IntN(100)) * time.Millisecond
		killNode := time.Duration(10+rng.IntN(100)) * time.Millisecond
		nodeToo := rng.IntN(3) != 0
		var kw sync.WaitGroup
		kw.Add(1)
		go func() { defer kw.Done(); time.Sleep(killFaucet); f.Kill() }()
		if nodeToo {
			kw.Add(1)
			go func() { defer kw.Done(); time.Sleep(killNode); n.Proc.Kill() }()
		}
		kw.Wait()
		wg.Wait()
		ok := 0
		for _, o := range res {
			if o.code == 200 {
				ok++
			}
		}
		if nodeToo {
			t.Logf("round %d: faucetd killed at %v, node at %v: %d of %d claims answered 200", round, killFaucet, killNode, ok, claimsPerRound)
			n.Start(t)
		} else {
			t.Logf("round %d: faucetd killed at %v: %d of %d claims answered 200", round, killFaucet, ok, claimsPerRound)
		}
		outcomes = append(outcomes, res...)
		restartFaucetd()
		// Sometimes a block between rounds, so that later rounds spend confirmed change.
		if rng.IntN(2) == 0 {
			n.generate(t, 1, burn)
		}
	}

	// Mine until every payout the faucet owes is mined: the faucet sends its journaled
	// payouts again after each block it sees.
	deadline := time.Now().Add(90 * time.Second)
	for {
		mi, err := n.RPC.GetMempoolInfo(ctx)
		if err != nil {
			t.Fatal(err)
		}
		unpaid := 0
		for _, o := range outcomes {
			if o.code == 200 && paidTo(t, n, o.addr) == 0 {
				unpaid++
			}
		}
		if mi.Size == 0 && unpaid == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d claims answered 200 still unpaid, %d transactions in the mempool\nfaucetd:\n%s", unpaid, mi.Size, f.Out.Tail(40))
		}
		n.generate(t, 1, burn)
		time.Sleep(1500 * time.Millisecond) // the faucet polls the node every second
	}
	// A few more blocks: nothing is paid twice later on (a repayment would show now).
	n.generate(t, 7, burn)
	time.Sleep(2 * time.Second)
	n.generate(t, 1, burn)

	answered, paid := 0, 0
	claimants := map[types.Hash]bool{}
	for _, o := range outcomes {
		pkh, _ := wallet.DecodeAddress(o.addr, params.Regtest)
		claimants[pkh] = true
		got := paidTo(t, n, o.addr)
		switch {
		case o.code == 200 && got != claimAmount:
			t.Errorf("%s answered 200 (txid %s) holds %s from the faucet, want exactly %s", o.addr, o.txid, amount.Format(got), amount.Format(claimAmount))
		case o.code != 200 && got != 0 && got != claimAmount:
			t.Errorf("%s (answer %d) holds %s, want 0 or %s", o.addr, o.code, amount.Format(got), amount.Format(claimAmount))
		}
		if o.code == 200 {
			answered++
		}
		if got > 0 {
			paid++
		}
	}
	// The faucet's accounting: every output of its transactions pays a claimant the claim
	// amount or is the faucet's change, so its outflow is claims paid × amount + fees.
	fpkh, _ := wallet.DecodeAddress(faucetAddr, params.Regtest)
	tip, err := n.RPC.GetBlockCount(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var toClaimants, spent, change uint64
	var faucetTxs int
	for h := uint64(221); h <= tip; h++ {
		hash, _ := n.RPC.GetBlockHash(ctx, h)
		b, err := n.RPC.GetBlock(ctx, hash)
		if err != nil {
			t.Fatal(err)
		}
		for _, id := range b.Tx[1:] {
			tx := rawTx(t, n, id)
			faucetTxs++
			for _, in := range tx.Inputs {
				prev := rawTx(t, n, in.PrevTxID.String()).Outputs[in.PrevIndex]
				if prev.PubKeyHash != fpkh {
					t.Errorf("transaction %s spends an output that is not the faucet's", id)
				}
				spent += prev.Value
			}
			for _, o := range tx.Outputs {
				switch {
				case o.PubKeyHash == fpkh:
					change += o.Value
				case claimants[o.PubKeyHash] && o.Value == claimAmount:
					toClaimants += o.Value
				default:
					t.Errorf("transaction %s pays %d to %s: neither a claimant's claim nor the faucet's change", id, o.Value, o.PubKeyHash)
				}
			}
		}
	}
	outflow := spent - change
	feesAndDecay := outflow - toClaimants
	if toClaimants != uint64(paid)*claimAmount {
		t.Errorf("the faucet's transactions pay claimants %s, want %d claims × %s", amount.Format(toClaimants), paid, amount.Format(claimAmount))
	}
	// The chain's supply: every subsidy issued is in the UTXO set or the decay pool.
	info, err := n.RPC.GetBlockchainInfo(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var issued uint64
	for h := uint64(1); h <= info.Height; h++ {
		issued += consensus.Subsidy(h)
	}
	if info.CirculatingSupply+info.DecayPoolBalance != issued {
		t.Errorf("supply: circulating %d + decay pool %d != %d issued", info.CirculatingSupply, info.DecayPoolBalance, issued)
	}
	if feesAndDecay > uint64(faucetTxs)*amount.Coin/100 {
		t.Errorf("the faucet's outflow %s is %s more than the claims it paid: more than fees and decay", amount.Format(outflow), amount.Format(feesAndDecay))
	}
	t.Logf("%d rounds, %d claims: %d answered 200, %d paid (each once), by %d transactions; outflow %s = %d × %s + fees and decay %s; %v",
		rounds, len(outcomes), answered, paid, faucetTxs, amount.Format(outflow), paid, amount.Format(claimAmount),
		amount.Format(feesAndDecay), time.Since(start).Round(time.Millisecond))
	if answered == 0 {
		t.Fatal("no claim was answered 200: the kills came too early to test anything")
	}
}

// paidTo is the nominal value addr holds in the chain (claimants never spend).
func paidTo(t *testing.T, n *node, addr string) uint64 {
	t.Helper()
	us, err := n.RPC.GetUtxosByAddress(context.Background(), addr, false)
	if err != nil {
		t.Fatal(err)
	}
	var s uint64
	for _, u := range us {
		s += u.Value
	}
	return s
}

func rawTx(t *testing.T, n *node, txid string) *types.Transaction {
	t.Helper()
	var h string
	if err := n.RPC.Call(context.Background(), "getrawtransaction", []any{txid}, &h); err != nil {
		t.Fatal(err)
	}
	b, err := hex.DecodeString(h)
	if err != nil {
		t.Fatal(err)
	}
	tx, err := types.DecodeTransaction(b)
	if err != nil {
		t.Fatal(err)
	}
	return tx
}

package wallet

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/cointoolkit/coin/lib/amount"
	"github.com/cointoolkit/coin/lib/consensus"
	"github.com/cointoolkit/coin/lib/params"
	"github.com/cointoolkit/coin/lib/rpcapi"
	"github.com/cointoolkit/coin/lib/types"
)

// regtestRate is about the rate of a regtest wallet that mined every block: 100% of the
// supply, R_MAX × d / (d + S).
var regtestRate = consensus.DecayRate(1_000_000_000, consensus.TierNone)

// decayed is a coin of nominal value v that has decayed at rate for age blocks, as the
// node lists it for the next block.
func decayed(n byte, v, rate, age uint64) Coin {
	c := coin(n, consensus.EffectiveValue(v, rate, age))
	c.Nominal, c.Confirmations = v, age
	return c
}

// The implied rate is an upper bound of the true rate that reproduces the node's effective
// value exactly, and is close to the true rate for outputs of a few COIN.
func TestImpliedDecayRate(t *testing.T) {
	if r := ImpliedDecayRate(50*amount.Coin, 50*amount.Coin, 120); r != 0 {
		t.Fatalf("no decay: rate %d", r)
	}
	if r := ImpliedDecayRate(50*amount.Coin, 49*amount.Coin, 0); r != 0 {
		t.Fatalf("age 0: rate %d", r)
	}
	for _, v := range []uint64{1_000, 123_456, amount.Coin, 50 * amount.Coin, 20_000_000 * amount.Coin} {
		for _, rate := range []uint64{1, 1_000, 150_000, regtestRate, maxDecayRate} {
			for _, age := range []uint64{1, 2, 7, 120, 10_000, 525_960} {
				eff := consensus.EffectiveValue(v, rate, age)
				r := ImpliedDecayRate(v, eff, age)
				if eff == v {
					if r != 0 {
						t.Fatalf("v %d rate %d age %d: nothing decayed, implied %d", v, rate, age, r)
					}
					continue
				}
				if r < rate || r > maxDecayRate || consensus.EffectiveValue(v, r, age) != eff {
					t.Fatalf("v %d rate %d age %d: implied %d (effective %d, want %d)", v, rate, age, r,
						consensus.EffectiveValue(v, r, age), eff)
				}
				if r < maxDecayRate && consensus.EffectiveValue(v, r+1, age) >= eff {
					t.Fatalf("v %d rate %d age %d: implied %d is not the highest", v, rate, age, r)
				}
				// The node's value is exact to a subunit, so the rate to about
				// 10^12 / (v × age) parts per 10^12.
				if slack := (2*consensus.DecayRateOne/v+1)/age + 3; v >= amount.Coin && r-rate > slack {
					t.Fatalf("v %d rate %d age %d: implied %d is loose", v, rate, age, r)
				}
			}
		}
	}
}

// The margin covers the decay of every later block up to DecayMarginBlocks after the next,
// exactly as consensus computes it, and is not much more than that for real coins.
func TestDecayMarginCoversLaterBlocks(t *testing.T) {
	for _, v := range []uint64{1_000, 99_999, amount.Coin, 50 * amount.Coin, 1_000_000 * amount.Coin} {
		for _, rate := range []uint64{7, 100_000, regtestRate, maxDecayRate} {
			for _, age := range []uint64{1, 3, 101, 5_000} {
				c := decayed(1, v, rate, age)
				m := DecayMargin(&c)
				var worst uint64
				for k := uint64(0); k <= DecayMarginBlocks; k++ {
					later := consensus.EffectiveValue(v, rate, age+k)
					if loss := c.Value - later; loss > m {
						t.Fatalf("v %d rate %d age %d: %d blocks later the coin lost %d, margin %d", v, rate, age, k, loss, m)
					} else {
						worst = loss
					}
				}
				// For coins of a COIN or more the margin is the true loss within a
				// millionth of it plus a few subunits (the implied rate's precision over
				// the margin's blocks, and rounding).
				if v >= amount.Coin && m > worst+worst/1_000_000+2*DecayMarginBlocks/age+3 {
					t.Fatalf("v %d rate %d age %d: margin %d, true loss %d", v, rate, age, m, worst)
				}
			}
		}
	}
	// The regtest example: a 50 COIN coinbase 120 blocks old loses about 1,500 subunits a
	// block, so about 9,200 over the margin.
	c := decayed(1, 50*amount.Coin, regtestRate, 120)
	if m := DecayMargin(&c); m < 1_400*DecayMarginBlocks || m > 1_600*DecayMarginBlocks {
		t.Fatalf("regtest coinbase: margin %d", m)
	}
}

// No decay, no margin: coins without a nominal value above their value and without a rate,
// and coins of a cluster below the threshold.
func TestDecayMarginZeroWithoutDecay(t *testing.T) {
	for _, c := range []Coin{
		coin(1, 50*amount.Coin),
		{Value: 50 * amount.Coin, Nominal: 50 * amount.Coin, Confirmations: 500},
		{Value: 50 * amount.Coin, Confirmations: 0},
		decayed(1, 50*amount.Coin, 0, 1_000),
	} {
		if m := DecayMargin(&c); m != 0 {
			t.Fatalf("%+v: margin %d", c, m)
		}
	}
	// An unconfirmed coin (age 0, not decayed) of a decaying cluster: the rate the node
	// gives covers its parent being mined next and the spend DecayMarginBlocks later.
	c := Coin{Value: 50 * amount.Coin, DecayRate: regtestRate}
	want := c.Value - consensus.EffectiveValue(c.Value, regtestRate, DecayMarginBlocks)
	if m := DecayMargin(&c); m != want || m == 0 {
		t.Fatalf("unconfirmed coin: margin %d, want %d", m, want)
	}
	// A known rate below what the coin shows does not lower the margin.
	d := decayed(1, 50*amount.Coin, regtestRate, 200)
	m0 := DecayMargin(&d)
	d.DecayRate = regtestRate / 2
	if m := DecayMargin(&d); m != m0 {
		t.Fatalf("a lower known rate changed the margin from %d to %d", m0, m)
	}
}

// Select adds the inputs' margins to the fee (rate × size + Σ margins, exactly, when there
// is change) and says how much; without decay the fee is rate × size as before.
func TestSelectDecayMargin(t *testing.T) {
	to := types.Hash{9}
	for _, rate := range []uint64{1, 2, 9} {
		coins := []Coin{decayed(1, 50*amount.Coin, regtestRate, 150), decayed(2, 50*amount.Coin, regtestRate, 149),
			decayed(3, 50*amount.Coin, regtestRate, 148)}
		plan, err := Select(coins, Request{Payments: []Payment{{to, 120 * amount.Coin}}, FeeRate: rate, Change: types.Hash{1}})
		if err != nil {
			t.Fatal(err)
		}
		var want uint64
		for i := range plan.Coins {
			want += DecayMargin(&plan.Coins[i])
		}
		if len(plan.Coins) != 3 || plan.DecayMargin != want || want < 3*1_400*DecayMarginBlocks ||
			plan.ChangeIndex < 0 || plan.Fee != rate*uint64(plan.Size)+want {
			t.Fatalf("rate %d: %d inputs, fee %d, size %d, margin %d (want %d)", rate, len(plan.Coins), plan.Fee, plan.Size,
				plan.DecayMargin, want)
		}
		// The same coins without decay information: no margin.
		for i := range coins {
			coins[i].Nominal = 0
		}
		plan, err = Select(coins, Request{Payments: []Payment{{to, 120 * amount.Coin}}, FeeRate: rate, Change: types.Hash{1}})
		if err != nil {
			t.Fatal(err)
		}
		if plan.DecayMargin != 0 || plan.Fee != rate*uint64(plan.Size) {
			t.Fatalf("rate %d without decay: fee %d, size %d, margin %d", rate, plan.Fee, plan.Size, plan.DecayMargin)
		}
	}
	// The margin counts in what a payment needs: the whole effective value cannot be sent.
	coins := []Coin{decayed(1, 50*amount.Coin, regtestRate, 150)}
	_, err := Select(coins, Request{Payments: []Payment{{to, coins[0].Value - 400}}, FeeRate: 1})
	var ife *InsufficientFundsError
	if !errors.As(err, &ife) || ife.DecayMargin != DecayMargin(&coins[0]) || ife.Need <= ife.Have {
		t.Fatalf("err = %v", err)
	}
}

// valuesAt is what the node says the unspent outputs of address are worth in the next block
// (their effective values), by outpoint.
func valuesAt(t *testing.T, n *testNode, address string) map[types.Outpoint]uint64 {
	t.Helper()
	us, err := n.GetUtxosByAddress(context.Background(), address, false)
	if err != nil {
		t.Fatal(err)
	}
	vals := map[types.Outpoint]uint64{}
	for _, u := range us {
		id, err := types.ParseHash(u.TxID)
		if err != nil {
			t.Fatal(err)
		}
		vals[types.Outpoint{TxID: id, Index: u.Index}] = u.EffectiveValue
	}
	return vals
}

// minedAt checks tx as a block valued by vals would take it: its inputs, at the values the
// node gives them, pay its outputs and at least the relay fee.
func minedAt(tx *types.Transaction, vals map[types.Outpoint]uint64) error {
	var in, out uint64
	for _, i := range tx.Inputs {
		v, ok := vals[i.Outpoint()]
		if !ok {
			return fmt.Errorf("input %s is not unspent", i.Outpoint())
		}
		in += v
	}
	for _, o := range tx.Outputs {
		out += o.Value
	}
	if in < out {
		return fmt.Errorf("inputs worth %d pay %d", in, out)
	}
	if size := uint64(tx.SerializeSize()); in-out < size {
		return fmt.Errorf("fee %d below the relay fee for %d bytes", in-out, size)
	}
	return nil
}

// "A send never fails because of decay": a send of almost everything, built for the next
// block, still pays its outputs and the relay fee DecayMarginBlocks blocks later; the same
// transaction without the margin would not.
func TestSendSurvivesLaterBlocks(t *testing.T) {
	t.Parallel()
	net := params.Regtest
	k0, k1 := testKeys(t)
	node := newTestNode(t)
	// Every block pays k0, which holds the whole supply (rate regtestRate): at tip 199, the
	// coinbases of heights 1 to 100 (100 to 199 confirmations) are mature, 99 are not.
	node.mineTo(t, 199, k0.Address)
	b, err := GetBalance(context.Background(), node, []string{k0.Address})
	if err != nil {
		t.Fatal(err)
	}
	if b.ConfirmedNominal != 5_000*amount.Coin || b.SpendableNominal != b.ConfirmedNominal || b.Spendable >= b.SpendableNominal ||
		b.Confirmed != b.Spendable || len(b.Clusters) != 1 || b.Clusters[0].RatePerBlock != regtestRate ||
		b.Clusters[0].YearlyDecayPPM != consensus.YearlyDecayPPM(regtestRate) || len(b.Clusters[0].Addresses) != 1 {
		t.Fatalf("balance %+v", b)
	}
	amt := b.Spendable - amount.Coin/100 // all but 0.01 COIN
	// vals[k] is what the node values k0's outputs at in the block k blocks after the next.
	vals := make([]map[types.Outpoint]uint64, DecayMarginBlocks+1)
	vals[0] = valuesAt(t, node, k0.Address)
	res, err := Send(context.Background(), node, Transfer{Net: net, Keys: []Key{k0}, To: k1.Address, Amount: amt})
	if err != nil {
		t.Fatal(err)
	}
	txid, _ := types.ParseHash(res.TxID)
	tx := node.pooled(txid)
	if tx == nil || res.Inputs != 100 || res.DecayMargin < 100*1_400*DecayMarginBlocks || res.Fee < 2*uint64(res.Size)+res.DecayMargin {
		t.Fatalf("send %+v", res)
	}
	// Blocks without it (paying k0, which keeps the whole supply) age its inputs; the node
	// values them for each next block, and keeps it in its mempool.
	for k := 1; k <= DecayMarginBlocks; k++ {
		if err := node.mineBlock(k0.PKH, 0); err != nil {
			t.Fatal(err)
		}
		vals[k] = valuesAt(t, node, k0.Address)
	}
	for k, v := range vals {
		if err := minedAt(tx, v); err != nil {
			t.Fatalf("mined %d blocks after the next: %v", k, err)
		}
	}
	// And mines it DecayMarginBlocks after the next.
	if node.pooled(txid) == nil {
		t.Fatal("the node dropped it from its mempool")
	}
	node.mineTo(t, 1, k0.Address)
	if !node.Node.Chain().Confirmed(txid) {
		t.Fatalf("not mined %d blocks after the next", DecayMarginBlocks)
	}
	// Without the margin (fee exactly 2 × size), three blocks later the inputs have lost
	// more than the size's worth of slack above the relay fee.
	coins := make([]Coin, 0, len(tx.Inputs))
	for _, in := range tx.Inputs {
		coins = append(coins, Coin{Outpoint: in.Outpoint(), PKH: k0.PKH, Value: vals[0][in.Outpoint()]})
	}
	bare, err := Select(coins, Request{Payments: []Payment{{k1.PKH, amt}}, Change: k0.PKH})
	if err != nil {
		t.Fatal(err)
	}
	if err := Sign(bare, []Key{k0}, net.Magic); err != nil {
		t.Fatal(err)
	}
	if bare.DecayMargin != 0 || minedAt(bare.Tx, vals[0]) != nil || minedAt(bare.Tx, vals[3]) == nil {
		t.Fatalf("without the margin: fee %d for %d bytes; should pass at the next block and fail 3 later", bare.Fee, bare.Size)
	}
}

// countingNode counts the getclusterinfo calls made to a test node.
type countingNode struct {
	*testNode
	infoCalls int
}

func (c *countingNode) GetClusterInfo(ctx context.Context, address string) (*rpcapi.ClusterInfo, error) {
	c.infoCalls++
	return c.testNode.GetClusterInfo(ctx, address)
}

// An unconfirmed output of a decaying cluster gets a margin from the cluster's rate.
func TestSpendUnconfirmedChangeMargin(t *testing.T) {
	t.Parallel()
	net := params.Regtest
	k0, k1 := testKeys(t)
	// k0's one output of 50 COIN, 151 confirmations old, is 0.4% of the supply: it decays.
	node := &countingNode{testNode: newTestNode(t)}
	node.mine(t, consensus.CoinbaseMaturity+1)
	node.fund(t, Payment{k0.PKH, 50 * amount.Coin})
	node.mine(t, 150)
	info, err := node.testNode.GetClusterInfo(context.Background(), k0.Address)
	if err != nil {
		t.Fatal(err)
	}
	rate := info.RatePerBlock
	if rate == 0 {
		t.Fatalf("k0's cluster does not decay: %+v", info)
	}
	res, err := Send(context.Background(), node, Transfer{Net: net, Keys: []Key{k0}, To: k1.Address, Amount: amount.Coin})
	if err != nil {
		t.Fatal(err)
	}
	if res.DecayMargin == 0 || node.infoCalls != 1 {
		t.Fatalf("first send %+v, %d getclusterinfo calls", res, node.infoCalls)
	}
	// The second send can only spend the unconfirmed change.
	res2, err := Send(context.Background(), node, Transfer{Net: net, Keys: []Key{k0}, To: k1.Address, Amount: amount.Coin})
	if err != nil {
		t.Fatal(err)
	}
	want := res.Change - consensus.EffectiveValue(res.Change, rate, DecayMarginBlocks)
	if res2.Inputs != 1 || res2.DecayMargin != want || want == 0 {
		t.Fatalf("second send %+v, want margin %d", res2, want)
	}
	// Without getclusterinfo the address's confirmed outputs give the rate; with neither
	// there is nothing to go by.
	us := []UTXO{
		{UTXO: rpcapi.UTXO{Value: 50 * amount.Coin, EffectiveValue: consensus.EffectiveValue(50*amount.Coin, regtestRate, 150), Confirmations: 150}, Address: "a"},
		{UTXO: rpcapi.UTXO{Value: 9 * amount.Coin, EffectiveValue: 9 * amount.Coin}, Address: "a"},
		{UTXO: rpcapi.UTXO{Value: 9 * amount.Coin, EffectiveValue: 9 * amount.Coin}, Address: "b"},
		{UTXO: rpcapi.UTXO{Value: 50 * amount.Coin, EffectiveValue: consensus.EffectiveValue(50*amount.Coin, regtestRate, 150), Confirmations: 150, Locked: true}, Address: "b"},
	}
	AddDecayRates(context.Background(), struct{ NodeClient }{node.testNode}, us) // no GetClusterInfo
	if us[1].DecayRate < regtestRate || us[1].DecayRate > regtestRate+20 || us[2].DecayRate != 0 || us[3].DecayRate != 0 {
		t.Fatalf("rates %d %d %d %d", us[0].DecayRate, us[1].DecayRate, us[2].DecayRate, us[3].DecayRate)
	}
}

// Coins carries no decay information (no margin: for callers that value coins for later
// blocks themselves); DecayingCoins does.
func TestCoinsDecayInformation(t *testing.T) {
	id := types.Hash{7}
	eff := consensus.EffectiveValue(50*amount.Coin, regtestRate, 150)
	us := []UTXO{{UTXO: rpcapi.UTXO{TxID: id.String(), Value: 50 * amount.Coin, EffectiveValue: eff, Confirmations: 150,
		PubKeyHash: types.Hash{1}.String()}, Spendable: true, DecayRate: regtestRate}}
	plain, err := Coins(us)
	if err != nil {
		t.Fatal(err)
	}
	dec, err := DecayingCoins(us)
	if err != nil {
		t.Fatal(err)
	}
	if plain[0].Value != eff || plain[0].Nominal != 0 || plain[0].DecayRate != 0 || DecayMargin(&plain[0]) != 0 {
		t.Fatalf("Coins: %+v", plain[0])
	}
	if dec[0].Value != eff || dec[0].Nominal != 50*amount.Coin || dec[0].DecayRate != regtestRate || DecayMargin(&dec[0]) == 0 {
		t.Fatalf("DecayingCoins: %+v", dec[0])
	}
}

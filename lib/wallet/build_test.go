package wallet

import (
	"context"
	"encoding/hex"
	"errors"
	"fmt"
	"sync"
	"testing"

	"github.com/cointoolkit/coin/lib/bincode"
	"github.com/cointoolkit/coin/lib/consensus"
	"github.com/cointoolkit/coin/lib/params"
	"github.com/cointoolkit/coin/lib/policy"
	"github.com/cointoolkit/coin/lib/rpcapi"
	"github.com/cointoolkit/coin/lib/types"
)

func coin(n byte, v uint64) Coin {
	var id types.Hash
	id[0] = n
	return Coin{Outpoint: types.Outpoint{TxID: id, Index: uint32(n)}, Value: v, PKH: types.Hash{1}}
}

func TestSelectExactFee(t *testing.T) {
	to := types.Hash{9}
	for _, rate := range []uint64{1, 2, 7, 100} {
		for _, amt := range []uint64{1_000, 250_000, 150 * 100_000_000} {
			coins := []Coin{coin(1, 100*100_000_000), coin(2, 60*100_000_000), coin(3, 5_000)}
			plan, err := Select(coins, Request{Payments: []Payment{{to, amt}}, FeeRate: rate, Change: types.Hash{1}})
			if err != nil {
				t.Fatalf("rate %d amount %d: %v", rate, amt, err)
			}
			size := plan.Tx.SerializeSize()
			if plan.Size != size || len(plan.Tx.Bytes()) != size {
				t.Fatalf("size %d, serialized %d", plan.Size, len(plan.Tx.Bytes()))
			}
			var in uint64
			for _, c := range plan.Coins {
				in += c.Value
			}
			var out uint64
			for _, o := range plan.Tx.Outputs {
				out += o.Value
			}
			if in-out != plan.Fee {
				t.Fatalf("fee %d, inputs−outputs %d", plan.Fee, in-out)
			}
			if plan.ChangeIndex >= 0 && plan.Fee != rate*uint64(size) {
				t.Fatalf("rate %d amount %d: fee %d, want exactly %d×%d", rate, amt, plan.Fee, rate, size)
			}
			if plan.ChangeIndex < 0 && (plan.Fee < rate*uint64(size) || plan.Fee >= rate*uint64(size+41)+policy.DustLimit) {
				t.Fatalf("no change: fee %d for %d bytes at %d", plan.Fee, size, rate)
			}
			if plan.TxID != plan.Tx.TxID() {
				t.Fatal("plan txid differs")
			}
		}
	}
}

// Change below the dust limit is left to the fee.
func TestSelectDustChangeGoesToFee(t *testing.T) {
	probe := &types.Transaction{Version: 1, Kind: types.KindTransfer, Inputs: make([]types.TxInput, 1),
		Outputs: []types.TxOutput{{Value: 100_000}}}
	noChange := 2 * uint64(probe.SerializeSize())
	withChange := noChange + 2*(3+32) // a change output of 1,000 subunits: 3-byte varint
	c := coin(1, 100_000+withChange+999)
	plan, err := Select([]Coin{c}, Request{Payments: []Payment{{types.Hash{9}, 100_000}}, FeeRate: 2})
	if err != nil {
		t.Fatal(err)
	}
	if plan.ChangeIndex != -1 || len(plan.Tx.Outputs) != 1 || plan.Fee != withChange+999 || 2*uint64(plan.Size) != noChange {
		t.Fatalf("plan: change index %d, outputs %d, fee %d, size %d", plan.ChangeIndex, len(plan.Tx.Outputs), plan.Fee, plan.Size)
	}
	// With enough left for a change output of at least the dust limit, change appears.
	c = coin(1, 100_000+withChange+1_000)
	plan, err = Select([]Coin{c}, Request{Payments: []Payment{{types.Hash{9}, 100_000}}, FeeRate: 2})
	if err != nil {
		t.Fatal(err)
	}
	if plan.ChangeIndex != 1 || plan.Change != 1_000 || plan.Fee != 2*uint64(plan.Size) || plan.Fee != withChange {
		t.Fatalf("plan: change index %d change %d fee %d size %d", plan.ChangeIndex, plan.Change, plan.Fee, plan.Size)
	}
}

// Every change value around the varint width boundaries gives a valid plan whose fee is
// exact (or at most 8 bytes' worth above it when no exact value exists).
func TestSelectVarintBoundaries(t *testing.T) {
	for _, boundary := range []uint64{251, 1 << 16, 1 << 32} {
		for d := int64(-40); d <= 40; d++ {
			for _, rate := range []uint64{1, 2, 3} {
				in := uint64(int64(boundary)+d) + 10_000 + 500
				plan, err := Select([]Coin{coin(1, in)}, Request{Payments: []Payment{{types.Hash{9}, 10_000}}, FeeRate: rate})
				if err != nil {
					t.Fatal(err)
				}
				exact := rate * uint64(plan.Size)
				if plan.Fee < exact || plan.Fee > exact+8*rate+policy.DustLimit {
					t.Fatalf("in %d rate %d: fee %d, exact %d", in, rate, plan.Fee, exact)
				}
				if plan.ChangeIndex >= 0 && bincode.VarintSize(plan.Change) == 0 {
					t.Fatal("bad change")
				}
			}
		}
	}
}

func TestSelectErrors(t *testing.T) {
	to := types.Hash{9}
	_, err := Select([]Coin{coin(1, 5_000)}, Request{Payments: []Payment{{to, 10_000}}})
	var ife *InsufficientFundsError
	if !errors.Is(err, ErrInsufficientFunds) || !errors.As(err, &ife) || ife.Have != 5_000 || ife.Need <= 10_000 {
		t.Fatalf("err = %v", err)
	}
	if _, err := Select([]Coin{coin(1, 5_000)}, Request{Payments: []Payment{{to, 999}}}); !errors.Is(err, ErrDust) {
		t.Fatalf("dust: %v", err)
	}
	if _, err := Select([]Coin{coin(1, 5_000)}, Request{Payments: []Payment{{to, 1_000}}, FeeRate: MaxFeeRate + 1}); !errors.Is(err, ErrBadFeeRate) {
		t.Fatalf("fee rate: %v", err)
	}
	if _, err := Select(nil, Request{}); !errors.Is(err, ErrNoPayments) {
		t.Fatalf("no payments: %v", err)
	}
	// Fee exactly not covered: amount + fee − 1.
	plan, err := Select([]Coin{coin(1, 1_000_000)}, Request{Payments: []Payment{{to, 1_000}}, FeeRate: 1})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Select([]Coin{coin(1, 1_000+uint64(plan.Size)-41-1)}, Request{Payments: []Payment{{to, 1_000}}, FeeRate: 1}); !errors.Is(err, ErrInsufficientFunds) {
		t.Fatalf("fee not covered: %v", err)
	}
	// Too many small coins for the input limit.
	many := make([]Coin, 1200)
	for i := range many {
		many[i] = coin(byte(i), 2_000)
		many[i].Outpoint.Index = uint32(i)
	}
	if _, err := Select(many, Request{Payments: []Payment{{to, 1_500_000}}}); !errors.Is(err, ErrTooLarge) {
		t.Fatalf("too many inputs: %v", err)
	}
}

// fakeNode is an in-memory node for TestSendMultiKey alone: UTXOs per address, and a mempool
// that checks every transaction with the consensus rules (signatures, inputs, fee ≥ 1/byte,
// no dust). Its outputs never decay.
//
// A real regtest node cannot stand in there: the 1,040 COIN of k1 stay at or below the decay
// threshold only in a supply of 1,040,000 COIN, 20,800 blocks, 5.7 s under -race.
type fakeNode struct {
	mu    sync.Mutex
	net   *params.Network
	utxos map[types.Outpoint]*consensus.UtxoEntry
	pend  map[types.Outpoint]bool // spent in the fake mempool
	sent  []*types.Transaction
	tip   uint64
}

func newFakeNode(net *params.Network) *fakeNode {
	return &fakeNode{net: net, utxos: map[types.Outpoint]*consensus.UtxoEntry{}, pend: map[types.Outpoint]bool{}, tip: 200}
}

func (f *fakeNode) fund(pkh types.Hash, v uint64, height uint64, coinbase bool) types.Outpoint {
	f.mu.Lock()
	defer f.mu.Unlock()
	var id types.Hash
	id[0], id[1], id[2] = byte(len(f.utxos)), byte(len(f.utxos)>>8), 0xee
	op := types.Outpoint{TxID: id, Index: uint32(len(f.utxos))}
	f.utxos[op] = &consensus.UtxoEntry{Value: v, PubKeyHash: pkh, Height: height, Coinbase: coinbase}
	return op
}

func (f *fakeNode) Utxo(op types.Outpoint) (*consensus.UtxoEntry, bool, error) {
	e, ok := f.utxos[op]
	return e, ok, nil
}

func (f *fakeNode) GetUtxosByAddress(_ context.Context, address string, withPool bool) ([]rpcapi.UTXO, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	pkh, err := DecodeAddress(address, f.net)
	if err != nil {
		return nil, err
	}
	var out []rpcapi.UTXO
	for op, e := range f.utxos {
		if e.PubKeyHash != pkh || (withPool && f.pend[op]) {
			continue
		}
		conf := uint64(0)
		if e.Height > 0 {
			conf = f.tip - e.Height + 1
		}
		if conf == 0 && !withPool {
			continue
		}
		out = append(out, rpcapi.UTXO{TxID: op.TxID.String(), Index: op.Index, Value: e.Value, EffectiveValue: e.Value,
			IsCoinbase: e.Coinbase, PubKeyHash: pkh.String(), Confirmations: conf, BlockHeight: e.Height})
	}
	return out, nil
}

func (f *fakeNode) SendRawTransaction(_ context.Context, h string) (string, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	b, err := hex.DecodeString(h)
	if err != nil {
		return "", err
	}
	tx, err := types.DecodeTransaction(b)
	if err != nil {
		return "", err
	}
	txid := tx.TxID()
	size := tx.SerializeSize()
	if err := consensus.CheckTransactionSanity(tx, size); err != nil {
		return "", err
	}
	if err := consensus.VerifySignatures(tx, txid, f.net.Magic); err != nil {
		return "", err
	}
	for _, in := range tx.Inputs {
		if f.pend[in.Outpoint()] {
			return "", fmt.Errorf("conflicts with a mempool transaction")
		}
	}
	for _, o := range tx.Outputs {
		if o.Value < policy.DustLimit {
			return "", fmt.Errorf("dust output")
		}
	}
	res, err := consensus.CheckTransactionInputs(tx, f.tip+1, consensus.ValuedView{Utxos: f})
	if err != nil {
		return "", err
	}
	if res.Fee < uint64(size) {
		return "", fmt.Errorf("insufficient fee %d for %d bytes", res.Fee, size)
	}
	for _, in := range tx.Inputs {
		f.pend[in.Outpoint()] = true
	}
	for i, o := range tx.Outputs {
		f.utxos[types.Outpoint{TxID: txid, Index: uint32(i)}] = &consensus.UtxoEntry{Value: o.Value, PubKeyHash: o.PubKeyHash}
	}
	f.sent = append(f.sent, tx)
	return txid.String(), nil
}

func TestSendMultiKey(t *testing.T) {
	net := params.Regtest
	ring, err := KeyringFromMnemonic(testMnemonic, "", net, 0)
	if err != nil {
		t.Fatal(err)
	}
	k0, _ := ring.Key(0)
	k1, _ := ring.Key(1)
	node := newFakeNode(net)
	node.fund(k0.PKH, 30*100_000_000, 150, false)
	node.fund(k1.PKH, 40*100_000_000, 150, false)
	node.fund(k1.PKH, 1_000*100_000_000, 150, true) // immature coinbase: 51 confirmations
	_, toAddr, _ := NewMnemonic(12, net)

	res, err := Send(context.Background(), node, Transfer{Net: net, Keys: []Key{k0, k1}, To: toAddr, Amount: 65 * 100_000_000})
	if err != nil {
		t.Fatal(err)
	}
	if res.Inputs != 2 || res.Fee != 2*uint64(res.Size) || res.Change != 5*100_000_000-res.Fee {
		t.Fatalf("result %+v", res)
	}
	tx := node.sent[0]
	if tx.Outputs[1].PubKeyHash != k0.PKH {
		t.Fatal("change does not go to the first key")
	}
	// Balance: the immature coinbase is not spendable; the change is unconfirmed; the two
	// spent outputs, still in the chain's UTXO set, are no longer confirmed-available.
	b, err := GetBalance(context.Background(), node, []string{k0.Address, k1.Address})
	if err != nil {
		t.Fatal(err)
	}
	if b.Confirmed != 0 || b.ConfirmedNominal != 0 || b.Immature != 1_000*100_000_000 || b.Unconfirmed != res.Change ||
		b.Spendable != res.Change || b.UTXOs != 2 {
		t.Fatalf("balance %+v", b)
	}
	// A second transfer spends the unconfirmed change; too much is refused.
	if _, err := Send(context.Background(), node, Transfer{Net: net, Keys: []Key{k0, k1}, To: toAddr, Amount: res.Change}); !errors.Is(err, ErrInsufficientFunds) {
		t.Fatalf("overspend: %v", err)
	}
	if _, err := Send(context.Background(), node, Transfer{Net: net, Keys: []Key{k0, k1}, To: toAddr, Amount: 100_000_000}); err != nil {
		t.Fatal(err)
	}
	if _, err := Send(context.Background(), node, Transfer{Net: net, Keys: []Key{k0}, To: "tcoin1qqqq", Amount: 1}); err == nil {
		t.Fatal("bad address accepted")
	}
}

package wallet

import (
	"context"
	"encoding/hex"
	"errors"
	"fmt"
	"sort"

	"github.com/cointoolkit/coin/lib/consensus"
	"github.com/cointoolkit/coin/lib/params"
	"github.com/cointoolkit/coin/lib/rpcapi"
	"github.com/cointoolkit/coin/lib/types"
)

// NodeClient is what the wallet needs from a node's JSON-RPC interface.
type NodeClient interface {
	GetUtxosByAddress(ctx context.Context, address string, includeMempool bool) ([]rpcapi.UTXO, error)
	SendRawTransaction(ctx context.Context, hexData string) (string, error)
}

var _ NodeClient = (*rpcapi.Client)(nil)

// UTXO is an unspent output of one of the wallet's addresses, as listed by the node, with
// what the wallet makes of it.
type UTXO struct {
	rpcapi.UTXO
	Address string `json:"address"`
	// Immature is true for a coinbase output with fewer than 100 confirmations.
	Immature bool `json:"immature"`
	// Spendable is true when the wallet would use it in a transfer now.
	Spendable bool `json:"spendable"`
	// DecayRate is the per-block rate (parts per 10^12) its decay margin assumes besides
	// its own values (AddDecayRates); 0 until set.
	DecayRate uint64 `json:"decay_rate,omitempty"`
}

// CoinValue is what an output contributes when spent in the next block: its effective
// value as the node reports it (protocol §8), never more than its nominal value.
func CoinValue(u *rpcapi.UTXO) uint64 {
	if u.EffectiveValue > 0 && u.EffectiveValue <= u.Value {
		return u.EffectiveValue
	}
	return u.Value
}

// Mature reports whether a listed output may be spent in the next block: a coinbase
// output at height H is spendable from height H+100, that is with 100 confirmations.
func Mature(u *rpcapi.UTXO) bool {
	return !u.IsCoinbase || u.Confirmations >= consensus.CoinbaseMaturity
}

// ListUTXOs lists the outputs of addrs. With includeMempool the node's pending view is
// used: outputs spent by mempool transactions are left out, outputs of mempool
// transactions (0 confirmations) are in.
func ListUTXOs(ctx context.Context, node NodeClient, addrs []string, includeMempool bool) ([]UTXO, error) {
	var out []UTXO
	for _, a := range addrs {
		us, err := node.GetUtxosByAddress(ctx, a, includeMempool)
		if err != nil {
			return nil, err
		}
		for _, u := range us {
			w := UTXO{UTXO: u, Address: a, Immature: !Mature(&u)}
			w.Spendable = !w.Immature && !u.Locked
			out = append(out, w)
		}
	}
	return out, nil
}

// Coins turns the spendable outputs of a listing into coins, largest value first (then
// more confirmations first, then by outpoint, so the order is deterministic). Each coin is
// worth its effective value at the next block and carries no decay information (Nominal
// and DecayRate 0), so Select adds no decay margin for it: for a caller that values its
// coins for later blocks itself. DecayingCoins is the same with the decay information.
func Coins(us []UTXO) ([]Coin, error) { return coins(us, false) }

// DecayingCoins is Coins with each coin's nominal value and UTXO.DecayRate (see
// AddDecayRates) set, so that Select adds each coin's DecayMargin to the fee. Spend and
// SpendAgent use it.
func DecayingCoins(us []UTXO) ([]Coin, error) { return coins(us, true) }

// pendingCoins is the coins of addrs in the node's pending view (unconfirmed change
// included, outputs spent in the mempool left out), with their decay rates (AddDecayRates):
// DecayingCoins of the listing. Spend, SpendAgent and Consolidate spend from it.
func pendingCoins(ctx context.Context, node NodeClient, addrs []string) ([]Coin, error) {
	us, err := ListUTXOs(ctx, node, addrs, true)
	if err != nil {
		return nil, err
	}
	AddDecayRates(ctx, node, us)
	return DecayingCoins(us)
}

// keyAddresses is the address of each of keys.
func keyAddresses(keys []Key) []string {
	addrs := make([]string, len(keys))
	for i, k := range keys {
		addrs[i] = k.Address
	}
	return addrs
}

func coins(us []UTXO, decay bool) ([]Coin, error) {
	coins := make([]Coin, 0, len(us))
	for i := range us {
		u := &us[i]
		if !u.Spendable {
			continue
		}
		id, err := types.ParseHash(u.TxID)
		if err != nil {
			return nil, fmt.Errorf("node listed a bad txid: %w", err)
		}
		pkh, err := types.ParseHash(u.PubKeyHash)
		if err != nil {
			return nil, fmt.Errorf("node listed a bad pubkey hash: %w", err)
		}
		c := Coin{Outpoint: types.Outpoint{TxID: id, Index: u.Index}, Value: CoinValue(&u.UTXO), PKH: pkh,
			Confirmations: u.Confirmations}
		if decay {
			c.Nominal, c.DecayRate = u.Value, u.DecayRate
		}
		coins = append(coins, c)
	}
	SortLargestFirst(coins)
	return coins, nil
}

// SortLargestFirst orders coins by value, descending; ties by confirmations, descending,
// then by outpoint.
func SortLargestFirst(coins []Coin) {
	sort.Slice(coins, func(i, j int) bool {
		a, b := &coins[i], &coins[j]
		if a.Value != b.Value {
			return a.Value > b.Value
		}
		if a.Confirmations != b.Confirmations {
			return a.Confirmations > b.Confirmations
		}
		if a.Outpoint.TxID != b.Outpoint.TxID {
			return string(a.Outpoint.TxID[:]) < string(b.Outpoint.TxID[:])
		}
		return a.Outpoint.Index < b.Outpoint.Index
	})
}

// Balance sums a set of addresses' outputs, in subunits at their effective value at the
// next block (protocol §8), with the nominal values of the outputs that decay beside them
// (unconfirmed outputs have not decayed; locked outputs never decay).
type Balance struct {
	// Confirmed: mined, mature and unlocked outputs that no mempool transaction spends.
	Confirmed uint64 `json:"confirmed"`
	// Unconfirmed: outputs of mempool transactions paying the addresses.
	Unconfirmed uint64 `json:"unconfirmed"`
	// Spendable: what a transfer can use now: the pending view (mempool spends applied,
	// mempool outputs added), mature and unlocked.
	Spendable uint64 `json:"spendable"`
	// Immature: coinbase outputs with fewer than 100 confirmations.
	Immature uint64 `json:"immature"`
	// Locked: mined agent stake and contract escrow outputs that no mempool transaction
	// spends.
	Locked uint64 `json:"locked"`
	// UTXOs: the number of unspent outputs in the pending view.
	UTXOs int `json:"utxo_count"`
	// ConfirmedNominal, SpendableNominal and ImmatureNominal are Confirmed, Spendable and
	// Immature at nominal value.
	ConfirmedNominal uint64 `json:"confirmed_nominal"`
	SpendableNominal uint64 `json:"spendable_nominal"`
	ImmatureNominal  uint64 `json:"immature_nominal"`
	// Clusters are the decay clusters holding the outputs of the pending view, highest
	// rate first; set only when the node is a ClusterNode.
	Clusters []ClusterDecay `json:"clusters,omitempty"`
}

// GetBalance reads the balance of addrs from the node (one listing of the pending view per
// address, and one getclusterinfo per cluster when node is a ClusterNode). Every amount
// comes from the pending view, so an output a mempool transaction spends counts nowhere:
// not as confirmed (it is no longer available), not as spendable; the change of that
// transaction counts as unconfirmed (and spendable) instead.
func GetBalance(ctx context.Context, node NodeClient, addrs []string) (Balance, error) {
	var b Balance
	pending, err := ListUTXOs(ctx, node, addrs, true)
	if err != nil {
		return b, err
	}
	b.UTXOs = len(pending)
	for i := range pending {
		u := &pending[i]
		v := CoinValue(&u.UTXO)
		switch {
		case u.Confirmations == 0:
			b.Unconfirmed += v
		case u.Locked:
			b.Locked += v
		case u.Immature:
			b.Immature += v
			b.ImmatureNominal += u.Value
		default:
			b.Confirmed += v
			b.ConfirmedNominal += u.Value
		}
		if u.Spendable {
			b.Spendable += v
			b.SpendableNominal += u.Value
		}
	}
	if cn, ok := node.(ClusterNode); ok && len(pending) > 0 {
		if b.Clusters, err = Clusters(ctx, cn, pending); err != nil {
			return b, err
		}
	}
	return b, nil
}

// SendResult describes a broadcast transfer.
type SendResult struct {
	TxID   string `json:"txid"`
	From   string `json:"from"`
	To     string `json:"to"`
	Amount uint64 `json:"amount"`
	Fee    uint64 `json:"fee"`
	Change uint64 `json:"change"`
	Size   int    `json:"size"`
	Inputs int    `json:"inputs"`
	// DecayMargin is the part of Fee that covers the inputs' decay over DecayMarginBlocks
	// more blocks (Plan.DecayMargin).
	DecayMargin uint64 `json:"decay_margin"`
}

// Transfer is one payment from a set of keys: the coins of every key's address are
// candidates, change goes to keys[0].
type Transfer struct {
	Net     *params.Network
	Keys    []Key
	To      string
	Amount  uint64
	FeeRate uint64
}

// Spend builds req from the coins of keys' addresses (the node's pending view, largest
// first, with their decay rates: AddDecayRates), signs it with keys and broadcasts it
// through node. Change goes to keys[0] unless req.Change is set. Any kind can be built (see
// Select); the fee includes the inputs' decay margin. On a node error nothing was spent.
func Spend(ctx context.Context, node NodeClient, net *params.Network, keys []Key, req Request) (*Plan, error) {
	if len(keys) == 0 {
		return nil, errors.New("send: no keys")
	}
	coins, err := pendingCoins(ctx, node, keyAddresses(keys))
	if err != nil {
		return nil, err
	}
	if req.Change == (types.Hash{}) {
		req.Change = keys[0].PKH
	}
	plan, err := Select(coins, req)
	if err != nil {
		return nil, err
	}
	if err := Sign(plan, keys, net.Magic); err != nil {
		return nil, err
	}
	return plan, Broadcast(ctx, node, plan)
}

// Broadcast sends a signed plan's transaction to node and checks the txid it answers.
func Broadcast(ctx context.Context, node NodeClient, plan *Plan) error {
	txid, err := node.SendRawTransaction(ctx, hex.EncodeToString(plan.Tx.Bytes()))
	if err != nil {
		return err
	}
	if txid != plan.TxID.String() {
		return fmt.Errorf("node returned txid %s for transaction %s", txid, plan.TxID)
	}
	return nil
}

// Send builds, signs and broadcasts t through node. It returns the plan's summary; on a
// node error nothing was spent.
func Send(ctx context.Context, node NodeClient, t Transfer) (*SendResult, error) {
	if len(t.Keys) == 0 {
		return nil, errors.New("send: no keys")
	}
	toPKH, err := DecodeAddress(t.To, t.Net)
	if err != nil {
		return nil, err
	}
	plan, err := Spend(ctx, node, t.Net, t.Keys, Request{Payments: []Payment{{PKH: toPKH, Value: t.Amount}},
		FeeRate: t.FeeRate})
	if err != nil {
		return nil, err
	}
	return &SendResult{TxID: plan.TxID.String(), From: t.Keys[0].Address, To: t.To, Amount: t.Amount, Fee: plan.Fee,
		Change: plan.Change, Size: plan.Size, Inputs: len(plan.Coins), DecayMargin: plan.DecayMargin}, nil
}

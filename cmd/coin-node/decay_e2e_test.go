package main

import (
	"crypto/ed25519"
	"encoding/hex"
	"errors"
	"testing"

	"github.com/cointoolkit/coin/lib/amount"
	"github.com/cointoolkit/coin/lib/consensus"
	"github.com/cointoolkit/coin/lib/params"
	"github.com/cointoolkit/coin/lib/reason"
	"github.com/cointoolkit/coin/lib/rpcapi"
	"github.com/cointoolkit/coin/lib/types"
)

// TestE2EDecay: concentration decay (protocol §8) on a regtest coin-node, over JSON-RPC. One
// wallet mines every block, so its cluster holds the whole supply and its coinbases decay:
// getutxosbyaddress shows it, a spend of the nominal value is refused, one of the effective
// value accepted; the decay pool grows by exactly what the mined inputs lost less the
// release; the next template's coinbase_value is subsidy + fees + 1% of the pool; two
// addresses spent together end in one cluster, the payee in its own; getclusterinfo shows the
// miner's concentration and rate.
func TestE2EDecay(t *testing.T) {
	m, a, b, payee := newWallet(t, 40), newWallet(t, 41), newWallet(t, 42), newWallet(t, 43)
	p := newProc(t, "N").start()
	hashes := p.generate(121, m.addr)

	// The miner's coinbases are worth less than their nominal value at the next block.
	us, err := p.RPC.GetUtxosByAddress(bg, m.addr, false)
	if err != nil || len(us) != 121 {
		t.Fatalf("getutxosbyaddress: %d outputs, %v", len(us), err)
	}
	for _, u := range us {
		if u.BlockHeight <= 21 && u.EffectiveValue >= u.Value || u.EffectiveValue > u.Value {
			t.Fatalf("output at height %d: effective %d of %d", u.BlockHeight, u.EffectiveValue, u.Value)
		}
	}
	ci := clusterInfo(t, p, m.addr)
	if ci.ConcentrationPPB < 990_000_000 || ci.RatePerBlock == 0 || ci.Addresses != 1 ||
		ci.RatePerBlock != consensus.DecayRate(ci.ConcentrationPPB, consensus.TierNone) || ci.YearlyDecayPct == "" {
		t.Fatalf("getclusterinfo of the miner: %+v", ci)
	}

	// A spend of the nominal value is refused (insufficient_funds); one of the effective
	// value (outputs + fee) is accepted and mined.
	cb1, nominal1 := coinbaseOf(t, p, hashes[0])
	eff1 := effectiveValue(t, p, m.addr, cb1)
	if eff1 >= nominal1 {
		t.Fatalf("coinbase of block 1: effective %d of %d", eff1, nominal1)
	}
	over := signedTx([]types.Outpoint{cb1}, []wallet{m}, types.TxOutput{Value: nominal1 - 1000, PubKeyHash: m.pkh})
	_, err = p.RPC.SendRawTransaction(bg, hex.EncodeToString(over.Bytes()))
	var ne *rpcapi.NodeError
	if !errors.As(err, &ne) || ne.Reason() != reason.InsufficientFunds {
		t.Fatalf("spend of the nominal value: %v, want insufficient_funds", err)
	}
	const fee = 1000
	spend1 := signedTx([]types.Outpoint{cb1}, []wallet{m}, types.TxOutput{Value: eff1 - fee, PubKeyHash: m.pkh})
	send(t, p, spend1)
	before := chainInfo(t, p)
	if before.DecayPoolBalance != 0 {
		t.Fatalf("decay pool %d before anything was spent", before.DecayPoolBalance)
	}
	p.generate(1, m.addr)
	after := chainInfo(t, p)
	if after.DecayPoolBalance != nominal1-eff1 {
		t.Fatalf("decay pool %d after the spend, want the decay %d", after.DecayPoolBalance, nominal1-eff1)
	}

	// The next template claims subsidy + the fees of the pending transaction + 1% of the pool.
	cb2, nominal2 := coinbaseOf(t, p, hashes[1])
	eff2 := effectiveValue(t, p, m.addr, cb2)
	fund := signedTx([]types.Outpoint{cb2}, []wallet{m},
		types.TxOutput{Value: 10 * amount.Coin, PubKeyHash: a.pkh},
		types.TxOutput{Value: 20 * amount.Coin, PubKeyHash: b.pkh},
		types.TxOutput{Value: eff2 - 30*amount.Coin - fee, PubKeyHash: m.pkh})
	send(t, p, fund)
	tpl, err := p.RPC.GetBlockTemplate(bg, m.addr)
	if err != nil {
		t.Fatal(err)
	}
	pool := after.DecayPoolBalance
	release := pool * 100 / 10_000
	if len(tpl.Transactions) != 2 || tpl.Transactions[1].Fee != fee || tpl.Height != 123 ||
		tpl.CoinbaseValue != consensus.Subsidy(123)+fee+release || release == 0 {
		t.Fatalf("template: height %d, coinbase_value %d, want %d + %d + %d; %+v", tpl.Height, tpl.CoinbaseValue,
			consensus.Subsidy(123), fee, release, tpl.Transactions)
	}
	p.generate(1, m.addr)
	if got := chainInfo(t, p).DecayPoolBalance; got != pool-release+(nominal2-eff2) {
		t.Fatalf("decay pool %d after the funding, want %d − %d + %d", got, pool, release, nominal2-eff2)
	}

	// a (10 COIN) and b (20 COIN) spent together: one cluster named by b, of two addresses;
	// the payee stays in a cluster of its own.
	idB := validate(t, p, b.addr).ClusterID
	if idA := validate(t, p, a.addr).ClusterID; idA == idB || idA == "" {
		t.Fatalf("a and b in cluster %s and %s before any spend", idA, idB)
	}
	fundID := fund.TxID()
	ina, inb := types.Outpoint{TxID: fundID, Index: 0}, types.Outpoint{TxID: fundID, Index: 1}
	effA, effB := effectiveValue(t, p, a.addr, ina), effectiveValue(t, p, b.addr, inb)
	join := signedTx([]types.Outpoint{ina, inb}, []wallet{a, b},
		types.TxOutput{Value: 25 * amount.Coin, PubKeyHash: payee.pkh},
		types.TxOutput{Value: effA + effB - 25*amount.Coin - fee, PubKeyHash: a.pkh})
	send(t, p, join)
	pool = chainInfo(t, p).DecayPoolBalance
	p.generate(1, m.addr)
	if got := chainInfo(t, p).DecayPoolBalance; got != pool-pool*100/10_000+(30*amount.Coin-effA-effB) {
		t.Fatalf("decay pool %d after the join, want %d − 1%% + %d", got, pool, 30*amount.Coin-effA-effB)
	}
	va, vb, vp := validate(t, p, a.addr), validate(t, p, b.addr), validate(t, p, payee.addr)
	if va.ClusterID != idB || vb.ClusterID != idB || vp.ClusterID == idB {
		t.Fatalf("clusters after the join: a %s, b %s, payee %s; want a = b = %s ≠ payee", va.ClusterID, vb.ClusterID, vp.ClusterID, idB)
	}
	if ci := clusterInfo(t, p, a.addr); ci.ClusterID != idB || ci.Addresses != 2 || ci.Balance != effA+effB-25*amount.Coin-fee {
		t.Fatalf("getclusterinfo of a: %+v", ci)
	}
	if ci := clusterInfo(t, p, idB); ci.Addresses != 2 {
		t.Fatalf("getclusterinfo by id: %+v", ci)
	}
	if ci := clusterInfo(t, p, payee.addr); ci.ClusterID != vp.ClusterID || ci.Addresses != 1 || ci.Balance != 25*amount.Coin {
		t.Fatalf("getclusterinfo of the payee: %+v", ci)
	}
	us, err = p.RPC.GetUtxosByAddress(bg, a.addr, false)
	if err != nil || len(us) != 1 || us[0].ClusterID != idB {
		t.Fatalf("getutxosbyaddress of a: %+v %v", us, err)
	}
}

// coinbaseOf is the coinbase output of the block hash and its value.
func coinbaseOf(t *testing.T, p *proc, hash string) (types.Outpoint, uint64) {
	t.Helper()
	blk, err := p.RPC.GetBlock(bg, hash)
	if err != nil {
		t.Fatal(err)
	}
	var rawHex string
	if err := p.RPC.Call(bg, "getrawtransaction", []any{blk.Tx[0]}, &rawHex); err != nil {
		t.Fatal(err)
	}
	raw, _ := hex.DecodeString(rawHex)
	cb, err := types.DecodeTransaction(raw)
	if err != nil {
		t.Fatal(err)
	}
	return types.Outpoint{TxID: cb.TxID()}, cb.Outputs[0].Value
}

// signedTx is a transfer of ins (input i signed by signers[i]) paying outs.
func signedTx(ins []types.Outpoint, signers []wallet, outs ...types.TxOutput) *types.Transaction {
	tx := &types.Transaction{Version: 1, Kind: types.KindTransfer, Outputs: outs}
	for _, op := range ins {
		tx.Inputs = append(tx.Inputs, types.TxInput{PrevTxID: op.TxID, PrevIndex: op.Index})
	}
	msg := types.SigMessage(params.Regtest.Magic, tx.TxID())
	for i, w := range signers {
		copy(tx.Inputs[i].PublicKey[:], w.key.Public().(ed25519.PublicKey))
		copy(tx.Inputs[i].Signature[:], ed25519.Sign(w.key, msg))
	}
	return tx
}

func send(t *testing.T, p *proc, tx *types.Transaction) {
	t.Helper()
	if got, err := p.RPC.SendRawTransaction(bg, hex.EncodeToString(tx.Bytes())); err != nil || got != tx.TxID().String() {
		t.Fatalf("sendrawtransaction: %v (%s)", err, got)
	}
}

func chainInfo(t *testing.T, p *proc) rpcapi.BlockchainInfo {
	t.Helper()
	var info rpcapi.BlockchainInfo
	if err := p.RPC.Call(bg, "getblockchaininfo", nil, &info); err != nil {
		t.Fatal(err)
	}
	return info
}

func clusterInfo(t *testing.T, p *proc, addressOrID string) *rpcapi.ClusterInfo {
	t.Helper()
	ci, err := p.RPC.GetClusterInfo(bg, addressOrID)
	if err != nil {
		t.Fatalf("getclusterinfo %s: %v", addressOrID, err)
	}
	return ci
}

func validate(t *testing.T, p *proc, addr string) rpcapi.ValidateAddress {
	t.Helper()
	var v rpcapi.ValidateAddress
	if err := p.RPC.Call(bg, "validateaddress", []any{addr}, &v); err != nil || !v.IsValid {
		t.Fatalf("validateaddress %s: %+v %v", addr, v, err)
	}
	return v
}

package main

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/cointoolkit/coin/lib/amount"
	"github.com/cointoolkit/coin/lib/consensus"
	"github.com/cointoolkit/coin/lib/params"
	"github.com/cointoolkit/coin/lib/rpcapi"
	"github.com/cointoolkit/coin/lib/types"
	lw "github.com/cointoolkit/coin/lib/wallet"
)

// The fixed mnemonic of the end-to-end wallets (newWallet).
const e2eMnemonic = "abandon abandon abandon abandon abandon abandon abandon abandon abandon abandon abandon about"

// agentKey is the lib/wallet key of the end-to-end wallet index (the key newWallet derives).
func agentKey(t *testing.T, index uint32) lw.Key {
	t.Helper()
	r, err := lw.KeyringFromMnemonic(e2eMnemonic, "", params.Regtest, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Wipe()
	k, err := r.Key(index)
	if err != nil {
		t.Fatal(err)
	}
	return k
}

// must is the request of a lib/wallet constructor that returns an error too.
func must(t *testing.T) func(lw.Request, error) lw.Request {
	return func(req lw.Request, err error) lw.Request {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		return req
	}
}

// agentOp builds an agent transaction of key with lib/wallet from p's pending view and sends
// it to p with sendrawtransaction; it returns the txid.
func (p *proc) agentOp(key lw.Key, req lw.Request) types.Hash {
	p.t.Helper()
	plan, err := lw.SpendAgent(bg, p.RPC, params.Regtest, key, req)
	if err != nil {
		p.t.Fatalf("%s: agent %s: %s: %v", p.name, key.Address, req.Kind, err)
	}
	return plan.TxID
}

// escrow is the contract id's escrow as p's pending view has it.
func (p *proc) escrow(id types.Hash) lw.Escrow {
	p.t.Helper()
	k, err := p.RPC.GetContract(bg, id.String())
	if err != nil {
		p.t.Fatalf("%s: getcontract %s: %v", p.name, id, err)
	}
	e, err := lw.EscrowOf(k, params.Regtest)
	if err != nil {
		p.t.Fatal(err)
	}
	return e
}

func (p *proc) conductInfo() rpcapi.ConductInfo {
	p.t.Helper()
	info, err := p.RPC.GetConductInfo(bg)
	if err != nil {
		p.t.Fatalf("%s: getconductinfo: %v", p.name, err)
	}
	return *info
}

// TestE2EConductPartition: two nodes share agents P and Q and an open contract K, then mine
// apart. The losing side B registers Y, fulfils K and reviews it; the winning side A
// registers X and runs a whole contract K2 between P and Q. After healing both report one
// getconductinfo (A's), B's agent records are undone (Y is no confirmed agent, K is no
// confirmed fulfilment), and after the next block the two still agree.
func TestE2EConductPartition(t *testing.T) {
	miner := newWallet(t, 20)
	ok := must(t)
	P, Q, X, Y := agentKey(t, 21), agentKey(t, 22), agentKey(t, 23), agentKey(t, 24)
	a := newProc(t, "A").noDial().start() // A would dial B, learned through gossip, and heal the partition
	b := newProc(t, "B").start(a.P2PAddr())
	waitUntil(t, 10*time.Second, "A-B connected", func() bool { return a.peers() == 1 && b.peers() == 1 })
	// Two coinbases for each agent (a stake is 50 COIN and coinbases decay), then maturity.
	for _, k := range []lw.Key{P, Q, X, Y} {
		a.generate(2, k.Address)
	}
	a.generate(100, miner.addr)
	a.agentOp(P, lw.RegisterRequest(P.PKH))
	a.agentOp(Q, lw.RegisterRequest(Q.PKH))
	a.generate(1, miner.addr)
	K := a.agentOp(P, ok(lw.ContractCreateRequest(P.PKH, Q.PKH, amount.Coin, 0)))
	shared := a.generate(1, miner.addr)[0]
	waitUntil(t, 30*time.Second, "B at the shared tip", func() bool { return b.best() == shared })
	if ca, cb := a.conductInfo(), b.conductInfo(); ca != cb || ca.Agents != 2 || ca.OpenContracts != 1 {
		t.Fatalf("before the partition: A %+v, B %+v", ca, cb)
	}

	// Partition: B restarts alone (no --connect, peers.json removed).
	b.stop()
	os.Remove(filepath.Join(b.DataDir, "peers.json"))
	b.start()
	waitUntil(t, 10*time.Second, "A and B apart", func() bool { return a.peers() == 0 && b.peers() == 0 })

	// B, the losing side: Y registers, Q fulfils K, then Q reviews P.
	yReg := b.agentOp(Y, lw.RegisterRequest(Y.PKH))
	fulfilK := b.agentOp(Q, lw.FulfilRequest(b.escrow(K)))
	b.generate(1, miner.addr)
	b.agentOp(Q, ok(lw.ReviewRequest(Q.PKH, K, P.PKH, 2)))
	lose := b.generate(1, miner.addr)

	// A, the winning side (more blocks): X registers, P opens K2 with Q, Q fulfils it, P
	// reviews Q.
	a.agentOp(X, lw.RegisterRequest(X.PKH))
	K2 := a.agentOp(P, ok(lw.ContractCreateRequest(P.PKH, Q.PKH, 2*amount.Coin, 0)))
	a.generate(1, miner.addr)
	a.agentOp(Q, lw.FulfilRequest(a.escrow(K2)))
	a.generate(1, miner.addr)
	a.agentOp(P, ok(lw.ReviewRequest(P.PKH, K2, Q.PKH, 9)))
	win := a.generate(2, miner.addr)

	if b.best() != lose[0] || a.best() != win[1] {
		t.Fatal("the sides did not mine apart")
	}
	ca, cb := a.conductInfo(), b.conductInfo()
	t.Logf("apart: A %+v, B %+v", ca, cb)
	if ca.Hash == cb.Hash || ca.Agents != 3 || cb.Agents != 3 || ca.OpenContracts != 1 || cb.OpenContracts != 0 {
		t.Fatalf("the sides' conduct states: A %+v, B %+v", ca, cb)
	}

	// Heal: B reconnects to A and reorganises onto A's chain.
	b.stop()
	b.start(a.P2PAddr())
	waitUntil(t, 30*time.Second, "B on A's chain", func() bool { return b.best() == win[1] })
	if ca, cb := a.conductInfo(), b.conductInfo(); ca != cb {
		t.Fatalf("getconductinfo differs after the heal: A %+v, B %+v", ca, cb)
	}
	// Y's registration and K's fulfilment are undone on B: at most pending again (the
	// losing branch's transactions go back to the mempool).
	if p, err := b.RPC.GetAgentProfile(bg, Y.Address); err == nil && p.Confirmed {
		t.Fatalf("B: the losing branch's agent Y is still confirmed: %+v", p)
	} else if err != nil && !errors.Is(err, consensus.ErrAgentNotFound) {
		t.Fatal(err)
	}
	if k, err := b.RPC.GetContract(bg, K.String()); err != nil || (k.Status != "open" && k.Confirmed) {
		t.Fatalf("B: contract K after the heal: %+v (%v)", k, err)
	}
	for _, p := range []*proc{a, b} {
		if tx, err := p.RPC.GetTransaction(bg, yReg.String()); err == nil && tx.BlockHash != "" {
			t.Fatalf("%s: Y's registration is mined in %s on the winning chain", p.name, tx.BlockHash)
		}
		if tx, err := p.RPC.GetTransaction(bg, fulfilK.String()); err == nil && tx.BlockHash != "" {
			t.Fatalf("%s: K's fulfilment is mined in %s on the winning chain", p.name, tx.BlockHash)
		}
	}
	if !strings.Contains(b.log(), "chain reorganised") {
		t.Error("no reorganisation logged on B")
	}

	// The next block (with whatever of B's operations came back to the mempools) leaves
	// both on one conduct state again.
	final := a.generate(1, miner.addr)[0]
	waitUntil(t, 10*time.Second, "B at the final block", func() bool { return b.best() == final })
	if ca, cb := a.conductInfo(), b.conductInfo(); ca != cb {
		t.Fatalf("getconductinfo differs after the final block: A %+v, B %+v", ca, cb)
	}
	if ua, ub := a.utxoHash(), b.utxoHash(); ua != ub {
		t.Fatalf("gettxoutsetinfo differs after the final block: A %s, B %s", ua, ub)
	}
}

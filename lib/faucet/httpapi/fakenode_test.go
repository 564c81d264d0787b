package httpapi

import (
	"context"
	"encoding/hex"
	"errors"
	"fmt"
	"github.com/cointoolkit/coin/lib/faucet"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/cointoolkit/coin/lib/amount"
	"github.com/cointoolkit/coin/lib/consensus"
	"github.com/cointoolkit/coin/lib/jsonrpc"
	"github.com/cointoolkit/coin/lib/keys"
	"github.com/cointoolkit/coin/lib/mempool"
	"github.com/cointoolkit/coin/lib/params"
	"github.com/cointoolkit/coin/lib/policy"
	"github.com/cointoolkit/coin/lib/reason"
	"github.com/cointoolkit/coin/lib/rpcapi"
	"github.com/cointoolkit/coin/lib/types"
	"github.com/cointoolkit/coin/lib/wallet"
)

// fakeNode is an in-memory node with a chain of blocks (as transaction id lists), a UTXO
// set and a mempool that accepts chains of unconfirmed transactions up to maxDepth and
// checks every transaction with the consensus rules (signatures, inputs, no conflicts, no
// dust, fee of at least 1 subunit per byte).
type fakeNode struct {
	mu       sync.Mutex
	net      *params.Network
	utxos    map[types.Outpoint]*consensus.UtxoEntry
	blocks   [][]string // txids per height; blocks[0] is genesis
	pool     map[types.Hash]*types.Transaction
	order    []types.Hash
	spends   map[types.Outpoint]types.Hash
	depth    map[types.Hash]int
	maxDepth int
	// sendErr, when set, is returned by SendRawTransaction before anything else (and
	// cleared when it returns true for once).
	sendErr func(tx *types.Transaction) (error, bool)
	// afterAccept, when set, is returned once by SendRawTransaction after it accepted
	// the transaction (an answer lost on the way back).
	afterAccept error
	sent        int
	nextID      int
	// conduct is the agent and contract state of the pending view (chain and mempool: the
	// fake keeps no separate confirmed state), checked with the consensus rules.
	conduct *consensus.ConductOverlay
	// rate is the decay rate per block (parts per 10^12) of every cluster: confirmed,
	// unlocked outputs are listed at their effective value at the next block and
	// getclusterinfo gives it (0: nothing decays). The fake's own checks use nominal values.
	rate uint64
}

func newFakeNode(net *params.Network) *fakeNode {
	return &fakeNode{net: net, utxos: map[types.Outpoint]*consensus.UtxoEntry{}, blocks: [][]string{{"genesis"}},
		pool: map[types.Hash]*types.Transaction{}, spends: map[types.Outpoint]types.Hash{}, depth: map[types.Hash]int{},
		maxDepth: 500, conduct: consensus.NewConductOverlay(consensus.NoConduct{})}
}

func (f *fakeNode) tip() uint64 { return uint64(len(f.blocks) - 1) }

// fund mines a block with a coinbase-like output of v to pkh (coinbase controls maturity).
func (f *fakeNode) fund(pkh types.Hash, v uint64, coinbase bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.nextID++
	var id types.Hash
	id[0], id[1], id[31] = byte(f.nextID), byte(f.nextID>>8), 0xcb
	f.blocks = append(f.blocks, []string{id.String()})
	f.utxos[types.Outpoint{TxID: id}] = &consensus.UtxoEntry{Value: v, PubKeyHash: pkh, Height: f.tip(), Coinbase: coinbase}
}

// mine confirms every mempool transaction in one new block (parents first), then adds
// empty blocks to reach n blocks in all.
func (f *fakeNode) mine(n int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	for i := 0; i < n; i++ {
		h := f.tip() + 1
		ids := []string{fmt.Sprintf("coinbase-%d", h)}
		for _, id := range f.order {
			tx := f.pool[id]
			for _, in := range tx.Inputs {
				delete(f.utxos, in.Outpoint())
			}
			for j, o := range tx.Outputs {
				f.utxos[types.Outpoint{TxID: id, Index: uint32(j)}] = &consensus.UtxoEntry{Value: o.Value, PubKeyHash: o.PubKeyHash, Height: h,
					Locked: consensus.LockedOutput(tx, j)}
			}
			ids = append(ids, id.String())
		}
		f.pool, f.order = map[types.Hash]*types.Transaction{}, nil
		f.spends, f.depth = map[types.Outpoint]types.Hash{}, map[types.Hash]int{}
		f.blocks = append(f.blocks, ids)
	}
}

// dropMempool forgets the mempool, as a node restart without mempool persistence would.
func (f *fakeNode) dropMempool() {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.pool, f.order = map[types.Hash]*types.Transaction{}, nil
	f.spends, f.depth = map[types.Outpoint]types.Hash{}, map[types.Hash]int{}
}

// Utxo is the pending view used to validate inputs.
func (f *fakeNode) Utxo(op types.Outpoint) (*consensus.UtxoEntry, bool, error) {
	if tx, ok := f.pool[op.TxID]; ok {
		if int(op.Index) >= len(tx.Outputs) {
			return nil, false, nil
		}
		o := tx.Outputs[op.Index]
		return &consensus.UtxoEntry{Value: o.Value, PubKeyHash: o.PubKeyHash, Height: f.tip() + 1,
			Locked: consensus.LockedOutput(tx, int(op.Index))}, true, nil
	}
	e, ok := f.utxos[op]
	return e, ok, nil
}

func (f *fakeNode) GetUtxosByAddress(_ context.Context, address string, withPool bool) ([]rpcapi.UTXO, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	pkh, err := wallet.DecodeAddress(address, f.net)
	if err != nil {
		return nil, &jsonrpc.Error{Code: -32602, Message: "invalid address"}
	}
	var out []rpcapi.UTXO
	for op, e := range f.utxos {
		if e.PubKeyHash != pkh {
			continue
		}
		if _, spent := f.spends[op]; withPool && spent {
			continue
		}
		eff := e.Value
		if !e.Locked {
			eff = consensus.EffectiveValue(e.Value, f.rate, f.tip()+1-e.Height)
		}
		out = append(out, rpcapi.UTXO{TxID: op.TxID.String(), Index: op.Index, Value: e.Value, EffectiveValue: eff,
			IsCoinbase: e.Coinbase, PubKeyHash: pkh.String(), Confirmations: f.tip() - e.Height + 1, BlockHeight: e.Height,
			Locked: e.Locked})
	}
	if withPool {
		for _, id := range f.order {
			for j, o := range f.pool[id].Outputs {
				op := types.Outpoint{TxID: id, Index: uint32(j)}
				if _, spent := f.spends[op]; o.PubKeyHash == pkh && !spent {
					out = append(out, rpcapi.UTXO{TxID: id.String(), Index: uint32(j), Value: o.Value, EffectiveValue: o.Value,
						PubKeyHash: pkh.String(), Locked: consensus.LockedOutput(f.pool[id], j)})
				}
			}
		}
	}
	return out, nil
}

// GetAddressBalance sums GetUtxosByAddress's listing as the node does.
func (f *fakeNode) GetAddressBalance(ctx context.Context, address string, withPool bool) (*rpcapi.AddressBalance, error) {
	us, err := f.GetUtxosByAddress(ctx, address, withPool)
	if err != nil {
		return nil, err
	}
	b := &rpcapi.AddressBalance{Address: address, UtxoCount: uint64(len(us))}
	for i := range us {
		u := &us[i]
		b.Balance += u.Value
		switch {
		case u.Locked:
			b.Locked += u.Value
		case !wallet.Mature(u):
			b.Immature += u.Value
		default:
			b.Spendable += u.EffectiveValue
		}
	}
	return b, nil
}

// reject is the error rpcapi.Client returns for the node's domain error of kind with
// message msg (kind nil: an error without a reason).
func reject(kind reason.Kind, msg string) error {
	return rpcapi.DecodeError(rpcapi.DomainError(kind, msg))
}

// rejectRule is reject for a consensus rule's error, with its message.
func rejectRule(err error) error { return rpcapi.DecodeError(rpcapi.NewDomainError(err)) }

func (f *fakeNode) SendRawTransaction(_ context.Context, h string) (string, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	b, err := hex.DecodeString(h)
	if err != nil {
		return "", reject(reason.DecodeFailed, "bad hex")
	}
	tx, err := types.DecodeTransaction(b)
	if err != nil {
		return "", reject(reason.DecodeFailed, "transaction decode failed")
	}
	if f.sendErr != nil {
		err, once := f.sendErr(tx)
		if once {
			f.sendErr = nil
		}
		if err != nil {
			return "", err
		}
	}
	txid := tx.TxID()
	if _, ok := f.pool[txid]; ok {
		return "", reject(mempool.ErrAlreadyInMempool, "transaction already in mempool")
	}
	for _, b := range f.blocks {
		if slices.Contains(b, txid.String()) {
			return "", reject(mempool.ErrAlreadyInChain, "transaction already in block chain")
		}
	}
	size := tx.SerializeSize()
	if err := consensus.CheckTransactionSanity(tx, size); err != nil {
		return "", rejectRule(err)
	}
	if err := consensus.VerifySignatures(tx, txid, f.net.Magic); err != nil {
		return "", rejectRule(err)
	}
	d := 0
	for _, in := range tx.Inputs {
		op := in.Outpoint()
		if other, ok := f.spends[op]; ok {
			return "", reject(mempool.ErrConflict, "conflicts with a mempool transaction (spent by "+other.String()+")")
		}
		if pd, ok := f.depth[op.TxID]; ok {
			d = max(d, pd)
		}
	}
	if d+1 > f.maxDepth {
		return "", reject(reason.TooLongChain, "too long a chain of unconfirmed transactions")
	}
	for _, o := range tx.Outputs {
		if o.Value < policy.DustLimit {
			return "", reject(mempool.ErrDust, "dust output")
		}
	}
	res, err := consensus.CheckTransactionInputs(tx, f.tip()+1, fakeState{ValuedView: consensus.ValuedView{Utxos: f}, f: f})
	if err != nil {
		if errors.Is(err, consensus.ErrMissingInputs) {
			return "", rejectRule(fmt.Errorf("missing inputs: %w", err))
		}
		return "", rejectRule(err)
	}
	if res.Fee < uint64(size) {
		return "", reject(mempool.ErrFeeTooLow, "insufficient fee")
	}
	var conduct *consensus.ConductChanges
	if consensus.IsAgentKind(tx.Kind) {
		if conduct, err = consensus.CheckConduct(tx, txid, consensus.ConductContext{Height: f.tip() + 1}, f.conduct); err != nil {
			return "", rejectRule(err)
		}
		f.conduct.Merge(conduct)
	}
	for _, in := range tx.Inputs {
		f.spends[in.Outpoint()] = txid
	}
	f.pool[txid] = tx
	f.order = append(f.order, txid)
	f.depth[txid] = d + 1
	f.sent++
	if err := f.afterAccept; err != nil {
		f.afterAccept = nil
		return "", err
	}
	return txid.String(), nil
}

func (f *fakeNode) GetClusterInfo(_ context.Context, address string) (*rpcapi.ClusterInfo, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if _, err := wallet.DecodeAddress(address, f.net); err != nil {
		return nil, reject(reason.InvalidAddress, "invalid address")
	}
	return &rpcapi.ClusterInfo{ClusterID: fmt.Sprintf("%064x", 1), RatePerBlock: f.rate}, nil
}

func (f *fakeNode) GetBlockCount(context.Context) (uint64, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.tip(), nil
}

func (f *fakeNode) GetBlockHash(_ context.Context, h uint64) (string, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if h > f.tip() {
		return "", reject(reason.HeightOutOfRange, "block height out of range")
	}
	return fmt.Sprintf("%064x", h), nil
}

func (f *fakeNode) GetBlock(_ context.Context, hash string) (*rpcapi.Block, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	var h uint64
	if _, err := fmt.Sscanf(hash, "%x", &h); err != nil || h > f.tip() {
		return nil, reject(reason.BlockNotFound, "block not found")
	}
	return &rpcapi.Block{Hash: hash, Height: h, Tx: f.blocks[h]}, nil
}

func (f *fakeNode) GetTransaction(_ context.Context, txid string) (*rpcapi.Transaction, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	id, err := types.ParseHash(txid)
	if err != nil {
		return nil, reject(nil, "bad txid")
	}
	if _, ok := f.pool[id]; ok {
		return &rpcapi.Transaction{TxID: txid, InMempool: true}, nil
	}
	for h, b := range f.blocks {
		if slices.Contains(b, txid) {
			hh := uint64(h)
			return &rpcapi.Transaction{TxID: txid, BlockHeight: &hh, Confirmations: f.tip() - hh + 1}, nil
		}
	}
	return nil, reject(reason.TxNotFound, "transaction not found")
}

func (f *fakeNode) GetBlockchainInfo(context.Context) (*rpcapi.BlockchainInfo, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return &rpcapi.BlockchainInfo{Height: f.tip(), MempoolSize: len(f.pool), Network: f.net.Name}, nil
}

var _ faucet.NodeClient = (*fakeNode)(nil)

// fakeState is the fake's pending view for CheckTransactionInputs: its UTXOs and its
// conduct state (who may spend an escrow).
type fakeState struct {
	consensus.ValuedView
	f *fakeNode
}

func (s fakeState) Conduct() consensus.ConductView { return s.f.conduct }

// confirmed reports whether txid is mined (not in the mempool).
func (f *fakeNode) confirmed(txid types.Hash) bool { _, pending := f.pool[txid]; return !pending }

func (f *fakeNode) address(pkh types.Hash) string {
	a, err := keys.EncodeAddress(f.net.HRP, keys.PubKeyHash(pkh))
	if err != nil {
		panic(err)
	}
	return a
}

func (f *fakeNode) GetAgentProfile(_ context.Context, address string) (*rpcapi.AgentProfile, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	pkh, err := wallet.DecodeAddress(address, f.net)
	if err != nil {
		return nil, reject(reason.InvalidAddress, "invalid address")
	}
	a, ok := f.conduct.Agents[pkh]
	if !ok {
		return nil, reject(reason.AgentNotFound, "no agent "+address)
	}
	p := &rpcapi.AgentProfile{Address: address, ConductScore: a.Score, Tier: consensus.TierOf(a.Score).String(),
		ContractsCompleted: a.ContractsCompleted, ContractsFailed: a.ContractsFailed, VouchesReceived: a.VouchesReceived,
		VouchesGiven: a.VouchesGiven, ReviewsReceived: a.ReviewsReceived, StakeTxID: a.Stake.TxID.String(),
		Confirmed: f.confirmed(a.Stake.TxID)}
	if a.ReviewsReceived > 0 {
		avg := float64(a.ReviewScoreSum) / float64(a.ReviewsReceived)
		p.AverageReviewScore = &avg
	}
	if p.Confirmed {
		h := a.RegisteredHeight
		p.RegisteredHeight = &h
		p.RegisteredAt = time.Unix(1_700_000_000+int64(h)*60, 0).UTC().Format(time.RFC3339)
	}
	return p, nil
}

func (f *fakeNode) ListAgents(_ context.Context, offset, limit uint64) (*rpcapi.AgentList, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	all := make([]rpcapi.AgentEntry, 0, len(f.conduct.Agents))
	for pkh, a := range f.conduct.Agents {
		all = append(all, rpcapi.AgentEntry{Address: f.address(pkh), ConductScore: a.Score, Tier: consensus.TierOf(a.Score).String(),
			ContractsCompleted: a.ContractsCompleted})
	}
	slices.SortFunc(all, func(a, b rpcapi.AgentEntry) int {
		if a.ConductScore != b.ConductScore {
			return int(b.ConductScore) - int(a.ConductScore)
		}
		return strings.Compare(a.Address, b.Address)
	})
	l := &rpcapi.AgentList{Agents: []rpcapi.AgentEntry{}, Total: uint64(len(all)), Offset: offset, Limit: limit}
	if offset < uint64(len(all)) {
		l.Agents = all[offset:min(uint64(len(all)), offset+limit)]
	}
	return l, nil
}

func (f *fakeNode) GetContract(_ context.Context, id string) (*rpcapi.Contract, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	h, err := types.ParseHash(id)
	if err != nil {
		return nil, reject(nil, "bad contract id")
	}
	c, ok := f.conduct.Contracts[h]
	if !ok {
		return nil, reject(reason.ContractNotFound, "no contract "+id)
	}
	out := &rpcapi.Contract{ContractID: id, Initiator: f.address(c.Initiator), Counterparty: f.address(c.Counterparty),
		Value: c.Value, ValueCoin: amount.Format(c.Value), CreatedHeight: c.CreatedHeight, ExpiresAt: c.ExpiresAt,
		Status: c.Status.String(), ReviewedByInitiator: c.Reviewed&consensus.ReviewedByInitiator != 0,
		ReviewedByCounterparty: c.Reviewed&consensus.ReviewedByCounterparty != 0, Confirmed: f.confirmed(h)}
	if c.ClosedBy != (types.Hash{}) {
		out.ClosedBy = c.ClosedBy.String()
		out.Confirmed = out.Confirmed && f.confirmed(c.ClosedBy)
	}
	return out, nil
}

package wallet

import (
	"context"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"time"

	"github.com/cointoolkit/coin/lib/jsonrpc"
	"github.com/cointoolkit/coin/lib/keys"
	"github.com/cointoolkit/coin/lib/params"
	"github.com/cointoolkit/coin/lib/reason"
	"github.com/cointoolkit/coin/lib/rpcapi"
	"github.com/cointoolkit/coin/lib/types"
	"github.com/syndtr/goleveldb/leveldb"
	"github.com/syndtr/goleveldb/leveldb/opt"
	"github.com/syndtr/goleveldb/leveldb/util"
)

// The wallet re-sends its own unconfirmed transactions until they are mined or conflicted
// (protocol §4, sent transactions): a node may lose its mempool (a crash before it wrote mempool.dat, a
// restart without it) or drop a transaction. Every transaction the wallet broadcasts goes
// through a Journal, which records it in the store (not encrypted: transactions are public
// once broadcast) before sending; Resend offers the recorded ones to the node again and
// forgets those mined with ForgetConfirmations confirmations or conflicted (an input spent
// by another mined transaction).

// ForgetConfirmations is how many confirmations a recorded transaction needs before the
// wallet forgets it (a reorganisation shallower than this puts it back in the node's
// mempool, and Resend would send it again meanwhile).
const ForgetConfirmations = 6

const prefixSent = "sent/"

// SentTx is a transaction the wallet broadcast and has not forgotten.
type SentTx struct {
	TxID string    `json:"txid"`
	Hex  string    `json:"hex"`
	Sent time.Time `json:"sent"`
}

func sentKey(txid types.Hash) []byte { return append([]byte(prefixSent), txid[:]...) }

// RecordSent keeps tx among the wallet's sent transactions (a synced write).
func (s *Store) RecordSent(tx *types.Transaction) error {
	txid := tx.TxID()
	b, _ := json.Marshal(SentTx{TxID: txid.String(), Hex: hex.EncodeToString(tx.Bytes()), Sent: time.Now().UTC()})
	if err := s.db.Put(sentKey(txid), b, &opt.WriteOptions{Sync: true}); err != nil {
		return fmt.Errorf("write wallet transaction: %w", err)
	}
	return nil
}

// ForgetSent drops txid from the wallet's sent transactions.
func (s *Store) ForgetSent(txid types.Hash) error {
	if err := s.db.Delete(sentKey(txid), &opt.WriteOptions{Sync: true}); err != nil && !errors.Is(err, leveldb.ErrNotFound) {
		return fmt.Errorf("write wallet transaction: %w", err)
	}
	return nil
}

// SentTxs lists the wallet's sent transactions, oldest first (so a parent comes before a
// child that spends its change).
func (s *Store) SentTxs() ([]SentTx, error) {
	it := s.db.NewIterator(util.BytesPrefix([]byte(prefixSent)), nil)
	defer it.Release()
	var out []SentTx
	for it.Next() {
		var t SentTx
		if err := json.Unmarshal(it.Value(), &t); err != nil {
			return nil, fmt.Errorf("read wallet transactions: %w", err)
		}
		out = append(out, t)
	}
	if err := it.Error(); err != nil {
		return nil, fmt.Errorf("read wallet transactions: %w", err)
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].Sent.Before(out[j].Sent) })
	return out, nil
}

// ResendNode is what re-sending needs of a node: the wallet's NodeClient (with getclusterinfo,
// so the decay margin still works through a Journal), gettransaction and
// getrawtransaction.
type ResendNode interface {
	NodeClient
	ClusterNode
	GetTransaction(ctx context.Context, txid string) (*rpcapi.Transaction, error)
	GetRawTransaction(ctx context.Context, txid string) (string, error)
}

// Journal is a node through which every broadcast is recorded in the wallet store at Dir
// first (opened for the write only, so the caller must not hold it open). A transaction the
// node refuses is forgotten again (nothing was spent); one whose broadcast fails otherwise
// (a timeout, a lost connection) stays recorded, to be re-sent.
type Journal struct {
	ResendNode
	Dir string
	Net *params.Network
}

// SendRawTransaction records the transaction, then broadcasts it.
func (j Journal) SendRawTransaction(ctx context.Context, hexData string) (string, error) {
	raw, err := hex.DecodeString(hexData)
	if err != nil {
		return "", err
	}
	tx, err := types.DecodeTransaction(raw)
	if err != nil {
		return "", err
	}
	if err := j.withStore(func(s *Store) error { return s.RecordSent(tx) }); err != nil {
		return "", err
	}
	txid, err := j.ResendNode.SendRawTransaction(ctx, hexData)
	var re *jsonrpc.Error
	if err != nil && errors.As(err, &re) && !errors.Is(err, reason.AlreadyInMempool) && !errors.Is(err, reason.AlreadyInChain) {
		if ferr := j.withStore(func(s *Store) error { return s.ForgetSent(tx.TxID()) }); ferr != nil {
			return "", errors.Join(err, ferr)
		}
	}
	return txid, err
}

func (j Journal) withStore(f func(*Store) error) error {
	s, err := Open(j.Dir, j.Net)
	if err != nil {
		return err
	}
	defer s.Close()
	return f(s)
}

// ResendAction is what Resend did with one transaction.
type ResendAction string

// The actions of Resend.
const (
	// ActionInMempool: the node has it; nothing sent.
	ActionInMempool ResendAction = "in_mempool"
	// ActionResent: the node did not have it and accepted it again.
	ActionResent ResendAction = "resent"
	// ActionConfirming: mined, with fewer than ForgetConfirmations confirmations; kept.
	ActionConfirming ResendAction = "confirming"
	// ActionMined: mined with ForgetConfirmations confirmations or more; forgotten.
	ActionMined ResendAction = "mined"
	// ActionConflicted: an input is spent by another mined transaction; forgotten.
	ActionConflicted ResendAction = "conflicted"
	// ActionWaiting: the node refused it for now (its parent is unknown to the node, or a
	// mempool transaction spends the same input, or a policy rule); kept and tried again
	// next time.
	ActionWaiting ResendAction = "waiting"
)

// ResendResult is one transaction's outcome.
type ResendResult struct {
	TxID          string       `json:"txid"`
	Action        ResendAction `json:"action"`
	Confirmations uint64       `json:"confirmations,omitempty"`
	// Detail says why, for waiting and conflicted.
	Detail string `json:"detail,omitempty"`
}

// Forgotten reports whether the wallet no longer keeps the transaction.
func (r ResendResult) Forgotten() bool {
	return r.Action == ActionMined || r.Action == ActionConflicted
}

// Resend offers each of the store's sent transactions, oldest first, to the node unless it
// has it, and forgets those mined with ForgetConfirmations confirmations and those
// conflicted. It stops at the first error that is not the node's answer about one
// transaction (an unreachable node).
func Resend(ctx context.Context, node ResendNode, s *Store) ([]ResendResult, error) {
	sent, err := s.SentTxs()
	if err != nil {
		return nil, err
	}
	conflicted := map[types.Hash]bool{}
	kept := map[types.Hash]bool{}
	var out []ResendResult
	for _, st := range sent {
		raw, err := hex.DecodeString(st.Hex)
		if err != nil {
			return out, fmt.Errorf("wallet transaction %s: %w", st.TxID, err)
		}
		tx, err := types.DecodeTransaction(raw)
		if err != nil {
			return out, fmt.Errorf("wallet transaction %s: %w", st.TxID, err)
		}
		txid := tx.TxID()
		r, err := resendOne(ctx, node, s.net, tx, txid, conflicted, kept)
		if err != nil {
			return out, err
		}
		if r.Forgotten() {
			if err := s.ForgetSent(txid); err != nil {
				return out, err
			}
			if r.Action == ActionConflicted {
				conflicted[txid] = true
			}
		} else {
			kept[txid] = true
		}
		out = append(out, r)
	}
	return out, nil
}

func resendOne(ctx context.Context, node ResendNode, net *params.Network, tx *types.Transaction, txid types.Hash,
	conflicted, kept map[types.Hash]bool) (ResendResult, error) {
	r := ResendResult{TxID: txid.String()}
	info, err := node.GetTransaction(ctx, r.TxID)
	switch {
	case err == nil && info.Confirmations > 0:
		r.Confirmations = info.Confirmations
		r.Action = ActionConfirming
		if info.Confirmations >= ForgetConfirmations {
			r.Action = ActionMined
		}
		return r, nil
	case err == nil && info.InMempool:
		r.Action = ActionInMempool
		return r, nil
	case err != nil && !errors.Is(err, reason.TxNotFound):
		return r, err
	}
	for i := range tx.Inputs {
		if conflicted[tx.Inputs[i].PrevTxID] {
			r.Action, r.Detail = ActionConflicted, fmt.Sprintf("input %d spends an output of conflicted transaction %s", i, tx.Inputs[i].PrevTxID)
			return r, nil
		}
	}
	_, err = node.SendRawTransaction(ctx, hex.EncodeToString(tx.Bytes()))
	var re *jsonrpc.Error
	switch {
	case err == nil:
		r.Action = ActionResent
		return r, nil
	case errors.Is(err, reason.AlreadyInMempool):
		r.Action = ActionInMempool
		return r, nil
	case !errors.As(err, &re):
		return r, err // the node did not answer
	case errors.Is(err, reason.MissingInputs):
		detail, spent, cerr := spentInChain(ctx, node, net, tx, kept)
		if cerr != nil {
			return r, cerr
		}
		if spent {
			r.Action, r.Detail = ActionConflicted, detail
			return r, nil
		}
	}
	r.Action, r.Detail = ActionWaiting, err.Error()
	return r, nil
}

// spentInChain reports whether an input of tx spends an output of a mined transaction
// that the chain no longer has unspent: another mined transaction spent it. Inputs whose
// parent is one of the wallet's kept transactions, or unknown to the node, decide nothing.
// Each owner's outputs are listed once, however many inputs spend outputs of it.
func spentInChain(ctx context.Context, node ResendNode, net *params.Network, tx *types.Transaction, kept map[types.Hash]bool) (string, bool, error) {
	unspentOf := map[string]map[types.Outpoint]bool{} // owner address → its unspent outputs
	for i := range tx.Inputs {
		op := tx.Inputs[i].Outpoint()
		if kept[op.TxID] {
			continue
		}
		info, err := node.GetTransaction(ctx, op.TxID.String())
		if errors.Is(err, reason.TxNotFound) {
			continue
		}
		if err != nil {
			return "", false, err
		}
		if info.Confirmations == 0 {
			continue
		}
		// The spent output's owner is in the parent (an escrow's is not the spender's key).
		h, err := node.GetRawTransaction(ctx, op.TxID.String())
		if err != nil {
			return "", false, err
		}
		b, err := hex.DecodeString(h)
		if err != nil {
			return "", false, err
		}
		parent, err := types.DecodeTransaction(b)
		if err != nil {
			return "", false, err
		}
		if int(op.Index) >= len(parent.Outputs) {
			return fmt.Sprintf("input %d spends a missing output %s", i, op), true, nil
		}
		addr, err := keys.EncodeAddress(net.HRP, keys.PubKeyHash(parent.Outputs[op.Index].PubKeyHash))
		if err != nil {
			return "", false, err
		}
		unspent, ok := unspentOf[addr]
		if !ok {
			us, err := node.GetUtxosByAddress(ctx, addr, false)
			if err != nil {
				return "", false, err
			}
			unspent = make(map[types.Outpoint]bool, len(us))
			for _, u := range us {
				if id, err := types.ParseHash(u.TxID); err == nil {
					unspent[types.Outpoint{TxID: id, Index: u.Index}] = true
				}
			}
			unspentOf[addr] = unspent
		}
		if !unspent[op] {
			return fmt.Sprintf("input %d (%s) is spent by another mined transaction", i, op), true, nil
		}
	}
	return "", false, nil
}

package faucet

import (
	"context"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/cointoolkit/coin/lib/faucet/payout"
	"github.com/cointoolkit/coin/lib/jsonrpc"
	"github.com/cointoolkit/coin/lib/reason"
	"github.com/cointoolkit/coin/lib/types"
	"github.com/syndtr/goleveldb/leveldb"
	"github.com/syndtr/goleveldb/leveldb/opt"
	"github.com/syndtr/goleveldb/leveldb/util"
)

// The transaction journal of the operations the faucet builds for its callers (the agent
// endpoints, /api/wallet/send, and their MCP tools; docs/security.md): the claims' promise
// for them. Before a transaction goes to the node it is written, synced, to the claim
// database (key "agenttx/<seq>"); only then is it sent, and the caller answered 200 after the
// node took it. A journaled transaction is sent again, oldest first, whenever the node lacks
// it (a node killed with its mempool, a lost answer), until it is payout.FinalConfirmations deep or
// definitively refused; so an operation answered 200 reaches the chain whatever crashes,
// or the refusal is logged and the caller sees it in the operation's state (GET
// /api/agent/contract, the profile, the event stream's retraction).
//
// At the first send the node's answer decides: accepted, or already in its mempool or chain
// (the identical transaction another faucet or a retry sent: the operation's result is
// answered, not already_in_mempool), keeps it; a refusal, or a node that refused the
// connection (nothing was sent), removes it and the caller gets the refusal; a lost answer
// (a reset, a timeout) keeps it and answers 200, since the journal delivers it.

const (
	agentTxPrefix  = "agenttx/"
	agentTxVersion = 1
	// DefaultTxResendInterval is how often the journal asks the node about its transactions.
	DefaultTxResendInterval = 5 * time.Second
)

// journaledTx is one journaled transaction.
type journaledTx struct {
	seq  uint64
	tx   *types.Transaction
	txid types.Hash
	time time.Time
}

func agentTxKey(seq uint64) []byte {
	return binary.BigEndian.AppendUint64([]byte(agentTxPrefix), seq)
}

func encodeAgentTx(j *journaledTx) []byte {
	b := append([]byte{agentTxVersion}, binary.BigEndian.AppendUint64(nil, uint64(j.time.UnixNano()))...)
	return append(b, j.tx.Bytes()...)
}

func decodeAgentTx(seq uint64, b []byte) (*journaledTx, error) {
	if len(b) < 9 || b[0] != agentTxVersion {
		return nil, payout.ErrCorruptRecord
	}
	tx, err := types.DecodeTransaction(b[9:])
	if err != nil {
		return nil, fmt.Errorf("%w: %v", payout.ErrCorruptRecord, err)
	}
	return &journaledTx{seq: seq, tx: tx, txid: tx.TxID(), time: time.Unix(0, int64(binary.BigEndian.Uint64(b[1:9])))}, nil
}

// txJournal keeps the journaled transactions in the claim database, and, in memory, by
// txid (Service.JournaledTx).
type txJournal struct {
	db  *leveldb.DB
	mu  sync.Mutex
	seq uint64
	txs map[types.Hash]*types.Transaction
}

func newTxJournal(db *leveldb.DB) (*txJournal, error) {
	it := db.NewIterator(util.BytesPrefix([]byte(agentTxPrefix)), nil)
	defer it.Release()
	j := &txJournal{db: db, txs: map[types.Hash]*types.Transaction{}}
	if it.Last() {
		k := it.Key()
		if len(k) != len(agentTxPrefix)+8 {
			return nil, payout.ErrCorruptRecord
		}
		j.seq = binary.BigEndian.Uint64(k[len(agentTxPrefix):]) + 1
	}
	if err := it.Error(); err != nil {
		return nil, err
	}
	list, err := j.list()
	if err != nil {
		return nil, err
	}
	for _, e := range list {
		j.txs[e.txid] = e.tx
	}
	return j, nil
}

func (j *txJournal) record(tx *types.Transaction) (*journaledTx, error) {
	j.mu.Lock()
	e := &journaledTx{seq: j.seq, tx: tx, txid: tx.TxID(), time: time.Now()}
	j.seq++
	j.mu.Unlock()
	b := new(leveldb.Batch)
	b.Put(agentTxKey(e.seq), encodeAgentTx(e))
	if err := writeSynced(j.db, b, "journal a transaction"); err != nil {
		return e, err
	}
	j.mu.Lock()
	j.txs[e.txid] = tx
	j.mu.Unlock()
	return e, nil
}

func (j *txJournal) remove(e *journaledTx) error {
	j.mu.Lock()
	delete(j.txs, e.txid)
	j.mu.Unlock()
	b := new(leveldb.Batch)
	b.Delete(agentTxKey(e.seq))
	return writeSynced(j.db, b, "remove a journaled transaction")
}

// list is the journaled transactions in the order they were written.
func (j *txJournal) list() ([]*journaledTx, error) {
	it := j.db.NewIterator(util.BytesPrefix([]byte(agentTxPrefix)), nil)
	defer it.Release()
	var out []*journaledTx
	for it.Next() {
		k := it.Key()
		if len(k) != len(agentTxPrefix)+8 {
			return nil, payout.ErrCorruptRecord
		}
		e, err := decodeAgentTx(binary.BigEndian.Uint64(k[len(agentTxPrefix):]), it.Value())
		if err != nil {
			return nil, err
		}
		out = append(out, e)
	}
	return out, it.Error()
}

// journalingNode is the node as the operations' handlers see it: SendRawTransaction
// journals the transaction first (see above).
type journalingNode struct {
	payout.NodeClient
	j   *txJournal
	log *slog.Logger
}

func (n *journalingNode) SendRawTransaction(ctx context.Context, rawHex string) (string, error) {
	raw, err := hex.DecodeString(rawHex)
	if err != nil {
		return "", err
	}
	tx, err := types.DecodeTransaction(raw)
	if err != nil {
		return "", err
	}
	e, err := n.j.record(tx)
	if err != nil {
		return "", err
	}
	txid, err := n.NodeClient.SendRawTransaction(ctx, rawHex)
	var rpcErr *jsonrpc.Error
	switch {
	case err == nil:
		return txid, nil
	case errors.Is(err, reason.AlreadyInMempool), errors.Is(err, reason.AlreadyInChain):
		// The identical transaction is there already: the operation happened.
		return e.txid.String(), nil
	case errors.As(err, &rpcErr), jsonrpc.IsConnRefused(err):
		// Refused, or never sent: the caller gets the error and nothing is owed.
		if rerr := n.j.remove(e); rerr != nil {
			n.log.Error("removing a refused transaction from the journal", "txid", e.txid, "err", rerr)
		}
		return "", err
	}
	n.log.Warn("the node's answer to a transaction was lost; it is journaled and will be sent again until mined",
		"txid", e.txid, "err", err)
	return e.txid.String(), nil
}

// RunTxJournal sends the journaled transactions again whenever the node lacks them, at
// start and every interval (DefaultTxResendInterval when 0), until ctx ends. coin-faucetd
// runs it beside the engine.
func (s *Service) RunTxJournal(ctx context.Context, interval time.Duration) {
	if interval <= 0 {
		interval = DefaultTxResendInterval
	}
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		s.resendTxs(ctx)
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// missingInputsGrace is how long a journaled transaction whose inputs the node lacks is
// sent again: its parent may be a payout of the engine's journal, or an operation of this
// one, that the node gets back later.
const missingInputsGrace = 10 * time.Minute

// ResendTxs is resendTxs, one pass of RunTxJournal, for a caller that paces the passes
// itself (a test of the journal through a door).
func (s *Service) ResendTxs(ctx context.Context) { s.resendTxs(ctx) }

// JournaledTx is the journaled transaction txid, which the faucet built and sent, while it
// is journaled (until payout.FinalConfirmations deep or refused): so the agent event source
// reads the faucet's own transactions without asking the node for them (coin-faucetd's
// daemon). The transaction is shared: read it, never change it.
func (s *Service) JournaledTx(txid types.Hash) (*types.Transaction, bool) {
	s.txj.mu.Lock()
	defer s.txj.mu.Unlock()
	tx, ok := s.txj.txs[txid]
	return tx, ok
}

// JournaledTxs are the ids of the journaled transactions, in the order they were written.
func (s *Service) JournaledTxs() ([]types.Hash, error) {
	list, err := s.txj.list()
	if err != nil {
		return nil, err
	}
	ids := make([]types.Hash, len(list))
	for i, e := range list {
		ids[i] = e.txid
	}
	return ids, nil
}

// resendTxs is one pass over the journal, oldest first (parents before children). A
// transaction payout.FinalConfirmations deep leaves it; one the node lacks is sent again. A refusal
// is definitive, and the transaction leaves the journal with a warning, except missing
// inputs within missingInputsGrace of its journaling (the next pass tries again). An
// unreachable node ends the pass.
func (s *Service) resendTxs(ctx context.Context) {
	list, err := s.txj.list()
	if err != nil {
		s.log.Error("reading the transaction journal", "err", err)
		return
	}
	for _, e := range list {
		cctx, cancel := context.WithTimeout(ctx, s.cfg.NodeTimeout)
		t, err := s.cfg.Node.GetTransaction(cctx, e.txid.String())
		cancel()
		switch {
		case err == nil && t.Confirmations >= payout.FinalConfirmations:
			if err := s.txj.remove(e); err != nil {
				s.log.Error("removing a mined transaction from the journal", "txid", e.txid, "err", err)
				return
			}
			continue
		case err == nil:
			continue
		case !errors.Is(err, reason.TxNotFound):
			return
		}
		cctx, cancel = context.WithTimeout(ctx, s.cfg.NodeTimeout)
		_, err = s.cfg.Node.SendRawTransaction(cctx, hex.EncodeToString(e.tx.Bytes()))
		cancel()
		var rpcErr *jsonrpc.Error
		switch {
		case err == nil:
			s.log.Info("a transaction the node lost was sent again from the journal", "txid", e.txid)
		case errors.Is(err, reason.AlreadyInMempool), errors.Is(err, reason.AlreadyInChain):
		case !errors.As(err, &rpcErr):
			return
		case errors.Is(err, reason.MissingInputs) && time.Since(e.time) < missingInputsGrace:
		default:
			s.log.Warn("a journaled transaction is refused by the node; it leaves the journal", "txid", e.txid,
				"reason", reason.Of(err), "message", rpcErr.Message, "journaled", e.time)
			if err := s.txj.remove(e); err != nil {
				s.log.Error("removing a refused transaction from the journal", "txid", e.txid, "err", err)
				return
			}
		}
	}
}

// writeSynced writes b durably; what names the write in the error.
func writeSynced(db *leveldb.DB, b *leveldb.Batch, what string) error {
	if err := db.Write(b, &opt.WriteOptions{Sync: true}); err != nil {
		return fmt.Errorf("%s: %w", what, err)
	}
	return nil
}

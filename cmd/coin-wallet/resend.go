package main

import (
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/cointoolkit/coin/lib/rpcapi"
	"github.com/cointoolkit/coin/lib/wallet"
	"github.com/urfave/cli/v2"
)

// Re-sending the wallet's own unconfirmed transactions (lib/wallet resend.go): every
// command that talks to the node first offers the node the transactions the wallet sent
// and that are not mined yet, and forgets those mined (6 confirmations) or conflicted,
// reporting on standard error what it did; 'resend' does only that and reports every
// transaction. Every broadcast goes through a wallet.Journal, which records the
// transaction in the wallet directory before sending it.

// rpcNode adds getrawtransaction to the RPC client (wallet.ResendNode).
type rpcNode struct{ *rpcapi.Client }

func (n rpcNode) GetRawTransaction(ctx context.Context, txid string) (string, error) {
	var h string
	err := n.Call(ctx, "getrawtransaction", []any{txid}, &h)
	return h, err
}

var _ wallet.ResendNode = rpcNode{}

// journal is cl recording every broadcast in the wallet directory (which must not be held
// open meanwhile).
func (e *env) journal(cl *rpcapi.Client) (wallet.NodeClient, error) {
	dir, err := e.walletDir()
	if err != nil {
		return nil, err
	}
	return wallet.Journal{ResendNode: rpcNode{cl}, Dir: dir, Net: e.net}, nil
}

// resendQuietly re-sends the wallet's unconfirmed transactions before a command that talks
// to the node (resendFrom). It never fails the command: without a wallet there is nothing to
// do, and a node that does not answer is reported by the command itself.
func (e *env) resendQuietly(ctx context.Context, cl *rpcapi.Client) {
	dir, err := e.walletDir()
	if err != nil {
		return
	}
	s, err := wallet.Open(dir, e.net)
	if err != nil {
		if !errors.Is(err, wallet.ErrNoWallet) {
			fmt.Fprintf(e.errOut(), "note: unconfirmed transactions not re-sent: %v\n", err)
		}
		return
	}
	defer s.Close()
	e.resendFrom(ctx, cl, s)
}

// resendFrom re-sends the unconfirmed transactions of the open store s, printing a line on
// standard error for each one re-sent or conflicted (what the user needs to know;
// forgetting mined ones is bookkeeping, which 'resend' lists).
func (e *env) resendFrom(ctx context.Context, cl *rpcapi.Client, s *wallet.Store) {
	res, _ := wallet.Resend(ctx, rpcNode{cl}, s)
	for _, r := range res {
		if r.Action == wallet.ActionResent || r.Action == wallet.ActionConflicted {
			fmt.Fprintf(e.errOut(), "resend: %s\n", resendLine(r))
		}
	}
}

func (e *env) errOut() io.Writer {
	if w := e.c.App.ErrWriter; w != nil {
		return w
	}
	return io.Discard
}

// resendLine describes one outcome.
func resendLine(r wallet.ResendResult) string {
	switch r.Action {
	case wallet.ActionResent:
		return r.TxID + " re-sent (the node did not have it)"
	case wallet.ActionInMempool:
		return r.TxID + " in the node's mempool"
	case wallet.ActionConfirming:
		return fmt.Sprintf("%s mined, %d confirmations (kept until %d)", r.TxID, r.Confirmations, wallet.ForgetConfirmations)
	case wallet.ActionMined:
		return fmt.Sprintf("%s mined, %d confirmations: forgotten", r.TxID, r.Confirmations)
	case wallet.ActionConflicted:
		return r.TxID + " conflicted: forgotten (" + r.Detail + ")"
	default:
		return r.TxID + " not accepted for now, kept (" + r.Detail + ")"
	}
}

func cmdResend() *cli.Command {
	return &cli.Command{
		Name:  "resend",
		Usage: "re-send the wallet's unconfirmed transactions; forget the mined and conflicted ones",
		Description: fmt.Sprintf(`Every transaction the wallet broadcasts (send, agent operations) is kept in the wallet
directory until it is mined with %d confirmations or conflicted (an input spent by another
mined transaction). resend offers each kept transaction to the node again unless the node
has it (in its mempool or mined), so a transaction a node lost (a crash, a restart
without its mempool) gets mined after all; every other command that talks to the node does
the same first, reporting on standard error the transactions it re-sent and those it found
conflicted (and forgot).

Prints one line per kept transaction: re-sent, in the node's mempool, mined (with its
confirmations; forgotten at %d), conflicted (forgotten), or not accepted for now (kept,
with the node's reason); with --json (or piped) an array of {"txid", "action",
"confirmations", "detail"} with action resent, in_mempool, confirming, mined, conflicted
or waiting. Needs no passphrase.`, wallet.ForgetConfirmations, wallet.ForgetConfirmations),
		Action: withEnv(func(e *env, _ *cli.Context) error {
			s, err := e.openStore()
			if err != nil {
				return err
			}
			defer s.Close()
			ctx, cancel := e.ctx()
			defer cancel()
			cl := e.client()
			defer cl.Close()
			res, err := wallet.Resend(ctx, rpcNode{cl}, s)
			if err != nil {
				return e.nodeError(err)
			}
			if e.json {
				if res == nil {
					res = []wallet.ResendResult{}
				}
				return e.printJSON(res)
			}
			if len(res) == 0 {
				return e.printf("no unconfirmed transactions to re-send\n")
			}
			for _, r := range res {
				if err := e.printf("%s\n", resendLine(r)); err != nil {
					return err
				}
			}
			return nil
		}),
	}
}

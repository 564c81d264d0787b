package main

import (
	"context"
	"errors"
	"fmt"

	"github.com/cointoolkit/coin/lib/amount"
	"github.com/cointoolkit/coin/lib/wallet"
	"github.com/urfave/cli/v2"
)

// consolidateHint ends the error of a send that needs more inputs than a transaction may
// have.
const consolidateHint = "run 'coin-wallet consolidate' first (it merges the wallet's smallest outputs into one)"

func cmdConsolidate() *cli.Command {
	return &cli.Command{
		Name:  "consolidate",
		Usage: "merge the wallet's smallest outputs into one, in as many transactions as needed",
		Description: fmt.Sprintf(`A transaction spends at most 1,000 inputs and 100,000 bytes, so a wallet of thousands of
small outputs (faucet claims, mining payouts) cannot send a large amount: send fails with
"too many small outputs". consolidate merges the wallet's spendable outputs (the node's
pending view, unconfirmed change included) into one output of its first address: each
transaction spends the smallest outputs there are, at most --max-inputs (default and
largest %d, what fits in 100,000 bytes), including the unconfirmed output of an earlier
one once it is among the smallest, until one output is left (or --max-txs transactions
were sent). Each pays the wallet's fee: --fee-rate subunits per byte plus the decay margin
of its inputs (as send; see 'coin-wallet send --help'). Spending outputs of several of the
wallet's addresses together makes them one decay cluster.

Prints each transaction's txid (with --json, or when piped, an array with the inputs, the
value spent, the output, the fee and its decay_margin, and the size). A wallet with fewer
than two spendable outputs has nothing to merge: nothing is sent.`, wallet.MaxInputsPerTx()),
		Flags: []cli.Flag{
			&cli.Uint64Flag{Name: "fee-rate", Value: wallet.DefaultFeeRate, Usage: "fee in subunits per byte (the node's minimum is 1)"},
			&cli.IntFlag{Name: "max-inputs", Value: wallet.MaxInputsPerTx(), Usage: "most inputs per transaction (2 or more)"},
			&cli.IntFlag{Name: "max-txs", Usage: "send at most `N` transactions (0: as many as needed to end with one output)"},
		},
		Action: withEnv(func(e *env, c *cli.Context) error {
			rate, err := feeRate(c)
			if err != nil {
				return err
			}
			maxIn := c.Int("max-inputs")
			if maxIn < 2 || maxIn > wallet.MaxInputsPerTx() {
				return fmt.Errorf("--max-inputs %d: want 2 to %d", maxIn, wallet.MaxInputsPerTx())
			}
			if c.Int("max-txs") < 0 {
				return fmt.Errorf("--max-txs %d: want 0 or more", c.Int("max-txs"))
			}
			return e.withWalletKeys(func(ctx context.Context, node wallet.NodeClient, ks []wallet.Key) error {
				txs, err := wallet.Consolidate(ctx, node, e.net, ks, wallet.ConsolidateOptions{FeeRate: rate, MaxInputs: maxIn, MaxTxs: c.Int("max-txs")})
				if err != nil {
					for _, t := range txs {
						fmt.Fprintf(e.errOut(), "consolidate: sent %s (%d inputs)\n", t.TxID, t.Inputs)
					}
					if errors.Is(err, wallet.ErrInsufficientFunds) || errors.Is(err, wallet.ErrTooLarge) {
						return fmt.Errorf("consolidate after %d transactions: %w", len(txs), err)
					}
					return e.nodeError(err)
				}
				if e.json {
					out := make([]map[string]any, len(txs))
					for i, t := range txs {
						out[i] = map[string]any{"txid": t.TxID, "inputs": t.Inputs, "value": amount.Format(t.Value), "output": amount.Format(t.Output),
							"fee": amount.Format(t.Fee), "decay_margin": amount.Format(t.DecayMargin), "size": t.Size}
					}
					return e.printJSON(out)
				}
				if len(txs) == 0 {
					return e.printf("nothing to consolidate: fewer than two spendable outputs\n")
				}
				for _, t := range txs {
					if err := e.printf("%s\n", t.TxID); err != nil {
						return err
					}
				}
				return nil
			})
		}),
	}
}

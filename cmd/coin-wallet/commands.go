package main

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/cointoolkit/coin/lib/policy"
	"github.com/cointoolkit/coin/lib/rpcapi"

	"github.com/cointoolkit/coin/lib/amount"
	"github.com/cointoolkit/coin/lib/cliutil"
	"github.com/cointoolkit/coin/lib/keys"
	"github.com/cointoolkit/coin/lib/wallet"
	"github.com/urfave/cli/v2"
)

func wordsFlag() cli.Flag {
	return &cli.IntFlag{Name: "words", Value: keys.DefaultMnemonicWords, Usage: "mnemonic length: 12, 15, 18, 21 or 24 words"}
}

func mnemonicFileFlag() cli.Flag {
	return &cli.StringFlag{Name: "mnemonic-file", Usage: "read the mnemonic from `FILE` instead of standard input"}
}

func cmdNew() *cli.Command {
	return &cli.Command{
		Name:  "new",
		Usage: "print a fresh mnemonic and its address (stores nothing)",
		Description: `Prints a new BIP-39 mnemonic and its address (account 0, index 0) on --network:
JSON {"mnemonic", "address"} when standard output is not a terminal, text on a terminal.
Nothing is stored: keep the mnemonic.`,
		Flags: []cli.Flag{wordsFlag()},
		Action: withEnv(func(e *env, c *cli.Context) error {
			m, a, err := wallet.NewMnemonic(c.Int("words"), e.net)
			if err != nil {
				return err
			}
			if e.json {
				return e.printJSON(map[string]string{"mnemonic": m, "address": a})
			}
			return e.printf("mnemonic: %s\naddress:  %s\n\nWrite the mnemonic down: it is the only way to spend from this address.\n", m, a)
		}),
	}
}

func cmdCreate() *cli.Command {
	return &cli.Command{
		Name:  "create",
		Usage: "create an encrypted wallet with a new mnemonic",
		Description: `Generates a mnemonic, stores its seed encrypted with the passphrase in --wallet-dir, and
prints the mnemonic (once, for your backup) and the wallet's first address.`,
		Flags: []cli.Flag{wordsFlag()},
		Action: withEnv(func(e *env, c *cli.Context) error {
			m, _, err := wallet.NewMnemonic(c.Int("words"), e.net)
			if err != nil {
				return err
			}
			rec, dir, err := e.createWallet(m)
			if err != nil {
				return err
			}
			if e.json {
				return e.printJSON(map[string]string{"mnemonic": m, "address": rec.Address, "wallet_dir": dir})
			}
			return e.printf("wallet created in %s\nmnemonic: %s\naddress:  %s\n\nWrite the mnemonic down: it restores the wallet if the directory or the passphrase is lost.\n",
				dir, m, rec.Address)
		}),
	}
}

func cmdRestore() *cli.Command {
	return &cli.Command{
		Name:  "restore",
		Usage: "create an encrypted wallet from an existing mnemonic (read from standard input)",
		Description: `Reads a mnemonic from standard input (the words, or the JSON of 'coin-wallet new'), or from
--mnemonic-file, stores its seed encrypted with the passphrase in --wallet-dir and prints
the wallet's first address. On a terminal the mnemonic is asked for without echo.`,
		Flags: []cli.Flag{mnemonicFileFlag()},
		Action: withEnv(func(e *env, c *cli.Context) error {
			m, err := e.readMnemonic(c.String("mnemonic-file"))
			if err != nil {
				return err
			}
			if _, err := keys.ValidateMnemonic(m); err != nil {
				return err
			}
			rec, dir, err := e.createWallet(m)
			if err != nil {
				return err
			}
			if e.json {
				return e.printJSON(map[string]string{"address": rec.Address, "wallet_dir": dir})
			}
			return e.printf("wallet restored in %s\naddress: %s\n", dir, rec.Address)
		}),
	}
}

func (e *env) createWallet(mnemonic string) (wallet.AddressRecord, string, error) {
	dir, err := e.newWalletDir()
	if err != nil {
		return wallet.AddressRecord{}, "", err
	}
	pass, err := e.passphrase(true)
	if err != nil {
		return wallet.AddressRecord{}, "", err
	}
	seed, err := keys.SeedFromMnemonic(mnemonic, "")
	if err != nil {
		return wallet.AddressRecord{}, "", err
	}
	defer clear(seed)
	s, err := wallet.Create(dir, e.net, 0, seed, pass, wallet.DefaultKDF)
	if err != nil {
		return wallet.AddressRecord{}, "", err
	}
	defer s.Close()
	recs, err := s.Addresses()
	if err != nil {
		return wallet.AddressRecord{}, "", err
	}
	return recs[0], dir, nil
}

func cmdAddress() *cli.Command {
	return &cli.Command{
		Name:  "address",
		Usage: "print the wallet's receiving address",
		Description: `Prints the wallet's first address (index 0), where change also goes. --new derives the
next address (asks for the passphrase) and prints it; --all lists every derived address.`,
		Flags: []cli.Flag{
			&cli.BoolFlag{Name: "new", Usage: "derive and store the next address"},
			&cli.BoolFlag{Name: "all", Usage: "list every derived address with its index"},
		},
		Action: withEnv(func(e *env, c *cli.Context) error {
			s, err := e.openStore()
			if err != nil {
				return err
			}
			defer s.Close()
			if c.Bool("new") {
				pass, err := e.passphrase(false)
				if err != nil {
					return err
				}
				ring, err := s.Unlock(pass)
				if err != nil {
					return err
				}
				defer ring.Wipe()
				rec, err := s.NewAddress(ring)
				if err != nil {
					return err
				}
				return e.printAddress(rec)
			}
			recs, err := s.Addresses()
			if err != nil {
				return err
			}
			if !c.Bool("all") {
				return e.printAddress(recs[0])
			}
			if e.json {
				return e.printJSON(recs)
			}
			rows := make([][]string, len(recs))
			for i, r := range recs {
				rows[i] = []string{strconv.FormatUint(uint64(r.Index), 10), r.Address,
					keys.AccountPath(e.net.CoinType, s.Account(), r.Index)}
			}
			return cliutil.PrintTable(e.out, []string{"index", "address", "path"}, rows)
		}),
	}
}

// printAddress prints an address raw (so a=$(coin-wallet address) works), or as an
// object with --json.
func (e *env) printAddress(r wallet.AddressRecord) error {
	if e.jsonFlag {
		return e.printJSON(r)
	}
	return e.printf("%s\n", r.Address)
}

func cmdDerive() *cli.Command {
	return &cli.Command{
		Name:  "derive",
		Usage: "print the address of a mnemonic read from standard input",
		Description: `Reads a mnemonic from standard input (the words, or the JSON of 'coin-wallet new'), or from
--mnemonic-file, and prints its address at account 0 and --index (default 0) on
--network; no wallet directory is used. With --json: {"address", "index", "path"}.`,
		Flags: []cli.Flag{
			mnemonicFileFlag(),
			&cli.UintFlag{Name: "index", Usage: "address `INDEX` (below 2^31)"},
		},
		Action: withEnv(func(e *env, c *cli.Context) error {
			m, err := e.readMnemonic(c.String("mnemonic-file"))
			if err != nil {
				return err
			}
			idx := c.Uint("index")
			if idx >= uint(keys.HardenedOffset) {
				return fmt.Errorf("--index %d: must be below 2^31", idx)
			}
			a, err := wallet.AddressFromMnemonic(m, e.net, uint32(idx))
			if err != nil {
				return err
			}
			if e.jsonFlag {
				return e.printJSON(map[string]any{"address": a, "index": idx, "path": keys.AccountPath(e.net.CoinType, 0, uint32(idx))})
			}
			return e.printf("%s\n", a)
		}),
	}
}

// withAddresses runs a read-only command on the wallet's addresses with a node client, the
// wallet's unconfirmed transactions re-sent first from the same opening of the store.
func withAddresses(f func(e *env, ctx context.Context, cl *rpcapi.Client, addrs []string) error) cli.ActionFunc {
	return withEnv(func(e *env, _ *cli.Context) error {
		ctx, cancel := e.ctx()
		defer cancel()
		cl := e.client()
		defer cl.Close()
		s, err := e.openStore()
		if err != nil {
			return err
		}
		addrs, err := storeAddresses(s)
		if err == nil {
			e.resendFrom(ctx, cl, s)
		}
		s.Close() // not held while the command calls the node
		if err != nil {
			return err
		}
		return f(e, ctx, cl, addrs)
	})
}

// withEnv runs a command that takes no arguments with its environment.
func withEnv(f func(e *env, c *cli.Context) error) cli.ActionFunc {
	return func(c *cli.Context) error {
		if err := noArgs(c); err != nil {
			return err
		}
		e, err := newEnv(c)
		if err != nil {
			return err
		}
		return f(e, c)
	}
}

func (e *env) addresses() ([]string, error) {
	s, err := e.openStore()
	if err != nil {
		return nil, err
	}
	defer s.Close()
	return storeAddresses(s)
}

// storeAddresses is the address of every record of s.
func storeAddresses(s *wallet.Store) ([]string, error) {
	recs, err := s.Addresses()
	if err != nil {
		return nil, err
	}
	out := make([]string, len(recs))
	for i, r := range recs {
		out[i] = r.Address
	}
	return out, nil
}

func cmdBalance() *cli.Command {
	return &cli.Command{
		Name:  "balance",
		Usage: "print the wallet's confirmed, unconfirmed and spendable balance, nominal and effective, and its decay rate",
		Description: `Amounts in COIN at their effective value for the next block (what they are worth if spent
in the next block: concentration decay, docs/protocol.md §8):
  confirmed    mined, mature, unlocked outputs that no mempool transaction spends
  unconfirmed  outputs of mempool transactions paying the wallet (change included)
  spendable    what send can use now: mempool spends applied, unconfirmed change included
  immature     coinbase outputs with fewer than 100 confirmations
  locked       agent stake and contract escrow (never decays)
An output spent by a transaction still in the mempool counts nowhere: that transaction's
change is in unconfirmed (and spendable) instead.
and, added beside them, the same at nominal value (what the outputs say, before decay):
  confirmed_nominal, spendable_nominal, immature_nominal
and the decay of the wallet's clusters (getclusterinfo of the clusters holding its
outputs; addresses that have spent together are one cluster):
  decay_rate_per_block   the highest rate of the wallet's clusters, parts per 10^12 a block
  yearly_decay_percent   the same as the share of a holding lost in a year, in percent
  clusters               each cluster: cluster_id, the wallet's addresses in it, its
                         nominal balance, concentration_ppb (share of the circulating
                         supply in parts per billion), rate_per_block, yearly_decay_percent
A cluster holding at most 0.1% of the supply does not decay. The rates are those of an owner
that is no agent; an agent's tier multiplies them (x0.5 exemplary ... x3 observer).
On a terminal: one line per amount ("confirmed: X COIN (nominal Y COIN)"), a "decay:"
line with the highest yearly rate and a "cluster" line per cluster.`,
		Action: withAddresses(func(e *env, ctx context.Context, cl *rpcapi.Client, addrs []string) error {
			b, err := wallet.GetBalance(ctx, cl, addrs)
			if err != nil {
				return e.nodeError(err)
			}
			clusters := make([]clusterJSON, len(b.Clusters))
			var top wallet.ClusterDecay // the highest rate: Clusters is sorted so
			for i, c := range b.Clusters {
				if i == 0 {
					top = c
				}
				clusters[i] = clusterJSON{ClusterID: c.ClusterID, Addresses: c.Addresses, Balance: amount.Format(c.Balance),
					ConcentrationPPB: c.ConcentrationPPB, RatePerBlock: c.RatePerBlock, YearlyDecayPct: yearlyPercent(c.YearlyDecayPPM)}
			}
			if e.json {
				return e.printJSON(map[string]any{"confirmed": amount.Format(b.Confirmed), "unconfirmed": amount.Format(b.Unconfirmed),
					"spendable": amount.Format(b.Spendable), "immature": amount.Format(b.Immature), "locked": amount.Format(b.Locked),
					"utxo_count": b.UTXOs, "confirmed_nominal": amount.Format(b.ConfirmedNominal),
					"spendable_nominal": amount.Format(b.SpendableNominal), "immature_nominal": amount.Format(b.ImmatureNominal),
					"decay_rate_per_block": top.RatePerBlock, "yearly_decay_percent": yearlyPercent(top.YearlyDecayPPM),
					"clusters": clusters})
			}
			err = e.printf("confirmed:   %s COIN (nominal %s COIN)\nunconfirmed: %s COIN\nspendable:   %s COIN at the next block (nominal %s COIN)\n"+
				"immature:    %s COIN (nominal %s COIN)\nlocked:      %s COIN\nutxos:       %d\n",
				amount.Format(b.Confirmed), amount.Format(b.ConfirmedNominal), amount.Format(b.Unconfirmed), amount.Format(b.Spendable),
				amount.Format(b.SpendableNominal), amount.Format(b.Immature), amount.Format(b.ImmatureNominal), amount.Format(b.Locked), b.UTXOs)
			if err != nil {
				return err
			}
			switch len(clusters) {
			case 0:
				return e.printf("decay:       none (no outputs)\n")
			case 1:
				err = e.printf("decay:       %s%% a year (the wallet's one cluster)\n", clusters[0].YearlyDecayPct)
			default:
				err = e.printf("decay:       %s%% a year (the highest of the wallet's %d clusters)\n", clusters[0].YearlyDecayPct, len(clusters))
			}
			for _, c := range clusters {
				if err != nil {
					return err
				}
				err = e.printf("cluster %s: %s%% a year, %s%% of the supply, %s COIN, wallet addresses %s\n", c.ClusterID,
					c.YearlyDecayPct, ppbPercent(c.ConcentrationPPB), c.Balance, strings.Join(c.Addresses, " "))
			}
			return err
		}),
	}
}

// clusterJSON is one cluster of 'balance' in JSON.
type clusterJSON struct {
	ClusterID        string   `json:"cluster_id"`
	Addresses        []string `json:"addresses"`
	Balance          string   `json:"balance"`
	ConcentrationPPB uint64   `json:"concentration_ppb"`
	RatePerBlock     uint64   `json:"rate_per_block"`
	YearlyDecayPct   string   `json:"yearly_decay_percent"`
}

// yearlyPercent writes a yearly decay in parts per million as getclusterinfo does: percent
// with 4 decimals.
func yearlyPercent(ppm uint64) string {
	return fmt.Sprintf("%d.%04d", ppm/10_000, ppm%10_000)
}

// ppbPercent writes parts per billion as percent with 4 decimals (rounded down).
func ppbPercent(ppb uint64) string {
	return fmt.Sprintf("%d.%04d", ppb/10_000_000, ppb%10_000_000/1_000)
}

// utxoJSON is one line of 'utxos' in JSON.
type utxoJSON struct {
	TxID           string `json:"txid"`
	Index          uint32 `json:"index"`
	Address        string `json:"address"`
	Amount         string `json:"amount"`
	EffectiveValue string `json:"effective_value"`
	Confirmations  uint64 `json:"confirmations"`
	BlockHeight    uint64 `json:"block_height"`
	Coinbase       bool   `json:"coinbase"`
	Immature       bool   `json:"immature"`
	Locked         bool   `json:"locked"`
	Spendable      bool   `json:"spendable"`
}

func cmdUTXOs() *cli.Command {
	return &cli.Command{
		Name:  "utxos",
		Usage: "list the wallet's unspent outputs (mempool included)",
		Description: `Lists the unspent outputs of every wallet address in the node's pending view (outputs
spent by mempool transactions left out, outputs of mempool transactions in, with 0
confirmations): a table on a terminal, a JSON array otherwise. Each output has two values
in COIN: amount, its nominal value, and effective_value, what it is worth if spent in the
next block (after concentration decay, docs/protocol.md §8; equal for outputs that do not decay).`,
		Action: withAddresses(func(e *env, ctx context.Context, cl *rpcapi.Client, addrs []string) error {
			us, err := wallet.ListUTXOs(ctx, cl, addrs, true)
			if err != nil {
				return e.nodeError(err)
			}
			out := make([]utxoJSON, len(us))
			for i, u := range us {
				out[i] = utxoJSON{TxID: u.TxID, Index: u.Index, Address: u.Address, Amount: amount.Format(u.Value),
					EffectiveValue: amount.Format(wallet.CoinValue(&u.UTXO)), Confirmations: u.Confirmations, BlockHeight: u.BlockHeight,
					Coinbase: u.IsCoinbase, Immature: u.Immature, Locked: u.Locked, Spendable: u.Spendable}
			}
			if e.json {
				return e.printJSON(out)
			}
			rows := make([][]string, len(out))
			for i, u := range out {
				var flags []string
				for _, f := range []struct {
					on   bool
					name string
				}{{u.Coinbase, "coinbase"}, {u.Immature, "immature"}, {u.Locked, "locked"}} {
					if f.on {
						flags = append(flags, f.name)
					}
				}
				rows[i] = []string{u.TxID + ":" + strconv.FormatUint(uint64(u.Index), 10), u.Address, u.Amount,
					u.EffectiveValue, strconv.FormatUint(u.Confirmations, 10), strings.Join(flags, ",")}
			}
			return cliutil.PrintTable(e.out, []string{"outpoint", "address", "amount", "effective", "confirmations", "flags"}, rows)
		}),
	}
}

func cmdSend() *cli.Command {
	return &cli.Command{
		Name:  "send",
		Usage: "pay an address: select coins, add change, sign, broadcast, print the txid",
		Description: `Selects the wallet's spendable outputs (largest first, unconfirmed change included, each at
its effective value for the next block), pays --amount COIN to --to with a fee of exactly
--fee-rate subunits per byte of the signed transaction plus a decay margin, sends the change
back to the wallet's first address (change below the dust limit of 0.00001 COIN goes to the
fee instead), signs and broadcasts with sendrawtransaction, and prints the txid (with
--json an object with the fee, the decay_margin part of it and the change).

Decay margin: outputs of a cluster holding more than 0.1% of the supply lose value every
block (docs/protocol.md §8), also while the transaction waits to be mined. The fee therefore also
covers what the selected outputs would lose if it were mined 6 blocks after the next, so
it still pays --amount and the relay fee then. The margin is 0 when nothing decays, and
about 9,200 subunits per 50 COIN output at the highest rate (15% a year); it goes to the
miner. Sending the whole spendable balance fails for this reason: leave the margin.`,
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "to", Required: true, Usage: "destination `ADDRESS`"},
			&cli.StringFlag{Name: "amount", Required: true, Usage: "`COIN` to send, for example 1.5 (at most 8 decimals)"},
			&cli.Uint64Flag{Name: "fee-rate", Value: wallet.DefaultFeeRate, Usage: "fee in subunits per byte (the node's minimum is 1)"},
		},
		Action: withEnv(func(e *env, c *cli.Context) error {
			to := strings.TrimSpace(c.String("to"))
			if _, err := wallet.DecodeAddress(to, e.net); err != nil {
				return fmt.Errorf("--to: %w", err)
			}
			to = strings.ToLower(to)
			v, err := amount.Parse(strings.TrimSpace(c.String("amount")))
			if err != nil {
				return fmt.Errorf("--amount: %w", err)
			}
			if v < policy.DustLimit {
				return fmt.Errorf("--amount: %w", wallet.ErrDust)
			}
			rate, err := feeRate(c)
			if err != nil {
				return err
			}
			return e.withWalletKeys(func(ctx context.Context, node wallet.NodeClient, ks []wallet.Key) error {
				res, err := wallet.Send(ctx, node, wallet.Transfer{Net: e.net, Keys: ks, To: to, Amount: v, FeeRate: rate})
				if err != nil {
					var ife *wallet.InsufficientFundsError
					if errors.Is(err, wallet.ErrTooManyInputs) {
						return fmt.Errorf("%w: %s", err, consolidateHint)
					}
					if errors.As(err, &ife) || errors.Is(err, wallet.ErrTooLarge) || errors.Is(err, wallet.ErrDust) {
						return err
					}
					return e.nodeError(err)
				}
				if e.jsonFlag {
					return e.printJSON(map[string]any{"txid": res.TxID, "from": res.From, "to": res.To, "amount": amount.Format(res.Amount),
						"fee": amount.Format(res.Fee), "decay_margin": amount.Format(res.DecayMargin), "change": amount.Format(res.Change),
						"size": res.Size, "inputs": res.Inputs})
				}
				return e.printf("%s\n", res.TxID)
			})
		}),
	}
}

// feeRate reads --fee-rate: subunits per byte, the node's minimum to wallet.MaxFeeRate.
func feeRate(c *cli.Context) (uint64, error) {
	rate := c.Uint64("fee-rate")
	if rate < policy.MinRelayFeePerByte || rate > wallet.MaxFeeRate {
		return 0, fmt.Errorf("--fee-rate: %w", wallet.ErrBadFeeRate)
	}
	return rate, nil
}

// withWalletKeys runs a command that spends from the wallet: f gets the wallet's keys
// (wiped when it returns) and the node (withNode: the wallet's unconfirmed transactions
// re-sent first) recording every broadcast in the wallet directory (journal).
func (e *env) withWalletKeys(f func(ctx context.Context, node wallet.NodeClient, ks []wallet.Key) error) error {
	ks, err := e.walletKeys()
	if err != nil {
		return err
	}
	defer func() {
		for i := range ks {
			ks[i].Wipe()
		}
	}()
	return e.withNode(func(ctx context.Context, cl *rpcapi.Client) error {
		node, err := e.journal(cl)
		if err != nil {
			return err
		}
		return f(ctx, node, ks)
	})
}

// walletKeys unlocks the wallet with the passphrase and derives the keys of its addresses;
// the store is closed again (a Journal opens it to record each broadcast). Wipe the keys.
func (e *env) walletKeys() ([]wallet.Key, error) {
	s, err := e.openStore()
	if err != nil {
		return nil, err
	}
	defer s.Close()
	pass, err := e.passphrase(false)
	if err != nil {
		return nil, err
	}
	return s.UnlockKeys(pass)
}

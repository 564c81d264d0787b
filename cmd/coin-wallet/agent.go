package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/cointoolkit/coin/lib/amount"
	"github.com/cointoolkit/coin/lib/cliutil"
	"github.com/cointoolkit/coin/lib/consensus"
	"github.com/cointoolkit/coin/lib/jsonrpc"
	"github.com/cointoolkit/coin/lib/policy"
	"github.com/cointoolkit/coin/lib/reason"
	"github.com/cointoolkit/coin/lib/rpcapi"
	"github.com/cointoolkit/coin/lib/types"
	"github.com/cointoolkit/coin/lib/wallet"
	"github.com/urfave/cli/v2"
)

// The agent commands: the Proof of Conduct operations (protocol §9) of the wallet's first
// address. Every transaction is built by lib/wallet (RegisterRequest, ..., SpendAgent) after
// wallet.PrecheckAgent has run consensus's rules of the operation against the node's pending
// view; this file reads flags and secrets, asks the node what the builders need (a
// contract's escrow), and prints results and refusals: a refusal's words are the rule's
// (lib/consensus), and this file adds only its reason and a hint of what to do.

const agentDescription = `The Proof of Conduct operations (docs/protocol.md §9) of the wallet's agent, which is the wallet's
first address (index 0). Every agent transaction spends only that address's coins and sends
its change back there, so fund that address (coin-wallet address prints it).

   agent register                       become an agent (stakes 50 COIN for good)
   agent vouch TARGET_ADDRESS           vouch for another agent (needs score >= 700)
   agent contract create --counterparty ADDRESS --amount COIN [--expiry BLOCKS]
                                        open a contract; the amount is locked in escrow
   agent contract fulfil CONTRACT_ID    release the escrow (the wallet is the counterparty)
   agent contract refund CONTRACT_ID    take the escrow back after expiry (the initiator)
   agent contract show CONTRACT_ID      a contract's record
   agent review --contract ID --subject ADDRESS --score N
                                        review the other party of a fulfilled contract (1-10)
   agent profile [ADDRESS]              an agent's conduct profile (default: the wallet's)
   agent list [--offset N] [--limit N]  the agent directory, highest score first

Secrets: the commands that sign (register, vouch, contract create/fulfil/refund, review)
unlock the wallet with the passphrase (--passphrase-file, else COIN_WALLET_PASSPHRASE,
else a prompt), or, with --mnemonic-file FILE, act for index 0 of that mnemonic instead
("-" reads it from standard input; no wallet directory is needed).

Costs: register locks 50 COIN at the agent's own address as a stake that is never spendable
again; contract create locks --amount (at least 0.00001 COIN) until the counterparty fulfils
the contract or, once it has expired, the initiator refunds it; every operation pays a fee
of --fee-rate subunits per byte (default 2), plus a decay margin when the agent's coins
decay (see 'coin-wallet send --help'), from the agent's coins (a fulfilment or refund pays
it out of the escrow). balance and utxos show stake and escrow as locked; send never
spends them.

Scores (docs/protocol.md §9): an agent starts at 500 of 1000. A fulfilment gives the counterparty +20
and the initiator +10, a vouch the target +30, an expired contract costs the counterparty
-50, and a review of score N changes the subject by (2N-11)x10. A gain d is scaled as
s + d(1000-s)/500, a loss as s - |d|s/500. Repeats between the same two agents count less
(the k-th halves k-1 times), and between two addresses of one owner nothing counts.

Output: JSON when standard output is not a terminal (or with --json), a table on a
terminal. Profiles, lists and contracts read the node's pending view (mempool included).

Refusals: nothing is broadcast. Before it builds anything the wallet checks the operation
against the consensus rules and the node's pending view (a fulfilment by anyone but the
counterparty, a score outside 1-10, a refund before expiry, ...) and refuses with
"error: " and the rule's words; what only the node can tell (a second vouch for one
target, a coin spent meanwhile) prints "error code: N" and "error message:" as elsewhere. Both add
"reason: <reason>" (the stable names of docs/rpc-errors.md, such as not_an_agent or
score_too_low) and a hint of what to do; the exit status is 1 (|N| for a node error).`

// agentFlags are the flags of every agent command: --json works after any command name.
func agentFlags(fs ...cli.Flag) []cli.Flag {
	return append(fs, &cli.BoolFlag{Name: "json", Usage: "print JSON even on a terminal"})
}

// signerFlags are the flags of the agent commands that sign a transaction.
func signerFlags(fs ...cli.Flag) []cli.Flag {
	return agentFlags(append(fs,
		&cli.StringFlag{Name: "mnemonic-file", Usage: "act for index 0 of the mnemonic in `FILE` ('-': standard input) instead of the wallet"},
		&cli.Uint64Flag{Name: "fee-rate", Value: wallet.DefaultFeeRate, Usage: "fee in subunits per byte (the node's minimum is 1)"},
	)...)
}

func cmdAgent() *cli.Command {
	return &cli.Command{
		Name:            "agent",
		Usage:           "Proof of Conduct: register, vouch, contract create|fulfil|refund|show, review, profile, list",
		Description:     agentDescription,
		HideHelpCommand: true,
		Subcommands: []*cli.Command{cmdAgentRegister(), cmdAgentVouch(), cmdAgentContract(), cmdAgentReview(),
			cmdAgentProfile(), cmdAgentList()},
	}
}

func cmdAgentContract() *cli.Command {
	return &cli.Command{
		Name:  "contract",
		Usage: "contracts between two agents: create, fulfil, refund, show",
		Description: `A contract locks the initiator's --amount in escrow for the counterparty. The counterparty
fulfils it before it expires (the escrow is released to the counterparty; both scores
rise), or, once it has expired, the initiator refunds it (the escrow comes back; the
counterparty loses 50 points scaled). Its id is the txid of 'contract create'.`,
		HideHelpCommand: true,
		Subcommands:     []*cli.Command{cmdContractCreate(), cmdContractFulfil(), cmdContractRefund(), cmdContractShow()},
	}
}

func cmdAgentRegister() *cli.Command {
	return &cli.Command{
		Name:  "register",
		Usage: "register the wallet's address as an agent (stakes 50 COIN for good)",
		Description: `Sends an AgentRegister transaction whose output 0 stakes exactly 50 COIN to the agent's own
address. The stake is locked for good: registration is permanent and the stake is never
spendable again. The agent starts with a conduct score of 500. Needs 50 COIN plus the fee
spendable at the wallet's first address.

Prints {"address", "stake_txid", "conduct_score", "fee"}.`,
		Flags: signerFlags(),
		Action: withAgentArgs("", 0, 0, func(e *env, c *cli.Context) error {
			return e.agentSpend(c, func(_ context.Context, _ *rpcapi.Client, key wallet.Key) (wallet.Request, error) {
				return wallet.RegisterRequest(key.PKH), nil
			}, func(_ context.Context, _ *rpcapi.Client, key wallet.Key, p *wallet.Plan) []kv {
				return []kv{{"address", key.Address}, {"stake_txid", p.TxID.String()},
					{"conduct_score", consensus.InitialScore}, {"fee", amount.Format(p.Fee)}}
			})
		}),
	}
}

func cmdAgentVouch() *cli.Command {
	return &cli.Command{
		Name:      "vouch",
		Usage:     "vouch for another agent (needs a conduct score of at least 700)",
		ArgsUsage: "TARGET_ADDRESS",
		Description: `Sends a Vouch for TARGET_ADDRESS, another registered agent: its score rises by 30 (scaled).
The wallet's agent needs a conduct score of at least 700 and vouches for a target once.
It costs only the fee.

Prints {"voucher", "target", "txid", "fee"}.`,
		Flags: signerFlags(),
		Action: withAgentArgs("TARGET_ADDRESS", 1, 1, func(e *env, c *cli.Context) error {
			target, targetPKH, err := e.addressArg(c.Args().First(), "TARGET_ADDRESS")
			if err != nil {
				return err
			}
			return e.agentSpend(c, func(_ context.Context, _ *rpcapi.Client, key wallet.Key) (wallet.Request, error) {
				return wallet.VouchRequest(key.PKH, targetPKH)
			}, func(_ context.Context, _ *rpcapi.Client, key wallet.Key, p *wallet.Plan) []kv {
				return []kv{{"voucher", key.Address}, {"target", target}, {"txid", p.TxID.String()},
					{"fee", amount.Format(p.Fee)}}
			})
		}),
	}
}

func cmdContractCreate() *cli.Command {
	return &cli.Command{
		Name:  "create",
		Usage: "open a contract with another agent, locking --amount in escrow",
		Description: `Sends a ContractCreate: output 0 locks --amount COIN in escrow for --counterparty, another
registered agent, until the counterparty fulfils the contract or, after --expiry blocks
(default 1,440, about a day at one block a minute; 10 to 525,960), the initiator refunds
it. The amount is at least 0.00001 COIN. The contract id is the transaction's id.

Prints {"contract_id", "initiator", "counterparty", "value_coin", "expiry_blocks", "status", "fee"}.`,
		Flags: signerFlags(
			&cli.StringFlag{Name: "counterparty", Required: true, Usage: "the other agent's `ADDRESS`"},
			&cli.StringFlag{Name: "amount", Required: true, Usage: "`COIN` to lock in escrow, for example 1.5 (at most 8 decimals)"},
			&cli.UintFlag{Name: "expiry", Value: consensus.DefaultExpiry,
				Usage: "`BLOCKS` after which the initiator may refund (10 to 525,960)"},
		),
		Action: withAgentArgs("", 0, 0, func(e *env, c *cli.Context) error {
			cp, cpPKH, err := e.addressArg(c.String("counterparty"), "--counterparty")
			if err != nil {
				return err
			}
			v, err := amount.Parse(strings.TrimSpace(c.String("amount")))
			if err != nil {
				return fmt.Errorf("--amount: %w", err)
			}
			if v < policy.DustLimit {
				return fmt.Errorf("--amount: %w", wallet.ErrDust)
			}
			exp := c.Uint("expiry")
			if err := consensus.CheckExpiry(uint64(exp)); err != nil {
				return e.agentError(fmt.Errorf("--expiry %d: %w", exp, err))
			}
			return e.agentSpend(c, func(_ context.Context, _ *rpcapi.Client, key wallet.Key) (wallet.Request, error) {
				return wallet.ContractCreateRequest(key.PKH, cpPKH, v, uint32(exp))
			}, func(_ context.Context, _ *rpcapi.Client, key wallet.Key, p *wallet.Plan) []kv {
				return []kv{{"contract_id", p.TxID.String()}, {"initiator", key.Address}, {"counterparty", cp},
					{"value_coin", amount.Format(v)}, {"expiry_blocks", exp}, {"status", "open"}, {"fee", amount.Format(p.Fee)}}
			})
		}),
	}
}

func cmdContractFulfil() *cli.Command {
	return &cli.Command{
		Name:      "fulfil",
		Usage:     "fulfil a contract: release its escrow to the wallet (the counterparty)",
		ArgsUsage: "CONTRACT_ID",
		Description: `Sends a ContractFulfil for CONTRACT_ID: the escrow is released to the wallet's agent, which
must be the contract's counterparty, before the contract expires. The fee comes out of the
escrow. The counterparty's score rises by 20 and the initiator's by 10 (scaled; less for
repeated contracts between the same two agents).

Prints {"contract_id", "status", "release_txid", "amount", "fee"}; amount is what the
wallet receives.`,
		Flags: signerFlags(),
		Action: withAgentArgs("CONTRACT_ID", 1, 1, func(e *env, c *cli.Context) error {
			id, err := contractIDArg(c.Args().First())
			if err != nil {
				return err
			}
			return e.agentSpend(c, func(ctx context.Context, cl *rpcapi.Client, _ wallet.Key) (wallet.Request, error) {
				esc, err := e.escrow(ctx, cl, id)
				if err != nil {
					return wallet.Request{}, err
				}
				return wallet.FulfilRequest(esc), nil
			}, func(_ context.Context, _ *rpcapi.Client, key wallet.Key, p *wallet.Plan) []kv {
				return []kv{{"contract_id", id}, {"status", "fulfilled"}, {"release_txid", p.TxID.String()},
					{"amount", amount.Format(p.Change)}, {"fee", amount.Format(p.Fee)}}
			})
		}),
	}
}

func cmdContractRefund() *cli.Command {
	return &cli.Command{
		Name:      "refund",
		Usage:     "take back the escrow of an expired contract (the wallet is the initiator)",
		ArgsUsage: "CONTRACT_ID",
		Description: `Sends a ContractRefund for CONTRACT_ID: once the chain's height has reached the contract's
expires_at (see 'agent contract show'), its initiator, the wallet's agent, takes the escrow
back; the fee comes out of it. The contract becomes expired and its counterparty loses 50
points (scaled).

Prints {"contract_id", "status", "refund_txid", "amount", "fee"}.`,
		Flags: signerFlags(),
		Action: withAgentArgs("CONTRACT_ID", 1, 1, func(e *env, c *cli.Context) error {
			id, err := contractIDArg(c.Args().First())
			if err != nil {
				return err
			}
			var expiresAt uint64
			err = e.agentSpend(c, func(ctx context.Context, cl *rpcapi.Client, _ wallet.Key) (wallet.Request, error) {
				k, err := cl.GetContract(ctx, id)
				if err != nil {
					return wallet.Request{}, err
				}
				expiresAt = k.ExpiresAt
				esc, err := wallet.EscrowOf(k, e.net)
				if err != nil {
					return wallet.Request{}, err
				}
				return wallet.RefundRequest(esc), nil
			}, func(_ context.Context, _ *rpcapi.Client, key wallet.Key, p *wallet.Plan) []kv {
				return []kv{{"contract_id", id}, {"status", "expired"}, {"refund_txid", p.TxID.String()},
					{"amount", amount.Format(p.Change)}, {"fee", amount.Format(p.Fee)}}
			})
			var ee *cliutil.ExitError
			if errors.Is(err, reason.ContractNotExpired) && errors.As(err, &ee) {
				ee.Message += fmt.Sprintf("\nhint: the contract expires at height %d; refund from then on", expiresAt)
			}
			return err
		}),
	}
}

func cmdContractShow() *cli.Command {
	return &cli.Command{
		Name:      "show",
		Usage:     "print a contract's record (getcontract)",
		ArgsUsage: "CONTRACT_ID",
		Description: `Prints the record of CONTRACT_ID from the node's pending view: contract_id, initiator,
counterparty, value (subunits) and value_coin, created_height, expires_at, status (open,
fulfilled or expired), closed_by (the fulfil or refund txid), reviewed_by_initiator,
reviewed_by_counterparty and confirmed (false while its latest change is unmined).`,
		Flags: agentFlags(),
		Action: withAgentArgs("CONTRACT_ID", 1, 1, func(e *env, c *cli.Context) error {
			id, err := contractIDArg(c.Args().First())
			if err != nil {
				return err
			}
			return e.withNode(func(ctx context.Context, cl *rpcapi.Client) error {
				k, err := cl.GetContract(ctx, id)
				if err != nil {
					return e.agentError(err)
				}
				if e.json {
					return e.printJSON(k)
				}
				closed := k.ClosedBy
				if closed == "" {
					closed = "-"
				}
				return e.printKV([]kv{{"contract_id", k.ContractID}, {"status", k.Status}, {"initiator", k.Initiator},
					{"counterparty", k.Counterparty}, {"value", k.ValueCoin + " COIN"}, {"created_height", k.CreatedHeight},
					{"expires_at", k.ExpiresAt}, {"closed_by", closed}, {"reviewed_by_initiator", k.ReviewedByInitiator},
					{"reviewed_by_counterparty", k.ReviewedByCounterparty}, {"confirmed", k.Confirmed}})
			})
		}),
	}
}

func cmdAgentReview() *cli.Command {
	return &cli.Command{
		Name:  "review",
		Usage: "review the other party of a fulfilled contract (score 1 to 10)",
		Description: `Sends a Review of --subject, the other participant of the fulfilled contract --contract,
with --score from 1 (terrible) to 10 (excellent): the subject's score changes by
(2 x score - 11) x 10, scaled (score 6 to 10 raise it, 1 to 5 lower it). Each participant
reviews a contract once. It costs only the fee.

Prints {"reviewer", "subject", "score", "contract_id", "txid", "new_conduct_score", "fee"};
new_conduct_score is the subject's score in the node's pending view right after the review.`,
		Flags: signerFlags(
			&cli.StringFlag{Name: "contract", Required: true, Usage: "the fulfilled contract's `ID`"},
			&cli.StringFlag{Name: "subject", Required: true, Usage: "the reviewed agent's `ADDRESS`"},
			&cli.IntFlag{Name: "score", Required: true, Usage: "`N` from 1 (terrible) to 10 (excellent)"},
		),
		Action: withAgentArgs("", 0, 0, func(e *env, c *cli.Context) error {
			id, err := contractIDArg(c.String("contract"))
			if err != nil {
				return fmt.Errorf("--contract: %w", err)
			}
			contract, _ := types.ParseHash(id)
			subject, subjectPKH, err := e.addressArg(c.String("subject"), "--subject")
			if err != nil {
				return err
			}
			score := c.Int("score")
			return e.agentSpend(c, func(_ context.Context, _ *rpcapi.Client, key wallet.Key) (wallet.Request, error) {
				return wallet.ReviewRequest(key.PKH, contract, subjectPKH, score)
			}, func(ctx context.Context, cl *rpcapi.Client, key wallet.Key, p *wallet.Plan) []kv {
				var newScore any // absent if the node cannot say
				if pr, err := cl.GetAgentProfile(ctx, subject); err == nil {
					newScore = pr.ConductScore
				}
				return []kv{{"reviewer", key.Address}, {"subject", subject}, {"score", score}, {"contract_id", id},
					{"txid", p.TxID.String()}, {"new_conduct_score", newScore}, {"fee", amount.Format(p.Fee)}}
			})
		}),
	}
}

func cmdAgentProfile() *cli.Command {
	return &cli.Command{
		Name:      "profile",
		Usage:     "print an agent's conduct profile (getagentprofile); default: the wallet's",
		ArgsUsage: "[ADDRESS]",
		Description: `Prints the conduct profile of ADDRESS, or of the wallet's first address (with
--mnemonic-file: of that mnemonic's), from the node's pending view: address,
conduct_score, tier, contracts_completed, contracts_failed, vouches_received,
vouches_given, reviews_received, average_review_score, registered_at and
registered_height (once the registration is mined), stake_txid and confirmed.
Needs no passphrase. An address that is not an agent is refused with agent_not_found.`,
		Flags: agentFlags(&cli.StringFlag{Name: "mnemonic-file", Usage: "show index 0 of the mnemonic in `FILE` ('-': standard input)"}),
		Action: withAgentArgs("[ADDRESS]", 0, 1, func(e *env, c *cli.Context) error {
			var addr string
			var err error
			if c.Args().Present() {
				addr, _, err = e.addressArg(c.Args().First(), "ADDRESS")
			} else {
				addr, err = e.agentAddress(c)
			}
			if err != nil {
				return err
			}
			return e.withNode(func(ctx context.Context, cl *rpcapi.Client) error {
				p, err := cl.GetAgentProfile(ctx, addr)
				if err != nil {
					return e.agentError(err)
				}
				if e.json {
					return e.printJSON(p)
				}
				avg, at, height := "-", "-", "-"
				if p.AverageReviewScore != nil {
					avg = strconv.FormatFloat(*p.AverageReviewScore, 'f', 2, 64)
				}
				if p.RegisteredAt != "" {
					at = p.RegisteredAt
				}
				if p.RegisteredHeight != nil {
					height = strconv.FormatUint(*p.RegisteredHeight, 10)
				}
				return e.printKV([]kv{{"address", p.Address}, {"conduct_score", p.ConductScore}, {"tier", p.Tier},
					{"contracts_completed", p.ContractsCompleted}, {"contracts_failed", p.ContractsFailed},
					{"vouches_received", p.VouchesReceived}, {"vouches_given", p.VouchesGiven},
					{"reviews_received", p.ReviewsReceived}, {"average_review_score", avg}, {"registered_at", at},
					{"registered_height", height}, {"stake_txid", p.StakeTxID}, {"confirmed", p.Confirmed}})
			})
		}),
	}
}

// listMaxLimit is listagents's largest page.
const listMaxLimit = 100

func cmdAgentList() *cli.Command {
	return &cli.Command{
		Name:  "list",
		Usage: "print the agent directory, highest conduct score first (listagents)",
		Description: `Prints a page of the registered agents from the node's pending view, sorted by conduct
score (highest first), then address: JSON {"agents": [{"address", "conduct_score", "tier",
"contracts_completed"}], "total", "offset", "limit"}, or a table with each agent's rank.`,
		Flags: agentFlags(
			&cli.Uint64Flag{Name: "offset", Usage: "skip the first `N` agents"},
			&cli.Uint64Flag{Name: "limit", Value: 20, Usage: fmt.Sprintf("list at most `N` agents (1 to %d)", listMaxLimit)},
		),
		Action: withAgentArgs("", 0, 0, func(e *env, c *cli.Context) error {
			off, lim := c.Uint64("offset"), c.Uint64("limit")
			if lim < 1 || lim > listMaxLimit {
				return fmt.Errorf("--limit %d: must be 1 to %d", lim, listMaxLimit)
			}
			return e.withNode(func(ctx context.Context, cl *rpcapi.Client) error {
				l, err := cl.ListAgents(ctx, off, lim)
				if err != nil {
					return e.agentError(err)
				}
				if l.Agents == nil {
					l.Agents = []rpcapi.AgentEntry{}
				}
				if e.json {
					return e.printJSON(l)
				}
				rows := make([][]string, len(l.Agents))
				for i, a := range l.Agents {
					rows[i] = []string{strconv.FormatUint(l.Offset+uint64(i)+1, 10), a.Address,
						strconv.FormatUint(uint64(a.ConductScore), 10), a.Tier, strconv.FormatUint(a.ContractsCompleted, 10)}
				}
				if err := cliutil.PrintTable(e.out, []string{"rank", "address", "score", "tier", "contracts"}, rows); err != nil {
					return err
				}
				return e.printf("%d of %d agents\n", len(l.Agents), l.Total)
			})
		}),
	}
}

// kv is one field of a result: a JSON member, a row on a terminal.
type kv struct {
	k string
	v any
}

// printKV prints fields as a JSON object (in their order) or as a two-column table.
func (e *env) printKV(fields []kv) error {
	if e.json {
		return e.printJSON(kvObject(fields))
	}
	rows := make([][]string, len(fields))
	for i, f := range fields {
		v := fmt.Sprint(f.v)
		if f.v == nil {
			v = "-"
		}
		rows[i] = []string{f.k, v}
	}
	return cliutil.PrintTable(e.out, []string{"field", "value"}, rows)
}

// kvObject is a JSON object whose members keep their order.
type kvObject []kv

func (o kvObject) MarshalJSON() ([]byte, error) {
	b := []byte{'{'}
	for i, f := range o {
		if i > 0 {
			b = append(b, ',')
		}
		k, err := json.Marshal(f.k)
		if err != nil {
			return nil, err
		}
		v, err := json.Marshal(f.v)
		if err != nil {
			return nil, err
		}
		b = append(append(append(b, k...), ':'), v...)
	}
	return append(b, '}'), nil
}

// withAgentArgs runs an agent command that takes min to max arguments (described by usage).
func withAgentArgs(usage string, min, max int, f func(e *env, c *cli.Context) error) cli.ActionFunc {
	return func(c *cli.Context) error {
		if n := c.NArg(); n < min || n > max {
			what := "no arguments"
			if usage != "" {
				what = usage
			}
			order := ""
			if n > max {
				order = "; flags go before arguments"
			}
			return cliutil.UsageError(c, "%s takes %s, got %d%s", commandPath(c), what, n, order)
		}
		e, err := newEnv(c)
		if err != nil {
			return err
		}
		return f(e, c)
	}
}

// commandPath is the command's name with its parents' ("agent contract fulfil").
func commandPath(c *cli.Context) string {
	var names []string
	for _, x := range c.Lineage() {
		if x.Command != nil && x.Command.Name != "" && x.Command.Name != appName {
			names = append([]string{x.Command.Name}, names...)
		}
	}
	return strings.Join(slices.Compact(names), " ")
}

// withNode runs f with a node client.
func (e *env) withNode(f func(ctx context.Context, cl *rpcapi.Client) error) error {
	ctx, cancel := e.ctx()
	defer cancel()
	cl := e.client()
	defer cl.Close()
	e.resendQuietly(ctx, cl)
	return f(ctx, cl)
}

// addressArg checks an address of e's network; what names it in errors.
func (e *env) addressArg(s, what string) (string, types.Hash, error) {
	s = strings.TrimSpace(s)
	pkh, err := wallet.DecodeAddress(s, e.net)
	if err != nil {
		return "", types.Hash{}, fmt.Errorf("%s: %w", what, err)
	}
	return strings.ToLower(s), pkh, nil
}

// contractIDArg checks a contract id: 64 hex characters.
func contractIDArg(s string) (string, error) {
	s = strings.ToLower(strings.TrimSpace(s))
	if _, err := types.ParseHash(s); err != nil || len(s) != 64 {
		return "", fmt.Errorf("contract id %q: want 64 hex characters (the txid printed by 'agent contract create')", s)
	}
	return s, nil
}

// agentAddress is the acting agent's address without any secret: the wallet's first
// address, or with --mnemonic-file index 0 of that mnemonic.
func (e *env) agentAddress(c *cli.Context) (string, error) {
	if f := c.String("mnemonic-file"); f != "" {
		m, err := e.readMnemonic(f)
		if err != nil {
			return "", err
		}
		return wallet.AddressFromMnemonic(m, e.net, 0)
	}
	addrs, err := e.addresses()
	if err != nil {
		return "", err
	}
	return addrs[0], nil
}

// agentKey is the acting agent's key: index 0 of the mnemonic of --mnemonic-file, else of
// the wallet unlocked with the passphrase.
func (e *env) agentKey(c *cli.Context) (wallet.Key, error) {
	var ring *wallet.Keyring
	if f := c.String("mnemonic-file"); f != "" {
		m, err := e.readMnemonic(f)
		if err != nil {
			return wallet.Key{}, err
		}
		if ring, err = wallet.KeyringFromMnemonic(m, "", e.net, 0); err != nil {
			return wallet.Key{}, err
		}
	} else {
		s, err := e.openStore()
		if err != nil {
			return wallet.Key{}, err
		}
		defer s.Close()
		pass, err := e.passphrase(false)
		if err != nil {
			return wallet.Key{}, err
		}
		if ring, err = s.Unlock(pass); err != nil {
			return wallet.Key{}, err
		}
	}
	defer ring.Wipe()
	return ring.Key(0)
}

// escrow reads contract id from the node for its fulfilment (whether it is open is a rule
// wallet.PrecheckAgent checks).
func (e *env) escrow(ctx context.Context, cl *rpcapi.Client, id string) (wallet.Escrow, error) {
	k, err := cl.GetContract(ctx, id)
	if err != nil {
		return wallet.Escrow{}, err
	}
	return wallet.EscrowOf(k, e.net)
}

// agentSpend runs one signing agent command: checks --fee-rate, gets the agent's key, asks
// request for the transaction, checks it against the consensus rules and the node's pending
// view (wallet.PrecheckAgent), lets lib/wallet build, sign and broadcast it, and prints the
// fields result gives (it may read the node's new state).
func (e *env) agentSpend(c *cli.Context, request func(ctx context.Context, cl *rpcapi.Client, key wallet.Key) (wallet.Request, error),
	result func(ctx context.Context, cl *rpcapi.Client, key wallet.Key, plan *wallet.Plan) []kv) error {
	rate, err := feeRate(c)
	if err != nil {
		return err
	}
	key, err := e.agentKey(c)
	if err != nil {
		return err
	}
	defer key.Wipe()
	return e.withNode(func(ctx context.Context, cl *rpcapi.Client) error {
		req, err := request(ctx, cl, key)
		if err != nil {
			return e.agentError(err)
		}
		if err := wallet.PrecheckAgent(ctx, cl, e.net, req, key.Pub); err != nil {
			return e.agentError(err)
		}
		req.FeeRate = rate
		var node wallet.NodeClient = cl
		if c.String("mnemonic-file") == "" { // the wallet's own: recorded for re-sending
			if node, err = e.journal(cl); err != nil {
				return err
			}
		}
		plan, err := wallet.SpendAgent(ctx, node, e.net, key, req)
		if err != nil {
			return e.agentError(err)
		}
		return e.printKV(result(ctx, cl, key, plan))
	})
}

// hint says what to do about one kind of refusal.
type hint struct {
	kind error
	text string
}

// agentHints are the refusals of agent operations, matched with errors.Is in order.
var agentHints = []hint{
	{reason.NotAnAgent, "register first: 'coin-wallet agent register' (stakes 50 COIN)"},
	{reason.AlreadyRegistered, "this address is an agent already: 'coin-wallet agent profile' shows it"},
	{reason.ScoreTooLow, "vouching needs a conduct score of at least 700: 'coin-wallet agent profile' shows yours; fulfilled contracts and good reviews raise it"},
	{reason.AgentNotFound, "the address must be a registered agent: check it with 'coin-wallet agent list' or 'agent profile ADDRESS', or ask its owner to run 'coin-wallet agent register'"},
	{reason.AlreadyVouched, "an agent vouches for a target once: nothing to do"},
	{reason.ContractNotFound, "check the id with 'coin-wallet agent contract show ID': it is the txid printed by 'agent contract create'"},
	{reason.ContractNotOpen, "the contract is fulfilled or expired already: 'coin-wallet agent contract show ID' shows its status"},
	{reason.ContractExpired, "the contract reached its expires_at: it can no longer be fulfilled; its initiator takes the escrow back with 'coin-wallet agent contract refund ID'"},
	{reason.ContractNotExpired, "only an expired contract is refunded: wait until the height reaches its expires_at ('coin-wallet agent contract show ID'), or ask the counterparty to fulfil it"},
	{reason.ContractNotFulfilled, "a contract is reviewed once it is fulfilled: its counterparty runs 'coin-wallet agent contract fulfil ID' first"},
	{reason.NotCounterparty, "only the contract's counterparty fulfils it: run 'coin-wallet agent contract fulfil ID' with the counterparty's wallet ('agent contract show ID' names it)"},
	{reason.NotInitiator, "only the contract's initiator takes back its escrow: run 'coin-wallet agent contract refund ID' with the initiator's wallet"},
	{reason.NotParticipant, "the reviewer and --subject must be the contract's initiator and counterparty: 'coin-wallet agent contract show ID' names them"},
	{reason.AlreadyReviewed, "each participant reviews a contract once: nothing to do"},
	{reason.InvalidScore, "--score is a whole number from 1 (terrible) to 10 (excellent)"},
	{reason.InvalidExpiry, fmt.Sprintf("--expiry is %d to %d blocks", consensus.MinExpiry, consensus.MaxExpiry)},
	{reason.SelfTarget, "an agent cannot vouch for, contract with or review itself: give another agent's address"},
	{reason.BadEscrow, "--amount must be at least 0.00001 COIN"},
	{reason.LockedOutput, "a stake or escrow was offered as a coin: run 'coin-wallet utxos' and report this"},
	{reason.MissingInputs, "a coin the wallet chose is spent or unknown to the node: wait for the next block and run the command again"},
	{reason.Conflict, "a coin the wallet chose is spent by a mempool transaction: wait for the next block and run the command again"},
	{reason.ImmatureCoinbase, "mined coins need 100 confirmations: wait, or fund the agent's address with a transfer"},
	{reason.FeeTooLow, "raise --fee-rate"},
	{wallet.ErrInsufficientFunds, "agent operations spend only the coins of the agent's address (the wallet's first address): send COIN there and wait for it to be spendable ('coin-wallet balance')"},
}

// refusal is a refused agent operation: what main prints and exits with, and the error
// itself, so that errors.Is still matches its kind.
type refusal struct {
	exit *cliutil.ExitError
	err  error
}

func (r *refusal) Error() string   { return r.exit.Message }
func (r *refusal) Unwrap() []error { return []error{r.exit, r.err} }

// agentError explains a refused agent operation: the node's error as nodeError prints it,
// or the wallet's own refusal as "error: ...", then the reason and what to do.
func (e *env) agentError(err error) error {
	var h string
	for _, x := range agentHints {
		if errors.Is(err, x.kind) {
			h = x.text
			break
		}
	}
	var extra string
	if r := reason.Of(err); r != "" {
		extra += "\nreason: " + string(r)
	}
	if h != "" {
		extra += "\nhint: " + h
	}
	var re *jsonrpc.Error
	if errors.As(err, &re) {
		var ee *cliutil.ExitError
		if ne := e.nodeError(err); errors.As(ne, &ee) {
			ee.Message += extra
			return &refusal{exit: ee, err: err}
		}
	}
	if extra == "" {
		return e.nodeError(err)
	}
	return &refusal{exit: &cliutil.ExitError{Code: 1, Message: "error: " + err.Error() + extra}, err: err}
}

package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"strings"
	"syscall"
	"time"

	"github.com/cointoolkit/coin/lib/cliutil"
	"github.com/cointoolkit/coin/lib/faucet/api"
	"github.com/cointoolkit/coin/lib/params"
	"github.com/cointoolkit/coin/lib/wallet"
	"github.com/urfave/cli/v2"
)

const appName = "coin-faucet"

// Exit statuses. A usage error exits cliutil.ExitUsage (2), as in every coin tool; a rate
// limit exits EX_TEMPFAIL of sysexits(3), "try again later", so that a script can tell the
// two apart.
const (
	exitFailure     = 1
	exitRateLimited = 75
)

const appDescription = `coin-faucet asks a coin-faucetd for testnet COIN:
   coin-faucet claim [ADDRESS]   claim for ADDRESS; without it, read from standard input an
                                 address or the JSON of 'coin-wallet new' (its "address",
                                 or, when that is for another network, the address of its
                                 "mnemonic" on the faucet's network, derived here)
   coin-faucet status            block height, mempool size and the faucet's balance

Output: JSON when standard output is not a terminal (or with --json), text on a terminal.
A claim prints the txid and the amount.

Examples:
   coin-wallet new | tee wallet.json | coin-faucet claim
   coin-wallet --network testnet new | tee wallet.json | coin-faucet claim
   coin-faucet --faucet https://faucet.example claim tcoin1...
   coin-faucet status

Exit status: 0 when the claim was paid, 75 (EX_TEMPFAIL) when the faucet refused it for a
rate limit (the address, the client or the faucet's hourly budget; the message says when to
retry), 2 for a usage error, 1 for any other failure.`

func newApp() *cli.App {
	return cliutil.Conventions(&cli.App{
		Name:                 appName,
		Usage:                "claim testnet COIN from a coin-faucetd",
		Description:          appDescription,
		EnableBashCompletion: true,
		HideHelpCommand:      true,
		OnUsageError: func(_ *cli.Context, err error, _ bool) error {
			return fmt.Errorf("%w (see '%s --help')", err, appName)
		},
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "faucet", Value: "http://127.0.0.1:8080", EnvVars: []string{"COIN_FAUCET_URL"}, Usage: "faucet base `URL`"},
			&cli.BoolFlag{Name: "json", EnvVars: []string{"COIN_JSON"}, Usage: "print JSON even on a terminal"},
			&cli.DurationFlag{Name: "timeout", Value: time.Minute, EnvVars: []string{"COIN_TIMEOUT"}, Usage: "give up after `DURATION`"},
		},
		Commands: []*cli.Command{
			{
				Name:      "claim",
				Usage:     "claim testnet COIN for an address",
				ArgsUsage: "[ADDRESS]",
				Description: `Claims the faucet amount for ADDRESS, or for the address read from standard input (an
address, or JSON with an "address" field such as the output of 'coin-wallet new').
Prints the txid, the amount and the address. Exits 75 when rate limited.

When standard input is the JSON of 'coin-wallet new' and its address is not of the
faucet's network (GET /api/status names it), for example because 'coin-wallet new' ran
without --network and made a mainnet address, claim derives the same mnemonic's address
on the faucet's network (account 0, index 0, as 'coin-wallet --network testnet derive'
does), claims for it and says so on standard error. The mnemonic never leaves the
process: it is neither sent to the faucet nor printed.`,
				Flags:  []cli.Flag{&cli.BoolFlag{Name: "json", Usage: "print JSON even on a terminal"}},
				Action: claim,
			},
			{
				Name:   "status",
				Usage:  "print the faucet's status",
				Flags:  []cli.Flag{&cli.BoolFlag{Name: "json", Usage: "print JSON even on a terminal"}},
				Action: status,
			},
			cliutil.DocCommand(),
		},
	})
}

type client struct {
	base    string
	hc      *http.Client
	json    bool
	out     io.Writer
	in      io.Reader
	timeout time.Duration
}

func newClient(c *cli.Context) (*client, error) {
	raw := strings.TrimRight(strings.TrimSpace(c.String("faucet")), "/")
	if !strings.Contains(raw, "://") {
		raw = "http://" + raw
	}
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("--faucet %q: want a URL such as http://127.0.0.1:8080", c.String("faucet"))
	}
	in := c.App.Reader
	if in == nil {
		in = os.Stdin
	}
	terminal := c.App.Writer == os.Stdout && cliutil.StdoutIsTerminal()
	return &client{base: raw, hc: &http.Client{Timeout: c.Duration("timeout")}, json: jsonFlag(c) || !terminal,
		out: c.App.Writer, in: in, timeout: c.Duration("timeout")}, nil
}

// do calls the faucet and decodes a 200 body into out; other statuses become errors, a
// 429 one with exit status exitRateLimited.
func (cl *client) do(ctx context.Context, method, path string, body any, out any) error {
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return err
		}
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, cl.base+path, rd)
	if err != nil {
		return err
	}
	req.Header.Set("Accept", "application/json")
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := cl.hc.Do(req)
	if err != nil {
		if errors.Is(err, syscall.ECONNREFUSED) {
			return fmt.Errorf("cannot connect to the faucet at %s: connection refused (is coin-faucetd running? see --faucet)", cl.base)
		}
		return fmt.Errorf("faucet at %s: %w", cl.base, err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if err != nil {
		return fmt.Errorf("faucet at %s: reading the answer: %w", cl.base, err)
	}
	if resp.StatusCode != http.StatusOK {
		var ae api.ErrorBody
		msg := strings.TrimSpace(string(data))
		code := resp.Status
		if json.Unmarshal(data, &ae) == nil && ae.Error.Code != "" {
			msg, code = ae.Error.Message, ae.Error.Code
		}
		if resp.StatusCode == http.StatusTooManyRequests {
			retry := resp.Header.Get("Retry-After")
			if retry != "" {
				msg += " (Retry-After: " + retry + " s)"
			}
			return &cliutil.ExitError{Code: exitRateLimited, Message: "error: rate limited: " + msg}
		}
		return &cliutil.ExitError{Code: exitFailure, Message: fmt.Sprintf("error: faucet answered %d %s: %s", resp.StatusCode, code, msg)}
	}
	if err := json.Unmarshal(data, out); err != nil {
		return fmt.Errorf("faucet at %s: the answer is not the expected JSON: %w", cl.base, err)
	}
	return nil
}

// errNoAddress is readAddress's error for empty standard input: claim's usage error.
var errNoAddress = errors.New("no address: give ADDRESS or pipe an address (or the JSON of 'coin-wallet new') to standard input")

// readAddress takes the address from standard input: a bare address, or JSON with an
// "address" field (such as 'coin-wallet new'). When the JSON also holds a "mnemonic" (read
// with cliutil.ParseMnemonic, the one mnemonic reader), it is returned too, so that claim
// can derive the mnemonic's address on the faucet's network; anything else is ignored.
func readAddress(r io.Reader) (address, mnemonic string, err error) {
	s, err := cliutil.ReadAll(r)
	if err != nil {
		return "", "", fmt.Errorf("read standard input: %w", err)
	}
	if s == "" {
		return "", "", errNoAddress
	}
	if strings.HasPrefix(s, "{") {
		var v struct {
			Address  string           `json:"address"`
			Mnemonic *json.RawMessage `json:"mnemonic"`
		}
		// json's errors may quote the input, which may hold a mnemonic: never pass them on.
		if json.Unmarshal([]byte(s), &v) != nil || strings.TrimSpace(v.Address) == "" {
			return "", "", errors.New("standard input is JSON without an \"address\" string")
		}
		if v.Mnemonic != nil {
			if mnemonic, _, err = cliutil.ParseMnemonic(s); err != nil {
				return "", "", err
			}
		}
		return strings.TrimSpace(v.Address), mnemonic, nil
	}
	if f := strings.Fields(s); len(f) == 1 {
		return f[0], "", nil
	}
	return "", "", errors.New("standard input holds more than one word: want one address")
}

// faucetNetwork asks the faucet's /api/status for its network (nil when it does not say).
func (cl *client) faucetNetwork(ctx context.Context) *params.Network {
	var st struct {
		Network string `json:"network"`
	}
	if cl.do(ctx, http.MethodGet, "/api/status", nil, &st) != nil {
		return nil
	}
	n, err := params.ByName(st.Network)
	if err != nil {
		return nil
	}
	return n
}

// forFaucet is the address to claim for when standard input held the JSON of 'coin-wallet
// new': the piped address when it belongs to the faucet's network, else the same
// mnemonic's address (account 0, index 0) on that network, derived here (the mnemonic is
// never sent): 'coin-wallet new' without --network makes a mainnet address, and a faucet
// pays testnet or regtest ones. It says so on w.
func (cl *client) forFaucet(ctx context.Context, w io.Writer, addr, mnemonic string) (string, error) {
	net := cl.faucetNetwork(ctx)
	if net == nil {
		return addr, nil // an older faucet: it judges the address itself
	}
	if _, err := wallet.DecodeAddress(addr, net); err == nil {
		return addr, nil
	}
	derived, err := wallet.AddressFromMnemonic(mnemonic, net, 0)
	if err != nil {
		return "", fmt.Errorf("the piped address is not a %s address and the piped mnemonic gives none: %w", net.Name, err)
	}
	fmt.Fprintf(w, "note: %s is not a %s address (made without --network %s?); claiming for %s, the piped mnemonic's address on %s\n",
		addr, net.Name, net.Name, derived, net.Name)
	return derived, nil
}

func claim(c *cli.Context) error {
	if c.Args().Len() > 1 {
		return cliutil.UsageError(c, "claim takes at most one ADDRESS")
	}
	cl, err := newClient(c)
	if err != nil {
		return err
	}
	addr := c.Args().First()
	if addr == "" {
		var mnemonic string
		if addr, mnemonic, err = readAddress(cl.in); errors.Is(err, errNoAddress) {
			return cliutil.BadUsage(c, err)
		} else if err != nil {
			return err
		}
		if mnemonic != "" {
			errOut := c.App.ErrWriter
			if errOut == nil {
				errOut = os.Stderr
			}
			if addr, err = cl.forFaucet(c.Context, errOut, addr, mnemonic); err != nil {
				return err
			}
		}
	}
	var res api.ClaimResult
	if err := cl.do(c.Context, http.MethodPost, "/api/faucet", api.ClaimRequest{Address: addr}, &res); err != nil {
		return err
	}
	if cl.json {
		return cliutil.PrintJSON(cl.out, map[string]string{"txid": res.TxID, "amount": res.Amount, "address": addr})
	}
	_, err = fmt.Fprintf(cl.out, "sent %s COIN to %s\ntxid %s\n", res.Amount, addr, res.TxID)
	return err
}

func status(c *cli.Context) error {
	if c.Args().Present() {
		return fmt.Errorf("unexpected argument %q", c.Args().First())
	}
	cl, err := newClient(c)
	if err != nil {
		return err
	}
	// A map rather than api.StatusResult, so that fields of a newer faucet print too.
	var res map[string]any
	if err := cl.do(c.Context, http.MethodGet, "/api/status", nil, &res); err != nil {
		return err
	}
	if cl.json {
		return cliutil.PrintJSON(cl.out, res)
	}
	order := []string{"network", "block_height", "mempool_size", "faucet_balance", "faucet_immature_balance",
		"faucet_address", "claim_amount", "cooldown_seconds", "claims_paid"}
	seen := map[string]bool{}
	for _, k := range order {
		if v, ok := res[k]; ok {
			fmt.Fprintf(cl.out, "%-24s %v\n", k+":", jsonText(v))
			seen[k] = true
		}
	}
	for k, v := range res {
		if !seen[k] {
			fmt.Fprintf(cl.out, "%-24s %v\n", k+":", jsonText(v))
		}
	}
	return nil
}

// jsonFlag reports whether --json was given before or after the command name.
func jsonFlag(c *cli.Context) bool {
	for _, x := range c.Lineage() {
		if x.Bool("json") {
			return true
		}
	}
	return false
}

func jsonText(v any) string {
	if f, ok := v.(float64); ok && f == float64(int64(f)) {
		return fmt.Sprintf("%d", int64(f))
	}
	return fmt.Sprint(v)
}

package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/cointoolkit/coin/lib/cliutil"
	"github.com/cointoolkit/coin/lib/rpcapi"
)

// methodCommand is the subcommand of one RPC method. Flag parsing is off, as in
// bitcoin-cli: everything after the method name is an argument, so values that start with
// "-" reach the conversion (and its error message) instead of the flag parser.
func methodCommand(m rpcapi.Method) *cli.Command {
	return &cli.Command{
		Name:               m.Name,
		Category:           m.Category,
		Usage:              m.Summary,
		ArgsUsage:          argsUsage(m),
		UsageText:          manUsage(m.Name, argsUsage(m)),
		CustomHelpTemplate: commandHelpTemplate,
		Description:        methodDescription(m),
		SkipFlagParsing:    true,
		HideHelp:           true,
		HideHelpCommand:    true,
		Action: func(c *cli.Context) error {
			args, err := cliutil.TakeGlobalFlags(c, c.Args().Slice())
			if err != nil {
				return err
			}
			args, help := splitHelp(args)
			if help {
				return cli.ShowCommandHelp(c, m.Name)
			}
			o, err := globalOptions(c)
			if err != nil {
				return err
			}
			if args, err = o.withStdin(c, args); err != nil {
				return err
			}
			ps, err := convertArgs(m, args)
			if err != nil {
				var ce countError
				if errors.As(err, &ce) {
					return &cliutil.ExitError{Code: cliutil.ExitUsage, Message: "error: " + err.Error()}
				}
				return err
			}
			res, err := o.call(c.Context, m.Name, ps)
			if err != nil {
				return err
			}
			if m.Name == "help" && len(ps) == 0 {
				res = regroupHelp(res)
			}
			return printResult(c.App.Writer, res, o.table || o.terminal)
		},
	}
}

// callCommand is "call METHOD [PARAMS...]", for methods coin-cli does not list.
func callCommand() *cli.Command {
	return &cli.Command{
		Name:               "call",
		Category:           "util",
		Usage:              "Call any method by name, with JSON parameters (for methods not listed here).",
		ArgsUsage:          "<method> [params...]",
		UsageText:          manUsage("call", "<method> [params...]"),
		CustomHelpTemplate: commandHelpTemplate,
		Description: strings.TrimSpace(`
Calls METHOD with the parameters given, in order. Each parameter is sent as JSON when it
is valid JSON (a number, true, false, null, a "quoted string", an array or an object) and
as a JSON string otherwise. A hex string made only of digits is valid JSON (a number):
quote it ('"0123"') or use the method's own subcommand, which converts by type.
The output and exit status follow the same rules as the other subcommands.

Examples:

    coin-cli call getblockhash 0
    coin-cli call listagents 0 10
    coin-cli call getagentprofile "$address"
    coin-cli call getutxosbyaddress "$address" true`),
		SkipFlagParsing: true,
		HideHelp:        true,
		HideHelpCommand: true,
		Action: func(c *cli.Context) error {
			args, err := cliutil.TakeGlobalFlags(c, c.Args().Slice())
			if err != nil {
				return err
			}
			args, help := splitHelp(args)
			if help {
				return cli.ShowCommandHelp(c, "call")
			}
			o, err := globalOptions(c)
			if err != nil {
				return err
			}
			if len(args) == 0 {
				return &cliutil.ExitError{Code: cliutil.ExitUsage,
					Message: "error: call: no method given\nusage: " + usageLine("call", "<method> [params...]") + "\n(see 'coin-cli call --help')"}
			}
			method, rest := args[0], args[1:]
			if rest, err = o.withStdin(c, rest); err != nil {
				return err
			}
			ps := make([]json.RawMessage, len(rest))
			for i, a := range rest {
				ps[i] = genericArg(a)
			}
			res, err := o.call(c.Context, method, ps)
			if err != nil {
				return err
			}
			return printResult(c.App.Writer, res, o.table || o.terminal)
		},
	}
}

// withStdin appends the line read from standard input when --stdin is given.
func (o *options) withStdin(c *cli.Context, args []string) ([]string, error) {
	if !o.stdin {
		return args, nil
	}
	line, err := cliutil.ReadLine(c.App.Reader)
	if err != nil {
		return nil, fmt.Errorf("--stdin: %w", err)
	}
	return append(args, line), nil
}

// splitHelp finds a help request among a method's arguments: "-h", "-help" or "--help"
// anywhere, unless the arguments start with "--", which is dropped and makes the rest
// literal.
func splitHelp(args []string) ([]string, bool) {
	if len(args) > 0 && args[0] == "--" {
		return args[1:], false
	}
	for _, a := range args {
		if a == "-h" || a == "-help" || a == "--help" {
			return nil, true
		}
	}
	return args, false
}

// commandHelpTemplate is urfave/cli's command help with the usage line written from
// ArgsUsage, since UsageText is escaped for the man page.
var commandHelpTemplate = strings.Replace(cli.CommandHelpTemplate, `{{template "usageTemplate" .}}`,
	appName+` [global options] {{.Name}}{{if .ArgsUsage}} {{.ArgsUsage}}{{end}}`, 1)

// manUsage is the usage line as the man page generator needs it: its markdown would take
// "<height>" for an HTML tag and drop it.
func manUsage(name, args string) string {
	return strings.NewReplacer("<", `\<`, ">", `\>`).Replace(usageLine(name, args))
}

// usageLine is "coin-cli [global options] NAME ARGS".
func usageLine(name, args string) string {
	s := appName + " [global options] " + name
	if args != "" {
		s += " " + args
	}
	return s
}

// argsUsage is "<required> [optional]" from the parameters.
func argsUsage(m rpcapi.Method) string {
	parts := make([]string, len(m.Params))
	for i, p := range m.Params {
		if p.Optional {
			parts[i] = "[" + p.Name + "]"
		} else {
			parts[i] = "<" + p.Name + ">"
		}
	}
	return strings.Join(parts, " ")
}

// typeDoc explains how each parameter type is given on the command line.
var typeDoc = map[string]string{
	rpcapi.TypeUint:    "non-negative integer",
	rpcapi.TypeBool:    "boolean: true, false, 1 or 0",
	rpcapi.TypeHash:    "hash, 64 hex characters",
	rpcapi.TypeHex:     "hex string",
	rpcapi.TypeAddress: "address",
	rpcapi.TypeString:  "string",
}

// methodDescription is a method's --help text: arguments, result, example.
func methodDescription(m rpcapi.Method) string {
	var b strings.Builder
	if m.Regtest {
		b.WriteString("Only regtest nodes serve this method.\n\n")
	}
	b.WriteString("Arguments:")
	if len(m.Params) == 0 {
		b.WriteString(" none")
	}
	for i, p := range m.Params {
		td := typeDoc[p.Type]
		if td == "" {
			td = p.Type
		}
		req := "required"
		if p.Optional {
			req = "optional"
		}
		fmt.Fprintf(&b, "\n  %d. %s (%s; %s): %s", i+1, p.Name, td, req, p.Help)
	}
	fmt.Fprintf(&b, "\n\nResult: %s", m.Result)
	b.WriteString("\n\nExample:\n\n    ")
	b.WriteString(methodExample(m))
	return b.String()
}

// examples are hand-written example lines; other methods get one made from their types.
var examples = map[string]string{
	"getblockhash":       "coin-cli getblockhash 0",
	"getblock":           "coin-cli getblock $(coin-cli getblockhash 0)",
	"getblockheader":     "coin-cli getblockheader $(coin-cli getblockhash 0)",
	"gettransaction":     `coin-cli gettransaction "$txid"`,
	"getrawtransaction":  `coin-cli getrawtransaction "$txid"`,
	"sendrawtransaction": "coin-cli --stdin sendrawtransaction < tx.hex",
	"getblocktemplate":   `coin-cli --network regtest getblocktemplate "$address"`,
	"submitblock":        "coin-cli --stdin submitblock < block.hex",
	"generatetoaddress":  `coin-cli --network regtest generatetoaddress 101 "$address"`,
	"getutxosbyaddress":  `coin-cli --table getutxosbyaddress "$address" true`,
	"getaddressbalance":  `coin-cli getaddressbalance "$address" true`,
	"help":               "coin-cli help getblock",
}

func methodExample(m rpcapi.Method) string {
	if ex, ok := examples[m.Name]; ok {
		return ex
	}
	s := appName + " " + m.Name
	for _, p := range m.Params {
		switch p.Type {
		case rpcapi.TypeUint:
			s += " 1"
		case rpcapi.TypeBool:
			s += " true"
		default:
			s += ` "$` + p.Name + `"`
		}
	}
	return s
}

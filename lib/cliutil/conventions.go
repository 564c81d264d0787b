package cliutil

import (
	"errors"
	"fmt"
	"os"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/urfave/cli/v2"

	"github.com/cointoolkit/coin/lib/confile"
	"github.com/cointoolkit/coin/lib/params"
)

// ExitUsage is the exit status of a usage error: an unknown option or command, a missing
// required option, an option without its value.
const ExitUsage = 2

// GlobalCategory is the category under which a command's help lists the global options it
// accepts after its name as well (see Conventions).
const GlobalCategory = "GLOBAL OPTIONS (before or after the command)"

// Conventions gives app the command-line habits every coin executable shares, and returns it:
//
//   - Every global option (app.Flags, but --help) is accepted before or after the command
//     name, at every level of subcommands: each command gets a copy of it (listed in its help
//     under GlobalCategory, without the environment variable, which the global option reads).
//     Before a command runs, the values are reconciled along its lineage: the option given
//     nearest to the command wins (after the command beats before it, which beats the
//     environment, which beats the default), and every context that defines the option holds
//     that value, so c.String, c.Bool, c.IsSet ... give the same answer whichever context the
//     code asks. An option after the arguments, which urfave/cli cannot parse there, is moved
//     before them by Run (HoistOptions), so apps are run through Run.
//
//   - Usage errors (unknown option or command, an option's bad value, a missing required
//     option, no command) print one line on standard error, "error: ... (see 'APP CMD
//     --help')", and exit ExitUsage: never the help text, which goes to standard output only
//     when asked for (--help, -h, "help [COMMAND...]").
//
//   - The configuration file (lib/confile: --conf FILE, COIN_CONF, or ~/.coin/coin.conf when
//     it exists) sets every global option that the command line and the environment leave
//     unset: --conf is added to the app's options, and the file is read before anything runs.
//     A malformed line or a value its option does not parse is a usage error naming the file
//     and line; a key no coin executable takes is a warning on standard error.
//
// Commands whose flag parsing is off (SkipFlagParsing: coin-cli's methods) get no copies: they
// take the global options out of their arguments with TakeGlobalFlags. Call Conventions once,
// in the app's constructor, after its commands are in place.
func Conventions(app *cli.App) *cli.App {
	if app.Version == "" {
		app.Version = Version
	}
	app.HideVersion = false
	if globalFlag(app, confile.FlagName) == nil {
		app.Flags = append(app.Flags, confile.Flag())
	}
	var globals []cli.Flag
	for _, f := range app.Flags {
		if !isHelpFlag(f) {
			globals = append(globals, f)
		}
	}
	app.OnUsageError = usageError
	app.Before = configFile(app.Flags, before(app.Before, takeRequired(app.Flags), app.Action != nil))
	if app.Action == nil {
		app.Action = needCommand
	} else {
		app.Action = helpWord(app.Action)
	}
	for _, cmd := range app.Commands {
		commandConventions(cmd, globals)
	}
	return app
}

func commandConventions(cmd *cli.Command, globals []cli.Flag) {
	cmd.OnUsageError = usageError
	if !cmd.SkipFlagParsing {
		taken := map[string]bool{}
		for _, f := range cmd.Flags {
			for _, n := range f.Names() {
				taken[n] = true
			}
		}
		for _, g := range globals {
			if taken[g.Names()[0]] {
				continue // the command's own option of that name (reconciled all the same)
			}
			if c := globalCopy(g, taken); c != nil {
				cmd.Flags = append(cmd.Flags, c)
				for _, n := range c.Names() {
					taken[n] = true
				}
			}
		}
		cmd.Before = before(cmd.Before, takeRequired(cmd.Flags), cmd.Action != nil)
	}
	if cmd.Action == nil && len(cmd.Subcommands) > 0 {
		cmd.Action = needCommand
	}
	for _, sub := range cmd.Subcommands {
		commandConventions(sub, globals)
	}
}

func isHelpFlag(f cli.Flag) bool {
	for _, n := range f.Names() {
		if n == "help" {
			return true
		}
	}
	return false
}

// globalCopy is a command's copy of a global option: same names (but aliases the command
// already uses), value type, default and usage; no environment variable, file, destination,
// action or requirement, which stay with the global option.
func globalCopy(g cli.Flag, taken map[string]bool) cli.Flag {
	v := reflect.ValueOf(g)
	if v.Kind() != reflect.Pointer || v.Elem().Kind() != reflect.Struct {
		return nil
	}
	c := reflect.New(v.Elem().Type())
	c.Elem().Set(v.Elem())
	e := c.Elem()
	setField := func(name string, val any) {
		if f := e.FieldByName(name); f.IsValid() && f.CanSet() {
			if val == nil {
				f.Set(reflect.Zero(f.Type()))
			} else {
				f.Set(reflect.ValueOf(val))
			}
		}
	}
	if ef, ok := g.(interface{ GetEnvVars() []string }); ok && len(ef.GetEnvVars()) > 0 {
		if u := e.FieldByName("Usage"); u.IsValid() && u.Kind() == reflect.String {
			u.SetString(u.String() + " [$" + strings.Join(ef.GetEnvVars(), ", $") + "]")
		}
	}
	for _, name := range []string{"EnvVars", "FilePath", "Destination", "Action", "Required", "HasBeenSet"} {
		setField(name, nil)
	}
	setField("Category", GlobalCategory)
	if a := e.FieldByName("Aliases"); a.IsValid() && a.Kind() == reflect.Slice {
		var keep []string
		for _, n := range a.Interface().([]string) {
			if !taken[n] {
				keep = append(keep, n)
			}
		}
		a.Set(reflect.ValueOf(keep))
	}
	f, _ := c.Interface().(cli.Flag)
	return f
}

// takeRequired turns the required options of flags into optional ones and returns their
// names: urfave/cli answers a missing one with the whole help on standard output, before
// re-checks them and answers with a usage error.
func takeRequired(flags []cli.Flag) []string {
	var names []string
	for _, f := range flags {
		v := reflect.ValueOf(f)
		if v.Kind() != reflect.Pointer || v.Elem().Kind() != reflect.Struct {
			continue
		}
		if r := v.Elem().FieldByName("Required"); r.IsValid() && r.Kind() == reflect.Bool && r.Bool() {
			r.SetBool(false)
			names = append(names, f.Names()[0])
			if u := v.Elem().FieldByName("Usage"); u.IsValid() && u.Kind() == reflect.String && !strings.Contains(u.String(), "required") {
				u.SetString(u.String() + " (required)") // urfave/cli v2's help does not say it
			}
		}
	}
	return names
}

// before reconciles the options along the lineage, then checks the arguments of a command
// that runs its own action (options after them, --help among them) and the required options,
// then runs next.
func before(next cli.BeforeFunc, required []string, hasAction bool) cli.BeforeFunc {
	return func(c *cli.Context) error {
		if err := reconcile(c); err != nil {
			return usageErr(c, err.Error())
		}
		if hasAction && (!c.Args().Present() || c.Command.Command(c.Args().First()) == nil) {
			for _, a := range c.Args().Slice() {
				if a == "--" {
					break // every word after it is an argument
				}
				if a == "--help" || a == "-h" || a == "-help" {
					return showHelp(c, nil)
				}
			}
		}
		var missing []string
		for _, name := range required {
			if !c.IsSet(name) {
				missing = append(missing, name)
			}
		}
		switch len(missing) {
		case 0:
		case 1:
			return usageErr(c, fmt.Sprintf("option --%s is required", missing[0]))
		default:
			return usageErr(c, "options --"+strings.Join(missing, ", --")+" are required")
		}
		if next != nil {
			return next(c)
		}
		return nil
	}
}

// optionName is the name of the option a looks like (--name, --name=value, -name), if it
// looks like one.
func optionName(a string) (string, bool) {
	if len(a) < 2 || a[0] != '-' || a == "--" {
		return "", false
	}
	name := strings.TrimPrefix(strings.TrimPrefix(a, "-"), "-")
	name, _, _ = strings.Cut(name, "=")
	if name == "" || (name[0] >= '0' && name[0] <= '9') || name[0] == '.' {
		return "", false // a negative number
	}
	return name, true
}

// reconcile gives every context of c's lineage that defines an option (of the same type) the
// value of the nearest context where it was set: on the command line there, or, for the
// global options, in their environment variables.
func reconcile(c *cli.Context) error {
	type def struct {
		ctx  *cli.Context
		flag cli.Flag
		set  bool
	}
	byName := map[string][]def{} // nearest first
	var names []string
	for _, x := range c.Lineage() {
		if x.Command == nil {
			continue
		}
		local := map[string]bool{}
		for _, n := range x.LocalFlagNames() {
			local[n] = true
		}
		for _, f := range x.Command.Flags {
			name := f.Names()[0]
			if name == "help" {
				continue
			}
			if _, seen := byName[name]; !seen {
				names = append(names, name)
			}
			byName[name] = append(byName[name], def{x, f, local[name]})
		}
	}
	for _, name := range names {
		defs := byName[name]
		if len(defs) < 2 {
			continue
		}
		var win *def
		for i := range defs {
			if defs[i].set {
				win = &defs[i]
				break
			}
		}
		if win == nil {
			continue
		}
		typ := reflect.TypeOf(win.flag)
		if _, ok := win.flag.(*cli.StringSliceFlag); ok {
			vals := win.ctx.StringSlice(name)
			for _, d := range defs {
				if d.ctx == win.ctx || d.set || reflect.TypeOf(d.flag) != typ {
					continue
				}
				for _, v := range vals {
					if err := d.ctx.Set(name, v); err != nil {
						return err
					}
				}
			}
			continue
		}
		if !scalarFlag(win.flag) {
			continue
		}
		val := fmt.Sprint(win.ctx.Value(name))
		for _, d := range defs {
			if d.ctx == win.ctx || reflect.TypeOf(d.flag) != typ || fmt.Sprint(d.ctx.Value(name)) == val {
				continue
			}
			if err := d.ctx.Set(name, val); err != nil {
				return fmt.Errorf("--%s: %w", name, err)
			}
		}
	}
	return nil
}

// scalarFlag reports whether f's value prints (fmt.Sprint) as text its Set parses back.
func scalarFlag(f cli.Flag) bool {
	switch f.(type) {
	case *cli.StringFlag, *cli.BoolFlag, *cli.IntFlag, *cli.Int64Flag, *cli.UintFlag, *cli.Uint64Flag,
		*cli.Float64Flag, *cli.DurationFlag, *cli.PathFlag:
		return true
	}
	return false
}

// invalidValue matches urfave/cli's (the flag package's) error for a value that does not parse.
var invalidValue = regexp.MustCompile(`^invalid value "(.*)" for flag -([^:]+): (.*)$`)

// lookupFlag finds the flag named name among the flags of c's command and the app's.
func lookupFlag(c *cli.Context, name string) cli.Flag {
	var sets [][]cli.Flag
	if c.Command != nil {
		sets = append(sets, c.Command.Flags)
	}
	sets = append(sets, c.App.Flags)
	for _, fs := range sets {
		for _, f := range fs {
			if slices.Contains(f.Names(), name) {
				return f
			}
		}
	}
	return nil
}

// usageError is every command's OnUsageError: urfave/cli's flag parsing errors as usage
// errors.
func usageError(c *cli.Context, err error, _ bool) error {
	msg := err.Error()
	if m := invalidValue.FindStringSubmatch(msg); m != nil {
		// urfave/cli says "invalid value "5" for flag -cooldown: parse error": say the option
		// as it is typed and, for a duration, what one looks like.
		msg = fmt.Sprintf("invalid value %q for option %s", m[1], dashes(m[2]))
		if _, ok := lookupFlag(c, m[2]).(*cli.DurationFlag); ok {
			msg += ": want a duration such as 30s, 5m, 1h or 24h"
		} else {
			msg += ": " + m[3]
		}
	} else if name, ok := strings.CutPrefix(msg, "flag provided but not defined: -"); ok {
		msg = "unknown option " + dashes(name)
	}
	return usageErr(c, msg)
}

func dashes(name string) string {
	if len(name) == 1 {
		return "-" + name
	}
	return "--" + name
}

// UsageError is the usage error of the command of c: "error: MSG (see 'APP CMD --help')" on
// standard error and exit status ExitUsage.
func UsageError(c *cli.Context, format string, args ...any) error {
	return usageErr(c, fmt.Sprintf(format, args...))
}

// BadUsage is err as the usage error of the command of c (UsageError), keeping its kind:
// errors.Is and errors.As see err through it.
func BadUsage(c *cli.Context, err error) error {
	e := usageErr(c, err.Error()).(*ExitError)
	e.Err = err
	return e
}

func usageErr(c *cli.Context, msg string) error {
	return &ExitError{Code: ExitUsage, Message: fmt.Sprintf("error: %s (see '%s --help')", msg, helpName(c))}
}

// helpName is "APP CMD SUB" of c's command.
func helpName(c *cli.Context) string {
	return strings.Join(append([]string{c.App.Name}, commandPath(c)...), " ")
}

// commandPath is the names of the commands from the app down to c's command.
func commandPath(c *cli.Context) []string {
	var parts []string
	lineage := c.Lineage()
	for i, x := range lineage {
		if x.Command != nil && i+1 < len(lineage) && lineage[i+1].Command != nil { // not the root
			parts = append([]string{x.Command.Name}, parts...)
		}
	}
	return parts
}

// needCommand is the action of the app and of the commands that only hold subcommands: no
// command or an unknown one is a usage error, "help [COMMAND...]" shows the help.
func needCommand(c *cli.Context) error {
	if !c.Args().Present() {
		return usageErr(c, "no command given: want "+commandList(c))
	}
	name := c.Args().First()
	if name == "help" {
		return showHelp(c, c.Args().Tail())
	}
	return usageErr(c, fmt.Sprintf("unknown command %q: want %s", name, commandList(c)))
}

func commandList(c *cli.Context) string {
	var names []string
	for _, cmd := range c.Command.Subcommands {
		if !cmd.Hidden && cmd.Name != "help" {
			names = append(names, cmd.Name)
		}
	}
	if len(names) > 1 {
		return "one of " + strings.Join(names, ", ")
	}
	return strings.Join(names, "")
}

// helpWord lets "APP help [COMMAND...]" show the help of an app with its own action.
func helpWord(next cli.ActionFunc) cli.ActionFunc {
	return func(c *cli.Context) error {
		if c.Args().First() == "help" && c.App.Command("help") == nil {
			return showHelp(c, c.Args().Tail())
		}
		return next(c)
	}
}

// showHelp prints the help of c's command, or of its subcommand path, on standard output, as
// "APP CMD... PATH... --help" does.
func showHelp(c *cli.Context, path []string) error {
	args := append(append(append([]string{c.App.Name}, commandPath(c)...), path...), "--help")
	return c.App.RunContext(c.Context, args)
}

// TakeGlobalFlags takes the global options (app.Flags) out of args, the arguments of a command
// that parses no flags itself (SkipFlagParsing), and sets them as if they had been given before
// the command: --name VALUE, --name=VALUE, -name VALUE, and --name alone for a boolean. Anything
// else stays an argument, and so does everything after "--" (which is kept). A value that does
// not parse, or a missing one, is a usage error.
func TakeGlobalFlags(c *cli.Context, args []string) ([]string, error) {
	var rest []string
	for i := 0; i < len(args); i++ {
		a := args[i]
		if a == "--" {
			return append(rest, args[i:]...), nil
		}
		name, ok := optionName(a)
		f := globalFlag(c.App, name)
		if !ok || f == nil {
			rest = append(rest, a)
			continue
		}
		_, val, hasVal := strings.Cut(a, "=")
		if !hasVal {
			if IsBoolFlag(f) {
				val = "true"
			} else if i+1 < len(args) {
				i++
				val = args[i]
			} else {
				return nil, usageErr(c, fmt.Sprintf("option %s needs a value", a))
			}
		}
		if err := c.Set(f.Names()[0], val); err != nil {
			return nil, usageErr(c, fmt.Sprintf("invalid value %q for option %s: %v", val, dashes(f.Names()[0]), err))
		}
	}
	return rest, nil
}

// globalFlag is the app's global option named name (help excluded).
func globalFlag(app *cli.App, name string) cli.Flag {
	for _, f := range app.Flags {
		if isHelpFlag(f) {
			continue
		}
		for _, n := range f.Names() {
			if n == name {
				return f
			}
		}
	}
	return nil
}

// IsBoolFlag reports whether f stands alone on the command line (--name, no value): a
// BoolFlag, or a GenericFlag whose value says so as Go's flag package asks (IsBoolFlag).
func IsBoolFlag(f cli.Flag) bool {
	switch f := f.(type) {
	case *cli.BoolFlag:
		return true
	case *cli.GenericFlag:
		b, ok := f.Value.(interface{ IsBoolFlag() bool })
		return ok && b.IsBoolFlag()
	}
	return false
}

// readDefaultConf is whether an app without --conf reads ~/.coin/coin.conf. Not in tests
// that run apps in their own process (testing.Testing): the README's quick start writes that
// file, and a developer's own settings must not change what the tests see. The executables
// always read it; tests of the default file set this.
var readDefaultConf = !testing.Testing()

// configFile reads the configuration file and sets the app's global options flags from it
// (confile.Apply), then runs next. A --conf or --network given after the command is read from
// its arguments here, since the file is read before the command parses them.
func configFile(flags []cli.Flag, next cli.BeforeFunc) cli.BeforeFunc {
	return func(c *cli.Context) error {
		path := c.String(confile.FlagName)
		if path == "" && !readDefaultConf {
			path = os.DevNull // an empty configuration
		}
		var o confile.Options
		if cmd := c.App.Command(c.Args().First()); cmd != nil {
			if v, ok := peekGlobal(c, c.Args().Tail(), confile.FlagName); ok {
				path = v
			}
			o.Network, _ = peekGlobal(c, c.Args().Tail(), "network")
		}
		f, err := confile.Load(path)
		if err != nil {
			return &ExitError{Code: ExitUsage, Message: fmt.Sprintf("error: --conf: %v (see '%s --help')", err, c.App.Name)}
		}
		if f != nil {
			o.Warn = c.App.ErrWriter
			if o.Warn == nil {
				o.Warn = os.Stderr
			}
			if err := confile.Apply(c, flags, f, o); err != nil {
				var le *confile.LineError
				if errors.As(err, &le) {
					return &ExitError{Code: ExitUsage, Message: "error: " + le.Error()}
				}
				return err
			}
		}
		if globalFlag(c.App, "network") != nil {
			net := o.Network
			if net == "" {
				net = c.String("network")
			}
			if _, err := params.ByName(net); net != "" && err != nil {
				return BadUsage(c, fmt.Errorf("--network: %w", err)) // from the command line, environment or file
			}
		}
		return next(c)
	}
}

// peekGlobal is the value of the global option name among args (as TakeGlobalFlags reads
// them), without setting it.
func peekGlobal(c *cli.Context, args []string, name string) (string, bool) {
	f := globalFlag(c.App, name)
	if f == nil {
		return "", false
	}
	val, found := "", false
	for i := 0; i < len(args); i++ {
		a := args[i]
		if a == "--" {
			break
		}
		n, ok := optionName(a)
		if !ok || !slices.Contains(f.Names(), n) {
			continue
		}
		_, v, hasVal := strings.Cut(a, "=")
		if !hasVal {
			if i+1 >= len(args) {
				break
			}
			i++
			v = args[i]
		}
		val, found = v, true
	}
	return val, found
}

// Version is the toolkit's version, which every tool prints with --version.
const Version = "0.1.0"

func init() {
	// --version alone (urfave's default also takes -v, which reads as "verbose" to many).
	cli.VersionFlag = &cli.BoolFlag{Name: "version", Usage: "print the version and exit"}
	cli.VersionPrinter = func(c *cli.Context) { fmt.Fprintf(c.App.Writer, "%s %s\n", c.App.Name, c.App.Version) }
}

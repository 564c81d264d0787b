package cliutil

import (
	"strings"

	"github.com/urfave/cli/v2"
)

// Run runs app with args (os.Args) as every executable's main does: Exit(Run(newApp(),
// os.Args)). It first joins an option that stands alone or takes a value (--log-file, whose
// value says IsBoolFlag, as Go's flag package asks) to the word after it when that word is
// its value: --log-file PATH is --log-file=PATH, as the help shows it, while a bare
// --log-file (before another option, a command, or at the end) keeps its meaning. urfave/cli
// would otherwise take the bare option and then refuse PATH as an unexpected argument.
//
// Options after a command's arguments are moved before them first (HoistOptions), so that
// "coin-wallet send ADDR 5 --network regtest" works as git's and Go's own tools take it.
func Run(app *cli.App, args []string) error {
	return app.Run(JoinOptionalValues(app, HoistOptions(app, args)))
}

// HoistOptions is args (the program name first) with the options that follow the first
// argument of the command they belong to moved, with their values, in front of that
// argument: urfave/cli stops parsing options at the first argument. Only options the command
// defines move (its own and the global ones it accepts); an unknown option stays among the
// arguments, where the command refuses it. Every word after "--" is an argument. A command
// that parses no flags (coin-cli's methods) keeps its words as they are.
func HoistOptions(app *cli.App, args []string) []string {
	if len(args) < 2 {
		return args
	}
	flags, cmds := app.Flags, app.Commands
	for i := 1; i < len(args); i++ {
		a := args[i]
		if a == "--" {
			return args
		}
		name, isOpt := optionName(a)
		if isOpt {
			if f := findFlag(flags, name); f != nil && takesNextWord(f, a, args, i, cmds) {
				i++
			}
			continue
		}
		if cmd := findCommand(cmds, a); cmd != nil {
			if cmd.SkipFlagParsing {
				return args
			}
			flags, cmds = cmd.Flags, cmd.Subcommands
			continue
		}
		// a is the command's first argument: move its options in front of it. A "--" among
		// the arguments moves too, to just before them, where urfave/cli takes it as the end
		// of the options and passes no "--" to the command.
		var opts, rest []string
		for j := i; j < len(args); j++ {
			w := args[j]
			if w == "--" {
				opts = append(opts, w)
				rest = append(rest, args[j+1:]...)
				break
			}
			name, isOpt := optionName(w)
			f := findFlag(flags, name)
			if !isOpt || f == nil {
				rest = append(rest, w)
				continue
			}
			opts = append(opts, w)
			if takesNextWord(f, w, args, j, nil) {
				j++
				opts = append(opts, args[j])
			}
		}
		out := append(append([]string{}, args[:i]...), opts...)
		return append(out, rest...)
	}
	return args
}

// takesNextWord reports whether option word a (args[i], of flag f) takes args[i+1] as its
// value: a valued option written without "=", or an optional-value one followed by a word
// that is neither an option nor a command of cmds (as JoinOptionalValues reads it).
func takesNextWord(f cli.Flag, a string, args []string, i int, cmds []*cli.Command) bool {
	if strings.Contains(a, "=") || i+1 >= len(args) {
		return false
	}
	if optionalValue(f) {
		next := args[i+1]
		return !strings.HasPrefix(next, "-") && findCommand(cmds, next) == nil
	}
	return !IsBoolFlag(f)
}

// JoinOptionalValues is args (the program name first) with each optional-value option
// joined to its value (see Run). A word is the option's value unless it starts with "-" or
// names a command at that level. Words after "--", and the arguments of a command that
// parses no flags, are left alone.
func JoinOptionalValues(app *cli.App, args []string) []string {
	if len(args) < 2 {
		return args
	}
	out := append([]string{}, args[0])
	flags, cmds := app.Flags, app.Commands
	for i := 1; i < len(args); i++ {
		a := args[i]
		if a == "--" {
			return append(out, args[i:]...)
		}
		name, isOpt := optionName(a)
		if !isOpt {
			out = append(out, a)
			cmd := findCommand(cmds, a)
			if cmd == nil || cmd.SkipFlagParsing {
				return append(out, args[i+1:]...) // an argument: urfave/cli parses no more options
			}
			flags, cmds = cmd.Flags, cmd.Subcommands
			continue
		}
		f := findFlag(flags, name)
		out = append(out, a)
		if f == nil || strings.Contains(a, "=") || i+1 >= len(args) {
			continue
		}
		next := args[i+1]
		switch {
		case optionalValue(f):
			if !strings.HasPrefix(next, "-") && findCommand(cmds, next) == nil {
				out[len(out)-1] = a + "=" + next
				i++
			}
		case !IsBoolFlag(f):
			out = append(out, next) // its value, whatever it looks like
			i++
		}
	}
	return out
}

// optionalValue reports whether f stands alone or takes a value: a GenericFlag whose value
// says IsBoolFlag (a BoolFlag takes no value in the next word).
func optionalValue(f cli.Flag) bool {
	_, generic := f.(*cli.GenericFlag)
	return generic && IsBoolFlag(f)
}

func findFlag(flags []cli.Flag, name string) cli.Flag {
	for _, f := range flags {
		for _, n := range f.Names() {
			if n == name {
				return f
			}
		}
	}
	return nil
}

func findCommand(cmds []*cli.Command, name string) *cli.Command {
	for _, c := range cmds {
		if c.HasName(name) {
			return c
		}
	}
	return nil
}

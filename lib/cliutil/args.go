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
func Run(app *cli.App, args []string) error {
	return app.Run(JoinOptionalValues(app, args))
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

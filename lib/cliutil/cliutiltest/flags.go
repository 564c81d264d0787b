// Package cliutiltest checks, for the tests of each executable, the conventions
// cliutil.Conventions gives an app: that every global option reaches the code of every
// command, whether it is given before the command, after it, or in its environment variable.
//
// # Overview
//
// GlobalFlags runs an app (built afresh by its constructor for each case) with the action of
// one command replaced by a recorder, and checks the value every context of the command's
// lineage that defines the option gives (c.Value, c.StringSlice): what the command's code
// reads, whichever context it asks.
//
// # Errors
//
// Failures are reported through the testing.T; nothing is returned.
package cliutiltest

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/cointoolkit/coin/lib/cliutil"
)

// GlobalFlags checks every global option of the app newApp builds (but --help) with each of
// commands: a command path (the words up to the first that starts with "-", none for the app's
// own action) followed by the arguments the command needs (its required options). Each option
// is given, with a value made from its type, before the path, right after it, and (when it has
// one) in its first environment variable; the command must see that value at every level.
// values overrides the value given for an option name.
func GlobalFlags(t *testing.T, newApp func() *cli.App, commands [][]string, values map[string]string) {
	t.Helper()
	for _, spec := range commands {
		path, rest := splitPath(spec)
		for _, f := range newApp().Flags {
			name := f.Names()[0]
			if name == "help" || name == "version" { // each prints and exits
				continue
			}
			val, ok := values[name]
			if !ok {
				val = valueFor(f)
			}
			if name == "conf" && !ok { // the configuration file must exist: an empty one
				val = filepath.Join(t.TempDir(), "coin.conf")
				if err := os.WriteFile(val, nil, 0o600); err != nil {
					t.Fatal(err)
				}
			}
			placements := map[string][]string{
				"before": concat([]string{"--" + name + "=" + val}, path, rest),
			}
			if len(path) > 0 {
				switch {
				case cliutil.IsBoolFlag(f) && val == "true":
					placements["after"] = concat(path, []string{"--" + name}, rest)
				case cliutil.IsBoolFlag(f):
					placements["after"] = concat(path, []string{"--" + name + "=" + val}, rest)
				default:
					placements["after"] = concat(path, []string{"--" + name, val}, rest)
				}
			}
			if ev, ok := f.(interface{ GetEnvVars() []string }); ok && len(ev.GetEnvVars()) > 0 {
				placements["env "+ev.GetEnvVars()[0]] = concat(path, rest)
			}
			for where, args := range placements {
				t.Run(strings.Join(append(append([]string{}, path...), name, where), " "), func(t *testing.T) {
					if env, ok := strings.CutPrefix(where, "env "); ok {
						t.Setenv(env, val)
					}
					got, err := run(newApp(), path, args, name)
					if err != nil {
						t.Fatalf("%v: %v", args, err)
					}
					want := want(f, val)
					for level, g := range got {
						if g != want {
							t.Errorf("%v: --%s at %s = %q, want %q", args, name, level, g, want)
						}
					}
					if len(got) == 0 {
						t.Errorf("%v: no context defines --%s", args, name)
					}
				})
			}
		}
	}
}

func concat(parts ...[]string) []string {
	var out []string
	for _, p := range parts {
		out = append(out, p...)
	}
	return out
}

func splitPath(spec []string) (path, rest []string) {
	for i, w := range spec {
		if strings.HasPrefix(w, "-") {
			return spec[:i], spec[i:]
		}
	}
	return spec, nil
}

// valueFor is a value of f's type that differs from the usual defaults.
func valueFor(f cli.Flag) string {
	switch f.(type) {
	case *cli.BoolFlag:
		return "true"
	case *cli.DurationFlag:
		return "7s"
	case *cli.IntFlag, *cli.Int64Flag, *cli.UintFlag, *cli.Uint64Flag:
		return "7"
	case *cli.Float64Flag:
		return "7.5"
	}
	if f.Names()[0] == "network" { // checked before any command runs: a real one
		return "regtest"
	}
	return "x-" + f.Names()[0]
}

// want is how the context gives back val.
func want(f cli.Flag, val string) string {
	if _, ok := f.(*cli.DurationFlag); ok {
		if d, err := time.ParseDuration(val); err == nil {
			return d.String()
		}
	}
	return val
}

// run runs app with args, the action of the command at path replaced by one that records
// the value of option name in every context of its lineage that defines it.
func run(app *cli.App, path, args []string, name string) (map[string]string, error) {
	got := map[string]string{}
	record := func(c *cli.Context) error {
		if c.Command != nil && c.Command.SkipFlagParsing {
			if _, err := cliutil.TakeGlobalFlags(c, c.Args().Slice()); err != nil {
				return err
			}
		}
		for i, x := range c.Lineage() {
			if x.Command == nil || !defines(x.Command.Flags, name) && !(i == 0 && x.Command.SkipFlagParsing) {
				continue
			}
			level := x.Command.Name
			switch definedFlag(x, name).(type) {
			case *cli.StringSliceFlag:
				got[level] = strings.Join(x.StringSlice(name), ",")
			case *cli.GenericFlag:
				got[level] = fmt.Sprint(x.Generic(name))
			case nil:
				return fmt.Errorf("--%s: not defined at %s", name, level)
			default:
				got[level] = fmt.Sprint(x.Value(name))
			}
		}
		return nil
	}
	if len(path) == 0 {
		app.Action = record
	} else {
		cmds := app.Commands
		var cmd *cli.Command
		for _, w := range path {
			cmd = nil
			for _, c := range cmds {
				if c.HasName(w) {
					cmd = c
				}
			}
			if cmd == nil {
				return nil, fmt.Errorf("no command %q", strings.Join(path, " "))
			}
			cmds = cmd.Subcommands
		}
		cmd.Action = record
	}
	app.Writer, app.ErrWriter = &strings.Builder{}, &strings.Builder{}
	err := app.Run(append([]string{app.Name}, args...))
	if err == nil && len(got) == 0 {
		err = fmt.Errorf("the command did not run")
	}
	return got, err
}

// definedFlag is the flag named name of x's command, or of the nearest parent that defines it.
func definedFlag(x *cli.Context, name string) cli.Flag {
	for _, y := range x.Lineage() {
		if y.Command == nil {
			continue
		}
		for _, f := range y.Command.Flags {
			if f.Names()[0] == name {
				return f
			}
		}
	}
	return nil
}

func defines(flags []cli.Flag, name string) bool {
	for _, f := range flags {
		if f.Names()[0] == name {
			return true
		}
	}
	return false
}

// Commands lists the path of every command of app that runs an action of its own (the
// app's own action as the empty path), each followed by extra[its path joined by spaces]:
// the arguments it needs, such as its required options.
func Commands(app *cli.App, extra map[string][]string) [][]string {
	var out [][]string
	if app.Action != nil {
		out = append(out, extra[""])
	}
	var walk func(prefix []string, cmds []*cli.Command)
	walk = func(prefix []string, cmds []*cli.Command) {
		for _, c := range cmds {
			if c.Name == "help" {
				continue
			}
			path := concat(prefix, []string{c.Name})
			if c.Action != nil && len(c.Subcommands) == 0 {
				out = append(out, concat(path, extra[strings.Join(path, " ")]))
			}
			walk(path, c.Subcommands)
		}
	}
	walk(nil, app.Commands)
	return out
}

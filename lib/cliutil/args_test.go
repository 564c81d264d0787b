package cliutil

import (
	"reflect"
	"strings"
	"testing"

	"github.com/urfave/cli/v2"

	"github.com/cointoolkit/coin/lib/logging"
)

// optionalApp has an optional-value option (--log-file, as the daemons), a boolean, a
// valued option and a command.
func optionalApp(got *string) *cli.App {
	record := func(c *cli.Context) error {
		*got = c.Generic("log-file").(*logging.FileFlag).Path("DEFAULT") + "|" + strings.Join(c.Args().Slice(), ",")
		return nil
	}
	return Conventions(&cli.App{
		Name: "coin-test",
		Flags: []cli.Flag{
			&cli.GenericFlag{Name: "log-file", Value: &logging.FileFlag{}},
			&cli.BoolFlag{Name: "quiet"},
			&cli.StringFlag{Name: "rpc"},
		},
		Commands: []*cli.Command{{Name: "sub", Action: record}},
		Action:   record,
	})
}

// TestLogFileSpaceForm: --log-file PATH is --log-file=PATH; a bare --log-file before an
// option, a command or the end is the default file. On the old code (app.Run without the
// join) "--log-file /x.log" gave the default file and an unexpected argument.
func TestLogFileSpaceForm(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--log-file", "/x.log"}, "/x.log|"},
		{[]string{"--log-file=/x.log"}, "/x.log|"},
		{[]string{"--log-file"}, "DEFAULT|"},
		{[]string{"--log-file", "--quiet"}, "DEFAULT|"},
		{[]string{"--rpc", "--log-file", "--log-file", "y.log"}, "y.log|"}, // --rpc's value is "--log-file"
		{[]string{"--log-file", "sub"}, "DEFAULT|"},
		{[]string{"sub", "--log-file", "z.log", "arg"}, "z.log|arg"},
		{[]string{"--quiet", "--log-file", "a", "b"}, "a|b"},
		{[]string{"-log-file", "false"}, "|"},
	} {
		var got string
		app := optionalApp(&got)
		if err := Run(app, append([]string{"coin-test"}, tc.args...)); err != nil {
			t.Errorf("%v: %v", tc.args, err)
			continue
		}
		if got != tc.want {
			t.Errorf("%v: got %q, want %q", tc.args, got, tc.want)
		}
	}
}

func TestJoinOptionalValuesLeavesOthers(t *testing.T) {
	var got string
	app := optionalApp(&got)
	for _, args := range [][]string{
		{"coin-test"},
		{"coin-test", "--quiet", "x"},
		{"coin-test", "arg", "--log-file", "x"}, // after an argument urfave/cli parses no options
	} {
		if j := JoinOptionalValues(app, args); !reflect.DeepEqual(j, args) {
			t.Errorf("%v joined to %v", args, j)
		}
	}
}

// TestHoistOptions: a command's options after its arguments are read as if given before
// them, with their values; unknown options and words after "--" stay arguments. On the old
// code (Run without the hoist) "sub arg --rpc X" was a usage error.
func TestHoistOptions(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"sub", "arg", "--quiet"}, "DEFAULT?|arg"},
		{[]string{"sub", "arg", "--log-file", "z.log"}, "z.log|arg"},
		{[]string{"sub", "a", "--rpc", "http://x", "b"}, "|a,b"},
		{[]string{"sub", "a", "--rpc=http://x", "b", "--", "--quiet"}, "|a,b,--quiet"},
		{[]string{"sub", "a", "-1"}, "|a,-1"},        // a negative number is an argument
		{[]string{"--rpc", "sub", "sub", "a"}, "|a"}, // --rpc's value is "sub"
	} {
		var got string
		app := optionalApp(&got)
		if err := Run(app, append([]string{"coin-test"}, tc.args...)); err != nil {
			t.Errorf("%v: %v", tc.args, err)
			continue
		}
		if want := strings.Replace(tc.want, "DEFAULT?", "", 1); got != want {
			t.Errorf("%v: got %q, want %q", tc.args, got, want)
		}
	}
	for _, tc := range [][]string{
		{"coin-test", "sub", "--", "a", "--quiet"},
		{"coin-test", "sub", "a", "--bogus", "b"},
		{"coin-test", "sub", "a", "b"},
	} {
		if h := HoistOptions(optionalApp(new(string)), tc); !reflect.DeepEqual(h, tc) {
			t.Errorf("%v hoisted to %v", tc, h)
		}
	}
	h := HoistOptions(optionalApp(new(string)), []string{"coin-test", "sub", "a", "--rpc", "X", "b", "--quiet"})
	if want := []string{"coin-test", "sub", "--rpc", "X", "--quiet", "a", "b"}; !reflect.DeepEqual(h, want) {
		t.Errorf("hoisted to %v, want %v", h, want)
	}
}

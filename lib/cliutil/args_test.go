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

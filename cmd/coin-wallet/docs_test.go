package main

import (
	"testing"

	"github.com/cointoolkit/coin/lib/cliutil/cliutiltest"
	"github.com/cointoolkit/coin/lib/proctest"
)

// TestDocsFresh fails when man/ or completions/ no longer match the flags.
func TestDocsFresh(t *testing.T) { proctest.DocsFresh(t, newApp()) }

// TestGlobalFlagsEverywhere: every global option reaches every command given before it,
// after it or in its environment variable.
func TestGlobalFlagsEverywhere(t *testing.T) {
	cmds := cliutiltest.Commands(newApp(), map[string][]string{
		"send":                  {"--to", "t", "--amount", "1"},
		"agent contract create": {"--counterparty", "c", "--amount", "1"},
		"agent review":          {"--contract", "c", "--subject", "s", "--score", "9"},
	})
	if len(cmds) < 15 {
		t.Fatalf("only %d commands: %v", len(cmds), cmds)
	}
	cliutiltest.GlobalFlags(t, newApp, cmds, nil)
}

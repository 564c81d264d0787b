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
	cliutiltest.GlobalFlags(t, newApp, cliutiltest.Commands(newApp(), nil), nil)
}

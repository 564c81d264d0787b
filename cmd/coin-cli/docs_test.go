package main

import (
	"testing"

	"github.com/cointoolkit/coin/lib/cliutil/cliutiltest"
)

// TestGlobalFlagsEverywhere: every global option reaches every command (the methods take
// theirs out of their arguments) given before it, after it or in its environment variable.
func TestGlobalFlagsEverywhere(t *testing.T) {
	cliutiltest.GlobalFlags(t, newApp, cliutiltest.Commands(newApp(), nil), nil)
}

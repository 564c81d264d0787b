package main

import (
	"testing"

	"github.com/cointoolkit/coin/lib/proctest"
)

// TestDocsFresh fails when man/ or completions/ no longer match the flags.
func TestDocsFresh(t *testing.T) { proctest.DocsFresh(t, newApp()) }

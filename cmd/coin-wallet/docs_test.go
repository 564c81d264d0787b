package main

import (
	"testing"

	"github.com/cointoolkit/coin/lib/cliutil"
)

// TestDocsFresh fails when man/ or completions/ no longer match the flags (make man completions).
func TestDocsFresh(t *testing.T) {
	stale, err := cliutil.StaleDocs(newApp(), "../..")
	if err != nil {
		t.Fatal(err)
	}
	if len(stale) > 0 {
		t.Fatalf("stale generated files %v: run make man completions", stale)
	}
}

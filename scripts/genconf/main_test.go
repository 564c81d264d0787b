package main

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/cointoolkit/coin/lib/proctest"
)

// TestConfFresh fails when deploy/coin.conf.example or lib/confile/known_keys.txt no longer
// match the options of the executables: run make conf (go run ./scripts/genconf).
func TestConfFresh(t *testing.T) {
	var pkgs []string
	for _, name := range Tools {
		pkgs = append(pkgs, "./cmd/"+name)
	}
	files, err := Generate(proctest.Build(t, pkgs...))
	if err != nil {
		t.Fatal(err)
	}
	for path, want := range files {
		got, err := os.ReadFile(filepath.Join("..", "..", path))
		if err != nil || string(got) != want {
			t.Errorf("%s is stale: run make conf (go run ./scripts/genconf)", path)
		}
	}
}

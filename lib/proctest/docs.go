package proctest

import (
	"testing"

	"github.com/cointoolkit/coin/lib/cliutil"
	"github.com/urfave/cli/v2"
)

// DocsFresh fails the test when the committed man page or completion scripts of app no longer
// match what its flags generate.
func DocsFresh(t testing.TB, app *cli.App) {
	t.Helper()
	root, err := moduleRoot()
	if err != nil {
		t.Fatal(err)
	}
	stale, err := cliutil.StaleDocs(app, root)
	if err != nil {
		t.Fatal(err)
	}
	if len(stale) > 0 {
		t.Fatalf("stale generated files %v: run make man completions (or go run ./cmd/%s gendoc man|bash|zsh)", stale, app.Name)
	}
}

package main

import (
	"errors"
	"io"
	"strings"
	"testing"

	"github.com/cointoolkit/coin/lib/cliutil"
)

// --min-free-disk below 0 silently turned the free-disk rule off: it is a usage error (exit
// 2), as is a value above 100, before anything is opened.
func TestMinFreeDiskNegativeIsUsageError(t *testing.T) {
	for _, v := range []string{"-1", "-0.5", "101"} {
		app := newApp()
		app.Writer, app.ErrWriter = io.Discard, io.Discard
		err := app.Run([]string{"coin-node", "--network", "regtest", "--data-dir", t.TempDir(), "--min-free-disk", v})
		var ee *cliutil.ExitError
		if !errors.As(err, &ee) || ee.Code != 2 || !strings.Contains(ee.Message, "--min-free-disk") {
			t.Fatalf("--min-free-disk %s: %v", v, err)
		}
	}
}

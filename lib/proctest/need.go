package proctest

import (
	"os"
	"strconv"
	"testing"
)

// CI reports whether the tests run under continuous integration: CI is set to a true value
// (CI=true, as GitHub Actions, GitLab CI and .ci/run set it), or COIN_REQUIRE_TOOLS is.
// Under CI a test whose external tool is missing fails instead of skipping, so a CI machine
// that lacks it cannot pass while testing less.
func CI() bool {
	for _, name := range []string{"CI", "COIN_REQUIRE_TOOLS"} {
		if v, err := strconv.ParseBool(os.Getenv(name)); err == nil && v {
			return true
		}
	}
	return false
}

// Missing ends a test whose external tool (a browser, shellcheck) is not on this machine:
// it fails under CI (see [CI]) or when force is set (a test's own variable, such as
// COIN_REQUIRE_BROWSER), and skips otherwise. why names the tool and how to install it.
func Missing(t testing.TB, force bool, why string) {
	t.Helper()
	if force || CI() {
		t.Fatalf("%s (required here: CI=true, COIN_REQUIRE_TOOLS or the test's own variable is set)", why)
	}
	t.Skipf("%s; skipped (under CI=true it fails)", why)
}

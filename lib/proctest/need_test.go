package proctest

import (
	"os"
	"os/exec"
	"strings"
	"testing"
)

// TestMissing runs a test that lacks its tool in a child test process: it skips on a
// developer's machine and fails under CI=true, COIN_REQUIRE_TOOLS=1 or the test's own force.
func TestMissing(t *testing.T) {
	for _, c := range []struct {
		env      []string
		wantFail bool
	}{
		{nil, false},
		{[]string{"CI=false"}, false},
		{[]string{"CI=true"}, true},
		{[]string{"CI=1"}, true},
		{[]string{"COIN_REQUIRE_TOOLS=1"}, true},
		{[]string{"COIN_MISSING_FORCE=1"}, true},
	} {
		cmd := exec.Command(os.Args[0], "-test.run=^TestMissingChild$", "-test.v", "-test.count=1")
		cmd.Env = []string{"COIN_MISSING_CHILD=1", "PATH=" + os.Getenv("PATH")}
		cmd.Env = append(cmd.Env, c.env...)
		out, err := cmd.CombinedOutput()
		failed := err != nil
		if failed != c.wantFail {
			t.Errorf("%v: failed %v, want %v\n%s", c.env, failed, c.wantFail, out)
			continue
		}
		want := "--- SKIP: TestMissingChild"
		if c.wantFail {
			want = "--- FAIL: TestMissingChild"
		}
		if !strings.Contains(string(out), want) || !strings.Contains(string(out), "frobnicate is not installed") {
			t.Errorf("%v: no %q with the reason in\n%s", c.env, want, out)
		}
	}
}

// TestMissingChild is TestMissing's child; it does nothing unless started as that child.
func TestMissingChild(t *testing.T) {
	if os.Getenv("COIN_MISSING_CHILD") == "" {
		t.Skip("the child of TestMissing")
	}
	Missing(t, os.Getenv("COIN_MISSING_FORCE") != "", "frobnicate is not installed")
	t.Error("Missing returned")
}

package proctest

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
)

// builds holds the directories built so far, by set of packages.
var builds struct {
	mu   sync.Mutex
	sets map[string]*build
}

type build struct {
	once sync.Once
	dir  string
	err  error
}

// Build compiles the main packages pkgs (paths relative to the module root, such as
// "./cmd/coin-node", or import paths) into a temporary directory and returns it; each
// executable is in it under its package's name. A set of packages is built once per test
// process, in whatever order it is given; Cleanup removes the directories.
func Build(t testing.TB, pkgs ...string) string {
	t.Helper()
	set := slices.Compact(slices.Sorted(slices.Values(pkgs)))
	if len(set) == 0 {
		t.Fatal("proctest.Build: no packages")
	}
	key := strings.Join(set, "\n")
	builds.mu.Lock()
	if builds.sets == nil {
		builds.sets = map[string]*build{}
	}
	b := builds.sets[key]
	if b == nil {
		b = &build{}
		builds.sets[key] = b
	}
	builds.mu.Unlock()
	b.once.Do(func() { b.dir, b.err = goBuild(set) })
	if b.err != nil {
		t.Fatal(b.err)
	}
	return b.dir
}

// Cleanup removes the directories Build made; a later Build builds again.
func Cleanup() {
	builds.mu.Lock()
	defer builds.mu.Unlock()
	for _, b := range builds.sets {
		if b.dir != "" {
			os.RemoveAll(b.dir)
		}
	}
	builds.sets = nil
}

func goBuild(pkgs []string) (string, error) {
	root, err := moduleRoot()
	if err != nil {
		return "", err
	}
	dir, err := os.MkdirTemp("", "proctest-bin-")
	if err != nil {
		return "", err
	}
	cmd := exec.Command("go", append([]string{"build", "-o", dir + string(os.PathSeparator)}, pkgs...)...)
	cmd.Dir = root
	if out, err := cmd.CombinedOutput(); err != nil {
		os.RemoveAll(dir)
		return "", fmt.Errorf("go build %s: %v\n%s", strings.Join(pkgs, " "), err, out)
	}
	return dir, nil
}

// moduleRoot is the nearest directory at or above the working directory with a go.mod.
func moduleRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("proctest.Build: no go.mod at or above the working directory")
		}
		dir = parent
	}
}

// Command genconf writes deploy/coin.conf.example and lib/confile/known_keys.txt from the
// options of the six coin executables, which it builds and asks ("gendoc conf"): see
// confile.Generate. Run it from the repository root (make conf); TestConfFresh fails when
// either file is stale. Its tests also hold what an operator installs from deploy/ to the
// executables: one coin.conf serving a node and its clients (TestConfServesNodeAndClients),
// the systemd units (TestSystemdUnitsHardened, TestSystemdAnalyzeVerify) and exit status 2
// for every usage error of the six tools (TestUsageErrorsExit2). (deploy/ is a module of its
// own, for the image and the chart, so these live here, in the main module's make test.)
//
//	go run ./scripts/genconf            # build the executables, write both files
//	go run ./scripts/genconf -bin bin   # use executables already built in bin/
package main

import (
	"flag"
	"fmt"
	"os"
	"os/exec"

	"github.com/cointoolkit/coin/lib/confile"
)

func main() {
	bin := flag.String("bin", "", "`DIR` of built executables (default: build them into a temporary directory)")
	flag.Parse()
	if err := run(*bin); err != nil {
		fmt.Fprintln(os.Stderr, "genconf:", err)
		os.Exit(1)
	}
}

func run(bin string) error {
	if bin == "" {
		dir, err := os.MkdirTemp("", "genconf-")
		if err != nil {
			return err
		}
		defer os.RemoveAll(dir)
		args := []string{"build", "-o", dir + string(os.PathSeparator)}
		for _, t := range confile.Tools {
			args = append(args, "./cmd/"+t)
		}
		cmd := exec.Command("go", args...)
		cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
		if err := cmd.Run(); err != nil {
			return fmt.Errorf("go build: %w", err)
		}
		bin = dir
	}
	files, err := confile.Generate(bin)
	if err != nil {
		return err
	}
	for path, text := range files {
		if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
			return err
		}
	}
	return nil
}

// Command genconf writes deploy/coin.conf.example and lib/confile/known_keys.txt from the
// options of the six coin executables, which it builds and asks ("gendoc conf"). Run it from
// the repository root (make conf); TestConfFresh fails when either file is stale.
//
//	go run ./scripts/genconf            # build the executables, write both files
//	go run ./scripts/genconf -bin bin   # use executables already built in bin/
package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"

	"github.com/cointoolkit/coin/lib/confile"
)

// Tools are the executables, in the order the example lists them.
var Tools = []string{"coin-node", "coin-cli", "coin-miner", "coin-wallet", "coin-faucetd", "coin-faucet"}

// The generated files, relative to the repository root.
const (
	ExampleFile   = "deploy/coin.conf.example"
	KnownKeysFile = "lib/confile/known_keys.txt"
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
		for _, t := range Tools {
			args = append(args, "./cmd/"+t)
		}
		cmd := exec.Command("go", args...)
		cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
		if err := cmd.Run(); err != nil {
			return fmt.Errorf("go build: %w", err)
		}
		bin = dir
	}
	files, err := Generate(bin)
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

// Generate asks each executable in bin for its options and renders the generated files,
// by path.
func Generate(bin string) (map[string]string, error) {
	var tools []confile.Tool
	for _, name := range Tools {
		cmd := exec.Command(filepath.Join(bin, name), "gendoc", "conf")
		cmd.Env = append(os.Environ(), "HOME="+os.TempDir()+"/genconf-no-home") // no ~/.coin/coin.conf
		out, err := cmd.Output()
		if err != nil {
			return nil, fmt.Errorf("%s gendoc conf: %w", name, err)
		}
		var t confile.Tool
		if err := json.Unmarshal(out, &t); err != nil {
			return nil, fmt.Errorf("%s gendoc conf: %w", name, err)
		}
		tools = append(tools, t)
	}
	return map[string]string{ExampleFile: confile.Example(tools), KnownKeysFile: confile.KnownKeysList(tools)}, nil
}

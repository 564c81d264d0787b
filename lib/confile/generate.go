package confile

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
)

// Tools are the six executables, in the order the example lists them.
var Tools = []string{"coin-node", "coin-cli", "coin-miner", "coin-wallet", "coin-faucetd", "coin-faucet"}

// The generated files, relative to the repository root.
const (
	ExampleFile   = "deploy/coin.conf.example"
	KnownKeysFile = "lib/confile/known_keys.txt"
)

// Generate asks each of Tools, built in the directory bin, for its options ("gendoc conf")
// and renders the generated files (ExampleFile, KnownKeysFile), by path.
func Generate(bin string) (map[string]string, error) {
	var tools []Tool
	for _, name := range Tools {
		cmd := exec.Command(filepath.Join(bin, name), "gendoc", "conf")
		// No ~/.coin/coin.conf of whoever runs it: an empty configuration.
		cmd.Env = append(os.Environ(), EnvConf+"="+os.DevNull)
		out, err := cmd.Output()
		if err != nil {
			return nil, fmt.Errorf("%s gendoc conf: %w", name, err)
		}
		var t Tool
		if err := json.Unmarshal(out, &t); err != nil {
			return nil, fmt.Errorf("%s gendoc conf: %w", name, err)
		}
		tools = append(tools, t)
	}
	return map[string]string{ExampleFile: Example(tools), KnownKeysFile: KnownKeysList(tools)}, nil
}

package node

import "path/filepath"

// LogFileName is the node's log file in its data directory (the spec's node.log), written
// with a bare --log-file (coin-node opens it with logging.Output).
const LogFileName = "node.log"

// DefaultLogFile is <dataDir>/node.log.
func DefaultLogFile(dataDir string) string { return filepath.Join(dataDir, LogFileName) }

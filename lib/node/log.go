package node

import (
	"io"
	"log/slog"
	"path/filepath"

	"github.com/cointoolkit/coin/lib/logging"
)

// LogFileName is the node's log file in its data directory (the spec's node.log), written
// with a bare --log-file.
const LogFileName = "node.log"

// DefaultLogFile is <dataDir>/node.log.
func DefaultLogFile(dataDir string) string { return filepath.Join(dataDir, LogFileName) }

// NewLogger writes key=value lines to stderr and, when toFile, to <dataDir>/node.log, each
// subsystem at its level. The returned closer closes the file. It is logging.Output with
// the node's default file; coin-node uses Output for --log-format and --log-file=PATH.
func NewLogger(levels logging.Levels, dataDir string, toFile bool) (*slog.Logger, io.Closer, error) {
	o := logging.Output{Levels: levels, Format: logging.FormatText}
	if toFile {
		o.File = DefaultLogFile(dataDir)
	}
	return o.Open()
}

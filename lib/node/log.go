package node

import (
	"io"
	"log/slog"
	"os"
	"path/filepath"

	"github.com/cointoolkit/coin/lib/logging"
)

// NewLogger writes key=value lines to stderr and, when toFile, to <dataDir>/node.log, each
// subsystem at its level. The returned closer closes the file.
func NewLogger(levels logging.Levels, dataDir string, toFile bool) (*slog.Logger, io.Closer, error) {
	var w io.Writer = os.Stderr
	var closer io.Closer = io.NopCloser(nil)
	if toFile {
		if err := os.MkdirAll(dataDir, 0o700); err != nil {
			return nil, nil, err
		}
		f, err := os.OpenFile(filepath.Join(dataDir, "node.log"), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
		if err != nil {
			return nil, nil, err
		}
		w, closer = io.MultiWriter(os.Stderr, f), f
	}
	return logging.NewLevels(w, levels), closer, nil
}

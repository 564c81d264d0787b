package node

import (
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
)

// LevelTrace is below debug: per-message network detail.
const LevelTrace = slog.Level(-8)

// ParseLevel maps error, warn, info, debug and trace to slog levels.
func ParseLevel(s string) (slog.Level, error) {
	switch strings.ToLower(s) {
	case "error":
		return slog.LevelError, nil
	case "warn", "warning":
		return slog.LevelWarn, nil
	case "info", "":
		return slog.LevelInfo, nil
	case "debug":
		return slog.LevelDebug, nil
	case "trace":
		return LevelTrace, nil
	}
	return 0, fmt.Errorf("unknown log level %q (want error, warn, info, debug or trace)", s)
}

// NewLogger writes key=value lines to stderr and, when toFile, to <dataDir>/node.log.
// The returned closer closes the file.
func NewLogger(level slog.Level, dataDir string, toFile bool) (*slog.Logger, io.Closer, error) {
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
	h := slog.NewTextHandler(w, &slog.HandlerOptions{Level: level, ReplaceAttr: func(_ []string, a slog.Attr) slog.Attr {
		if a.Key == slog.LevelKey && a.Value.Any() == LevelTrace {
			a.Value = slog.StringValue("TRACE")
		}
		return a
	}})
	return slog.New(h), closer, nil
}

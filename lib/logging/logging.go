package logging

import (
	"fmt"
	"io"
	"log/slog"
	"strings"
)

// LevelTrace is below debug: per-message detail.
const LevelTrace = slog.Level(-8)

// ParseLevel maps error, warn, info, debug and trace (any case) to slog levels.
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

// NameTrace prints LevelTrace as "TRACE" instead of slog's "DEBUG-4".
func NameTrace(a slog.Attr) slog.Attr {
	if a.Key == slog.LevelKey && a.Value.Any() == LevelTrace {
		a.Value = slog.StringValue("TRACE")
	}
	return a
}

// New is a key=value logger on w at level.
func New(w io.Writer, level slog.Level) *slog.Logger {
	return slog.New(slog.NewTextHandler(w, &slog.HandlerOptions{Level: level,
		ReplaceAttr: func(_ []string, a slog.Attr) slog.Attr { return NameTrace(a) }}))
}

package logging

import (
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
)

// Format is how records are written: key=value lines (FormatText, the default) or one JSON
// object per line (FormatJSON), each daemon's --log-format.
type Format string

// The formats of --log-format.
const (
	FormatText Format = "text"
	FormatJSON Format = "json"
)

// ParseFormat reads --log-format: text or json (any case; empty is text).
func ParseFormat(s string) (Format, error) {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "", "text", "logfmt":
		return FormatText, nil
	case "json":
		return FormatJSON, nil
	}
	return "", fmt.Errorf("unknown log format %q (want text or json)", s)
}

// HandlerOptions are the options every daemon's handler shares: the level, TRACE named as
// such, durations as Go writes them ("1.5s", the text format's, also in JSON), and replace (may be nil) for callers that rewrite further attributes (coin-miner
// shortens the time on a terminal).
func HandlerOptions(level slog.Leveler, replace func([]string, slog.Attr) slog.Attr) *slog.HandlerOptions {
	return &slog.HandlerOptions{Level: level, ReplaceAttr: func(groups []string, a slog.Attr) slog.Attr {
		if len(groups) == 0 {
			a = NameTrace(a)
		}
		if a.Value.Kind() == slog.KindDuration { // "1.5s" in JSON too, not nanoseconds
			a.Value = slog.StringValue(a.Value.Duration().String())
		}
		if replace != nil {
			a = replace(groups, a)
		}
		return a
	}}
}

// NewHandler is the handler of format on w with opts.
func NewHandler(w io.Writer, f Format, opts *slog.HandlerOptions) slog.Handler {
	if f == FormatJSON {
		return slog.NewJSONHandler(w, opts)
	}
	return slog.NewTextHandler(w, opts)
}

// NewFormat is NewLevels in format f: one handler of that format behind the per-subsystem
// filter. NewFormat(w, l, FormatText) is NewLevels(w, l).
func NewFormat(w io.Writer, l Levels, f Format) *slog.Logger {
	return slog.New(FilterLevels(NewHandler(w, f, HandlerOptions(l.Min(), nil)), l))
}

// FilterLevels puts the per-subsystem filter of l in front of inner, whose own level should
// be l.Min() or lower.
func FilterLevels(inner slog.Handler, l Levels) slog.Handler {
	return &subsystemHandler{inner: inner, levels: l, level: l.For("")}
}

// FileFlag is the value of a daemon's --log-file option, for cli.GenericFlag: off (the
// default, or false/0), the daemon's default file (a bare --log-file, or true/1: coin-node's
// <data-dir>/node.log), or a file of the operator's choosing (--log-file=PATH, with the
// equals sign: the option is a boolean one that also takes a value, as Go's flag package
// allows, so that the bare form keeps working).
type FileFlag struct {
	on   bool
	path string // "" with on: the default file
}

// Set reads true/1/yes (the default file), false/0/no/"" (off), or a path.
func (f *FileFlag) Set(s string) error {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "true", "1", "yes", "on":
		f.on, f.path = true, ""
	case "false", "0", "no", "off", "":
		f.on, f.path = false, ""
	default:
		f.on, f.path = true, s
	}
	return nil
}

// String is the value as Set reads it ("" when off, as the help shows no default).
func (f *FileFlag) String() string {
	switch {
	case f == nil || !f.on:
		return ""
	case f.path == "":
		return "true"
	}
	return f.path
}

// IsBoolFlag lets --log-file stand alone (flag.boolFlag).
func (f *FileFlag) IsBoolFlag() bool { return true }

// Path is the file to write: "" when off, def for the bare option.
func (f *FileFlag) Path(def string) string {
	if f == nil || !f.on {
		return ""
	}
	if f.path == "" {
		return def
	}
	return f.path
}

// ErrNoDefaultFile is Path's caller's error when the bare option has no default file.
var ErrNoDefaultFile = errors.New("--log-file needs a file here: --log-file=PATH")

// Output is where a daemon logs: Stderr always, and File too when set.
type Output struct {
	Levels Levels
	Format Format
	// Stderr gets every record (nil: os.Stderr).
	Stderr io.Writer
	// File, when set, is appended to (created 0600, its directory 0700) with the same
	// records.
	File string
}

// Open builds Output's logger. The closer closes the file (a no-op without one).
func (o Output) Open() (*slog.Logger, io.Closer, error) {
	w := o.Stderr
	if w == nil {
		w = os.Stderr
	}
	var closer io.Closer = io.NopCloser(nil)
	if o.File != "" {
		f, err := OpenFile(o.File)
		if err != nil {
			return nil, nil, err
		}
		w, closer = io.MultiWriter(w, f), f
	}
	return NewFormat(w, o.Levels, o.Format), closer, nil
}

// OpenFile opens a log file for appending, creating it (0600) and its directory (0700).
func OpenFile(path string) (*os.File, error) {
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return nil, err
	}
	return os.OpenFile(path, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
}

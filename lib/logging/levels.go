package logging

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"slices"
	"strings"
)

// SubsystemKey is the attribute that names a logger's subsystem: a package builds its logger
// with logger.With(SubsystemKey, "p2p") (the text key is "sys"), and Levels gives that
// logger its own level.
const SubsystemKey = "sys"

// DefaultSubsystem names the records of loggers that carry no subsystem attribute.
const DefaultSubsystem = "node"

// Levels is a log level for every subsystem and overrides for some (btcd's
// --debuglevel=p2p=debug habit).
type Levels struct {
	// Default applies to every subsystem without an override.
	Default slog.Level
	// Subsystem holds the overrides, by subsystem name (lower case).
	Subsystem map[string]slog.Level
}

// ParseLevels reads a level for everything ("debug"), levels per subsystem
// ("p2p=debug,node=warn"), or both ("info,p2p=trace"): comma-separated, at most one bare
// level, each subsystem once, names and levels in any case. known lists the subsystems the
// program has; any other name is an error, so a typo cannot silently do nothing. The empty
// string is info for everything.
func ParseLevels(s string, known ...string) (Levels, error) {
	l := Levels{Default: slog.LevelInfo, Subsystem: map[string]slog.Level{}}
	bare := false
	for part := range strings.SplitSeq(s, ",") {
		part = strings.TrimSpace(part)
		if part == "" && s != "" {
			continue // "p2p=debug," and the like
		}
		name, value, isSub := strings.Cut(part, "=")
		if !isSub {
			if bare {
				return Levels{}, fmt.Errorf("two levels for everything in %q", s)
			}
			bare = true
			lv, err := ParseLevel(part)
			if err != nil {
				return Levels{}, err
			}
			l.Default = lv
			continue
		}
		name = strings.ToLower(strings.TrimSpace(name))
		if !slices.Contains(known, name) {
			return Levels{}, fmt.Errorf("unknown log subsystem %q (want %s)", name, strings.Join(known, ", "))
		}
		if _, dup := l.Subsystem[name]; dup {
			return Levels{}, fmt.Errorf("log subsystem %q given twice", name)
		}
		value = strings.TrimSpace(value)
		if value == "" {
			return Levels{}, fmt.Errorf("log subsystem %s: no level after =", name)
		}
		lv, err := ParseLevel(value)
		if err != nil {
			return Levels{}, fmt.Errorf("log subsystem %s: %w", name, err)
		}
		l.Subsystem[name] = lv
	}
	return l, nil
}

// For is the level of a subsystem ("" is DefaultSubsystem).
func (l Levels) For(sub string) slog.Level {
	if sub == "" {
		sub = DefaultSubsystem
	}
	if lv, ok := l.Subsystem[strings.ToLower(sub)]; ok {
		return lv
	}
	return l.Default
}

// Min is the most verbose level any subsystem logs at.
func (l Levels) Min() slog.Level {
	m := l.Default
	for _, lv := range l.Subsystem {
		m = min(m, lv)
	}
	return m
}

// NewLevels is New with a level per subsystem: a logger's level is that of the last
// SubsystemKey attribute given to With (DefaultSubsystem's before any). A subsystem
// attribute passed with a single record does not change that record's level.
func NewLevels(w io.Writer, l Levels) *slog.Logger { return NewFormat(w, l, FormatText) }

// subsystemHandler filters records by its logger's subsystem level and hands the rest to
// one shared text handler.
type subsystemHandler struct {
	inner   slog.Handler
	levels  Levels
	level   slog.Level
	grouped bool // a group is open: attributes are no longer top-level
}

func (h *subsystemHandler) Enabled(_ context.Context, lv slog.Level) bool { return lv >= h.level }

func (h *subsystemHandler) Handle(ctx context.Context, r slog.Record) error {
	return h.inner.Handle(ctx, r)
}

func (h *subsystemHandler) WithAttrs(as []slog.Attr) slog.Handler {
	c := *h
	c.inner = h.inner.WithAttrs(as)
	if !h.grouped {
		for _, a := range as {
			if a.Key == SubsystemKey {
				c.level = h.levels.For(a.Value.String())
			}
		}
	}
	return &c
}

func (h *subsystemHandler) WithGroup(name string) slog.Handler {
	c := *h
	c.inner = h.inner.WithGroup(name)
	c.grouped = c.grouped || name != ""
	return &c
}

package logging

import (
	"bytes"
	"context"
	"log/slog"
	"strings"
	"testing"
)

func TestParseLevels(t *testing.T) {
	known := []string{"node", "p2p"}
	for _, c := range []struct {
		in        string
		def, node slog.Level
		p2p       slog.Level
	}{
		{"", slog.LevelInfo, slog.LevelInfo, slog.LevelInfo},
		{"debug", slog.LevelDebug, slog.LevelDebug, slog.LevelDebug},
		{"TRACE", LevelTrace, LevelTrace, LevelTrace},
		{"p2p=debug", slog.LevelInfo, slog.LevelInfo, slog.LevelDebug},
		{"P2P=Trace, node=warn", slog.LevelInfo, slog.LevelWarn, LevelTrace},
		{"warn,p2p=debug", slog.LevelWarn, slog.LevelWarn, slog.LevelDebug},
		{"p2p=error,debug,", slog.LevelDebug, slog.LevelDebug, slog.LevelError},
	} {
		l, err := ParseLevels(c.in, known...)
		if err != nil {
			t.Fatalf("%q: %v", c.in, err)
		}
		if l.Default != c.def || l.For("node") != c.node || l.For("") != c.node || l.For("p2p") != c.p2p {
			t.Errorf("%q: default %v node %v p2p %v", c.in, l.Default, l.For("node"), l.For("p2p"))
		}
		if m := min(c.def, c.node, c.p2p); l.Min() != m {
			t.Errorf("%q: min %v, want %v", c.in, l.Min(), m)
		}
	}
	for _, bad := range []string{"verbose", "chain=debug", "p2p=loud", "p2p=", "debug,info", "p2p=debug,p2p=info", "=debug"} {
		if _, err := ParseLevels(bad, known...); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
}

// Each logger logs at its subsystem's level; the lines look as New's do.
func TestNewLevels(t *testing.T) {
	l, err := ParseLevels("warn,p2p=trace", "node", "p2p")
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	root := NewLevels(&b, l)
	p2p := root.With(SubsystemKey, "p2p")
	root.Info("node info hidden")
	root.Warn("node warn shown")
	p2p.Debug("p2p debug shown")
	p2p.With("peer", "1.2.3.4").Log(context.Background(), LevelTrace, "p2p trace shown", "cmd", "ping")
	p2p.WithGroup("g").With(SubsystemKey, "node").Debug("group attr is not a subsystem: shown")
	p2p.With(SubsystemKey, "node").Info("back to node: hidden")
	root.Info("record attr does not change the level: hidden", SubsystemKey, "p2p")
	out := b.String()
	for _, want := range []string{"node warn shown", "msg=\"p2p debug shown\" sys=p2p", "level=TRACE",
		"peer=1.2.3.4", "cmd=ping", "group attr is not a subsystem"} {
		if !strings.Contains(out, want) {
			t.Errorf("missing %q in\n%s", want, out)
		}
	}
	if strings.Contains(out, "hidden") {
		t.Errorf("a filtered record was written:\n%s", out)
	}
	// A plain level is New's behaviour.
	b.Reset()
	plain, _ := ParseLevels("info", "node", "p2p")
	NewLevels(&b, plain).With(SubsystemKey, "p2p").Info("x", "k", 1)
	var want bytes.Buffer
	New(&want, slog.LevelInfo).With(SubsystemKey, "p2p").Info("x", "k", 1)
	if cut(b.String()) != cut(want.String()) {
		t.Fatalf("NewLevels %q, New %q", b.String(), want.String())
	}
}

// cut drops the time attribute.
func cut(s string) string {
	_, rest, _ := strings.Cut(s, " ")
	return rest
}

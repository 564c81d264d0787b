package logging

import (
	"bytes"
	"strings"
	"testing"
)

func TestParseLevel(t *testing.T) {
	for _, s := range []string{"error", "warn", "warning", "info", "", "debug", "trace", "TRACE"} {
		if _, err := ParseLevel(s); err != nil {
			t.Errorf("%q: %v", s, err)
		}
	}
	if _, err := ParseLevel("verbose"); err == nil {
		t.Fatal("unknown level accepted")
	}
}

func TestTraceNamed(t *testing.T) {
	var b bytes.Buffer
	New(&b, LevelTrace).Log(nil, LevelTrace, "frame", "cmd", "ping")
	if !strings.Contains(b.String(), "level=TRACE") || !strings.Contains(b.String(), "cmd=ping") {
		t.Fatal(b.String())
	}
}

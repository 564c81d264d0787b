package logging

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestParseFormat(t *testing.T) {
	for in, want := range map[string]Format{"": FormatText, "text": FormatText, "JSON": FormatJSON, " json ": FormatJSON} {
		if f, err := ParseFormat(in); err != nil || f != want {
			t.Errorf("%q: %q %v", in, f, err)
		}
	}
	if _, err := ParseFormat("xml"); err == nil {
		t.Fatal("xml accepted")
	}
}

// The JSON format writes one object per record with the text format's keys, TRACE named,
// and the per-subsystem levels applied.
func TestNewFormatJSON(t *testing.T) {
	l, err := ParseLevels("info,p2p=trace", "node", "p2p")
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	root := NewFormat(&b, l, FormatJSON)
	root.Debug("hidden")
	root.With(SubsystemKey, "p2p").Log(nil, LevelTrace, "frame", "cmd", "ping")
	root.Info("sync: progress", "height", 10, "percent", 12.5, "eta", 90*time.Second)
	lines := strings.Split(strings.TrimSpace(b.String()), "\n")
	if len(lines) != 2 {
		t.Fatalf("%d lines:\n%s", len(lines), b.String())
	}
	var rec map[string]any
	if err := json.Unmarshal([]byte(lines[0]), &rec); err != nil {
		t.Fatal(err)
	}
	if rec["level"] != "TRACE" || rec["sys"] != "p2p" || rec["cmd"] != "ping" || rec["msg"] != "frame" || rec["time"] == nil {
		t.Fatalf("record %v", rec)
	}
	if err := json.Unmarshal([]byte(lines[1]), &rec); err != nil || rec["height"] != 10.0 || rec["percent"] != 12.5 || rec["eta"] != "1m30s" {
		t.Fatalf("record %v (%v)", rec, err)
	}
}

// --log-file alone is the default file, --log-file=PATH a path, the environment's
// true/false the bool of old.
func TestFileFlag(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{nil, ""},
		{[]string{"--log-file"}, "/data/node.log"},
		{[]string{"--log-file=true"}, "/data/node.log"},
		{[]string{"--log-file=false"}, ""},
		{[]string{"--log-file=/var/log/coin.log"}, "/var/log/coin.log"},
	} {
		var f FileFlag
		fs := flag.NewFlagSet("x", flag.ContinueOnError)
		fs.Var(&f, "log-file", "")
		if err := fs.Parse(c.args); err != nil {
			t.Fatal(err)
		}
		if got := f.Path("/data/node.log"); got != c.want {
			t.Errorf("%v: %q, want %q", c.args, got, c.want)
		}
	}
}

// Output writes the same records to standard error and the file (0600, appended).
func TestOutputFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "sub", "d.log")
	var stderr bytes.Buffer
	for i := range 2 {
		lg, closer, err := Output{Levels: Levels{}, Format: FormatText, Stderr: &stderr, File: path}.Open()
		if err != nil {
			t.Fatal(err)
		}
		lg.Info("started", "run", i)
		closer.Close()
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if string(data) != stderr.String() || strings.Count(string(data), "msg=started") != 2 {
		t.Fatalf("file %q, stderr %q", data, stderr.String())
	}
	if st, _ := os.Stat(path); st.Mode().Perm() != 0o600 {
		t.Fatalf("mode %v", st.Mode())
	}
	lg, closer, err := Output{}.Open()
	if err != nil || lg == nil {
		t.Fatal(err)
	}
	closer.Close()
}

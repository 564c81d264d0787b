package confile

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
)

// MaxFileSize bounds the configuration file that Read reads (1 MiB): a file larger than any
// real configuration is a mistake (a log or a database named by --conf).
const MaxFileSize = 1 << 20

// Sections are the section names a file may use: the networks.
var Sections = []string{"mainnet", "testnet", "regtest"}

// ErrSyntax is what every malformed line's error matches (errors.Is).
var ErrSyntax = errors.New("malformed configuration line")

// LineError is an error at one line of a configuration file.
type LineError struct {
	Path string // the file as it was named
	Line int    // 1-based
	Msg  string
	Err  error // the kind (ErrSyntax) or the cause
}

func (e *LineError) Error() string { return fmt.Sprintf("%s:%d: %s", e.Path, e.Line, e.Msg) }

// Unwrap is the error's kind or cause.
func (e *LineError) Unwrap() error { return e.Err }

// Entry is one key=value line.
type Entry struct {
	Section string // "" at the top of the file, else a network
	Key     string
	Value   string
	Line    int
}

// File is a parsed configuration file.
type File struct {
	Path    string
	Entries []Entry // in the file's order
}

// Read parses the file at path (at most MaxFileSize bytes).
func Read(path string) (*File, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if st, err := f.Stat(); err == nil && st.IsDir() {
		return nil, fmt.Errorf("%s: is a directory", path)
	}
	b, err := io.ReadAll(io.LimitReader(f, MaxFileSize+1))
	if err != nil {
		return nil, err
	}
	if len(b) > MaxFileSize {
		return nil, fmt.Errorf("%s: larger than %d bytes: not a configuration file", path, MaxFileSize)
	}
	return Parse(path, strings.NewReader(string(b)))
}

// Parse reads a configuration file from r; path names it in errors. Blank lines and
// comments (from a "#" at the start of a line or after white space to the end of the line)
// are skipped; white space around keys, values and section names is ignored.
func Parse(path string, r io.Reader) (*File, error) {
	f := &File{Path: path}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 4096), MaxFileSize)
	section := ""
	for n := 1; sc.Scan(); n++ {
		line := sc.Text()
		if n == 1 {
			line = strings.TrimPrefix(line, "\uFEFF") // a byte order mark some editors write
		}
		line = strings.TrimSpace(stripComment(line))
		bad := func(format string, args ...any) error {
			return &LineError{Path: path, Line: n, Msg: fmt.Sprintf(format, args...), Err: ErrSyntax}
		}
		switch {
		case line == "":
			continue
		case strings.HasPrefix(line, "["):
			name, ok := strings.CutSuffix(line, "]")
			name = strings.TrimSpace(strings.TrimPrefix(name, "["))
			if !ok || !validSection(name) {
				return nil, bad("section %s: want [%s]", line, strings.Join(Sections, "], ["))
			}
			section = name
			continue
		}
		key, value, ok := strings.Cut(line, "=")
		if !ok {
			return nil, bad("%q is not key=value", line)
		}
		key, value = strings.TrimSpace(key), strings.TrimSpace(value)
		if !validKey(key) {
			if strings.HasPrefix(key, "-") {
				return nil, bad("key %q: write the option's name without dashes (%s)", key, strings.TrimLeft(key, "-"))
			}
			return nil, bad("key %q: want an option's long name (letters, digits and dashes)", key)
		}
		switch key {
		case "conf":
			return nil, bad("conf cannot be set in a configuration file")
		case "network":
			if section != "" {
				return nil, bad("network set in the [%s] section: set it at the top of the file", section)
			}
			if !validSection(value) {
				return nil, bad("network %q: want %s", value, strings.Join(Sections, ", "))
			}
		}
		f.Entries = append(f.Entries, Entry{Section: section, Key: key, Value: value, Line: n})
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return f, nil
}

// stripComment drops a comment: from a "#" that starts the line or follows white space.
func stripComment(s string) string {
	for i := 0; i < len(s); i++ {
		if s[i] == '#' && (i == 0 || s[i-1] == ' ' || s[i-1] == '\t') {
			return s[:i]
		}
	}
	return s
}

func validSection(name string) bool {
	for _, s := range Sections {
		if s == name {
			return true
		}
	}
	return false
}

// validKey reports whether k looks like a long option name: a letter, then letters, digits
// and dashes.
func validKey(k string) bool {
	if k == "" || !(k[0] >= 'a' && k[0] <= 'z' || k[0] >= 'A' && k[0] <= 'Z') {
		return false
	}
	for i := 1; i < len(k); i++ {
		c := k[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_') {
			return false
		}
	}
	return true
}

// Values are the entries of key that apply on network net: those of net's section when it
// has any, else those at the top of the file. net "" (unknown) takes the top's only.
func (f *File) Values(key, net string) []Entry {
	var top, sec []Entry
	for _, e := range f.Entries {
		if e.Key != key {
			continue
		}
		switch e.Section {
		case "":
			top = append(top, e)
		case net:
			sec = append(sec, e)
		}
	}
	if net != "" && len(sec) > 0 {
		return sec
	}
	return top
}

// Network is the value of the top's network key, "" when there is none (the last one when
// it is repeated; Apply reports the repetition).
func (f *File) Network() (Entry, bool) {
	v := f.Values("network", "")
	if len(v) == 0 {
		return Entry{}, false
	}
	return v[len(v)-1], true
}

package docs

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"
	"unicode"
)

// TestReferencesExist: every reference the repository's text makes to a file or a section
// resolves inside the repository. It reads the Go sources (help texts and comments
// included), the markdown, the scripts and the web assets, and fails on
//
//   - a relative markdown link whose file does not exist, or whose #anchor is neither an
//     <a id> nor a heading of the target;
//   - a mention of a repository path (docs/x.md, lib/x/y.go, scripts/..., cmd/...) that
//     exists neither from the repository's root nor from the mentioning file's directory,
//     and a #anchor after a docs/x.md mention that the document lacks;
//   - a protocol section ("protocol §9.4", "docs/protocol.md section 3", a bare "§8") that
//     is not a numbered heading of docs/protocol.md;
//   - any citation of a document that is not in the repository (outsideDocs: the design and
//     style notes, the users' spec and its endpoint or section numbers). Users do not have
//     them: cite docs/protocol.md sections instead.
//
// The generated man/ and completions/ are not read: they come from the help texts, which are.
func TestReferencesExist(t *testing.T) {
	root, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	sections := protocolSections(t, filepath.Join(root, "docs", "protocol.md"))
	anchors := map[string]map[string]bool{} // markdown file → its anchors, read on demand
	anchorsOf := func(path string) map[string]bool {
		if a, ok := anchors[path]; ok {
			return a
		}
		a := markdownAnchors(t, path)
		anchors[path] = a
		return a
	}

	var problems []string
	allowedSeen := map[string]bool{}
	report := func(file string, line int, format string, args ...any) {
		rel, _ := filepath.Rel(root, file)
		rel = filepath.ToSlash(rel)
		msg := fmt.Sprintf(format, args...)
		for _, a := range notYetFixed {
			if a.file == rel && strings.Contains(msg, a.text) {
				allowedSeen[a.file+"\x00"+a.text] = true
				t.Logf("%s:%d: %s (not yet fixed: %s)", rel, line, msg, a.why)
				return
			}
		}
		problems = append(problems, fmt.Sprintf("%s:%d: %s", rel, line, msg))
	}

	self := filepath.Join(root, "docs", "refs_test.go")
	files := textFiles(t, root)
	if len(files) < 100 {
		t.Fatalf("found only %d text files under %s: is the test run from docs/?", len(files), root)
	}
	for _, file := range files {
		if file == self {
			continue // its doc and cases name references that must not exist
		}
		isMarkdown := strings.HasSuffix(file, ".md")
		forEachLine(t, file, func(n int, line string) {
			for _, m := range reForbidden.FindAllString(line, -1) {
				report(file, n, "cites %q, which is not in the repository (cite docs/protocol.md)", strings.TrimLeft(m, " (`\"'"))
			}
			for _, ix := range reSection.FindAllStringSubmatchIndex(line, -1) {
				m0, num := line[ix[0]:ix[1]], line[ix[2]:ix[3]]
				if reOtherDoc.MatchString(line[max(0, ix[0]-16):ix[0]]) {
					continue // a section of an RFC, a BIP, ...
				}
				if !sections[num] {
					report(file, n, "%q: docs/protocol.md has no section %s", m0, num)
				}
			}
			for _, m := range reRepoPath.FindAllStringSubmatchIndex(line, -1) {
				if m[1] < len(line) && strings.ContainsRune("$<*{%", rune(line[m[1]])) {
					continue // a pattern ("completions/_$$t"), not a path
				}
				p, anchor := line[m[2]:m[3]], ""
				if m[4] >= 0 {
					anchor = line[m[4]+1 : m[5]]
				}
				target, ok := resolve(root, filepath.Dir(file), p)
				if !ok {
					report(file, n, "%q does not exist", p)
					continue
				}
				if anchor != "" && strings.HasSuffix(target, ".md") && !anchorsOf(target)[anchor] {
					report(file, n, "%q: %s has no anchor #%s", p+"#"+anchor, p, anchor)
				}
			}
			if !isMarkdown {
				return
			}
			for _, m := range reMarkdownLink.FindAllStringSubmatch(line, -1) {
				link := m[1]
				if reScheme.MatchString(link) {
					continue
				}
				p, anchor, _ := strings.Cut(link, "#")
				target := file
				if p != "" {
					target = filepath.Join(filepath.Dir(file), filepath.FromSlash(p))
					if _, err := os.Stat(target); err != nil {
						report(file, n, "link %q: %s does not exist", link, p)
						continue
					}
				}
				if anchor != "" && strings.HasSuffix(target, ".md") && !anchorsOf(target)[anchor] {
					report(file, n, "link %q: no anchor #%s in %s", link, anchor, filepath.Base(target))
				}
			}
		})
	}
	for _, a := range notYetFixed {
		if !allowedSeen[a.file+"\x00"+a.text] {
			problems = append(problems, fmt.Sprintf("notYetFixed lists %s %q, which no longer occurs: drop the entry", a.file, a.text))
		}
	}
	sort.Strings(problems)
	for _, p := range problems {
		t.Error(p)
	}
}

// notYetFixed are references in files another change owns, to be fixed there; each entry
// must still occur (the test fails on a stale entry, so the list empties as they are fixed).
var notYetFixed = []struct{ file, text, why string }{}

// outsideDocs names the notes the project is built from and its users do not have (the
// design notes, the style notes, the directory of the users' spec): code, help and docs
// cite docs/ (docs/protocol.md sections) instead. reForbidden matches citations of them.
var outsideDocs = [...]string{"DESIGN", "STYLE.md", "spec/"}

var (
	// reForbidden: citations of the outsideDocs.
	reForbidden = regexp.MustCompile(`\bDESIGN(?:\.md)?(?:\s*§?\s*\d+(?:\.\d+)*)?\b|\bSTYLE\.md\b|(?:^|[^\w/.-])spec/[\w./-]*[\w]|\b[Ss]pec(?:'s)?[,:]?\s+(?:endpoints?|section|§)\s*\d+`)
	// reSection: a protocol section, "§9.4", "protocol.md section 3" or "protocol section 3".
	reSection = regexp.MustCompile(`(?:§\s*|\bprotocol(?:\.md)?,?\s+section\s+)(\d+(?:\.\d+)*)`)
	// reOtherDoc: a public standard just before a section sign ("RFC 8032 §5.1").
	reOtherDoc = regexp.MustCompile(`\b(?:RFC|BIP|ZIP|SLIP|FIPS|ISO|IEEE)[- ]?\d*[^§]*$`)
	// reRepoPath: a path under one of the repository's top directories, with an optional
	// #anchor; not part of a longer path or an import path.
	reRepoPath = regexp.MustCompile(`(?:^|[^\w/.\-~$<>*])((?:docs|lib|cmd|scripts|bench|testdata|deploy|man|completions)/[\w./-]*[\w])(#[\w-]+)?`)
	// reMarkdownLink: the target of a markdown link or image.
	reMarkdownLink = regexp.MustCompile(`\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)`)
	// reGoIdent: an exported Go identifier after a package path.
	reGoIdent = regexp.MustCompile(`^(.*)\.[A-Z]\w*$`)
	reScheme  = regexp.MustCompile(`^[a-zA-Z][a-zA-Z0-9+.-]*:`)
	// reHeading: an ATX markdown heading.
	reHeading = regexp.MustCompile(`^#{1,6}\s+(.*?)\s*#*\s*$`)
	// reAnchorID: an explicit anchor, <a id="x"> or <a name="x">.
	reAnchorID = regexp.MustCompile(`<a\s+(?:id|name)="([^"]+)"`)
	// reNumbered: a numbered heading of docs/protocol.md, "## 9. Proof" or "### 9.4 The".
	reNumbered = regexp.MustCompile(`^#{2,4}\s+(\d+(?:\.\d+)*)\.?\s`)
)

// resolve finds p (slash-separated) from the repository's root or from dir. A Go
// identifier after a package path ("lib/miner.NewWork") names the package.
func resolve(root, dir, p string) (string, bool) {
	for _, base := range []string{root, dir} {
		target := filepath.Join(base, filepath.FromSlash(p))
		if _, err := os.Stat(target); err == nil {
			return target, true
		}
	}
	if m := reGoIdent.FindStringSubmatch(p); m != nil {
		return resolve(root, dir, m[1])
	}
	return "", false
}

// textFiles lists the files whose text the test reads.
func textFiles(t *testing.T, root string) []string {
	t.Helper()
	exts := map[string]bool{".go": true, ".md": true, ".sh": true, ".bash": true, ".json": true,
		".svg": true, ".html": true, ".js": true, ".mjs": true, ".css": true, ".py": true, ".tmpl": true,
		".txt": true, ".yml": true, ".yaml": true, ".service": true, ".conf": true, ".example": true}
	skipDirs := map[string]bool{".git": true, "man": true, "completions": true, "bin": true,
		"node_modules": true, "tmp": true, "fuzz": true}
	var files []string
	err := filepath.WalkDir(root, func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if path != root && skipDirs[d.Name()] {
				return filepath.SkipDir
			}
			// testdata/schemas hold other projects' files verbatim (and a README naming where
			// they come from): their paths are their repositories', not ours.
			if d.Name() == "schemas" && filepath.Base(filepath.Dir(path)) == "testdata" {
				return filepath.SkipDir
			}
			return nil
		}
		rel, _ := filepath.Rel(root, path)
		if exts[filepath.Ext(path)] || d.Name() == "Makefile" || filepath.ToSlash(rel) == ".ci/run" {
			files = append(files, path)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return files
}

func forEachLine(t *testing.T, path string, f func(n int, line string)) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	sc := bufio.NewScanner(bytes.NewReader(b))
	sc.Buffer(make([]byte, 0, 1<<16), 1<<24)
	for n := 1; sc.Scan(); n++ {
		f(n, sc.Text())
	}
	if err := sc.Err(); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
}

// protocolSections are the section numbers of docs/protocol.md's numbered headings.
func protocolSections(t *testing.T, path string) map[string]bool {
	t.Helper()
	s := map[string]bool{}
	forEachLine(t, path, func(_ int, line string) {
		if m := reNumbered.FindStringSubmatch(line); m != nil {
			s[m[1]] = true
		}
	})
	if !s["9.4"] || !s["14"] {
		t.Fatalf("docs/protocol.md: numbered sections not found (have %v)", s)
	}
	return s
}

// markdownAnchors are the anchors a link may name in the markdown file: its <a id>s and
// its headings' slugs, as GitHub makes them.
func markdownAnchors(t *testing.T, path string) map[string]bool {
	t.Helper()
	a := map[string]bool{}
	seen := map[string]int{}
	inFence := false
	forEachLine(t, path, func(_ int, line string) {
		if strings.HasPrefix(strings.TrimSpace(line), "```") {
			inFence = !inFence
			return
		}
		if inFence {
			return
		}
		for _, m := range reAnchorID.FindAllStringSubmatch(line, -1) {
			a[m[1]] = true
		}
		if m := reHeading.FindStringSubmatch(line); m != nil {
			slug := headingSlug(m[1])
			if k := seen[slug]; k > 0 {
				a[fmt.Sprintf("%s-%d", slug, k)] = true
			} else {
				a[slug] = true
			}
			seen[slug]++
		}
	})
	return a
}

// headingSlug is GitHub's anchor of a heading: lower case, markup and punctuation dropped,
// spaces as hyphens.
func headingSlug(h string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(h) {
		switch {
		case r == ' ':
			b.WriteByte('-')
		case r == '-' || r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r):
			b.WriteRune(r)
		}
	}
	return b.String()
}

func TestHeadingSlug(t *testing.T) {
	for h, want := range map[string]string{
		"peers.json":                                    "peersjson",
		"Batch verification (ZIP 215)":                  "batch-verification-zip-215",
		"Looking at a cluster: `getclusterinfo`":        "looking-at-a-cluster-getclusterinfo",
		"9.4 The agent API":                             "94-the-agent-api",
		"Before and after the keyed journal (issue 11)": "before-and-after-the-keyed-journal-issue-11",
	} {
		if got := headingSlug(h); got != want {
			t.Errorf("headingSlug(%q) = %q, want %q", h, got, want)
		}
	}
}

// TestReferencePatterns: what the scan finds and what it leaves alone.
func TestReferencePatterns(t *testing.T) {
	// The forms a citation of a document users do not have takes (outsideDocs), each made
	// here from the names, so that no line of the repository cites one.
	forbidden := []string{outsideDocs[0] + " 8", "(" + outsideDocs[0] + " 9.4)", "see " + outsideDocs[0] + ".md",
		outsideDocs[1], "endpoints 1 to 6 of " + outsideDocs[2] + "x.md", "(spec: endpoint 9)", "the spec, section 2"}
	for _, s := range forbidden {
		if !reForbidden.MatchString(s) {
			t.Errorf("%q: not flagged", s)
		}
	}
	allowed := []string{"the spec's fields", "for _, spec := range commands", "JSON-RPC 2.0 specification, section 7", "lib/jsonrpc/spec_test.go",
		"a DESIGNATED x", "specs/"}
	for _, s := range allowed {
		if m := reForbidden.FindString(s); m != "" {
			t.Errorf("%q: flagged %q", s, m)
		}
	}
	for _, s := range []string{"RFC 8032 §5.1.7", "BIP-39 §2", "ZIP 215 §3"} {
		ix := reSection.FindStringIndex(s)
		if ix == nil || !reOtherDoc.MatchString(s[max(0, ix[0]-16):ix[0]]) {
			t.Errorf("%q: not taken for another standard's section", s)
		}
	}
	if reOtherDoc.MatchString("protocol ") {
		t.Error(`"protocol §" taken for another standard's section`)
	}
	sec := map[string]string{"protocol §9.4's refund": "9.4", "docs/protocol.md section 3": "3",
		"(§11)": "11", "protocol.md, section 12": "12"}
	for s, want := range sec {
		m := reSection.FindStringSubmatch(s)
		if m == nil || m[1] != want {
			t.Errorf("%q: section %v, want %s", s, m, want)
		}
	}
	paths := map[string]string{"see docs/faucet.md#limits.": "docs/faucet.md#limits", "`lib/rpcapi/client.go`": "lib/rpcapi/client.go",
		"github.com/cointoolkit/coin/lib/types": "", "/var/lib/coin": "", "cmd/<tool>/": "", "lib/*/testdata/": "",
		"(scripts/cron)": "scripts/cron", "lib/miner.NewWork": "lib/miner.NewWork", "completions/_$$t": "completions/_"}
	for s, want := range paths {
		got := ""
		if m := reRepoPath.FindStringSubmatch(s); m != nil {
			got = m[1] + m[2]
		}
		if got != want {
			t.Errorf("%q: path %q, want %q", s, got, want)
		}
	}
}

package main

import (
	"encoding/json"
	"slices"
	"strings"
)

// regroupHelp puts the method list of the node's "help" (no argument) in order: one section
// per category, in the order 'coin-cli --help' lists them (by name), each with its methods in
// the order the node gave them. A node lists its methods in catalogue order, under a header
// each time the category changes, so a category came back several times. Anything that is
// not such a list is returned unchanged.
func regroupHelp(raw json.RawMessage) json.RawMessage {
	var text string
	if json.Unmarshal(raw, &text) != nil || !strings.HasPrefix(text, "== ") {
		return raw
	}
	sections := map[string][]string{}
	var cats []string
	cat := ""
	for _, line := range strings.Split(text, "\n") {
		if name, ok := strings.CutPrefix(line, "== "); ok && strings.HasSuffix(name, " ==") {
			cat = strings.TrimSuffix(name, " ==")
			if _, seen := sections[cat]; !seen {
				cats = append(cats, cat)
				sections[cat] = nil
			}
			continue
		}
		if strings.TrimSpace(line) != "" {
			sections[cat] = append(sections[cat], line)
		}
	}
	slices.Sort(cats)
	var b strings.Builder
	for i, c := range cats {
		if i > 0 {
			b.WriteString("\n")
		}
		b.WriteString("== " + c + " ==\n")
		for _, line := range sections[c] {
			b.WriteString(line + "\n")
		}
	}
	out, err := json.Marshal(strings.TrimRight(b.String(), "\n"))
	if err != nil {
		return raw
	}
	return out
}

package main

import (
	"encoding/json"
	"testing"
)

func TestRegroupHelp(t *testing.T) {
	in := "== chain ==\ngetblockcount\ngetblockhash \"height\"\n\n== node ==\ngetinfo\n\n== chain ==\ngetblockchaininfo\n\n" +
		"== util ==\nvalidateaddress \"address\"\n\n== conduct ==\nlistagents ( offset )\n\n== util ==\nhelp ( method )\n\n== node ==\nstop"
	want := "== chain ==\ngetblockcount\ngetblockhash \"height\"\ngetblockchaininfo\n\n== conduct ==\nlistagents ( offset )\n\n" +
		"== node ==\ngetinfo\nstop\n\n== util ==\nvalidateaddress \"address\"\nhelp ( method )"
	raw, _ := json.Marshal(in)
	var got string
	if err := json.Unmarshal(regroupHelp(raw), &got); err != nil || got != want {
		t.Errorf("regrouped:\n%s\nwant:\n%s", got, want)
	}
	for _, keep := range []string{`"getblock \"hash\"\n\nA block."`, `null`, `{"a":1}`} {
		if got := string(regroupHelp(json.RawMessage(keep))); got != keep {
			t.Errorf("%s changed to %s", keep, got)
		}
	}
}

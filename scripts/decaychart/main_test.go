package main

import (
	"bytes"
	"encoding/xml"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestChart writes the chart into a temporary directory and checks that it is well-formed XML
// with an svg root and one polyline per holding, and that the table has a row per holding.
func TestChart(t *testing.T) {
	out := filepath.Join(t.TempDir(), "chart.svg")
	var table bytes.Buffer
	if err := run([]string{"-o", out}, &table); err != nil {
		t.Fatal(err)
	}
	raw, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	dec := xml.NewDecoder(bytes.NewReader(raw))
	root := ""
	shares := map[string]int{}
	for {
		tok, err := dec.Token()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatalf("the SVG is not well-formed XML: %v", err)
		}
		el, ok := tok.(xml.StartElement)
		if !ok {
			continue
		}
		if root == "" {
			root = el.Name.Local
		}
		if el.Name.Local != "polyline" {
			continue
		}
		for _, a := range el.Attr {
			if a.Name.Local == "data-share" {
				shares[a.Value]++
			}
		}
	}
	if root != "svg" {
		t.Errorf("root element %q, want svg", root)
	}
	for _, share := range []string{"0.1%", "1%", "10%", "50%"} {
		if shares[share] != 1 {
			t.Errorf("%d series for %s, want 1", shares[share], share)
		}
		if !strings.Contains(table.String(), "\n"+share+" ") {
			t.Errorf("no table row for %s:\n%s", share, table.String())
		}
	}
	if len(shares) != 4 {
		t.Errorf("series %v, want four", shares)
	}
}

package main

import (
	"bytes"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestPlot feeds the benchmark's lines of two runs (with lines the plot ignores between
// them) and checks that the SVG is well-formed XML with an svg root and a polyline per run in
// each panel, and that the table has a row per tenth and run.
func TestPlot(t *testing.T) {
	var in strings.Builder
	in.WriteString("goos: linux\nscale-chain dir=/x blocks=1104\nscale-machine cpu=\"AMD EPYC\" cores=2\n")
	for _, run := range []string{"baseline", "current"} {
		for n := 1; n <= 10; n++ {
			fmt.Fprintf(&in, "scale-tenth run=%s tenth=%d from=%d to=%d blocks=100 transfers=100000 seconds=10.0 blocks_per_s=10.00 tx_per_s=%d.0 utxo=%d rss_mib=%d.0 hwm_mib=500.0\n",
				run, n, 5+100*n, 104+100*n, 10000-100*n, 100000*n, 300+10*n)
			fmt.Fprintf(&in, "scale-sample run=%s t=%d.00 height=%d rss_mib=%d.0\n", run, n, 100*n, 300+20*n)
		}
	}
	in.WriteString("BenchmarkScale-2 1 100 ns/op\n")
	out := filepath.Join(t.TempDir(), "plot.svg")
	var table bytes.Buffer
	if err := runMain([]string{"-o", out}, strings.NewReader(in.String()), &table); err != nil {
		t.Fatal(err)
	}
	raw, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	dec := xml.NewDecoder(bytes.NewReader(raw))
	root, lines := "", 0
	for {
		tok, err := dec.Token()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatalf("not well-formed XML: %v", err)
		}
		if se, ok := tok.(xml.StartElement); ok {
			if root == "" {
				root = se.Name.Local
			}
			if se.Name.Local == "polyline" {
				lines++
			}
		}
	}
	if root != "svg" || lines != 4 {
		t.Fatalf("root %q with %d polylines, want svg with 4", root, lines)
	}
	if rows := strings.Count(table.String(), "\n| "); rows != 20 {
		t.Fatalf("%d table rows, want 20:\n%s", rows, table.String())
	}
}

// TestNoTenths: an input without the benchmark's lines is an error.
func TestNoTenths(t *testing.T) {
	err := runMain([]string{"-o", filepath.Join(t.TempDir(), "x.svg")}, strings.NewReader("PASS\n"), io.Discard)
	if err == nil {
		t.Fatal("no error for an input without scale-tenth lines")
	}
}

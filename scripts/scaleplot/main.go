// Command scaleplot draws the output of the scale benchmark (make scale, bench/scale) as an
// SVG: transfers/s and blocks/s in each tenth of the sync, and the syncing node's RSS over
// the sync, one line per run (baseline and current when both ran):
//
//	go run ./scripts/scaleplot -i scale.out -o docs/scale-sync.svg
//
// It reads the benchmark's scale-tenth, scale-sample and scale-summary lines and ignores the
// rest; it also prints the tenths as a Markdown table for docs/chain.md.
package main

import (
	"bufio"
	"bytes"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
)

// tenth is one scale-tenth line.
type tenth struct {
	n              int
	blocks, txs    int
	seconds        float64
	blocksPS, txPS float64
	utxo           int
	rssMiB         float64
	from, to       int
	hasFields      bool
}

// sample is one scale-sample line: the node's height and RSS at a time.
type sample struct {
	t, rss float64
	height int
}

// run is one sync (run=baseline or run=current).
type run struct {
	name    string
	tenths  []tenth
	samples []sample
}

// fields splits "key=value key=value" (values may be quoted) into a map.
func fields(line string) map[string]string {
	out := map[string]string{}
	for _, f := range strings.Fields(line)[1:] {
		k, v, ok := strings.Cut(f, "=")
		if ok {
			out[k] = strings.Trim(v, `"`)
		}
	}
	return out
}

func num(m map[string]string, k string) float64 {
	v, _ := strconv.ParseFloat(m[k], 64)
	return v
}

// parse reads the benchmark's output.
func parse(r io.Reader) ([]*run, error) {
	byName := map[string]*run{}
	var order []*run
	get := func(name string) *run {
		if byName[name] == nil {
			byName[name] = &run{name: name}
			order = append(order, byName[name])
		}
		return byName[name]
	}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		switch {
		case strings.HasPrefix(line, "scale-tenth "):
			m := fields(line)
			get(m["run"]).tenths = append(get(m["run"]).tenths, tenth{n: int(num(m, "tenth")), blocks: int(num(m, "blocks")),
				txs: int(num(m, "transfers")), seconds: num(m, "seconds"), blocksPS: num(m, "blocks_per_s"),
				txPS: num(m, "tx_per_s"), utxo: int(num(m, "utxo")), rssMiB: num(m, "rss_mib"),
				from: int(num(m, "from")), to: int(num(m, "to")), hasFields: true})
		case strings.HasPrefix(line, "scale-sample "):
			m := fields(line)
			get(m["run"]).samples = append(get(m["run"]).samples, sample{t: num(m, "t"), rss: num(m, "rss_mib"),
				height: int(num(m, "height"))})
		}
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	var out []*run
	for _, r := range order {
		if len(r.tenths) > 0 {
			sort.Slice(r.tenths, func(i, j int) bool { return r.tenths[i].n < r.tenths[j].n })
			out = append(out, r)
		}
	}
	if len(out) == 0 {
		return nil, errors.New("no scale-tenth lines in the input")
	}
	return out, nil
}

// table prints the tenths of every run as Markdown.
func table(w io.Writer, runs []*run) {
	fmt.Fprintln(w, "| run | tenth | heights | transfers | seconds | blocks/s | transfers/s | UTXO set after | RSS (MiB) |")
	fmt.Fprintln(w, "|---|---|---|---|---|---|---|---|---|")
	for _, r := range runs {
		for _, t := range r.tenths {
			fmt.Fprintf(w, "| %s | %d | %d–%d | %d | %.1f | %.1f | %.0f | %d | %.0f |\n", r.name, t.n, t.from, t.to, t.txs,
				t.seconds, t.blocksPS, t.txPS, t.utxo, t.rssMiB)
		}
	}
}

// Layout of the SVG: two panels side by side.
const (
	width, height = 960, 420
	panelW        = 380
	panelH        = 280
	top           = 60
	leftA         = 80
	leftB         = 80 + panelW + 110
)

var colors = map[string]string{"baseline": "#d62728", "current": "#1f77b4"}

func colorOf(name string, i int) string {
	if c, ok := colors[name]; ok {
		return c
	}
	return []string{"#2ca02c", "#9467bd", "#8c564b"}[i%3]
}

// niceMax rounds v up to 1, 2 or 5 times a power of ten.
func niceMax(v float64) float64 {
	if v <= 0 {
		return 1
	}
	p := 1.0
	for p*10 <= v {
		p *= 10
	}
	for p > v {
		p /= 10
	}
	for _, m := range []float64{1, 2, 5, 10} {
		if m*p >= v {
			return m * p
		}
	}
	return 10 * p
}

func svg(runs []*run) []byte {
	var b bytes.Buffer
	fmt.Fprintf(&b, `<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" viewBox="0 0 %d %d" font-family="sans-serif" font-size="12">`+"\n", width, height, width, height)
	fmt.Fprintf(&b, `<rect width="%d" height="%d" fill="white"/>`+"\n", width, height)
	fmt.Fprintf(&b, `<text x="%d" y="24" font-size="15" text-anchor="middle">Scale: syncing a million transfers over loopback</text>`+"\n", width/2)

	// Panel A: transfers/s per tenth (blocks/s on the right axis: the same line over the
	// transfers per block).
	var maxTx float64
	perBlock := 0.0
	for _, r := range runs {
		for _, t := range r.tenths {
			maxTx = max(maxTx, t.txPS)
			if t.blocksPS > 0 && perBlock == 0 {
				perBlock = t.txPS / t.blocksPS
			}
		}
	}
	maxTx = niceMax(maxTx * 1.1)
	xA := func(n int) float64 { return leftA + (float64(n)-0.5)*panelW/10 }
	yA := func(v float64) float64 { return top + panelH - v*panelH/maxTx }
	axes(&b, leftA, "tenth of the blocks with transfers", "transfers/s")
	for i := 0; i <= 4; i++ {
		v := maxTx * float64(i) / 4
		y := yA(v)
		fmt.Fprintf(&b, `<line x1="%d" y1="%.1f" x2="%d" y2="%.1f" stroke="#ddd"/>`+"\n", leftA, y, leftA+panelW, y)
		fmt.Fprintf(&b, `<text x="%d" y="%.1f" text-anchor="end">%.0f</text>`+"\n", leftA-6, y+4, v)
		if perBlock > 0 {
			fmt.Fprintf(&b, `<text x="%d" y="%.1f">%.1f</text>`+"\n", leftA+panelW+6, y+4, v/perBlock)
		}
	}
	if perBlock > 0 {
		fmt.Fprintf(&b, `<text x="%d" y="%d" text-anchor="middle" transform="rotate(90 %d %d)">blocks/s</text>`+"\n",
			leftA+panelW+48, top+panelH/2, leftA+panelW+48, top+panelH/2)
	}
	for n := 1; n <= 10; n++ {
		fmt.Fprintf(&b, `<text x="%.1f" y="%d" text-anchor="middle">%d</text>`+"\n", xA(n), top+panelH+16, n)
	}
	for i, r := range runs {
		var pts []string
		for _, t := range r.tenths {
			pts = append(pts, fmt.Sprintf("%.1f,%.1f", xA(t.n), yA(t.txPS)))
		}
		c := colorOf(r.name, i)
		fmt.Fprintf(&b, `<polyline fill="none" stroke="%s" stroke-width="2" points="%s"/>`+"\n", c, strings.Join(pts, " "))
		for _, p := range pts {
			x, y, _ := strings.Cut(p, ",")
			fmt.Fprintf(&b, `<circle cx="%s" cy="%s" r="3" fill="%s"/>`+"\n", x, y, c)
		}
	}

	// Panel B: RSS over the sync (x: the node's height as a share of the tip's).
	var maxRSS float64 = 1024
	maxH := 0
	for _, r := range runs {
		for _, s := range r.samples {
			maxRSS = max(maxRSS, s.rss)
			maxH = max(maxH, s.height)
		}
	}
	maxRSS = niceMax(maxRSS * 1.05)
	if maxH == 0 {
		maxH = 1
	}
	xB := func(h int) float64 { return leftB + float64(h)*panelW/float64(maxH) }
	yB := func(v float64) float64 { return top + panelH - v*panelH/maxRSS }
	axes(&b, leftB, "height reached (share of the chain)", "RSS of the syncing node (MiB)")
	for i := 0; i <= 4; i++ {
		v := maxRSS * float64(i) / 4
		fmt.Fprintf(&b, `<line x1="%d" y1="%.1f" x2="%d" y2="%.1f" stroke="#ddd"/>`+"\n", leftB, yB(v), leftB+panelW, yB(v))
		fmt.Fprintf(&b, `<text x="%d" y="%.1f" text-anchor="end">%.0f</text>`+"\n", leftB-6, yB(v)+4, v)
	}
	for i := 0; i <= 4; i++ {
		fmt.Fprintf(&b, `<text x="%.1f" y="%d" text-anchor="middle">%d%%</text>`+"\n", xB(maxH*i/4), top+panelH+16, 25*i)
	}
	fmt.Fprintf(&b, `<line x1="%d" y1="%.1f" x2="%d" y2="%.1f" stroke="#555" stroke-dasharray="6 4"/>`+"\n", leftB, yB(1024), leftB+panelW, yB(1024))
	fmt.Fprintf(&b, `<text x="%d" y="%.1f" text-anchor="end" fill="#555">1 GiB bound</text>`+"\n", leftB+panelW-4, yB(1024)-4)
	for i, r := range runs {
		var pts []string
		for _, s := range r.samples {
			pts = append(pts, fmt.Sprintf("%.1f,%.1f", xB(s.height), yB(s.rss)))
		}
		if len(pts) > 0 {
			fmt.Fprintf(&b, `<polyline fill="none" stroke="%s" stroke-width="1.5" points="%s"/>`+"\n", colorOf(r.name, i), strings.Join(pts, " "))
		}
	}

	// Legend.
	for i, r := range runs {
		x := leftA + 160*i
		fmt.Fprintf(&b, `<rect x="%d" y="%d" width="14" height="4" fill="%s"/>`+"\n", x, height-22, colorOf(r.name, i))
		fmt.Fprintf(&b, `<text x="%d" y="%d">%s</text>`+"\n", x+20, height-16, esc(r.name))
	}
	b.WriteString("</svg>\n")
	return b.Bytes()
}

// axes draws a panel's frame and axis titles.
func axes(b *bytes.Buffer, left int, xTitle, yTitle string) {
	fmt.Fprintf(b, `<rect x="%d" y="%d" width="%d" height="%d" fill="none" stroke="#333"/>`+"\n", left, top, panelW, panelH)
	fmt.Fprintf(b, `<text x="%d" y="%d" text-anchor="middle">%s</text>`+"\n", left+panelW/2, top+panelH+36, esc(xTitle))
	fmt.Fprintf(b, `<text x="%d" y="%d" text-anchor="middle" transform="rotate(-90 %d %d)">%s</text>`+"\n",
		left-56, top+panelH/2, left-56, top+panelH/2, esc(yTitle))
}

func esc(s string) string {
	r := strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;", `"`, "&quot;")
	return r.Replace(s)
}

func runMain(args []string, stdin io.Reader, stdout io.Writer) error {
	fs := flag.NewFlagSet("scaleplot", flag.ContinueOnError)
	in := fs.String("i", "-", "the benchmark's output (- for standard input)")
	out := fs.String("o", "docs/scale-sync.svg", "the SVG to write")
	if err := fs.Parse(args); err != nil {
		return err
	}
	r := stdin
	if *in != "-" {
		f, err := os.Open(*in)
		if err != nil {
			return err
		}
		defer f.Close()
		r = f
	}
	runs, err := parse(r)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(*out), 0o755); err != nil {
		return err
	}
	if err := os.WriteFile(*out, svg(runs), 0o644); err != nil {
		return err
	}
	table(stdout, runs)
	return nil
}

func main() {
	if err := runMain(os.Args[1:], os.Stdin, os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "scaleplot:", err)
		os.Exit(1)
	}
}

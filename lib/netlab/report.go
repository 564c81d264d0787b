package netlab

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"time"
)

// Meta is the run's machine and settings, for the report.
type Meta struct {
	Nodes, Regions int
	Mode           PeerMode
	Cfg            Config
	Interval       time.Duration
	SteadyInterval time.Duration // the steady state's block interval, if not Interval
	Rate           float64
	Gateways       int
	Took           time.Duration
	GoVersion      string
}

// cpuModel is /proc/cpuinfo's first model name.
func cpuModel() string {
	b, _ := os.ReadFile("/proc/cpuinfo")
	for _, ln := range strings.Split(string(b), "\n") {
		if k, v, ok := strings.Cut(ln, ":"); ok && strings.TrimSpace(k) == "model name" {
			return strings.TrimSpace(v)
		}
	}
	return "unknown CPU"
}

// WriteReport writes the figures section of the network report: the Markdown file at
// path keeps everything above the marker line "<!-- netlab:results -->" (the hand-written
// explanation) and gets the results below it; each scenario's CDF goes to an SVG beside it
// (network-<scenario>.svg).
func WriteReport(path string, m Meta, results []*Result) error {
	const marker = "<!-- netlab:results -->"
	head := "# The network lab\n\n" + marker + "\n"
	if b, err := os.ReadFile(path); err == nil {
		if i := bytes.Index(b, []byte(marker)); i >= 0 {
			head = string(b[:i]) + marker + "\n"
		}
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	var out strings.Builder
	out.WriteString(head)
	load, _ := os.ReadFile("/proc/loadavg")
	fmt.Fprintf(&out, "\n_Written by `make netlab` (%s, %d CPUs, %s, %s); the run took %v; load average at its end %s._\n\n",
		cpuModel(), runtime.NumCPU(), m.GoVersion, time.Now().UTC().Format("2006-01-02"), m.Took.Round(time.Second),
		strings.Join(strings.Fields(string(load))[:min(3, len(strings.Fields(string(load))))], " "))
	steady := ""
	if m.SteadyInterval != 0 && m.SteadyInterval != m.Interval {
		steady = fmt.Sprintf(" (%v in the steady state)", m.SteadyInterval)
	}
	fmt.Fprintf(&out, "Settings: %d nodes in %d regions; one-way delay %v inside a region, %s between regions; %.0f%% jitter; %.1f%% loss; "+
		"%d miners, a block every %v on average%s (Poisson) by generatetoaddress; %.0f transfers/s through %d nodes; peer mode **%s**.\n\n",
		m.Nodes, m.Regions, m.Cfg.IntraDelay, interList(m.Cfg), 100*m.Cfg.Jitter, 100*m.Cfg.Loss, m.Cfg.Miners, m.Interval, steady, m.Rate, m.Gateways, m.Mode)
	out.WriteString("| goal | target | measured | met |\n|---|---|---|---|\n")
	for _, r := range results {
		for _, g := range r.Goals {
			met := "yes"
			if !g.Met {
				met = "**no**"
			}
			fmt.Fprintf(&out, "| %s | %s | %s | %s |\n", g.What, g.Target, g.Measured, met)
		}
	}
	out.WriteString("\n")
	for _, r := range results {
		fmt.Fprintf(&out, "### %s\n\n", r.Name)
		for _, ln := range r.Lines {
			fmt.Fprintf(&out, "- %s\n", ln)
		}
		if hasData(r.Series) {
			name := "network-" + strings.ReplaceAll(strings.ReplaceAll(r.Name, " ", "-"), "/", "") + ".svg"
			if err := os.WriteFile(filepath.Join(filepath.Dir(path), name), CDFSVG(r.Name, r.Series), 0o644); err != nil {
				return err
			}
			fmt.Fprintf(&out, "\n![%s: CDF](%s)\n", r.Name, name)
		}
		out.WriteString("\n")
	}
	return os.WriteFile(path, []byte(out.String()), 0o644)
}

func interList(c Config) string {
	var parts []string
	for _, d := range c.InterDelay {
		parts = append(parts, d.String())
	}
	return strings.Join(parts, ", ")
}

func hasData(ss []Series) bool {
	for _, s := range ss {
		if len(s.Delays) > 0 {
			return true
		}
	}
	return false
}

// The plot's geometry (the style of scripts/scaleplot).
const (
	plotW, plotH         = 640, 320
	plotLeft, plotTop    = 70, 40
	panelWidth, panelHgt = 540, 200
)

var plotColors = []string{"#1f77b4", "#d62728", "#2ca02c", "#9467bd"}

// CDFSVG draws the empirical CDF of each series (x: delay in ms, y: share) as an SVG.
func CDFSVG(title string, ss []Series) []byte {
	var maxD time.Duration
	for _, s := range ss {
		for _, d := range s.Delays {
			maxD = max(maxD, d)
		}
	}
	maxMS := niceMax(float64(maxD)/1e6 + 1)
	x := func(d time.Duration) float64 { return plotLeft + float64(d)/1e6*panelWidth/maxMS }
	y := func(q float64) float64 { return plotTop + panelHgt - q*panelHgt }
	var b bytes.Buffer
	fmt.Fprintf(&b, `<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" font-family="sans-serif" font-size="12">`+"\n", plotW, plotH)
	fmt.Fprintf(&b, `<rect width="%d" height="%d" fill="white"/>`+"\n", plotW, plotH)
	fmt.Fprintf(&b, `<text x="%d" y="20" font-size="14" font-weight="bold">%s: CDF</text>`+"\n", plotLeft, esc(title))
	fmt.Fprintf(&b, `<rect x="%d" y="%d" width="%d" height="%d" fill="none" stroke="#333"/>`+"\n", plotLeft, plotTop, panelWidth, panelHgt)
	for i := 0; i <= 4; i++ {
		q := float64(i) / 4
		fmt.Fprintf(&b, `<line x1="%d" y1="%.1f" x2="%d" y2="%.1f" stroke="#ddd"/>`+"\n", plotLeft, y(q), plotLeft+panelWidth, y(q))
		fmt.Fprintf(&b, `<text x="%d" y="%.1f" text-anchor="end">%.0f%%</text>`+"\n", plotLeft-6, y(q)+4, 100*q)
		v := maxMS * float64(i) / 4
		fmt.Fprintf(&b, `<text x="%.1f" y="%d" text-anchor="middle">%s</text>`+"\n", plotLeft+float64(i)*panelWidth/4, plotTop+panelHgt+16, fmtMS(v))
	}
	fmt.Fprintf(&b, `<text x="%d" y="%d" text-anchor="middle">delay (ms)</text>`+"\n", plotLeft+panelWidth/2, plotTop+panelHgt+34)
	fmt.Fprintf(&b, `<text x="%d" y="%d" text-anchor="middle" transform="rotate(-90 %d %d)">share of (item, node) pairs</text>`+"\n",
		plotLeft-50, plotTop+panelHgt/2, plotLeft-50, plotTop+panelHgt/2)
	for i, s := range ss {
		if len(s.Delays) == 0 {
			continue
		}
		ds := append([]time.Duration(nil), s.Delays...)
		sort.Slice(ds, func(a, b int) bool { return ds[a] < ds[b] })
		pts := []string{fmt.Sprintf("%.1f,%.1f", x(0), y(0))}
		step := max(1, len(ds)/400)
		for k := 0; k < len(ds); k += step {
			pts = append(pts, fmt.Sprintf("%.1f,%.1f", x(ds[k]), y(float64(k+1)/float64(len(ds)))))
		}
		pts = append(pts, fmt.Sprintf("%.1f,%.1f", x(ds[len(ds)-1]), y(1)))
		c := plotColors[i%len(plotColors)]
		fmt.Fprintf(&b, `<polyline fill="none" stroke="%s" stroke-width="2" points="%s"/>`+"\n", c, strings.Join(pts, " "))
		lx := plotLeft + 10 + 300*i
		fmt.Fprintf(&b, `<rect x="%d" y="%d" width="14" height="4" fill="%s"/>`+"\n", lx, plotH-16, c)
		fmt.Fprintf(&b, `<text x="%d" y="%d">%s (n=%d)</text>`+"\n", lx+20, plotH-10, esc(s.Name), len(ds))
	}
	b.WriteString("</svg>\n")
	return b.Bytes()
}

func fmtMS(v float64) string {
	if v >= 10000 {
		return fmt.Sprintf("%.0fs", v/1000)
	}
	return fmt.Sprintf("%.0f", v)
}

// niceMax rounds v up to 1, 2 or 5 times a power of ten.
func niceMax(v float64) float64 {
	p := 1.0
	for p*10 <= v {
		p *= 10
	}
	for _, m := range []float64{1, 2, 5, 10} {
		if m*p >= v {
			return m * p
		}
	}
	return 10 * p
}

func esc(s string) string {
	return strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;", `"`, "&quot;").Replace(s)
}

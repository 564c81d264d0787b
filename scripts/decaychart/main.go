// Command decaychart draws how a holding that never moves decays under protocol §8, with the
// real lib/consensus functions, as an SVG line chart, and prints the remaining share at the
// end of each year:
//
//	go run ./scripts/decaychart -o docs/decay-chart.svg
//
// The holding is a non-agent cluster holding 0.1%, 1%, 10% or 50% of a fixed circulating
// supply; its balance and the supply stay constant, so its rate does too. The chart is for
// docs/decay.md; nothing in the node uses it.
package main

import (
	"bytes"
	"encoding/xml"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/cointoolkit/coin/lib/amount"
	"github.com/cointoolkit/coin/lib/consensus"
)

// supply is the fixed circulating supply of the chart. Only the shares matter: the rate
// depends on the concentration, and the effective value is proportional to the value.
const supply = 10_000_000 * amount.Coin

const (
	years           = 5
	samplesPerYear  = 12 // monthly
	blocksPerSample = consensus.BlocksPerYear / samplesPerYear
)

// series is one holding's curve.
type series struct {
	label string // share of the supply, "1%"
	ppb   uint64 // the same in parts per billion
	color string
	rate  uint64   // per 10^12 per block
	bp    []uint64 // remaining value in basis points of the start, one per sample
}

func holdings() []*series {
	return []*series{
		{label: "0.1%", ppb: 1_000_000, color: "#2ca02c"},
		{label: "1%", ppb: 10_000_000, color: "#1f77b4"},
		{label: "10%", ppb: 100_000_000, color: "#ff7f0e"},
		{label: "50%", ppb: 500_000_000, color: "#d62728"},
	}
}

// compute fills each series' rate and samples with lib/consensus.
func compute(ss []*series) {
	for _, s := range ss {
		balance := supply / 1_000_000_000 * s.ppb
		s.rate = consensus.DecayRate(consensus.Concentration(balance, supply), consensus.TierNone)
		s.bp = s.bp[:0]
		for i := uint64(0); i <= years*samplesPerYear; i++ {
			eff := consensus.EffectiveValue(balance, s.rate, i*blocksPerSample)
			s.bp = append(s.bp, eff*10_000/balance) // eff ≤ balance = 5·10^14: no overflow
		}
	}
}

// pct formats basis points as a percentage with two decimals.
func pct(bp uint64) string { return fmt.Sprintf("%d.%02d%%", bp/100, bp%100) }

// table writes the remaining share at the end of each year.
func table(w io.Writer, ss []*series) {
	fmt.Fprintf(w, "%-6s %8s %9s", "share", "rate", "per year")
	for y := 1; y <= years; y++ {
		fmt.Fprintf(w, " %8s", fmt.Sprintf("year %d", y))
	}
	fmt.Fprintln(w)
	for _, s := range ss {
		fmt.Fprintf(w, "%-6s %8d %9s", s.label, s.rate, pct((consensus.YearlyDecayPPM(s.rate)+50)/100))
		for y := 1; y <= years; y++ {
			fmt.Fprintf(w, " %8s", pct(s.bp[y*samplesPerYear]))
		}
		fmt.Fprintln(w)
	}
	fmt.Fprintln(w, "(rate: per 10^12 per block; per year: share decayed in the first year; year N: value remaining after N years)")
}

// Chart geometry, in SVG user units.
const (
	width, height          = 800, 480
	left, right, top, bott = 70, 80, 50, 60
	plotW, plotH           = width - left - right, height - top - bott
)

func xOf(sample int) float64 {
	return left + float64(sample)*plotW/float64(years*samplesPerYear)
}

func yOf(bp uint64) float64 { return top + plotH - float64(bp)*plotH/10_000 }

func esc(s string) string {
	var b strings.Builder
	_ = xml.EscapeText(&b, []byte(s))
	return b.String()
}

// svg draws the chart.
func svg(ss []*series) []byte {
	var b bytes.Buffer
	p := func(format string, a ...any) { fmt.Fprintf(&b, format, a...); b.WriteByte('\n') }
	p(`<?xml version="1.0" encoding="UTF-8"?>`)
	p(`<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" viewBox="0 0 %d %d" font-family="sans-serif" font-size="13">`, width, height, width, height)
	p(`<title>Concentration decay of a holding that does not move (protocol §8)</title>`)
	p(`<rect x="0" y="0" width="%d" height="%d" fill="white"/>`, width, height)
	p(`<text x="%d" y="28" text-anchor="middle" font-size="16" font-weight="bold">%s</text>`, width/2,
		esc("Value remaining of a holding that never moves (non-agent cluster)"))

	// Grid and y axis: 0…100% every 10%.
	for bp := uint64(0); bp <= 10_000; bp += 1_000 {
		y := yOf(bp)
		p(`<line x1="%d" y1="%.1f" x2="%d" y2="%.1f" stroke="#ddd"/>`, left, y, left+plotW, y)
		p(`<text x="%d" y="%.1f" text-anchor="end" dominant-baseline="middle">%d%%</text>`, left-8, y, bp/100)
	}
	// x axis: years.
	for yr := 0; yr <= years; yr++ {
		x := xOf(yr * samplesPerYear)
		p(`<line x1="%.1f" y1="%d" x2="%.1f" y2="%d" stroke="#ddd"/>`, x, top, x, top+plotH)
		p(`<text x="%.1f" y="%d" text-anchor="middle">%d</text>`, x, top+plotH+20, yr)
	}
	p(`<rect x="%d" y="%d" width="%d" height="%d" fill="none" stroke="black"/>`, left, top, plotW, plotH)
	p(`<text x="%d" y="%d" text-anchor="middle">%s</text>`, left+plotW/2, height-12,
		esc(fmt.Sprintf("years without moving (%d blocks a year, sampled monthly)", consensus.BlocksPerYear)))
	p(`<text transform="translate(18 %d) rotate(-90)" text-anchor="middle">%s</text>`, top+plotH/2,
		esc("effective value / nominal value"))

	// Series.
	for _, s := range ss {
		var pts strings.Builder
		for i, bp := range s.bp {
			if i > 0 {
				pts.WriteByte(' ')
			}
			fmt.Fprintf(&pts, "%.1f,%.1f", xOf(i), yOf(bp))
		}
		p(`<polyline class="series" data-share="%s" fill="none" stroke="%s" stroke-width="2.5" points="%s"/>`,
			esc(s.label), s.color, pts.String())
	}
	// The value after five years at the right end of each curve, at least 15 units apart.
	prevY := 0.0
	for _, s := range ss { // ordered by share, so by decreasing remaining value
		last := s.bp[len(s.bp)-1]
		y := max(yOf(last)+4, prevY+15)
		p(`<text x="%.1f" y="%.1f" fill="%s">%s</text>`, xOf(len(s.bp)-1)+6, y, s.color, pct(last))
		prevY = y
	}

	// Legend, lower left (every curve stays above 40%).
	lx, ly := left+16, top+plotH-20-22*len(ss)
	p(`<rect x="%d" y="%d" width="380" height="%d" fill="white" stroke="#999"/>`, lx-8, ly-16, 22*len(ss)+14)
	for i, s := range ss {
		y := ly + 22*i
		p(`<line x1="%d" y1="%d" x2="%d" y2="%d" stroke="%s" stroke-width="2.5"/>`, lx, y-4, lx+26, y-4, s.color)
		note := fmt.Sprintf("%s of the supply: rate %d, %s a year", s.label, s.rate, pct((consensus.YearlyDecayPPM(s.rate)+50)/100))
		if s.rate == 0 {
			note = s.label + " of the supply: at the threshold, no decay"
		}
		p(`<text x="%d" y="%d">%s</text>`, lx+34, y, esc(note))
	}
	p(`</svg>`)
	return b.Bytes()
}

func run(args []string, stdout io.Writer) error {
	fs := flag.NewFlagSet("decaychart", flag.ContinueOnError)
	out := fs.String("o", filepath.Join("docs", "decay-chart.svg"), "where to write the SVG chart")
	if err := fs.Parse(args); err != nil {
		return err
	}
	ss := holdings()
	compute(ss)
	if err := os.WriteFile(*out, svg(ss), 0o644); err != nil {
		return err
	}
	table(stdout, ss)
	return nil
}

func main() {
	if err := run(os.Args[1:], os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "decaychart:", err)
		os.Exit(1)
	}
}

package main

import (
	"context"
	"fmt"
	"io"
	"runtime"
	"text/tabwriter"
	"time"

	"github.com/cointoolkit/coin/lib/miner"
)

// Targets the kernel is held to.
const (
	wantVsOpenSSL = 1.9 // one thread / openssl one-stream reference
	wantScaling   = 1.8 // two threads / one thread, on two cores
)

// benchmark prints the hashrate of one thread, then of threads threads (per thread and in
// total), and the openssl reference when openssl is on the PATH. Rates are given per
// wall-clock second, per CPU-second of the hashing threads (what they do when they have a
// core; openssl speed counts the same way) and for the best window of the run.
func benchmark(ctx context.Context, w io.Writer, threads int, d time.Duration) error {
	fmt.Fprintf(w, "coin-miner benchmark: kernel %s, %s, %d CPUs, %s per run\n\n",
		kernelName(), miner.CPUModel(), runtime.NumCPU(), d)
	miner.Benchmark(ctx, threads, min(d/10, 300*time.Millisecond)) // wake the cores up
	one := miner.Benchmark(ctx, 1, d)
	if ctx.Err() != nil {
		return nil
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "\twall-clock\tper CPU-second\tbest %s window\n", miner.BenchWindow)
	row := func(name string, wall, cpu, best float64) {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", name, miner.FormatRate(wall), rateOrDash(cpu), rateOrDash(best))
	}
	row("1 thread", one.Rate(), one.CPURate(), one.BestRate)
	var all miner.BenchResult
	if threads > 1 {
		all = miner.Benchmark(ctx, threads, d)
		if ctx.Err() != nil {
			return nil
		}
		row(fmt.Sprintf("%d threads", threads), all.Rate(), all.CPURate(), all.BestRate)
		for i := range all.ThreadHashes {
			row(fmt.Sprintf("  thread %d", i), all.ThreadRate(i), all.ThreadCPURate(i), 0)
		}
	}
	tw.Flush()
	fmt.Fprintln(w)
	if threads > 1 {
		scaling := all.Rate() / one.Rate()
		fmt.Fprintf(w, "scaling: %.2fx wall-clock", scaling)
		if one.CPURate() > 0 {
			fmt.Fprintf(w, ", %.2fx per CPU-second", all.CPURate()/one.CPURate())
		}
		fmt.Fprintf(w, " (%d threads / 1 thread", threads)
		if threads == 2 && runtime.NumCPU() >= 2 {
			fmt.Fprintf(w, "; target >= %.1fx wall-clock on 2 cores: %s", wantScaling, verdict(scaling >= wantScaling))
		}
		fmt.Fprintln(w, ")")
	}
	ref, err := miner.OpenSSLReference(ctx, d)
	if ctx.Err() != nil {
		return nil
	}
	if err != nil {
		fmt.Fprintf(w, "openssl: not measured (%v)\n", err)
		return nil
	}
	fmt.Fprintf(w, "openssl: %s one stream (%s: %.2fk bytes/s per CPU-second / 64 / 2)\n",
		miner.FormatRate(ref.Rate), ref.Command, ref.BytesPerSec/1000)
	fmt.Fprintf(w, "ratio:   %.2fx wall-clock", one.Rate()/ref.Rate)
	basis := one.Rate()
	if one.CPURate() > 0 {
		basis = one.CPURate()
		fmt.Fprintf(w, ", %.2fx per CPU-second", basis/ref.Rate)
	}
	fmt.Fprintf(w, " (1 thread / openssl one stream; target >= %.1fx like for like: %s)\n",
		wantVsOpenSSL, verdict(basis/ref.Rate >= wantVsOpenSSL))
	return nil
}

func rateOrDash(r float64) string {
	if r <= 0 {
		return "-"
	}
	return miner.FormatRate(r)
}

func verdict(ok bool) string {
	if ok {
		return "ok"
	}
	return "below"
}

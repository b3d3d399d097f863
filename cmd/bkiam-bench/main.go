// Command bkiam-bench measures the provider (make bench): each scenario of
// internal/bench with the real Terraform CLI against the IAM sandbox with
// injected latency, beside the same scenario built from terraform_data,
// printed as Markdown tables.
package main

import (
	"bufio"
	"context"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"time"

	"github.com/bkiam/terraform-provider-bkiam/internal/bench"
)

func main() {
	opts := bench.Options{Baselines: map[string][]time.Duration{}}
	flag.StringVar(&opts.Terraform, "terraform", "bin/terraform", "the terraform binary")
	flag.StringVar(&opts.ProviderDir, "provider-dir", "bin", "directory of the freshly built terraform-provider-bkiam")
	flag.IntVar(&opts.LatencyMS, "latency-ms", 20, "latency injected into every IAM call")
	flag.IntVar(&opts.Parallelism, "parallelism", 10, "terraform -parallelism")
	quick := flag.Bool("quick", false, "small sizes only (a smoke run)")
	only := flag.String("only", "", "run only the scenarios whose name contains this")
	flag.BoolVar(&opts.SkipBaseline, "no-baseline", false, "leave out the terraform_data runs (quick experiments; no ratios)")
	flag.Parse()
	// Terraform runs in scratch directories: resolve its path first.
	if abs, err := filepath.Abs(opts.Terraform); err == nil {
		opts.Terraform = abs
	}

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()

	scenarios := []bench.Scenario{
		bench.InstanceGrant(1000, false),
		bench.InstanceGrant(10000, false),
		bench.InstanceGrant(100000, true),
		bench.ManyGrants(1000, ""),
		bench.ManyGrants(1000, "0s"),
		bench.CreatorGrant(10000),
	}
	if *quick {
		scenarios = []bench.Scenario{bench.InstanceGrant(1000, false), bench.ManyGrants(10, ""), bench.ManyGrants(10, "0s"),
			bench.ManyGrants(100, ""), bench.ManyGrants(100, "0s"), bench.CreatorGrant(1000)}
	}

	fmt.Printf("## Benchmarks\n\n%s\n", machine(ctx, opts))
	for _, sc := range scenarios {
		if !strings.Contains(sc.Name, *only) {
			continue
		}
		results, err := bench.Run(ctx, opts, sc)
		if err != nil {
			fmt.Fprintln(os.Stderr, "bkiam-bench:", err)
			os.Exit(1)
		}
		bench.Print(os.Stdout, sc, opts.LatencyMS, results)
	}
}

// machine describes where the figures come from.
func machine(ctx context.Context, opts bench.Options) string {
	cpu := "unknown CPU"
	if f, err := os.Open("/proc/cpuinfo"); err == nil {
		s := bufio.NewScanner(f)
		for s.Scan() {
			if name, ok := strings.CutPrefix(s.Text(), "model name"); ok {
				cpu = strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(name), ":"))
				break
			}
		}
		_ = f.Close()
	}
	tf := "terraform"
	if out, err := exec.CommandContext(ctx, opts.Terraform, "version").Output(); err == nil {
		tf = strings.SplitN(string(out), "\n", 2)[0]
	}
	return fmt.Sprintf("Machine: %d × %s, %s, %s %s/%s. IAM sandbox latency %d ms per call, -parallelism=%d.",
		runtime.NumCPU(), cpu, tf, runtime.Version(), runtime.GOOS, runtime.GOARCH, opts.LatencyMS, opts.Parallelism)
}

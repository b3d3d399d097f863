// Command bkiam-bench measures the provider (make bench): each scenario of
// internal/bench with the real Terraform CLI against the IAM sandbox with
// injected latency, beside the same scenario built from terraform_data
// and, for the scenarios of many resources, on the empty provider
// (internal/bench/floor, built as terraform-provider-floor beside the
// provider), and issue 51's site (internal/bench.SiteComparison) with the
// provider's expiry check and without, printed as Markdown tables. With
// -out it also writes the whole report (internal/bench's fixed text, the
// tables and, with -gobench, the output of the Go benchmarks) to a file,
// BENCHMARKS.md for make bench; the file is written only once every
// scenario has run.
package main

import (
	"bufio"
	"bytes"
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"time"

	"github.com/bkiam/terraform-provider-bkiam/internal/bench"
	"github.com/bkiam/terraform-provider-bkiam/internal/tfcli"
)

func main() {
	opts := bench.Options{Baselines: map[string][]time.Duration{}}
	var clis cliList
	flag.Var(&clis, "terraform", "a terraform binary; repeat it to measure every scenario on each (default bin/terraform)")
	flag.StringVar(&opts.ProviderDir, "provider-dir", "bin", "directory of the freshly built terraform-provider-bkiam and terraform-provider-floor (internal/bench/floor)")
	flag.IntVar(&opts.LatencyMS, "latency-ms", 20, "latency injected into every IAM call")
	flag.IntVar(&opts.Parallelism, "parallelism", 10, "terraform -parallelism")
	quick := flag.Bool("quick", false, "small sizes only (a smoke run)")
	only := flag.String("only", "", "run only the scenarios whose name contains this")
	flag.BoolVar(&opts.SkipBaseline, "no-baseline", false, "leave out the terraform_data and empty provider runs (quick experiments; no ratios)")
	outPath := flag.String("out", "", "also write the Markdown report to this file (make bench: BENCHMARKS.md)")
	goBenchPath := flag.String("gobench", "", "a file holding the output of the Go benchmarks (go test -bench), copied into the report")
	flag.Parse()
	if flag.NArg() > 0 {
		fmt.Fprintf(os.Stderr, "bkiam-bench: unexpected arguments: %v\n", flag.Args())
		os.Exit(2)
	}
	if len(clis) == 0 {
		clis = cliList{"bin/terraform"}
	}
	// Terraform runs in scratch directories: resolve its paths first.
	for i, c := range clis {
		if abs, err := filepath.Abs(c); err == nil {
			clis[i] = abs
		}
	}

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()

	scenarios := []bench.Scenario{
		bench.InstanceGrant(1000, false),
		bench.InstanceGrant(10000, false),
		bench.InstanceGrant(100000, true),
		bench.Renewal(10000),
		bench.ManyGrants(1000, ""),
		bench.ManyGrants(1000, "0s"),
		bench.ManyGrantsSlowIAM(1000, 100),
		bench.CreatorGrant(10000),
		bench.GroupMembers(10000),
	}
	// Issue 55's trace: where the time of many small grants goes.
	traced := []bench.Scenario{bench.ManyGrants(1000, "")}
	// Issue 51's site, each case with the expiry check and without.
	comparisons := []bench.Comparison{bench.SiteComparison(20000, false, 5), bench.SiteComparison(20000, true, 5)}
	// Issue 61's system of DBM's size: its grants and reads, then its checks with and without.
	dbmScenarios := []bench.Scenario{bench.DBMGrants(100), bench.DBMReads()}
	dbmComparisons := []bench.Comparison{bench.DBMComparison(true, 3), bench.DBMComparison(false, 3), bench.DBMModelCheck(3)}
	if *quick {
		scenarios = []bench.Scenario{bench.InstanceGrant(1000, false), bench.Renewal(1000), bench.ManyGrants(10, ""), bench.ManyGrants(10, "0s"),
			bench.ManyGrants(100, ""), bench.ManyGrants(100, "0s"), bench.ManyGrantsSlowIAM(100, 100), bench.CreatorGrant(1000),
			bench.GroupMembers(1000)}
		comparisons = []bench.Comparison{bench.SiteComparison(2000, false, 3), bench.SiteComparison(2000, true, 3)}
		traced = []bench.Scenario{bench.ManyGrants(100, "")}
		dbmScenarios = []bench.Scenario{bench.DBMGrants(10), bench.DBMReads()}
		dbmComparisons = []bench.Comparison{bench.DBMComparison(true, 1), bench.DBMComparison(false, 1), bench.DBMModelCheck(1)}
	}

	// The report goes to stdout as it is measured, and to -out once complete.
	var report bytes.Buffer
	out := io.MultiWriter(os.Stdout, &report)
	names := make([]string, len(clis))
	for i, c := range clis {
		names[i] = cliName(ctx, c)
	}
	bench.WriteHeader(out, machine(opts, names), partial(*quick, *only, opts.SkipBaseline))
	// Each scenario on every CLI in turn, so that its tables sit together.
	onEveryCLI := func(run func(cli int) error) {
		for i, cli := range clis {
			opts.Terraform = cli
			if err := run(i); err != nil {
				fail(fmt.Errorf("%s: %w", names[i], err))
			}
		}
	}
	// runScenario and runComparison measure one case on every CLI and print it.
	runScenario := func(sc bench.Scenario) {
		onEveryCLI(func(i int) error {
			results, err := bench.Run(ctx, opts, sc)
			if err == nil {
				bench.Print(out, sc, names[i], sc.Latency(opts), results)
			}
			return err
		})
	}
	runComparison := func(c bench.Comparison) {
		onEveryCLI(func(i int) error {
			results, err := bench.RunComparison(ctx, opts, c)
			if err == nil {
				bench.PrintComparison(out, c, names[i], results)
			}
			return err
		})
	}
	for _, sc := range scenarios {
		if strings.Contains(sc.Name, *only) {
			runScenario(sc)
		}
	}
	section := bench.SiteSection
	for _, c := range comparisons {
		if strings.Contains(c.Name, *only) {
			fmt.Fprint(out, section)
			section = ""
			runComparison(c)
		}
	}
	section = bench.DBMSection
	for _, sc := range dbmScenarios {
		if strings.Contains(sc.Name, *only) {
			fmt.Fprint(out, section)
			section = ""
			runScenario(sc)
		}
	}
	for _, c := range dbmComparisons {
		if strings.Contains(c.Name, *only) {
			fmt.Fprint(out, section)
			section = ""
			runComparison(c)
		}
	}
	section = bench.TraceSection
	for _, sc := range traced {
		if strings.Contains("trace: "+sc.Name, *only) {
			fmt.Fprint(out, section)
			section = ""
			onEveryCLI(func(i int) error {
				results, err := bench.RunTrace(ctx, opts, sc)
				if err == nil {
					bench.PrintTrace(out, sc, names[i], results)
				}
				return err
			})
		}
	}
	var goBench io.Reader
	if *goBenchPath != "" {
		b, err := os.ReadFile(*goBenchPath)
		if err != nil {
			fail(err)
		}
		goBench = bytes.NewReader(b)
	}
	if err := bench.PrintGoBenchmarks(out, goBench); err != nil {
		fail(err)
	}
	if *outPath != "" {
		// A file of the repository, read by everyone: 0644 like the rest.
		if err := os.WriteFile(*outPath, report.Bytes(), 0o644); err != nil { //nolint:gosec // see above
			fail(err)
		}
		fmt.Fprintf(os.Stderr, "bkiam-bench: report written to %s\n", *outPath)
	}
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "bkiam-bench:", err)
	os.Exit(1)
}

// partial names the flags that make a run partial ("" for a full run).
func partial(quick bool, only string, noBaseline bool) string {
	var flags []string
	if quick {
		flags = append(flags, "`-quick`")
	}
	if only != "" {
		flags = append(flags, fmt.Sprintf("`-only %s`", only))
	}
	if noBaseline {
		flags = append(flags, "`-no-baseline`")
	}
	return strings.Join(flags, ", ")
}

// cliList is the repeatable -terraform flag.
type cliList []string

func (l *cliList) String() string     { return strings.Join(*l, ",") }
func (l *cliList) Set(v string) error { *l = append(*l, v); return nil }

// cliName is the CLI's name and version as it says them ("Terraform
// v1.16.4"), or its path when it cannot say.
func cliName(ctx context.Context, path string) string {
	if cli, err := tfcli.Identify(ctx, path); err == nil {
		return cli.String()
	}
	return path
}

// machine describes where the figures come from.
func machine(opts bench.Options, clis []string) string {
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
	return fmt.Sprintf("Machine: %d × %s, %s, %s/%s; each scenario on %s. IAM sandbox latency %d ms per call, -parallelism=%d.",
		runtime.NumCPU(), cpu, runtime.Version(), runtime.GOOS, runtime.GOARCH, strings.Join(clis, " and "), opts.LatencyMS, opts.Parallelism)
}

package testreport

import (
	"flag"
	"fmt"
	"io"
	"time"
)

// Main is cmd/testreport: it parses args (without the program's name),
// reports stdin on stdout and returns the exit status: 0 when the run
// passed, 1 when it did not, 2 for bad flags or an error reading or writing.
func Main(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("testreport", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprint(stderr, `usage: go test -json [flags] [packages] 2>&1 | testreport [-timeout d] [-title s] [-v] [-slowest n]

testreport prints what plain go test would print from the events of
go test -json, as they come, then the slowest top-level tests and each
package's time against the timeout, warning about any package that took
more than a third of it. It exits 1 if a test, package or build failed, a
package started and never ended, or the input had no package at all.

`)
		fs.PrintDefaults()
	}
	var opt Options
	fs.DurationVar(&opt.Timeout, "timeout", 10*time.Minute, "the -timeout go test ran with (go test's default is 10m; 0 for none)")
	fs.StringVar(&opt.Title, "title", "", `names the run in the summary, e.g. "Terraform 1.16"`)
	fs.BoolVar(&opt.Verbose, "v", false, "print every test's output, as go test -v does")
	fs.IntVar(&opt.Slowest, "slowest", DefaultSlowest, "how many of the slowest top-level tests to list")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "testreport: unexpected arguments %q: it reads go test -json on its standard input\n", fs.Args())
		return 2
	}
	if opt.Timeout < 0 || opt.Slowest < 1 {
		fmt.Fprintln(stderr, "testreport: -timeout cannot be negative, nor -slowest less than 1")
		return 2
	}
	passed, err := Run(stdin, stdout, opt)
	if err != nil {
		fmt.Fprintln(stderr, "testreport:", err)
		return 2
	}
	if !passed {
		return 1
	}
	return 0
}

package bench

import (
	"bytes"
	"os"
	"strings"
	"testing"
)

// TestBenchmarksFileHeader keeps the committed BENCHMARKS.md in step with the text make bench
// writes: a change to Header shows here until the file is regenerated (or edited to match).
func TestBenchmarksFileHeader(t *testing.T) {
	b, err := os.ReadFile("../../BENCHMARKS.md")
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.HasPrefix(b, []byte(Header)) {
		t.Fatal("BENCHMARKS.md does not start with bench.Header: run make bench, or make the file's text match internal/bench/report.go")
	}
}

func TestPrintGoBenchmarks(t *testing.T) {
	const out = `goos: linux
goarch: amd64
pkg: github.com/bkiam/terraform-provider-bkiam/internal/provider
cpu: AMD EPYC
BenchmarkPlanCreate/5000/validate-2         	       3	  11694024 ns/op	 2868480 B/op	   75209 allocs/op
BenchmarkListGroups/1000-2                  	       3	 183525235 ns/op	         2.000 calls/op	56616736 B/op	 1027854 allocs/op
BenchmarkListGroups/10000-2                 	       3	2632894474 ns/op	        20.00 calls/op	565967008 B/op	10276168 allocs/op
BenchmarkListOther/1000                     	       3	    100 ns/op
PASS
ok  	github.com/bkiam/terraform-provider-bkiam/internal/provider	12.3s
goos: linux
goarch: amd64
pkg: github.com/bkiam/terraform-provider-bkiam/internal/grantplan
BenchmarkPlan10k/no-op-2             	       3	   2086791 ns/op	     618 B/op	      19 allocs/op
PASS
ok  	github.com/bkiam/terraform-provider-bkiam/internal/grantplan	9.1s
pkg: example.com/other
PASS
`
	var w strings.Builder
	if err := PrintGoBenchmarks(&w, strings.NewReader(out)); err != nil {
		t.Fatal(err)
	}
	want := "\n## Go benchmarks\n\n" +
		"The provider's share of a plan, through its protocol server (`go test -bench . ./internal/provider`):\n" +
		"validation, the plan of a create, and a no-op (read and plan), at 5 000 and 10 000 instances:\n\n" +
		"```\nBenchmarkPlanCreate/5000/validate-2         \t       3\t  11694024 ns/op\t 2868480 B/op\t   75209 allocs/op\n```\n\n" +
		"The planner alone (`go test -bench . ./internal/grantplan`), two actions over n hosts:\n\n" +
		"```\nBenchmarkPlan10k/no-op-2             \t       3\t   2086791 ns/op\t     618 B/op\t      19 allocs/op\n```\n\n" +
		listingCaption + "\n" +
		"| List resource | Objects | IAM calls/op | ns/op | B/op | allocs/op |\n|---|--:|--:|--:|--:|--:|\n" +
		"| `bkiam_group` | 1000 | 2 | 183525235 | 56616736 | 1027854 |\n" +
		"| `bkiam_group` | 10000 | 20 | 2632894474 | 565967008 | 10276168 |\n" +
		"| BenchmarkListOther | 1000 | – | 100 | – | – |\n"
	if w.String() != want {
		t.Errorf("got\n%s\nwant\n%s", w.String(), want)
	}

	w.Reset()
	if err := PrintGoBenchmarks(&w, nil); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(w.String(), "were not part of this run") {
		t.Errorf("without Go benchmarks: %q", w.String())
	}
}

func TestWriteHeaderPartial(t *testing.T) {
	var w strings.Builder
	WriteHeader(&w, "Machine: test.", "-quick")
	got := w.String()
	if !strings.HasPrefix(got, Header) || !strings.Contains(got, "**A partial run** (-quick)") || !strings.HasSuffix(got, "\nMachine: test.\n") {
		t.Errorf("header:\n%s", got[len(Header):])
	}
}

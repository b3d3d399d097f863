// Package testreport reads the events of `go test -json` and prints, as
// they arrive, what plain `go test` would have printed: the output of the
// tests and packages that fail, one `ok`, `FAIL` or `?` line per package,
// build errors, and any line that is not an event as it is. When the input
// ends it adds a summary: the slowest top-level tests and each package's
// time against go test's -timeout, with a warning for a package that took
// more than a third of it, so that a package's growth shows before its
// binary times out. cmd/testreport is its command; make test pipes each of
// its passes through it.
package testreport

import (
	"bufio"
	"bytes"
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"
)

// Event is one line of `go test -json`: a test event (go doc cmd/test2json)
// or a build event (go help buildjson), which has ImportPath and no Package.
type Event struct {
	Time        time.Time
	Action      string
	Package     string
	Test        string
	Elapsed     float64 // seconds
	Output      string
	FailedBuild string
	ImportPath  string
}

// Options are those of cmd/testreport.
type Options struct {
	// Title names the run in the summary ("Terraform 1.16").
	Title string
	// Timeout is the -timeout given to go test; 0 for none.
	Timeout time.Duration
	// Verbose prints every test's output as it arrives, as go test -v does.
	Verbose bool
	// Slowest is how many of the slowest top-level tests the summary
	// lists; 0 for DefaultSlowest.
	Slowest int
}

// DefaultSlowest is how many of the slowest tests the summary lists by default.
const DefaultSlowest = 10

// WarnFraction is the share of the timeout above which the summary warns
// about a package.
const WarnFraction = 1.0 / 3

// Run reads `go test -json` from in until it ends, writing the report to
// out as it goes, and says whether the run passed: there was a package, no
// test, package or build failed, and every package that started ended with
// a result. An error is one of reading in or writing out.
func Run(in io.Reader, out io.Writer, opt Options) (passed bool, err error) {
	r := NewReporter(opt)
	br := bufio.NewReaderSize(in, 64<<10)
	var buf bytes.Buffer
	for {
		line, rerr := br.ReadBytes('\n')
		if len(line) > 0 {
			r.Line(&buf, line)
			// Written line by line, so that a long run shows its progress.
			if buf.Len() > 0 {
				if _, err := out.Write(buf.Bytes()); err != nil {
					return false, err
				}
				buf.Reset()
			}
		}
		if errors.Is(rerr, io.EOF) {
			break
		}
		if rerr != nil {
			return false, rerr
		}
	}
	r.Finish(&buf)
	if _, err := out.Write(buf.Bytes()); err != nil {
		return false, err
	}
	return r.Passed(), nil
}

// A Reporter turns lines of `go test -json` into the report. Line takes
// them one at a time, Finish writes what is left and the summary.
type Reporter struct {
	opt      Options
	pkgs     map[string]*pkgState
	order    []*pkgState // in the order of their first event
	builds   []string    // the import paths of "build-fail" events
	failures int         // failed tests
	finished bool
}

// NewReporter returns a Reporter with no input yet.
func NewReporter(opt Options) *Reporter {
	if opt.Slowest <= 0 {
		opt.Slowest = DefaultSlowest
	}
	return &Reporter{opt: opt, pkgs: map[string]*pkgState{}}
}

// pkgState is one package's test binary.
type pkgState struct {
	name        string
	start, last time.Time
	pending     []item // its output not printed yet, and its top-level tests where they started
	failing     bool   // its failures are being printed: pending was flushed once
	tests       map[string]*node
	running     []*node // in the order they started
	times       []TestTime
	failed      []string // failed top-level tests
	result      string   // pass, fail or skip; "" until the package ends
	elapsed     float64
	failedBuild string
	unfinished  []string // the tests that were running when the package ended
	timedOut    string   // its "panic: test timed out after 20m0s" line
}

// node is a running test and, until its top-level test ends, what it printed.
type node struct {
	name    string
	parent  *node
	depth   int    // 0 for a top-level test
	header  string // its "--- FAIL: name (1.00s)" line
	items   []item
	result  string // pass, fail, skip or bench; "" while it runs
	elapsed float64
	midLine bool // its last output did not end a line
}

// item is a line (or part of one) a test printed, or a subtest that ended,
// in the place plain go test puts it: when it ends.
type item struct {
	text  string
	child *node
}

// TestTime is a top-level test's time.
type TestTime struct {
	Package, Test string
	Elapsed       float64
	Result        string
}

// Line handles one line of input, writing to w what it prints.
func (r *Reporter) Line(w *bytes.Buffer, line []byte) {
	if len(line) == 0 {
		return
	}
	var e Event
	trimmed := bytes.TrimSpace(line)
	if len(trimmed) == 0 || trimmed[0] != '{' || json.Unmarshal(trimmed, &e) != nil || e.Action == "" {
		// Not an event: the go command's own errors (a build failure before
		// Go 1.24's build events, "go: downloading", a bad flag) on the
		// standard error merged into the input.
		w.Write(line)
		if line[len(line)-1] != '\n' {
			w.WriteByte('\n')
		}
		return
	}
	r.Event(w, &e)
}

// Event handles one event.
func (r *Reporter) Event(w *bytes.Buffer, e *Event) {
	switch e.Action {
	case "build-output":
		w.WriteString(e.Output)
		return
	case "build-fail":
		r.builds = append(r.builds, e.ImportPath)
		return
	}
	p := r.pkgs[e.Package]
	if p == nil {
		p = &pkgState{name: e.Package, tests: map[string]*node{}, start: e.Time}
		r.pkgs[e.Package] = p
		r.order = append(r.order, p)
	}
	if !e.Time.IsZero() {
		p.last = e.Time
	}
	if e.Action == "output" && p.timedOut == "" && strings.HasPrefix(e.Output, "panic: test timed out after ") {
		p.timedOut = strings.TrimSpace(e.Output)
	}
	if r.opt.Verbose && e.Action == "output" {
		w.WriteString(e.Output)
		return
	}
	if p.result != "" {
		// After the package's end: nothing should come, but print it.
		w.WriteString(e.Output)
		return
	}
	if e.Test == "" {
		r.packageEvent(w, p, e)
		return
	}
	switch e.Action {
	case "run":
		p.run(e.Test)
	case "output":
		n := p.tests[e.Test]
		if n == nil {
			// Output of a test that has ended (a goroutine it left logging)
			// goes with the package's.
			p.pending = append(p.pending, item{text: e.Output})
			return
		}
		n.output(e.Output)
	case "pass", "fail", "skip", "bench":
		r.testEnd(w, p, e)
	}
	// pause, cont, attr and artifacts change nothing that is printed.
}

// packageEvent handles an event of the package's own (no Test).
func (r *Reporter) packageEvent(w *bytes.Buffer, p *pkgState, e *Event) {
	switch e.Action {
	case "start":
		if !e.Time.IsZero() {
			p.start = e.Time
		}
	case "output":
		p.pending = append(p.pending, item{text: e.Output})
	case "pass", "fail", "skip":
		p.result, p.elapsed, p.failedBuild = e.Action, e.Elapsed, e.FailedBuild
		r.packageEnd(w, p)
	}
}

// run starts a test.
func (p *pkgState) run(name string) {
	n := &node{name: name}
	// Its parent is the longest running test its name extends: a subtest
	// named "a/b" of TestX is TestX/a/b, with no TestX/a.
	for prefix := name; ; {
		i := strings.LastIndexByte(prefix, '/')
		if i < 0 {
			break
		}
		prefix = prefix[:i]
		if parent := p.tests[prefix]; parent != nil {
			n.parent, n.depth = parent, parent.depth+1
			break
		}
	}
	p.tests[name] = n
	p.running = append(p.running, n)
	if n.parent == nil {
		// If it never ends, it is printed where it started.
		p.pending = append(p.pending, item{child: n})
	}
}

// output adds a test's output, but for the lines of the -v framing
// ("=== RUN", "=== PAUSE", ...), which plain go test does not print, and its
// result line, which plain go test prints before what the test logged.
func (n *node) output(s string) {
	if !n.midLine {
		if isFraming(s) {
			return
		}
		if isResultLine(s, n.name) {
			n.header = strings.TrimLeft(s, " ")
			return
		}
	}
	n.items = append(n.items, item{text: s})
	n.midLine = !strings.HasSuffix(s, "\n")
}

var framing = []string{"=== RUN ", "=== PAUSE ", "=== CONT ", "=== NAME ", "=== ATTR ", "=== ARTIFACTS "}

func isFraming(s string) bool {
	if strings.TrimRight(s, " \r\n") == "=== NAME" {
		return true
	}
	for _, f := range framing {
		if strings.HasPrefix(s, f) {
			return true
		}
	}
	return false
}

func isResultLine(s, name string) bool {
	s = strings.TrimLeft(s, " ")
	for _, r := range []string{"--- PASS: ", "--- FAIL: ", "--- SKIP: ", "--- BENCH: "} {
		if rest, ok := strings.CutPrefix(s, r); ok {
			return strings.HasPrefix(rest, name+" ") || strings.TrimRight(rest, "\r\n") == name
		}
	}
	return false
}

// testEnd ends a test: a failed top-level test is printed now, as plain go
// test would print it; a failed subtest waits in its parent for it.
func (r *Reporter) testEnd(w *bytes.Buffer, p *pkgState, e *Event) {
	n := p.tests[e.Test]
	if n == nil {
		// Its "run" was not in the input.
		p.run(e.Test)
		n = p.tests[e.Test]
	}
	n.result, n.elapsed = e.Action, e.Elapsed
	delete(p.tests, n.name)
	if i := slices.Index(p.running, n); i >= 0 {
		p.running = slices.Delete(p.running, i, i+1)
	}
	if e.Action == "fail" {
		r.failures++
	}
	if !strings.Contains(n.name, "/") {
		p.times = append(p.times, TestTime{Package: p.name, Test: n.name, Elapsed: n.elapsed, Result: n.result})
		if n.result == "fail" {
			p.failed = append(p.failed, n.name)
		}
	}
	if n.result != "fail" {
		n.items = nil // plain go test drops what a passing or skipped test printed
		return
	}
	if n.parent != nil {
		n.parent.items = append(n.parent.items, item{child: n})
		return
	}
	if r.opt.Verbose {
		return
	}
	p.flushPending(w)
	p.render(w, n)
}

// flushPending prints the package's output so far, the first time one of
// its tests fails: what its TestMain printed before it, for instance. The
// tests still running stay, to be printed if they never end.
func (p *pkgState) flushPending(w *bytes.Buffer) {
	if p.failing {
		return
	}
	p.failing = true
	keep := p.pending[:0]
	for _, it := range p.pending {
		switch {
		case it.child == nil:
			w.WriteString(it.text)
		case it.child.result == "":
			keep = append(keep, it)
		}
	}
	clear(p.pending[len(keep):])
	p.pending = keep
}

// flushFailed prints a failed package's output: what it printed that is not
// printed yet, with the tests that were running when it ended (a test
// binary that timed out panicked in one of them, one that crashed or
// exited in one of them) in the place they started.
func (p *pkgState) flushFailed(w *bytes.Buffer) {
	p.failing = true
	for _, it := range p.pending {
		switch {
		case it.child == nil:
			w.WriteString(it.text)
		case it.child.result == "":
			p.render(w, it.child)
		}
	}
	p.pending = nil
}

// render prints a failed or unfinished test as plain go test does: its
// result line, then what it logged and its failed subtests, in the order it
// logged them and they ended, each subtest four spaces further in.
func (p *pkgState) render(w *bytes.Buffer, n *node) {
	indent := strings.Repeat("    ", n.depth)
	switch {
	case n.result == "":
		fmt.Fprintf(w, "%s--- FAIL: %s (did not finish)\n", indent, n.name)
	case n.header != "":
		w.WriteString(indent + n.header)
	default:
		fmt.Fprintf(w, "%s--- FAIL: %s (%.2fs)\n", indent, n.name, n.elapsed)
	}
	lineStart := true
	for _, it := range n.items {
		if it.child != nil {
			if it.child.result == "fail" {
				p.render(w, it.child)
			}
			continue
		}
		writeIndented(w, it.text, indent, lineStart)
		lineStart = strings.HasSuffix(it.text, "\n")
	}
	if n.result == "" {
		// Its subtests that were still running, too.
		for _, c := range p.running {
			if c.parent == n {
				p.render(w, c)
			}
		}
	}
}

// writeIndented writes s with indent before each line that starts with
// four spaces: t.Log's lines, which go test -v indents by four spaces
// whatever the depth and plain go test by four per level. What else a test
// printed (to its standard output, or a panic) plain go test prints as it is.
func writeIndented(w *bytes.Buffer, s, indent string, lineStart bool) {
	if indent == "" {
		w.WriteString(s)
		return
	}
	for s != "" {
		line := s
		if i := strings.IndexByte(s, '\n'); i >= 0 {
			line = s[:i+1]
		}
		if lineStart && strings.HasPrefix(line, "    ") {
			w.WriteString(indent)
		}
		w.WriteString(line)
		lineStart = strings.HasSuffix(line, "\n")
		s = s[len(line):]
	}
}

// packageEnd prints a package's result: its `ok` or `?` line, or when it
// failed its tests that did not finish and the rest of its output.
func (r *Reporter) packageEnd(w *bytes.Buffer, p *pkgState) {
	for _, n := range p.running {
		p.unfinished = append(p.unfinished, n.name)
	}
	if r.opt.Verbose {
		return
	}
	if p.result != "fail" {
		printed := false
		for _, it := range p.pending {
			if strings.HasPrefix(it.text, "ok  \t"+p.name) || strings.HasPrefix(it.text, "?   \t"+p.name) {
				w.WriteString(it.text)
				printed = true
			}
		}
		if !printed && p.result == "pass" {
			fmt.Fprintf(w, "ok  \t%s\t%.3fs\n", p.name, p.elapsed)
		}
		p.pending = nil
		return
	}
	p.flushFailed(w)
}

// Finish ends the input: it prints what the packages with no result left
// (go test was cut short), then the summary.
func (r *Reporter) Finish(w *bytes.Buffer) {
	r.finished = true
	for _, p := range r.order {
		if p.result != "" {
			continue
		}
		for _, n := range p.running {
			p.unfinished = append(p.unfinished, n.name)
		}
		if !r.opt.Verbose {
			p.flushFailed(w)
		}
		fmt.Fprintf(w, "FAIL\t%s\t(no result: the input ended while it ran)\n", p.name)
	}
	r.summary(w)
}

// Passed says whether the run passed; it is only true after Finish.
func (r *Reporter) Passed() bool {
	if !r.finished || r.failures > 0 || len(r.builds) > 0 || len(r.order) == 0 {
		return false
	}
	for _, p := range r.order {
		if p.result == "" || p.result == "fail" {
			return false
		}
	}
	return true
}

// Slowest returns the n slowest top-level tests that ended, slowest first.
func (r *Reporter) Slowest(n int) []TestTime {
	var all []TestTime
	for _, p := range r.order {
		all = append(all, p.times...)
	}
	slices.SortStableFunc(all, func(a, b TestTime) int { return cmp.Compare(b.Elapsed, a.Elapsed) }) // slowest first
	return all[:min(n, len(all))]
}

// PackageTime is a package's time against the timeout.
type PackageTime struct {
	Package  string
	Elapsed  float64 // seconds
	Fraction float64 // of the timeout; 0 with no timeout
	Status   string  // ok, FAIL, "build failed" or "no result"
	Warn     bool    // over WarnFraction of the timeout
}

// Packages returns the time of every package that ran a test binary or
// failed to build, slowest first, and how many had no test files.
func (r *Reporter) Packages() (pkgs []PackageTime, noTests int) {
	for _, p := range r.order {
		pt := PackageTime{Package: p.name, Elapsed: p.elapsed}
		switch p.result {
		case "skip":
			noTests++
			continue
		case "pass":
			pt.Status = "ok"
		case "fail":
			pt.Status = "FAIL"
			if p.failedBuild != "" {
				pt.Status = "build failed"
			}
		default:
			pt.Status = "no result"
			if !p.start.IsZero() && p.last.After(p.start) {
				pt.Elapsed = p.last.Sub(p.start).Seconds()
			}
		}
		if r.opt.Timeout > 0 {
			pt.Fraction = pt.Elapsed / r.opt.Timeout.Seconds()
			pt.Warn = pt.Fraction > WarnFraction
		}
		pkgs = append(pkgs, pt)
	}
	slices.SortStableFunc(pkgs, func(a, b PackageTime) int { return cmp.Compare(b.Elapsed, a.Elapsed) }) // slowest first
	return pkgs, noTests
}

// summary writes the block that ends the report.
func (r *Reporter) summary(w *bytes.Buffer) {
	title := "go test"
	if r.opt.Title != "" {
		title = r.opt.Title
	}
	w.WriteString("\n")
	if slowest := r.Slowest(r.opt.Slowest); len(slowest) > 0 {
		fmt.Fprintf(w, "== %s: the %d slowest of %s\n", title, len(slowest), plural(r.topLevel(), "top-level test"))
		width := 0
		for _, t := range slowest {
			width = max(width, len(t.Test))
		}
		for _, t := range slowest {
			note := ""
			if t.Result != "pass" {
				note = "  (" + t.Result + ")"
			}
			fmt.Fprintf(w, "  %9.2fs  %-*s  %s%s\n", t.Elapsed, width, t.Test, t.Package, note)
		}
	}
	pkgs, noTests := r.Packages()
	if len(pkgs) > 0 || noTests > 0 {
		if r.opt.Timeout > 0 {
			fmt.Fprintf(w, "== %s: package times against the %s timeout\n", title, r.opt.Timeout)
		} else {
			fmt.Fprintf(w, "== %s: package times (no timeout)\n", title)
		}
		for _, pt := range pkgs {
			frac, status := "", ""
			if r.opt.Timeout > 0 {
				frac = fmt.Sprintf("%5.1f%%  ", 100*pt.Fraction)
			}
			if pt.Status != "ok" {
				status = "  (" + pt.Status + ")"
			}
			fmt.Fprintf(w, "  %9.2fs  %s%s%s\n", pt.Elapsed, frac, pt.Package, status)
		}
	}
	if noTests > 0 {
		fmt.Fprintf(w, "  (and %s without test files)\n", plural(noTests, "package"))
	}
	for _, pt := range pkgs {
		if pt.Warn {
			fmt.Fprintf(w, "WARNING: %s: package %s took %.1fs, %.0f%% of the %s -timeout (more than a third of it)\n",
				title, pt.Package, pt.Elapsed, 100*pt.Fraction, r.opt.Timeout)
		}
	}
	if r.Passed() {
		fmt.Fprintf(w, "== %s: ok (%s)\n", title, plural(len(pkgs), "package"))
		return
	}
	fmt.Fprintf(w, "== %s: FAIL\n", title)
	if len(r.order) == 0 {
		w.WriteString("  no test events in the input: did go test run with -json?\n")
	}
	failedBuilds := map[string]bool{}
	for _, p := range r.order {
		failedBuilds[p.failedBuild] = true
		var why []string
		switch {
		case p.result == "":
			why = append(why, "no result: the input ended while it ran")
		case p.failedBuild != "":
			why = append(why, "build failed: "+p.failedBuild)
		case p.result != "fail":
			continue
		}
		if len(p.failed) > 0 {
			why = append(why, "failed: "+strings.Join(p.failed, ", "))
		}
		if p.timedOut != "" {
			why = append(why, p.timedOut)
		}
		if len(p.unfinished) > 0 {
			why = append(why, "did not finish: "+strings.Join(p.unfinished, ", "))
		}
		if len(why) == 0 {
			why = append(why, "the test binary failed outside any test")
		}
		fmt.Fprintf(w, "  FAIL %s: %s\n", p.name, strings.Join(why, "; "))
	}
	for _, b := range r.builds {
		if !failedBuilds[b] {
			fmt.Fprintf(w, "  build failed: %s\n", b)
		}
	}
}

// topLevel counts the top-level tests that ended.
func (r *Reporter) topLevel() int {
	n := 0
	for _, p := range r.order {
		n += len(p.times)
	}
	return n
}

func plural(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}

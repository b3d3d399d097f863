package testreport

import (
	"bytes"
	"encoding/json"
	"io"
	"strings"
	"testing"
	"time"
)

// The event streams below are cut from what `go test -json` printed for
// small packages (Go 1.26): the same events, in the same order, with the
// times left out where they do not matter.

// ev is one line of go test -json.
func ev(action, pkg, test, output string, elapsed float64) string {
	e := struct {
		Time        *time.Time `json:",omitempty"`
		Action      string
		Package     string  `json:",omitempty"`
		Test        string  `json:",omitempty"`
		Elapsed     float64 `json:",omitempty"`
		Output      string  `json:",omitempty"`
		FailedBuild string  `json:",omitempty"`
		ImportPath  string  `json:",omitempty"`
	}{Action: action, Package: pkg, Test: test, Output: output, Elapsed: elapsed}
	if strings.HasPrefix(action, "build-") {
		e.Package, e.ImportPath = "", pkg
	}
	b, err := json.Marshal(e)
	if err != nil {
		panic(err)
	}
	return string(b) + "\n"
}

func start(pkg string) string                        { return ev("start", pkg, "", "", 0) }
func out(pkg, test, output string) string            { return ev("output", pkg, test, output, 0) }
func end(action, pkg, test string, s float64) string { return ev(action, pkg, test, "", s) }

// runTest is a test as go test -json reports it: started, what it printed,
// its result line and its result.
func runTest(pkg, name, action string, elapsed float64, lines ...string) string {
	s := ev("run", pkg, name, "", 0) + out(pkg, name, "=== RUN   "+name+"\n")
	for _, l := range lines {
		s += out(pkg, name, l)
	}
	return s + out(pkg, name, "--- "+strings.ToUpper(action)+": "+name+" ("+ftoa(elapsed)+"s)\n") + end(action, pkg, name, elapsed)
}

func ftoa(f float64) string {
	b, _ := json.Marshal(f)
	s := string(b)
	if !strings.Contains(s, ".") {
		s += ".00"
	}
	return s
}

// pkgOK and pkgFail end a package as go test -json does.
func pkgOK(pkg string, s float64) string {
	return out(pkg, "", "PASS\n") + out(pkg, "", "ok  \t"+pkg+"\t"+ftoa(s)+"s\n") + end("pass", pkg, "", s)
}

func pkgFail(pkg string, s float64) string {
	return out(pkg, "", "FAIL\n") + out(pkg, "", "FAIL\t"+pkg+"\t"+ftoa(s)+"s\n") + end("fail", pkg, "", s)
}

const (
	pa = "example.com/m/a"
	pb = "example.com/m/b"
)

// report runs the reporter over in and returns what it streamed (before
// the summary), the summary and whether the run passed.
func report(t *testing.T, in string, opt Options) (stream, summary string, passed bool) {
	t.Helper()
	var buf bytes.Buffer
	passed, err := Run(strings.NewReader(in), &buf, opt)
	if err != nil {
		t.Fatal(err)
	}
	title := opt.Title
	if title == "" {
		title = "go test"
	}
	stream, summary, ok := strings.Cut(buf.String(), "\n== "+title+": ")
	if !ok {
		t.Fatalf("no summary in:\n%s", buf.String())
	}
	return stream, "== " + title + ": " + summary, passed
}

func TestStream(t *testing.T) {
	for _, tc := range []struct {
		name   string
		in     string
		opt    Options
		want   string
		passed bool
	}{{
		name: "a passing package prints its ok line only",
		in: start(pa) +
			runTest(pa, "TestPass", "pass", 0.01, "    a_test.go:9: a log\n", "printed to stdout\n") +
			pkgOK(pa, 0.02),
		want:   "ok  \texample.com/m/a\t0.02s\n",
		passed: true,
	}, {
		name: "a skipped test prints nothing",
		in: start(pa) +
			runTest(pa, "TestSkip", "skip", 0, "    a_test.go:10: not today\n") +
			pkgOK(pa, 0.01),
		want:   "ok  \texample.com/m/a\t0.01s\n",
		passed: true,
	}, {
		name:   "a package without test files",
		in:     start(pa) + out(pa, "", "?   \t"+pa+"\t[no test files]\n") + end("skip", pa, "", 0),
		want:   "?   \texample.com/m/a\t[no test files]\n",
		passed: true,
	}, {
		name: "a failed test with subtests, in plain go test's order and indentation",
		in: start(pa) +
			ev("run", pa, "TestFail", "", 0) + out(pa, "TestFail", "=== RUN   TestFail\n") +
			out(pa, "TestFail", "    a_test.go:12: before\n") +
			runTest(pa, "TestFail/ok", "pass", 0, "    a_test.go:13: passing subtests are not printed\n") +
			ev("run", pa, "TestFail/bad", "", 0) + out(pa, "TestFail/bad", "=== RUN   TestFail/bad\n") +
			out(pa, "TestFail/bad", "    a_test.go:15: sub bad log\n") +
			runTest(pa, "TestFail/bad/deeper", "fail", 0, "    a_test.go:16: deep boom\n", "        second line\n") +
			out(pa, "TestFail/bad", "--- FAIL: TestFail/bad (0.00s)\n") + end("fail", pa, "TestFail/bad", 0) +
			out(pa, "TestFail", "    a_test.go:18: parent boom\n") +
			out(pa, "TestFail", "--- FAIL: TestFail (0.00s)\n") + end("fail", pa, "TestFail", 0) +
			pkgFail(pa, 0.07),
		want: "--- FAIL: TestFail (0.00s)\n" +
			"    a_test.go:12: before\n" +
			"    --- FAIL: TestFail/bad (0.00s)\n" +
			"        a_test.go:15: sub bad log\n" +
			"        --- FAIL: TestFail/bad/deeper (0.00s)\n" +
			"            a_test.go:16: deep boom\n" +
			"                second line\n" +
			"    a_test.go:18: parent boom\n" +
			"FAIL\n" +
			"FAIL\texample.com/m/a\t0.07s\n",
	}, {
		name: "parallel subtests are placed where they ended, after what their parent logged",
		in: start(pa) +
			ev("run", pa, "TestPar", "", 0) + out(pa, "TestPar", "=== RUN   TestPar\n") +
			ev("run", pa, "TestPar/x", "", 0) + out(pa, "TestPar/x", "=== RUN   TestPar/x\n") +
			out(pa, "TestPar/x", "=== PAUSE TestPar/x\n") + ev("pause", pa, "TestPar/x", "", 0) +
			ev("run", pa, "TestPar/y", "", 0) + out(pa, "TestPar/y", "=== RUN   TestPar/y\n") +
			out(pa, "TestPar/y", "=== PAUSE TestPar/y\n") + ev("pause", pa, "TestPar/y", "", 0) +
			out(pa, "TestPar", "    h_test.go:19: parent after subs\n") +
			ev("cont", pa, "TestPar/x", "", 0) + out(pa, "TestPar/x", "=== CONT  TestPar/x\n") +
			ev("cont", pa, "TestPar/y", "", 0) + out(pa, "TestPar/y", "=== CONT  TestPar/y\n") +
			out(pa, "TestPar/y", "    h_test.go:15: log y\n") +
			out(pa, "TestPar/x", "    h_test.go:15: log x\n") +
			out(pa, "TestPar/x", "=== NAME  TestPar/x\n") +
			out(pa, "TestPar/x", "    h_test.go:16: x fails\n") +
			out(pa, "TestPar/x", "--- FAIL: TestPar/x (0.01s)\n") + end("fail", pa, "TestPar/x", 0.01) +
			out(pa, "TestPar/y", "--- PASS: TestPar/y (0.01s)\n") + end("pass", pa, "TestPar/y", 0.01) +
			out(pa, "TestPar", "--- FAIL: TestPar (0.01s)\n") + end("fail", pa, "TestPar", 0.01) +
			pkgFail(pa, 0.02),
		want: "--- FAIL: TestPar (0.01s)\n" +
			"    h_test.go:19: parent after subs\n" +
			"    --- FAIL: TestPar/x (0.01s)\n" +
			"        h_test.go:15: log x\n" +
			"        h_test.go:16: x fails\n" +
			"FAIL\n" +
			"FAIL\texample.com/m/a\t0.02s\n",
	}, {
		name: "a line split over two events is indented once",
		in: start(pa) +
			ev("run", pa, "TestLong", "", 0) + out(pa, "TestLong", "=== RUN   TestLong\n") +
			runTest(pa, "TestLong/sub", "fail", 0, "    a_test.go:3: first half", "    and the second half\n") +
			out(pa, "TestLong", "--- FAIL: TestLong (0.00s)\n") + end("fail", pa, "TestLong", 0) +
			pkgFail(pa, 0.01),
		want: "--- FAIL: TestLong (0.00s)\n" +
			"    --- FAIL: TestLong/sub (0.00s)\n" +
			"        a_test.go:3: first half    and the second half\n" +
			"FAIL\n" +
			"FAIL\texample.com/m/a\t0.01s\n",
	}, {
		name: "what TestMain printed comes before the first failure",
		in: start(pa) +
			out(pa, "", "setup from TestMain\n") +
			runTest(pa, "TestA", "pass", 0) +
			runTest(pa, "TestB", "fail", 0.5, "    b_test.go:3: boom\n") +
			pkgFail(pa, 0.6),
		want: "setup from TestMain\n" +
			"--- FAIL: TestB (0.5s)\n" +
			"    b_test.go:3: boom\n" +
			"FAIL\n" +
			"FAIL\texample.com/m/a\t0.6s\n",
	}, {
		name: "a test panics: the panic after its result line",
		in: start(pa) +
			ev("run", pa, "TestPanics", "", 0) + out(pa, "TestPanics", "=== RUN   TestPanics\n") +
			runTest(pa, "TestPanics/sub", "fail", 0, "    e_test.go:12: about to panic\n") +
			out(pa, "TestPanics", "--- FAIL: TestPanics (0.00s)\n") +
			out(pa, "TestPanics", "panic: kaboom [recovered, repanicked]\n") +
			out(pa, "TestPanics", "\n") +
			out(pa, "TestPanics", "goroutine 23 [running]:\n") +
			end("fail", pa, "TestPanics", 0) +
			out(pa, "", "FAIL\t"+pa+"\t0.006s\n") + end("fail", pa, "", 0.009),
		want: "--- FAIL: TestPanics (0.00s)\n" +
			"    --- FAIL: TestPanics/sub (0.00s)\n" +
			"        e_test.go:12: about to panic\n" +
			"panic: kaboom [recovered, repanicked]\n" +
			"\n" +
			"goroutine 23 [running]:\n" +
			"FAIL\texample.com/m/a\t0.006s\n",
	}, {
		name: "a test binary that times out: the test that hung, its log and the panic",
		in: start(pa) +
			runTest(pa, "TestOK", "pass", 0) +
			ev("run", pa, "TestHang", "", 0) + out(pa, "TestHang", "=== RUN   TestHang\n") +
			out(pa, "TestHang", "    c_test.go:6: waiting\n") +
			ev("run", pa, "TestHang/step", "", 0) + out(pa, "TestHang/step", "=== RUN   TestHang/step\n") +
			out(pa, "TestHang/step", "    c_test.go:8: applying\n") +
			out(pa, "TestHang/step", "panic: test timed out after 20m0s\n") +
			out(pa, "TestHang/step", "\trunning tests:\n") +
			out(pa, "TestHang/step", "\t\tTestHang/step (20m0s)\n") +
			out(pa, "", "FAIL\t"+pa+"\t1200.022s\n") + end("fail", pa, "", 1200.022),
		want: "--- FAIL: TestHang (did not finish)\n" +
			"    c_test.go:6: waiting\n" +
			"    --- FAIL: TestHang/step (did not finish)\n" +
			"        c_test.go:8: applying\n" +
			"panic: test timed out after 20m0s\n" +
			"\trunning tests:\n" +
			"\t\tTestHang/step (20m0s)\n" +
			"FAIL\texample.com/m/a\t1200.022s\n",
	}, {
		name: "a test binary that exits in a test",
		in: start(pa) +
			ev("run", pa, "TestExit", "", 0) + out(pa, "TestExit", "=== RUN   TestExit\n") +
			out(pa, "", "FAIL\t"+pa+"\t0.010s\n") + end("fail", pa, "", 0.01),
		want: "--- FAIL: TestExit (did not finish)\n" +
			"FAIL\texample.com/m/a\t0.010s\n",
	}, {
		name: "a build failure, as build events",
		in: ev("build-output", pb+" ["+pb+".test]", "", "# "+pb+" ["+pb+".test]\n", 0) +
			ev("build-output", pb+" ["+pb+".test]", "", "b/b_test.go:5:40: cannot use \"s\" (untyped string constant) as int value\n", 0) +
			ev("build-fail", pb+" ["+pb+".test]", "", "", 0) +
			start(pa) + runTest(pa, "TestA", "pass", 0) +
			start(pb) + out(pb, "", "FAIL\t"+pb+" [build failed]\n") +
			`{"Action":"fail","Package":"` + pb + `","Elapsed":0,"FailedBuild":"` + pb + ` [` + pb + `.test]"}` + "\n" +
			pkgOK(pa, 0.1),
		want: "# example.com/m/b [example.com/m/b.test]\n" +
			"b/b_test.go:5:40: cannot use \"s\" (untyped string constant) as int value\n" +
			"FAIL\texample.com/m/b [build failed]\n" +
			"ok  \texample.com/m/a\t0.1s\n",
	}, {
		name: "a build failure as text (go before 1.24, or an early error), passed through",
		in: "# example.com/m/b [example.com/m/b.test]\n" +
			"b/b_test.go:5:40: undefined: x\n" +
			start(pb) + out(pb, "", "FAIL\t"+pb+" [build failed]\n") + end("fail", pb, "", 0),
		want: "# example.com/m/b [example.com/m/b.test]\n" +
			"b/b_test.go:5:40: undefined: x\n" +
			"FAIL\texample.com/m/b [build failed]\n",
	}, {
		name: "lines that are not events pass through as they are",
		in: "go: downloading example.com/x v1.0.0\n" +
			"{not an event}\n" +
			`{"json":"but no Action"}` + "\n" +
			start(pa) + runTest(pa, "TestA", "pass", 0) + pkgOK(pa, 0.1) +
			"no newline at the end",
		want: "go: downloading example.com/x v1.0.0\n" +
			"{not an event}\n" +
			`{"json":"but no Action"}` + "\n" +
			"ok  \texample.com/m/a\t0.1s\n" +
			"no newline at the end\n",
		passed: true,
	}, {
		name: "packages interleaved: a failed test is printed whole",
		in: start(pa) + start(pb) +
			ev("run", pa, "TestA", "", 0) + out(pa, "TestA", "=== RUN   TestA\n") +
			ev("run", pb, "TestB", "", 0) + out(pb, "TestB", "=== RUN   TestB\n") +
			out(pa, "TestA", "    a_test.go:1: a1\n") +
			out(pb, "TestB", "    b_test.go:1: b1\n") +
			out(pa, "TestA", "    a_test.go:2: a2\n") +
			out(pb, "TestB", "--- PASS: TestB (1.00s)\n") + end("pass", pb, "TestB", 1) +
			out(pa, "TestA", "--- FAIL: TestA (1.00s)\n") + end("fail", pa, "TestA", 1) +
			pkgOK(pb, 1.1) + pkgFail(pa, 1.2),
		want: "--- FAIL: TestA (1.00s)\n" +
			"    a_test.go:1: a1\n" +
			"    a_test.go:2: a2\n" +
			"ok  \texample.com/m/b\t1.1s\n" +
			"FAIL\n" +
			"FAIL\texample.com/m/a\t1.2s\n",
	}, {
		name: "the input ends while a package runs: what it printed, and a FAIL",
		in: start(pa) +
			ev("run", pa, "TestLong", "", 0) + out(pa, "TestLong", "=== RUN   TestLong\n") +
			out(pa, "TestLong", "    a_test.go:7: step 1\n"),
		want: "--- FAIL: TestLong (did not finish)\n" +
			"    a_test.go:7: step 1\n" +
			"FAIL\texample.com/m/a\t(no result: the input ended while it ran)\n",
	}, {
		name: "no events at all",
		in:   "go: warning: \"./...\" matched no packages\nno packages to test\n",
		want: "go: warning: \"./...\" matched no packages\nno packages to test\n",
	}, {
		name: "verbose prints everything as go test -v",
		opt:  Options{Verbose: true},
		in: start(pa) +
			runTest(pa, "TestPass", "pass", 0, "    a_test.go:9: a log\n") +
			runTest(pa, "TestSkip", "skip", 0) +
			pkgOK(pa, 0.02),
		want: "=== RUN   TestPass\n" +
			"    a_test.go:9: a log\n" +
			"--- PASS: TestPass (0.00s)\n" +
			"=== RUN   TestSkip\n" +
			"--- SKIP: TestSkip (0.00s)\n" +
			"PASS\n" +
			"ok  \texample.com/m/a\t0.02s\n",
		passed: true,
	}} {
		t.Run(tc.name, func(t *testing.T) {
			stream, summary, passed := report(t, tc.in, tc.opt)
			if stream != tc.want {
				t.Errorf("printed:\n%s\nwant:\n%s", stream, tc.want)
			}
			if passed != tc.passed {
				t.Errorf("passed = %v, want %v; summary:\n%s", passed, tc.passed, summary)
			}
			verdict := "== go test: ok"
			if !tc.passed {
				verdict = "== go test: FAIL"
			}
			if !strings.Contains(summary, verdict) {
				t.Errorf("summary without %q:\n%s", verdict, summary)
			}
		})
	}
}

func TestSlowest(t *testing.T) {
	in := start(pa) + start(pb)
	// Twelve top-level tests, 1 to 12 seconds, across two packages, and
	// subtests slower than all of them, which are not counted.
	for i := 1; i <= 12; i++ {
		pkg := pa
		if i%2 == 0 {
			pkg = pb
		}
		name := "Test" + string(rune('A'-1+i))
		action := "pass"
		switch i {
		case 11:
			action = "fail"
		case 3:
			action = "skip"
		}
		in += ev("run", pkg, name, "", 0) + runTest(pkg, name+"/sub", "pass", 100) + end(action, pkg, name, float64(i))
	}
	in += pkgOK(pa, 40) + pkgOK(pb, 50)

	r := NewReporter(Options{})
	var buf bytes.Buffer
	for _, l := range strings.SplitAfter(in, "\n") {
		r.Line(&buf, []byte(l))
	}
	var got []string
	for _, tt := range r.Slowest(10) {
		got = append(got, tt.Test+"@"+tt.Package[len("example.com/m/"):])
	}
	want := "TestL@b TestK@a TestJ@b TestI@a TestH@b TestG@a TestF@b TestE@a TestD@b TestC@a"
	if strings.Join(got, " ") != want {
		t.Errorf("slowest:\n%s\nwant\n%s", strings.Join(got, " "), want)
	}
	if n := len(r.Slowest(100)); n != 12 {
		t.Errorf("%d top-level tests, want 12", n)
	}

	_, summary, _ := report(t, in, Options{Title: "Terraform 1.16", Slowest: 3, Timeout: 20 * time.Minute})
	for _, line := range []string{
		"== Terraform 1.16: the 3 slowest of 12 top-level tests\n",
		"      12.00s  TestL  example.com/m/b\n",
		"      11.00s  TestK  example.com/m/a  (fail)\n",
		"      10.00s  TestJ  example.com/m/b\n",
	} {
		if !strings.Contains(summary, line) {
			t.Errorf("summary without %q:\n%s", line, summary)
		}
	}
	if strings.Contains(summary, "TestI") || strings.Contains(summary, "/sub") {
		t.Errorf("summary lists more than the 3 slowest top-level tests:\n%s", summary)
	}
}

func TestPackageTimes(t *testing.T) {
	const timeout = 30 * time.Second
	for _, tc := range []struct {
		name    string
		elapsed float64
		timeout time.Duration
		line    string
		warn    bool
	}{
		{"well under a third", 5, timeout, "       5.00s   16.7%  example.com/m/a\n", false},
		{"a third exactly", 10, timeout, "      10.00s   33.3%  example.com/m/a\n", false},
		{"just over a third", 10.01, timeout, "      10.01s   33.4%  example.com/m/a\n", true},
		{"over the timeout", 45, timeout, "      45.00s  150.0%  example.com/m/a\n", true},
		{"no timeout", 500, 0, "     500.00s  example.com/m/a\n", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			in := start(pa) + runTest(pa, "TestA", "pass", tc.elapsed) + pkgOK(pa, tc.elapsed) +
				start(pb) + out(pb, "", "?   \t"+pb+"\t[no test files]\n") + end("skip", pb, "", 0)
			_, summary, passed := report(t, in, Options{Title: "T", Timeout: tc.timeout})
			if !passed {
				t.Error("a warning failed the run")
			}
			if !strings.Contains(summary, tc.line) {
				t.Errorf("summary without %q:\n%s", tc.line, summary)
			}
			if !strings.Contains(summary, "  (and 1 package without test files)\n") {
				t.Errorf("summary does not count the package without tests:\n%s", summary)
			}
			warning := "WARNING: T: package example.com/m/a took "
			if got := strings.Contains(summary, warning); got != tc.warn {
				t.Errorf("warning = %v, want %v:\n%s", got, tc.warn, summary)
			}
		})
	}

	// Slowest first, failed packages marked, and each failure named under FAIL.
	in := start(pa) + runTest(pa, "TestA", "fail", 3) + pkgFail(pa, 3.5) +
		start(pb) + runTest(pb, "TestB", "pass", 20) + pkgOK(pb, 20.5) +
		start("example.com/m/c") + out("example.com/m/c", "", "FAIL\texample.com/m/c [build failed]\n") +
		`{"Action":"fail","Package":"example.com/m/c","Elapsed":0,"FailedBuild":"example.com/m/c [example.com/m/c.test]"}` + "\n" +
		ev("build-fail", "example.com/m/d", "", "", 0)
	_, summary, passed := report(t, in, Options{Title: "T", Timeout: timeout})
	if passed {
		t.Error("passed")
	}
	want := "== T: package times against the 30s timeout\n" +
		"      20.50s   68.3%  example.com/m/b\n" +
		"       3.50s   11.7%  example.com/m/a  (FAIL)\n" +
		"       0.00s    0.0%  example.com/m/c  (build failed)\n" +
		"WARNING: T: package example.com/m/b took 20.5s, 68% of the 30s -timeout (more than a third of it)\n" +
		"== T: FAIL\n" +
		"  FAIL example.com/m/a: failed: TestA\n" +
		"  FAIL example.com/m/c: build failed: example.com/m/c [example.com/m/c.test]\n" +
		"  build failed: example.com/m/d\n"
	if !strings.HasSuffix(summary, want) {
		t.Errorf("summary:\n%s\nwant it to end with:\n%s", summary, want)
	}
}

// TestTimedOutSummary: a package whose binary timed out, and one the input
// left without a result, are named with the tests that did not finish.
func TestTimedOutSummary(t *testing.T) {
	in := start(pa) +
		ev("run", pa, "TestHang", "", 0) +
		out(pa, "TestHang", "panic: test timed out after 20m0s\n") +
		out(pa, "", "FAIL\t"+pa+"\t1200.02s\n") + end("fail", pa, "", 1200.02) +
		`{"Time":"2026-01-02T10:00:00Z","Action":"start","Package":"` + pb + `"}` + "\n" +
		`{"Time":"2026-01-02T10:01:30Z","Action":"run","Package":"` + pb + `","Test":"TestCut"}` + "\n"
	_, summary, passed := report(t, in, Options{Timeout: 20 * time.Minute})
	if passed {
		t.Error("passed")
	}
	for _, line := range []string{
		"    1200.02s  100.0%  example.com/m/a  (FAIL)\n",
		"      90.00s    7.5%  example.com/m/b  (no result)\n",
		"  FAIL example.com/m/a: panic: test timed out after 20m0s; did not finish: TestHang\n",
		"  FAIL example.com/m/b: no result: the input ended while it ran; did not finish: TestCut\n",
	} {
		if !strings.Contains(summary, line) {
			t.Errorf("summary without %q:\n%s", line, summary)
		}
	}
}

func TestMainExitStatus(t *testing.T) {
	ok := start(pa) + runTest(pa, "TestA", "pass", 0) + pkgOK(pa, 0.1)
	for _, tc := range []struct {
		name string
		args []string
		in   string
		want int
	}{
		{"passed", []string{"-timeout", "20m", "-title", "T"}, ok, 0},
		{"a failed test", nil, start(pa) + runTest(pa, "TestA", "fail", 0) + pkgFail(pa, 0.1), 1},
		{"a failed package, no failed test", nil, start(pa) + runTest(pa, "TestA", "pass", 0) + pkgFail(pa, 0.1), 1},
		{"a failed build", nil, ok + ev("build-fail", pb, "", "", 0), 1},
		{"a package without a result", nil, ok + start(pb), 1},
		{"no events", nil, "", 1},
		{"a bad flag", []string{"-nope"}, ok, 2},
		{"an argument", []string{"./..."}, ok, 2},
		{"a negative timeout", []string{"-timeout", "-1s"}, ok, 2},
		{"no slowest tests", []string{"-slowest", "0"}, ok, 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			if got := Main(tc.args, strings.NewReader(tc.in), &stdout, &stderr); got != tc.want {
				t.Errorf("exit status %d, want %d\nstdout:\n%s\nstderr:\n%s", got, tc.want, stdout.String(), stderr.String())
			}
		})
	}
}

// TestStreams: each line's output is written before the next line is read.
func TestStreams(t *testing.T) {
	in := start(pa) + runTest(pa, "TestA", "fail", 0, "    a_test.go:1: boom\n") + pkgFail(pa, 0.1)
	lines := strings.SplitAfter(in, "\n")
	pr := &lineReader{lines: lines}
	w := &recorder{reader: pr}
	if _, err := Run(pr, w, Options{}); err != nil {
		t.Fatal(err)
	}
	// The failed test was written when its "fail" event had been read, not
	// at the end of the input.
	if len(w.writes) == 0 || !strings.HasPrefix(w.writes[0].text, "--- FAIL: TestA") {
		t.Fatalf("writes: %+v", w.writes)
	}
	if w.writes[0].read >= len(lines)-1 {
		t.Errorf("the failed test was written after %d of %d lines were read", w.writes[0].read, len(lines))
	}
}

// lineReader hands out one line per Read.
type lineReader struct {
	lines []string
	read  int
}

func (r *lineReader) Read(p []byte) (int, error) {
	if r.read == len(r.lines) {
		return 0, io.EOF
	}
	n := copy(p, r.lines[r.read])
	if n < len(r.lines[r.read]) {
		r.lines[r.read] = r.lines[r.read][n:]
	} else {
		r.read++
	}
	return n, nil
}

type recorder struct {
	reader *lineReader
	writes []struct {
		text string
		read int
	}
}

func (w *recorder) Write(p []byte) (int, error) {
	if len(p) > 0 {
		w.writes = append(w.writes, struct {
			text string
			read int
		}{string(p), w.reader.read})
	}
	return len(p), nil
}

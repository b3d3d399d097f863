package testreport

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

// A throwaway module: a package whose tests fail in every way that prints
// (subtests, parallel subtests, TestMain's output, a panic), one that
// times out, one that does not build and one without tests.
var module = map[string]string{
	"go.mod": "module example.com/real\n\ngo 1.25\n",
	"fail/fail_test.go": `package fail

import (
	"fmt"
	"os"
	"testing"
	"time"
)

func TestMain(m *testing.M) { fmt.Println("setup from TestMain"); os.Exit(m.Run()) }

func TestPass(t *testing.T) { t.Log("not printed") }
func TestSkip(t *testing.T) { t.Skip("not printed either") }
func TestSlow(t *testing.T) { time.Sleep(30 * time.Millisecond) }

func TestFail(t *testing.T) {
	t.Log("before")
	t.Run("ok", func(t *testing.T) { t.Log("passing subtests are not printed") })
	t.Run("bad", func(t *testing.T) {
		t.Log("sub bad log")
		t.Run("deeper", func(t *testing.T) { t.Error("deep boom\nsecond line") })
	})
	t.Errorf("parent boom")
}

func TestParallelSubtests(t *testing.T) {
	for _, n := range []string{"x", "y"} {
		t.Run(n, func(t *testing.T) {
			t.Parallel()
			t.Logf("log %s", n)
			if n == "y" {
				t.Fatal("y fails")
			}
		})
	}
	t.Log("parent after subs")
}

func TestPanics(t *testing.T) {
	t.Run("sub", func(t *testing.T) { t.Log("about to panic"); panic("kaboom") })
}
`,
	"hang/hang_test.go": `package hang

import (
	"testing"
	"time"
)

func TestQuick(t *testing.T) {}
func TestHang(t *testing.T) { t.Log("waiting"); time.Sleep(time.Minute) }
`,
	"broken/broken_test.go": "package broken\n\nimport \"testing\"\n\nfunc TestBroken(t *testing.T) { nope() }\n",
	"empty/empty.go":        "package empty\n",
}

// goTest runs go test in dir and returns its standard output and error together.
func goTest(t *testing.T, dir string, args ...string) []byte {
	t.Helper()
	cmd := exec.CommandContext(t.Context(), "go", append([]string{"test", "-count=1"}, args...)...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GOFLAGS=", "GOWORK=off", "GOTOOLCHAIN=local")
	out, err := cmd.CombinedOutput()
	var exit *exec.ExitError
	if !errors.As(err, &exit) {
		t.Fatalf("go test %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return out
}

var times = regexp.MustCompile(`[0-9]+\.[0-9]+s\b`)

// TestRealGoTest checks the report against the go command on this machine:
// for a package that fails, it prints what plain go test prints; a binary
// that times out, a build failure and a package without tests are shown and
// fail the run.
func TestRealGoTest(t *testing.T) {
	if testing.Short() {
		t.Skip("runs go test on a throwaway module")
	}
	if _, err := exec.LookPath("go"); err != nil {
		t.Skip("no go command:", err)
	}
	dir := t.TempDir()
	for name, text := range module {
		path := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
	}

	t.Run("as plain go test", func(t *testing.T) {
		plain := goTest(t, dir, "./fail")
		stream, _, passed := report(t, string(goTest(t, dir, "-json", "./fail")), Options{})
		if passed {
			t.Error("passed")
		}
		// The panic's goroutine dump has addresses and line numbers of
		// the testing package: compare up to it, and its first line.
		cut := func(s string) string {
			s = times.ReplaceAllString(s, "X.XXs")
			before, after, _ := strings.Cut(s, "goroutine ")
			return before + "...\n" + after[strings.LastIndex(after, "\nFAIL\t")+1:]
		}
		// Plain go test ends with a FAIL line of its own when a package
		// failed; the report's summary says it.
		plainOut := strings.TrimSuffix(string(plain), "FAIL\n")
		if got, want := cut(stream), cut(plainOut); got != want {
			t.Errorf("printed:\n%s\nplain go test printed:\n%s", got, want)
		}
	})

	t.Run("timeout, build failure, no tests", func(t *testing.T) {
		timeout := 2 * time.Second
		stream, summary, passed := report(t, string(goTest(t, dir, "-json", "-timeout", timeout.String(), "./...")), Options{Title: "real", Timeout: timeout})
		if passed {
			t.Error("passed")
		}
		for _, want := range []string{
			"--- FAIL: TestHang (did not finish)\n    hang_test.go:9: waiting\npanic: test timed out after 2s\n",
			"undefined: nope\n",
			"FAIL\texample.com/real/broken [build failed]\n",
			"?   \texample.com/real/empty\t[no test files]\n",
			"--- FAIL: TestFail (",
		} {
			if !strings.Contains(stream, want) {
				t.Errorf("printed without %q:\n%s", want, stream)
			}
		}
		for _, want := range []string{
			"== real: the 7 slowest of 7 top-level tests\n",
			"WARNING: real: package example.com/real/hang took ",
			"  FAIL example.com/real/hang: panic: test timed out after 2s; did not finish: TestHang\n",
			"  FAIL example.com/real/broken: build failed: ",
			"  FAIL example.com/real/fail: failed: TestFail, TestParallelSubtests, TestPanics\n",
		} {
			if !strings.Contains(summary, want) {
				t.Errorf("summary without %q:\n%s", want, summary)
			}
		}
		if strings.Contains(summary, "WARNING: real: package example.com/real/fail") {
			t.Errorf("a warning for a quick package:\n%s", summary)
		}
	})
}

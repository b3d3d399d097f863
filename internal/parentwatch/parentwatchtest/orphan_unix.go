//go:build unix

package parentwatchtest

import (
	"bufio"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// Event is what Next found on the child's stdout.
type Event int

const (
	Line    Event = iota // a line
	End                  // the pipe's end: the shell and the child have both exited
	Nothing              // nothing within the timeout
)

func (e Event) String() string {
	return [...]string{Line: "a line", End: "the pipe's end", Nothing: "nothing"}[e]
}

// Orphan is a shell that started one command in the background and waits for
// the test to end it. The child's stdout is a pipe the test reads; its stderr
// and the shell's are a file, shown when the test fails.
type Orphan struct {
	Shell *exec.Cmd
	Child int // the child's pid

	stdin  *os.File    // closing it ends the shell
	stderr *os.File    // the shell's and the child's
	lines  chan string // the pipe's lines; closed at its end
	ended  bool        // the pipe has ended: the child has exited
	waited bool        // the shell has been reaped
	quit   chan struct{}
}

// Start runs `sh -c 'argv & …'`, with env added to the test's environment,
// and returns once the shell has told the child's pid. The test's cleanup
// kills whatever still runs.
func Start(t testing.TB, env []string, argv ...string) *Orphan {
	t.Helper()
	// The pipes are made here rather than by exec.Cmd, whose Wait would
	// close the read end once the shell exits, while the child still writes.
	outR, outW, err := os.Pipe()
	if err != nil {
		t.Fatalf("making the stdout pipe: %v", err)
	}
	inR, inW, err := os.Pipe()
	if err != nil {
		t.Fatalf("making the stdin pipe: %v", err)
	}
	stderr, err := os.CreateTemp(t.TempDir(), "stderr")
	if err != nil {
		t.Fatalf("making the stderr file: %v", err)
	}
	// A background job's stdin is /dev/null: the child does not hold the
	// shell's, so closing it ends the shell alone. The shell ends with the
	// test at the latest; the child is the cleanup's.
	sh := exec.CommandContext(t.Context(), "sh", append([]string{"-c", `"$@" & echo "pid $!"; read -r _; exit 0`, "sh"}, argv...)...)
	sh.Env = append(os.Environ(), env...)
	sh.Stdin, sh.Stdout, sh.Stderr = inR, outW, stderr
	if err := sh.Start(); err != nil {
		t.Fatalf("starting the shell: %v", err)
	}
	_ = inR.Close()
	_ = outW.Close()
	o := &Orphan{Shell: sh, stdin: inW, stderr: stderr, lines: make(chan string), quit: make(chan struct{})}
	go func() {
		defer close(o.lines)
		s := bufio.NewScanner(outR)
		for s.Scan() {
			select {
			case o.lines <- s.Text():
			case <-o.quit:
				return
			}
		}
	}()
	t.Cleanup(func() {
		close(o.quit)
		if !o.waited {
			_ = sh.Process.Kill()
			_ = sh.Wait()
		}
		if o.Child != 0 && !o.ended {
			_ = syscall.Kill(o.Child, syscall.SIGKILL)
		}
		_ = inW.Close()
		_ = outR.Close()
		if b, err := os.ReadFile(stderr.Name()); t.Failed() && err == nil && len(b) > 0 {
			t.Logf("stderr of the shell and its child:\n%s", b)
		}
		_ = stderr.Close()
	})

	line, ev := o.Next(10 * time.Second)
	pid, found := strings.CutPrefix(line, "pid ")
	if ev != Line || !found {
		t.Fatalf("the shell's first word: %v %q, want \"pid <child>\"", ev, line)
	}
	if o.Child, err = strconv.Atoi(pid); err != nil {
		t.Fatalf("the shell's child pid %q: %v", pid, err)
	}
	return o
}

// Next waits up to timeout for the child's next line.
func (o *Orphan) Next(timeout time.Duration) (string, Event) {
	select {
	case line, ok := <-o.lines:
		if !ok {
			o.ended = true
			return "", End
		}
		return line, Line
	case <-time.After(timeout):
		return "", Nothing
	}
}

// Drain reads the child's lines until it is silent for timeout (Nothing) or
// its pipe ends (End), and returns the last line read.
func (o *Orphan) Drain(timeout time.Duration) (last string, ev Event) {
	for {
		line, ev := o.Next(timeout)
		if ev != Line {
			return last, ev
		}
		last = line
	}
}

// Stderr returns what the shell and the child wrote to stderr so far.
func (o *Orphan) Stderr(t testing.TB) string {
	t.Helper()
	b, err := os.ReadFile(o.stderr.Name())
	if err != nil {
		t.Fatalf("reading the child's stderr: %v", err)
	}
	return string(b)
}

// EndShell ends the shell, by closing its stdin (it exits) or by killing it,
// and reaps it; the child is left an orphan.
func (o *Orphan) EndShell(t testing.TB, kill bool) {
	t.Helper()
	var err error
	if kill {
		err = o.Shell.Process.Kill()
	} else {
		err = o.stdin.Close()
	}
	if err != nil {
		t.Fatalf("ending the shell (kill: %v): %v", kill, err)
	}
	done := make(chan error, 1)
	go func() { done <- o.Shell.Wait() }()
	select {
	case err = <-done:
	case <-time.After(10 * time.Second):
		_ = o.Shell.Process.Kill()
		err = <-done
		o.waited = true
		t.Fatalf("the shell did not end within 10s, and was killed: %v", err)
	}
	o.waited = true
	if exit := (*exec.ExitError)(nil); err != nil && !errors.As(err, &exit) {
		t.Fatalf("waiting for the shell: %v", err)
	}
}

// AssertExited fails the test unless the system agrees that the child, whose
// pipe has ended, has exited. Only Linux can tell (/proc), and then the test
// need not trust that the child never closed its stdout itself: a pid that is
// gone, or a zombie left for init to reap, has exited. An exiting process
// closes its files a moment before it is a zombie, so the state has a second
// to come.
func (o *Orphan) AssertExited(t testing.TB) {
	t.Helper()
	if runtime.GOOS != "linux" {
		return
	}
	deadline := time.Now().Add(time.Second)
	for {
		stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", o.Child))
		if errors.Is(err, fs.ErrNotExist) {
			return
		}
		if err != nil {
			t.Fatalf("reading the child's state: %v", err)
		}
		// The state follows the command's closing parenthesis.
		if _, rest, _ := strings.Cut(string(stat), ") "); strings.HasPrefix(rest, "Z") {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("the pipe ended but the child %d still runs a second later: %s", o.Child, stat)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

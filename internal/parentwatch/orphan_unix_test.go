//go:build unix

package parentwatch

import (
	"fmt"
	"os"
	"testing"
	"time"

	"github.com/bkiam/terraform-provider-bkiam/internal/parentwatch/parentwatchtest"
)

// roleEnv makes the test binary, run again, the watched child of
// TestOrphanExits instead of a test run.
const roleEnv = "PARENTWATCH_TEST_ROLE"

const (
	// childInterval is the child's polling interval: short, so the test is.
	childInterval = 100 * time.Millisecond
	// childLifetime bounds a child whose watch is broken, should the test
	// binary die before its cleanup kills it.
	childLifetime = 60 * time.Second
)

func TestMain(m *testing.M) {
	if os.Getenv(roleEnv) == "child" {
		os.Exit(runChild())
	}
	os.Exit(m.Run())
}

// runChild is the watched process. Its stdout is the test's pipe: it says
// "watching <parent> <self>" once the watch runs and "gone <parent>" when
// onGone is called, then exits; the test reads the pipe's end as its exit.
func runChild() int {
	stop := Start(childInterval, func(parent int) {
		fmt.Printf("gone %d\n", parent)
		os.Exit(0)
	})
	defer stop()
	fmt.Printf("watching %d %d\n", os.Getppid(), os.Getpid())
	time.Sleep(childLifetime)
	fmt.Println("lifetime over")
	return 3
}

// TestOrphanExits runs the real thing: the test binary as a child of a shell
// that then exits or is killed, as a provider is the child of a Terraform CLI.
// The child must keep running while the shell lives, and exit soon after it
// is gone.
func TestOrphanExits(t *testing.T) {
	t.Parallel()
	exe, err := os.Executable()
	if err != nil {
		t.Fatalf("locating the test binary: %v", err)
	}
	for _, tc := range []struct {
		name string
		kill bool // the shell is killed, not left to exit
	}{
		{name: "parent exits"},
		{name: "parent is killed", kill: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			o := parentwatchtest.Start(t, []string{roleEnv + "=child"}, exe)

			line, ev := o.Next(30 * time.Second)
			var parent, child int
			if _, err := fmt.Sscanf(line, "watching %d %d", &parent, &child); ev != parentwatchtest.Line || err != nil {
				t.Fatalf("the child's first word: %v %q, want \"watching <parent> <pid>\"", ev, line)
			}
			if child != o.Child || parent != o.Shell.Process.Pid {
				t.Fatalf("child %d says its parent is %d; want child %d of the shell %d", child, parent, o.Child, o.Shell.Process.Pid)
			}

			// While the shell lives the child keeps running: ten looks at
			// its parent, and no word.
			if line, ev := o.Next(10 * childInterval); ev != parentwatchtest.Nothing {
				t.Fatalf("while its parent lives the child gave %v %q, want nothing", ev, line)
			}

			o.EndShell(t, tc.kill)
			ended := time.Now()

			want := fmt.Sprintf("gone %d", parent)
			if line, ev := o.Next(5 * time.Second); ev != parentwatchtest.Line || line != want {
				t.Fatalf("after its parent ended the child gave %v %q, want %q", ev, line, want)
			}
			noticed := time.Since(ended)
			if line, ev := o.Next(5 * time.Second); ev != parentwatchtest.End {
				t.Fatalf("after %q the child gave %v %q, want its exit", want, ev, line)
			}
			// The exit is bounded by Next's 5s above; the race runtime
			// adds a second to it (it sleeps at exit, GORACE
			// atexit_sleep_ms), so the 2s bound is on noticing.
			if noticed > 2*time.Second {
				t.Errorf("the child noticed %v after its parent ended, want within 2s", noticed)
			}
			t.Logf("the child noticed %v and exited %v after its parent ended", noticed.Round(time.Millisecond), time.Since(ended).Round(time.Millisecond))
			o.AssertExited(t)
		})
	}
}

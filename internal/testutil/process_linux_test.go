package testutil

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"
)

// childEnv, when set, makes the test binary the test's child: it starts
// `sleep` as a test starts a CLI, tells its pid, and waits to be killed.
const childEnv = "TESTUTIL_END_WITH_TEST_CHILD"

func TestMain(m *testing.M) {
	if mode := os.Getenv(childEnv); mode != "" {
		cmd := exec.Command("sleep", "60")
		if mode == "ends" {
			EndWithTest(cmd)
		}
		if err := cmd.Start(); err != nil {
			fmt.Println("error", err)
			os.Exit(1)
		}
		fmt.Println("pid", cmd.Process.Pid)
		time.Sleep(time.Minute)
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// TestEndWithTest: a process started with EndWithTest ends within a
// second of the test binary that started it being killed (as a -timeout
// or kill -9 ends it); one started without it lives on, which shows the
// test can tell the two apart.
func TestEndWithTest(t *testing.T) {
	for _, tc := range []struct {
		mode string
		ends bool
	}{
		{"ends", true},
		{"lives", false},
	} {
		t.Run(tc.mode, func(t *testing.T) {
			child := exec.Command(os.Args[0], "-test.run=^$")
			child.Env = append(os.Environ(), childEnv+"="+tc.mode)
			out, err := child.StdoutPipe()
			if err != nil {
				t.Fatal(err)
			}
			if err := child.Start(); err != nil {
				t.Fatal(err)
			}
			line, err := bufio.NewReader(out).ReadString('\n')
			if err != nil {
				_ = child.Process.Kill()
				t.Fatalf("the child said nothing: %v", err)
			}
			pid, err := strconv.Atoi(strings.TrimPrefix(strings.TrimSpace(line), "pid "))
			if err != nil {
				_ = child.Process.Kill()
				t.Fatalf("the child said %q", line)
			}
			t.Cleanup(func() {
				if p, err := os.FindProcess(pid); err == nil {
					_ = p.Kill()
				}
			})
			if !running(pid) {
				t.Fatalf("sleep (pid %d) is not running before its parent is killed", pid)
			}
			if err := child.Process.Kill(); err != nil {
				t.Fatal(err)
			}
			_ = child.Wait()
			deadline := time.Now().Add(time.Second)
			for running(pid) && time.Now().Before(deadline) {
				time.Sleep(20 * time.Millisecond)
			}
			switch {
			case tc.ends && running(pid):
				t.Errorf("sleep (pid %d) still runs a second after the test binary that started it was killed", pid)
			case !tc.ends && !running(pid):
				t.Errorf("sleep (pid %d), started without EndWithTest, ended with its parent: the test cannot tell", pid)
			}
		})
	}
}

// running reports whether pid runs: neither gone nor a zombie (an orphan
// whose exit nobody has reaped yet has ended all the same).
func running(pid int) bool {
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return false
	}
	// The state follows the command's name, in parentheses.
	i := strings.LastIndexByte(string(stat), ')')
	return i < 0 || i+2 >= len(stat) || stat[i+2] != 'Z'
}

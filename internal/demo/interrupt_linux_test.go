package demo

import (
	"bufio"
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/bkiam/terraform-provider-bkiam/internal/testutil"
)

// TestAccDemoInterruptedLeavesNoProcess stops the demo with SIGTERM in the
// middle of terraform apply and checks that it exits non-zero and that no
// process it started (Terraform, the provider) is left running.
func TestAccDemoInterruptedLeavesNoProcess(t *testing.T) {
	cli := testutil.CLI(t)
	terraform := cli.Path
	providerDir := testutil.BuildProvider(t)
	root := testutil.RepoRoot(t)
	demoBin := filepath.Join(t.TempDir(), "bkiam-demo")
	build := exec.Command("go", "build", "-o", demoBin, "./cmd/bkiam-demo")
	build.Dir = root
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("building the demo: %v\n%s", err, out)
	}

	marker := make([]byte, 8)
	_, _ = rand.Read(marker)
	mark := "BKIAM_DEMO_TEST_RUN=" + hex.EncodeToString(marker)
	cmd := exec.Command(demoBin, "-terraform", terraform, "-provider-dir", providerDir, "-examples", filepath.Join(root, "examples"))
	cmd.Env = append(os.Environ(), mark)
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = cmd.Stdout
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	// Wait until terraform apply is running, then stop the demo. The demo
	// shows the command users type, whatever the binary is called.
	lines, applying := bufio.NewScanner(stdout), false
	for !applying && lines.Scan() {
		applying = strings.HasPrefix(lines.Text(), "$ "+cli.Name+" apply")
	}
	if !applying {
		t.Fatalf("the demo never showed %q", "$ "+cli.Name+" apply")
	}
	time.Sleep(300 * time.Millisecond)
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	for lines.Scan() {
	}
	err = cmd.Wait()
	if err == nil {
		t.Fatal("the interrupted demo exited 0")
	}

	// Every process the demo started carries the marker in its environment.
	deadline := time.Now().Add(10 * time.Second)
	for {
		left := processesWith(t, mark)
		if len(left) == 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("processes left behind by the interrupted demo: %v", left)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// processesWith lists the command lines of running processes whose
// environment holds kv.
func processesWith(t *testing.T, kv string) []string {
	t.Helper()
	entries, err := os.ReadDir("/proc")
	if err != nil {
		t.Fatal(err)
	}
	var found []string
	for _, e := range entries {
		env, err := os.ReadFile(filepath.Join("/proc", e.Name(), "environ"))
		if err != nil || !bytes.Contains(env, []byte(kv)) {
			continue
		}
		stat, _ := os.ReadFile(filepath.Join("/proc", e.Name(), "stat"))
		if strings.Contains(string(stat), ") Z ") {
			continue // a zombie: already dead, waiting to be reaped
		}
		cmdline, _ := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		found = append(found, e.Name()+": "+strings.ReplaceAll(string(cmdline), "\x00", " "))
	}
	return found
}

package testutil

import (
	"os/exec"
	"syscall"
)

// EndWithTest makes cmd, a CLI a test starts, die with the test binary:
// Linux sends it SIGKILL when the binary is gone, however it ends (a
// -timeout's panic, kill -9), so that no CLI is left running orphaned.
// Its providers then notice that their CLI is gone and exit too
// (internal/parentwatch). terraform-plugin-testing starts its CLIs this
// way already (terraform-exec).
func EndWithTest(cmd *exec.Cmd) {
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	cmd.SysProcAttr.Pdeathsig = syscall.SIGKILL
}

package demo

import "syscall"

// setParentDeathSignal kills Terraform if the demo itself is killed
// outright (SIGKILL), when it has no chance to stop it.
func setParentDeathSignal(attr *syscall.SysProcAttr) {
	attr.Pdeathsig = syscall.SIGKILL
}

//go:build !unix

package demo

import "os/exec"

func ownProcessGroup(*exec.Cmd) {}

func interruptGroup(cmd *exec.Cmd) error {
	if cmd.Process == nil {
		return nil
	}
	return cmd.Process.Kill()
}

func killGroup(*exec.Cmd) {}

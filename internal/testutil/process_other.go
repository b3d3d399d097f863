//go:build !linux

package testutil

import "os/exec"

// EndWithTest does nothing here: only Linux can have a child killed when
// its parent dies. The providers a CLI started still exit once it is gone
// (internal/parentwatch, on unix).
func EndWithTest(*exec.Cmd) {}

//go:build unix && !linux

package demo

import "syscall"

func setParentDeathSignal(*syscall.SysProcAttr) {}

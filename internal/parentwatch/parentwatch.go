// Package parentwatch lets a plugin notice that the process that started it
// has exited, so that it can exit too instead of running on as an orphan.
//
// Terraform starts terraform-provider-bkiam as a go-plugin plugin and, when
// it is done, asks it to stop over gRPC. A CLI that is killed instead (a go
// test binary whose -timeout strikes takes its CLIs down with it; kill -9)
// asks nothing, and go-plugin serves until it is asked: the provider then runs
// on, orphaned, for good. Start watches the parent from inside the provider.
//
// A process knows its parent by pid only. On unix, when the parent exits the
// kernel hands its children to init or to the nearest subreaper, and
// getppid(2) changes; Start polls for that change. Polling is portable across
// unix and costs one system call a tick; Linux's prctl(PR_SET_PDEATHSIG)
// would be immediate, but it fires when the parent's forking thread exits
// (which a Go parent's runtime may do while the parent lives on), it is Linux
// only, and it needs golang.org/x/sys.
//
// The watch starts from the parent as it is when Start is called, so call it
// early in main: a parent that exits before then goes unnoticed. A process
// whose parent is init from the start (a CLI run as a container's PID 1)
// never sees a change, and is never stopped by mistake.
//
// On windows, plan9, js and wasip1 an exited parent's pid does not change,
// and Start watches nothing (Supported is false).
package parentwatch

import (
	"os"
	"sync"
	"time"
)

// DefaultInterval is how often the parent is looked at: an orphaned plugin
// stops within about this long after its parent exits.
const DefaultInterval = 500 * time.Millisecond

// Supported reports whether Start can see the parent exit on this system.
const Supported = supported

// Start remembers the process's parent as it is now and, from a goroutine of
// its own, looks every interval whether it has exited; the first time it has,
// Start's goroutine calls onGone with the parent's pid and the watch ends. An
// interval of zero or less means DefaultInterval. Where the watch is not
// Supported, Start does nothing.
//
// stop ends the watch early and waits until it has ended, onGone included if
// it had begun: after stop returns, onGone is not called. onGone must not call
// stop. stop may be called more than once.
func Start(interval time.Duration, onGone func(parent int)) (stop func()) {
	if !Supported {
		return func() {}
	}
	if interval <= 0 {
		interval = DefaultInterval
	}
	return start(os.Getppid, interval, onGone)
}

// start is Start with the parent's pid read through getppid, which the tests
// of the polling replace.
func start(getppid func() int, interval time.Duration, onGone func(parent int)) (stop func()) {
	parent := getppid()
	quit := make(chan struct{})
	done := make(chan struct{})
	go func() {
		defer close(done)
		tick := time.NewTicker(interval)
		defer tick.Stop()
		for {
			select {
			case <-quit:
				return
			case <-tick.C:
			}
			// A different parent means ours exited and we were handed on
			// to init or a subreaper: a living parent keeps its pid.
			if getppid() != parent {
				onGone(parent)
				return
			}
		}
	}()
	var once sync.Once
	return func() {
		once.Do(func() { close(quit) })
		<-done
	}
}

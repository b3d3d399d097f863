package parentwatch

import (
	"sync"
	"testing"
	"time"
)

// fakeParents serves getppid from a script: the pids in order, then the last
// one for good; it counts the calls.
type fakeParents struct {
	mu    sync.Mutex
	pids  []int
	calls int
}

func (f *fakeParents) getppid() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.calls++
	return f.pids[min(f.calls, len(f.pids))-1]
}

func (f *fakeParents) callCount() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.calls
}

// TestStartPolls checks the polling on its own, with getppid scripted: a
// change of parent, to init or to a subreaper, is the parent gone, reported
// once with the first parent's pid; no change is never reported.
func TestStartPolls(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		pids []int // what getppid returns: at Start, then at each tick
		gone bool
	}{
		{name: "handed to init", pids: []int{4242, 4242, 4242, 1}, gone: true},
		{name: "handed to a subreaper", pids: []int{4242, 77}, gone: true},
		{name: "parent lives", pids: []int{4242}},
		{name: "parent is init from the start", pids: []int{1}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			f := &fakeParents{pids: tc.pids}
			reports := make(chan int, 2)
			stop := start(f.getppid, time.Millisecond, func(parent int) { reports <- parent })

			if tc.gone {
				select {
				case parent := <-reports:
					if parent != tc.pids[0] {
						t.Errorf("onGone(%d), want the first parent %d", parent, tc.pids[0])
					}
				case <-time.After(5 * time.Second):
					t.Fatalf("onGone was not called after %d looks at the parent", f.callCount())
				}
			} else {
				// Many more looks than the script is long.
				deadline := time.Now().Add(5 * time.Second)
				for f.callCount() < len(tc.pids)+20 {
					if time.Now().After(deadline) {
						t.Fatalf("only %d looks at the parent in 5s", f.callCount())
					}
					time.Sleep(time.Millisecond)
				}
			}
			stop()
			stop() // a second stop is harmless
			select {
			case parent := <-reports:
				t.Errorf("onGone(%d) called a second time, or with the parent alive", parent)
			default:
			}
			// After stop the watch has ended: no more looks.
			n := f.callCount()
			time.Sleep(20 * time.Millisecond)
			if m := f.callCount(); m != n {
				t.Errorf("getppid called %d times after stop returned", m-n)
			}
		})
	}
}

// TestStartDefaultInterval checks that Start takes a non-positive interval
// for DefaultInterval rather than panicking in time.NewTicker.
func TestStartDefaultInterval(t *testing.T) {
	t.Parallel()
	stop := Start(0, func(int) { t.Error("onGone called while the test binary's parent lives") })
	stop()
}

package bench

import (
	"bufio"
	"bytes"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"
)

// memoryWatch polls /proc for terraform-provider-bkiam processes and keeps
// the highest peak resident set (VmHWM) seen. VmHWM only grows, so the
// last reading before a process exits is within one poll of its peak.
type memoryWatch struct {
	done chan struct{}
	wg   sync.WaitGroup
	peak int64
}

func watchProviderMemory() *memoryWatch {
	w := &memoryWatch{done: make(chan struct{})}
	w.wg.Add(1)
	go func() {
		defer w.wg.Done()
		tick := time.NewTicker(20 * time.Millisecond)
		defer tick.Stop()
		for {
			w.poll()
			select {
			case <-w.done:
				return
			case <-tick.C:
			}
		}
	}()
	return w
}

func (w *memoryWatch) stop() int64 {
	close(w.done)
	w.wg.Wait()
	return w.peak
}

func (w *memoryWatch) poll() {
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return
	}
	for _, e := range entries {
		if _, err := strconv.Atoi(e.Name()); err != nil {
			continue
		}
		// comm holds the first 15 bytes of the executable's name.
		comm, err := os.ReadFile(filepath.Join("/proc", e.Name(), "comm"))
		if err != nil || !bytes.HasPrefix(comm, []byte("terraform-provi")) {
			continue
		}
		if hwm := vmHWM(filepath.Join("/proc", e.Name(), "status")); hwm > w.peak {
			w.peak = hwm
		}
	}
}

func vmHWM(status string) int64 {
	f, err := os.Open(status)
	if err != nil {
		return 0
	}
	defer f.Close()
	s := bufio.NewScanner(f)
	for s.Scan() {
		if rest, ok := strings.CutPrefix(s.Text(), "VmHWM:"); ok {
			kb, _ := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(rest), "kB")), 10, 64)
			return kb << 10
		}
	}
	return 0
}

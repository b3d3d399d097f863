package bench

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Trace is where the time of a step's ApplyResourceChange calls went, read
// from the provider's log (RunTrace): terraform-plugin-go's time of each
// call, and the coalescer's line for each IAM call it sent, which says how
// long its requests waited before it left and how long IAM took.
type Trace struct {
	// Applies are the ApplyResourceChange calls served; Median and Mean
	// their time.
	Applies      int
	Median, Mean time.Duration
	// Requests rode in Calls calls of the coalescer.
	Requests, Calls int
	// Wait is how long a request waited, on average, for companions and
	// for the calls before its own; Call the time of the call it rode in,
	// on average over the requests.
	Wait, Call time.Duration
}

// Rest is what is left of an ApplyResourceChange, on average, once its
// wait and its call are taken out: the provider's own work, and its waits
// on other resources (the ledger of shared grants). Zero when the step
// sent no merged request.
func (t Trace) Rest() time.Duration {
	if t.Requests == 0 || t.Applies == 0 {
		return 0
	}
	return t.Mean - t.Wait - t.Call
}

// traceEnv is the environment of a traced step: the provider logs its own
// debug lines (the coalescer's) and terraform-plugin-go's trace lines (the
// time of each call) to path; the framework and the SDK log nothing.
func traceEnv(path string) []string {
	return []string{"TF_LOG_PROVIDER=TRACE", "TF_LOG_SDK_PROTO=TRACE", "TF_LOG_SDK_FRAMEWORK=OFF", "TF_LOG_SDK=OFF", "TF_LOG_PATH=" + path}
}

// parseTrace reads a provider's log as Terraform writes it (TF_LOG_PATH).
func parseTrace(r io.Reader) (Trace, error) {
	var t Trace
	var applies []time.Duration
	var waited, call float64 // milliseconds, summed over the requests
	s := bufio.NewScanner(r)
	s.Buffer(make([]byte, 0, 64*1024), 16*1024*1024)
	for s.Scan() {
		line := s.Text()
		switch {
		case strings.Contains(line, "Received downstream response:") && strings.Contains(line, " tf_rpc=ApplyResourceChange"):
			ms, err := traceField(line, "tf_req_duration_ms")
			if err != nil {
				return Trace{}, err
			}
			// terraform-plugin-go logs whole milliseconds, cut short: the
			// middle of the millisecond is the unbiased figure.
			applies = append(applies, time.Duration((ms+0.5)*float64(time.Millisecond)))
		case strings.Contains(line, "IAM call of merged requests answered:"):
			n, err := traceField(line, "requests")
			if err != nil {
				return Trace{}, err
			}
			w, err := traceField(line, "waited_ms_mean")
			if err != nil {
				return Trace{}, err
			}
			c, err := traceField(line, "call_ms")
			if err != nil {
				return Trace{}, err
			}
			t.Calls++
			t.Requests += int(n)
			waited += w * n
			call += c * n
		}
	}
	if err := s.Err(); err != nil {
		return Trace{}, err
	}
	t.Applies = len(applies)
	if len(applies) > 0 {
		slices.Sort(applies)
		t.Median = applies[len(applies)/2]
		var sum time.Duration
		for _, d := range applies {
			sum += d
		}
		t.Mean = sum / time.Duration(len(applies))
	}
	if t.Requests > 0 {
		t.Wait = time.Duration(waited / float64(t.Requests) * float64(time.Millisecond))
		t.Call = time.Duration(call / float64(t.Requests) * float64(time.Millisecond))
	}
	return t, nil
}

// traceField is the number of a log line's field name=value.
func traceField(line, name string) (float64, error) {
	i := strings.Index(line, " "+name+"=")
	if i < 0 {
		return 0, fmt.Errorf("no %s in the provider's log line %q", name, line)
	}
	v := line[i+len(name)+2:]
	if j := strings.IndexByte(v, ' '); j >= 0 {
		v = v[:j]
	}
	f, err := strconv.ParseFloat(v, 64)
	if err != nil {
		return 0, fmt.Errorf("%s in the provider's log line %q: %w", name, line, err)
	}
	return f, nil
}

// RunTrace runs a scenario's steps on the provider alone with its log on,
// and returns each step's Trace (Result.Trace) and IAM calls. The log
// slows the provider, so its times are not the measured ones (Run).
func RunTrace(ctx context.Context, opts Options, sc Scenario) ([]Result, error) {
	srv, url, vars, stop, err := start(ctx, opts, sc)
	if err != nil {
		return nil, err
	}
	defer stop()
	steps := allSteps
	if sc.Steps != nil {
		steps = sc.Steps
	}
	w, err := newWorkdir(opts, url, sc, onProvider, vars)
	if err != nil {
		return nil, err
	}
	defer w.close()
	env := w.env
	results := make([]Result, len(steps))
	for i, step := range steps {
		log := filepath.Join(w.dir, fmt.Sprintf("step%d.log", i))
		w.env = append(slices.Clip(env), traceEnv(log)...)
		m, err := w.measure(ctx, step, srv, onProvider)
		if err != nil {
			return nil, err
		}
		f, err := os.Open(log)
		if err != nil {
			return nil, fmt.Errorf("%s (%s): the provider's log: %w", sc.Name, step, err)
		}
		t, err := parseTrace(f)
		_ = f.Close()
		if err != nil {
			return nil, fmt.Errorf("%s (%s): %w", sc.Name, step, err)
		}
		results[i] = Result{Step: step, Provider: m.elapsed, Calls: m.calls, Trace: &t}
	}
	return results, nil
}

// PrintTrace writes a traced scenario's steps (RunTrace) as a Markdown
// table; steps that applied nothing are left out.
func PrintTrace(out io.Writer, sc Scenario, cli string, results []Result) {
	fmt.Fprintf(out, "\n### trace: %s — %s\n\n", sc.Name, cli)
	fmt.Fprintln(out, "| step | ApplyResourceChange served | median | mean | of the mean: waiting before its IAM call left | its IAM call | the rest: the provider's work | IAM calls of the coalescer | requests per call | step, traced |")
	fmt.Fprintln(out, "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
	ms := func(d time.Duration) string { return fmt.Sprintf("%.1f ms", float64(d.Microseconds())/1000) }
	for _, r := range results {
		t := r.Trace
		if t == nil || t.Applies == 0 {
			continue
		}
		perCall := "n/a"
		if t.Calls > 0 {
			perCall = fmt.Sprintf("%.1f", float64(t.Requests)/float64(t.Calls))
		}
		fmt.Fprintf(out, "| %s | %d | %s | %s | %s | %s | %s | %d | %s | %.2f s |\n", r.Step, t.Applies,
			ms(t.Median), ms(t.Mean), ms(t.Wait), ms(t.Call), ms(t.Rest()), t.Calls, perCall, r.Provider.Seconds())
	}
}

package bench

import (
	"strings"
	"testing"
	"time"
)

func TestPrintComparison(t *testing.T) {
	ms := func(ns ...int) []time.Duration {
		var out []time.Duration
		for _, n := range ns {
			out = append(out, time.Duration(n)*time.Millisecond)
		}
		return out
	}
	side := func(calls map[string]int, rounds ...int) Result {
		return Result{Calls: calls, Rounds: ms(rounds...), Provider: median(ms(rounds...)), PeakRSS: 30 << 20}
	}
	results := []Compared{
		{Step: StepPlan, Check: side(map[string]int{"model_query": 1, "policy_get": 1, "policy_query_by_actions": 1}, 300, 280, 290),
			Unchecked: side(map[string]int{"model_query": 1}, 200, 210, 250)},
		{Step: StepApply, Check: side(map[string]int{"model_query": 2}, 500, 450, 460), Unchecked: side(nil, 300, 320, 310)},
	}
	var w strings.Builder
	PrintComparison(&w, SiteComparison(20000, false, 3), "Terraform v1.16.4", results)
	got := w.String()
	for _, want := range []string{
		"### site of 20000 users' view_host policies: one more host for alice, who holds view_host on a few — Terraform v1.16.4\n",
		"| plan | 0.29 s (0.28–0.30) | 0.21 s (0.20–0.25) | 1.38× | at most 1.5×, met | 1 model_query, 1 policy_get, 1 policy_query_by_actions | 1 model_query | 30 MiB |\n",
		"| apply | 0.46 s (0.45–0.50) | 0.31 s (0.30–0.32) | 1.48× | at most 1.3×, missed | 2 model_query | none | 30 MiB |\n",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("missing %q in\n%s", want, got)
		}
	}

	// A first grant has the same goals since the list it reads is bounded (issue 61).
	w.Reset()
	PrintComparison(&w, SiteComparison(20000, true, 3).WithScanLimit(1000), "Terraform v1.5.7", results)
	for _, want := range []string{
		"### site of 20000 users' view_host policies: a first view_host grant, to bob, who holds none, expiry_scan_limit = 1000 — Terraform v1.5.7\n",
		"| plan | 0.29 s (0.28–0.30) | 0.21 s (0.20–0.25) | 1.38× | at most 1.5×, met |",
		"| apply | 0.46 s (0.45–0.50) | 0.31 s (0.30–0.32) | 1.48× | at most 1.3×, missed |",
	} {
		if got := w.String(); !strings.Contains(got, want) {
			t.Errorf("missing %q in\n%s", want, got)
		}
	}

	// Another check's comparison names the setting that turns it off.
	w.Reset()
	c := DBMModelCheck(3)
	c.Goals = nil
	PrintComparison(&w, c, "Terraform v1.16.4", results)
	got = w.String()
	if !strings.Contains(got, "| step | with the check (median of 3, range) | check_model = false | ratio |") ||
		!strings.Contains(got, "| 1.38× | none |") || !strings.Contains(got, "| 1.48× | none |") || strings.Contains(got, "met") {
		t.Errorf("a case without goals, whose check check_model turns off:\n%s", got)
	}
}

func TestMedian(t *testing.T) {
	for _, tc := range []struct {
		in   []time.Duration
		want time.Duration
	}{{nil, 0}, {[]time.Duration{3}, 3}, {[]time.Duration{5, 1, 3}, 3}, {[]time.Duration{4, 1, 3, 2}, 2}} {
		if got := median(tc.in); got != tc.want {
			t.Errorf("median(%v) = %v, want %v", tc.in, got, tc.want)
		}
	}
}

package renewal

import (
	"strings"
	"testing"
	"time"
)

func TestParseDuration(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want time.Duration
		err  string
	}{
		{"90d", 90 * Day, ""},
		{"1w", 7 * Day, ""},
		{"1d12h", 36 * time.Hour, ""},
		{"2w3d", 17 * Day, ""},
		{"12h", 12 * time.Hour, ""},
		{"90m", 90 * time.Minute, ""},
		{" 7d ", 7 * Day, ""},
		{"", 0, "empty duration"},
		{"d", 0, "is not a duration"},
		{"90 days", 0, "is not a duration"},
		{"-1d", 0, "is not a duration"},
		{"0d", 0, "not a positive duration"},
		{"1500ms", 0, "whole number of seconds"},
		{"3x", 0, "is not a duration"},
		{"12h1d", 36 * time.Hour, ""},
		{"1.5h", 90 * time.Minute, ""},
		{"1..5h", 0, "is not a duration"},
		{"300000d", 0, "too long"},
		{"106752d", 0, "too long"},
		{"9223372036854775807s", 0, "too long"},
	} {
		got, err := ParseDuration(tc.in)
		switch {
		case tc.err == "" && (err != nil || got != tc.want):
			t.Errorf("ParseDuration(%q) = %v, %v; want %v", tc.in, got, err, tc.want)
		case tc.err != "" && (err == nil || !strings.Contains(err.Error(), tc.err)):
			t.Errorf("ParseDuration(%q) = %v, %v; want an error with %q", tc.in, got, err, tc.err)
		}
	}
}

func TestMargin(t *testing.T) {
	for _, tc := range []struct {
		r    Rolling
		want time.Duration
	}{
		{Rolling{90 * Day, 7 * Day}, Day},
		{Rolling{time.Hour, 59*time.Minute + 40*time.Second}, 10 * time.Second},
		{Rolling{time.Hour, 59*time.Minute + 59*time.Second}, 0}, // half a second: whole seconds only
		{Rolling{90 * Day, 0}, 0},
	} {
		if got := tc.r.Margin(); got != tc.want {
			t.Errorf("%+v.Margin() = %s, want %s", tc.r, got, tc.want)
		}
	}
}

func TestRenewed(t *testing.T) {
	const permanent = 4102444800
	now := time.Date(2026, 11, 27, 12, 0, 0, 0, time.UTC)
	day := int64(Day / time.Second)
	at := func(days int64) int64 { return now.Unix() + days*day }
	r := Rolling{90 * Day, 7 * Day} // the plan renews from 8 days before the expiry
	for _, tc := range []struct {
		name     string
		r        Rolling
		recorded int64
		want     int64
		due      bool
	}{
		{"outside the window and its margin: not due", r, at(30), 0, false},
		{"exactly the window and its margin left: not due", r, at(8), 0, false},
		{"inside the margin: one period on", r, at(8) - 1, at(8) - 1 + 90*day, true},
		{"inside the window: one period on", r, at(3), at(93), true},
		{"expired yesterday: one period on", r, at(-1), at(89), true},
		{"expired long ago: the fewest periods that leave the window", r, at(-200), at(-200) + 3*90*day, true},
		{"capped at permanent", Rolling{100 * 365 * Day, 7 * Day}, at(1), permanent, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if due := tc.r.Due(tc.recorded, now); due != tc.due {
				t.Fatalf("Due = %v, want %v", due, tc.due)
			}
			if !tc.due {
				return
			}
			got := tc.r.Renewed(tc.recorded, now, permanent)
			if got != tc.want {
				t.Errorf("Renewed = %s, want %s", time.Unix(got, 0).UTC(), time.Unix(tc.want, 0).UTC())
			}
			if got < permanent && tc.r.Due(got, now) {
				t.Errorf("Renewed = %s is still due: the next plan would renew again", time.Unix(got, 0).UTC())
			}
		})
	}
}

// TestRenewalAtApply: a plan made as of asOf that renews (from the
// margin before the window on) leaves expires_at unknown; its apply,
// whenever it runs, renews past the recorded expiry, to a date the next
// plan, as of the apply, keeps.
func TestRenewalAtApply(t *testing.T) {
	const permanent = 4102444800
	r := Rolling{time.Hour, 59*time.Minute + 40*time.Second} // the window opens 20s in, the margin 10s before
	created := time.Date(2026, 11, 27, 12, 0, 0, 0, time.UTC)
	rec := Recorded{Every: r.Every, At: created.Add(time.Hour).Unix()}
	for planned := 0; planned <= 40; planned++ {
		asOf := created.Add(time.Duration(planned) * time.Second)
		first := Plan(rec, r, true, asOf, permanent)
		for applied := planned; applied <= planned+7200; applied += 7 {
			now := created.Add(time.Duration(applied) * time.Second)
			if first.Kind != Renew {
				continue
			}
			set := AtApply(rec, r, now, permanent)
			if set <= rec.At {
				t.Fatalf("plan at +%ds renews, apply at +%ds sets %d, not past %d", planned, applied, set, rec.At)
			}
			next := Plan(Recorded{Every: r.Every, At: set}, r, true, now, permanent)
			if next.Kind != Keep {
				t.Fatalf("apply at +%ds set %s; the next plan does %v, want Keep", applied, time.Unix(set, 0).UTC(), next.Kind)
			}
		}
		want := Keep
		if planned > 10 {
			want = Renew
		}
		if first.Kind != want {
			t.Errorf("plan at +%ds: %v, want %v", planned, first.Kind, want)
		}
	}
}

func TestPlanKinds(t *testing.T) {
	const permanent = 4102444800
	now := time.Date(2026, 11, 27, 12, 0, 0, 0, time.UTC)
	r := Rolling{90 * Day, 7 * Day}
	later := now.Add(30 * Day).Unix()
	for _, tc := range []struct {
		name  string
		prior Recorded
		r     Rolling
		known bool
		want  Decision
	}{
		{"create", Recorded{}, r, true, Decision{Kind: Start, Estimate: now.Add(90 * Day).Unix()}},
		{"new expires_in", Recorded{Every: 30 * Day, At: later}, r, true, Decision{Kind: Start, Recorded: later, Estimate: now.Add(90 * Day).Unix()}},
		{"outside the window", Recorded{Every: r.Every, At: later}, r, true, Decision{Kind: Keep, Recorded: later, Estimate: later}},
		{"never renewed", Recorded{Every: r.Every, At: now.Unix() + 10}, Rolling{Every: r.Every}, true, Decision{Kind: Keep, Recorded: now.Unix() + 10, Estimate: now.Unix() + 10}},
		{"renew_before unknown", Recorded{Every: r.Every, At: later}, Rolling{Every: r.Every}, false, Decision{Kind: Unsettled, Recorded: later, Estimate: later}},
		{"expires_in unknown", Recorded{Every: r.Every, At: later}, Rolling{}, false, Decision{Kind: Unsettled, Recorded: later}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := Plan(tc.prior, tc.r, tc.known, now, permanent); got != tc.want {
				t.Errorf("Plan = %+v, want %+v", got, tc.want)
			}
		})
	}
}

func TestFirst(t *testing.T) {
	now := time.Date(2026, 11, 27, 12, 0, 0, 0, time.UTC)
	if got, want := First(now, 90*Day, 4102444800), now.Add(90*Day).Unix(); got != want {
		t.Errorf("First = %d, want %d", got, want)
	}
	if got := First(now, 100*365*Day, 4102444800); got != 4102444800 {
		t.Errorf("First past 2100 = %d, want IAM's permanent", got)
	}
}

func TestDescribe(t *testing.T) {
	for d, want := range map[time.Duration]string{90 * Day: "90d", 36 * time.Hour: "1d12h", 10 * time.Second: "10s", 0: "0s", 61 * time.Minute: "1h1m"} {
		if got := Describe(d); got != want {
			t.Errorf("Describe(%s) = %q, want %q", d, got, want)
		}
		if d > 0 {
			if back, err := ParseDuration(Describe(d)); err != nil || back != d {
				t.Errorf("ParseDuration(Describe(%s)) = %s, %v", d, back, err)
			}
		}
	}
}

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

func TestNext(t *testing.T) {
	const permanent = 4102444800
	now := time.Date(2026, 11, 27, 12, 0, 0, 0, time.UTC)
	day := int64(Day / time.Second)
	at := func(days int64) int64 { return now.Unix() + days*day }
	for _, tc := range []struct {
		name     string
		recorded int64
		every    time.Duration
		before   time.Duration
		want     int64
	}{
		{"outside the window: kept", at(30), 90 * Day, 7 * Day, at(30)},
		{"exactly the window left: kept", at(7), 90 * Day, 7 * Day, at(7)},
		{"inside the window: one period on", at(7) - 1, 90 * Day, 7 * Day, at(7) - 1 + 90*day},
		{"expired yesterday: one period on", at(-1), 90 * Day, 7 * Day, at(89)},
		{"expired long ago: the fewest periods that leave the window", at(-200), 90 * Day, 7 * Day, at(-200) + 3*90*day},
		{"a period no longer than the window: still leaves it", at(1), 2 * Day, 7 * Day, at(1) + 4*2*day},
		{"capped at permanent", at(1), 100 * 365 * Day, 7 * Day, permanent},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := Next(tc.recorded, now, tc.every, tc.before, permanent)
			if got != tc.want {
				t.Errorf("Next = %d (%s), want %d (%s)", got, time.Unix(got, 0).UTC(), tc.want, time.Unix(tc.want, 0).UTC())
			}
			if got < permanent && Due(got, now, tc.before) {
				t.Errorf("Next = %s is still due: the next plan would renew again", time.Unix(got, 0).UTC())
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

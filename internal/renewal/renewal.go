package renewal

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"
)

// Day is 24 hours: a rolling expiry counts days as IAM counts expiries,
// in seconds since the epoch, without calendars or time zones.
const Day = 24 * time.Hour

// ParseDuration reads a duration as expires_in and renew_before take it:
// Go's units ("12h", "90m", "1h30m") plus d (days) and w (weeks), e.g.
// "90d", "1w", "1d12h". It must be positive and a whole number of seconds.
func ParseDuration(s string) (time.Duration, error) {
	in := strings.TrimSpace(s)
	if in == "" {
		return 0, errors.New("empty duration")
	}
	var total time.Duration
	rest := in
	for rest != "" {
		// Days and weeks first, then hand the rest to Go's parser.
		i := 0
		for i < len(rest) && rest[i] >= '0' && rest[i] <= '9' {
			i++
		}
		if i == 0 || i == len(rest) || (rest[i] != 'd' && rest[i] != 'w') {
			d, err := time.ParseDuration(rest)
			if err != nil {
				return 0, fmt.Errorf("%q is not a duration such as \"90d\", \"12h\" or \"1w\"", s)
			}
			total += d
			break
		}
		n, err := strconv.ParseInt(rest[:i], 10, 32)
		if err != nil {
			return 0, fmt.Errorf("%q is not a duration such as \"90d\", \"12h\" or \"1w\"", s)
		}
		unit := Day
		if rest[i] == 'w' {
			unit = 7 * Day
		}
		total += time.Duration(n) * unit
		rest = rest[i+1:]
	}
	switch {
	case total <= 0:
		return 0, fmt.Errorf("%q is not a positive duration", s)
	case total%time.Second != 0:
		return 0, fmt.Errorf("%q is not a whole number of seconds: IAM keeps expiries in seconds", s)
	}
	return total, nil
}

// First is the rolling expiry an apply at now sets: now plus every, in
// unix seconds, capped at permanent (IAM's latest expiry).
func First(now time.Time, every time.Duration, permanent int64) int64 {
	return min(now.Unix()+int64(every/time.Second), permanent)
}

// Due reports whether a plan at now renews the recorded expiry: less than
// before is left (or it has passed).
func Due(recorded int64, now time.Time, before time.Duration) bool {
	return recorded-now.Unix() < int64(before/time.Second)
}

// Next is the expiry a plan at now gives a rolling expiry recorded as
// recorded: recorded itself outside the window, else recorded plus the
// fewest whole periods of every that leave the window (one, unless the
// plan comes after the expiry has long passed), capped at permanent.
func Next(recorded int64, now time.Time, every, before time.Duration, permanent int64) int64 {
	if !Due(recorded, now, before) {
		return recorded
	}
	step := int64(every / time.Second)
	window := int64(before / time.Second)
	periods := int64(1)
	if late := now.Unix() + window - recorded; late >= step {
		periods = late/step + 1
	}
	next := recorded + periods*step
	if next-now.Unix() < window {
		next += step // on the window's edge: one more, so that the next plan is empty
	}
	return min(next, permanent)
}

package renewal

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"
)

// Day is 24 hours: a rolling expiry counts days as IAM counts expiries,
// in seconds since the epoch, without calendars or time zones.
const Day = 24 * time.Hour

// units are the units a duration may use: Go's, from the second up,
// and d (24 hours) and w (7 days).
var units = map[string]time.Duration{
	"s": time.Second, "m": time.Minute, "h": time.Hour, "d": Day, "w": 7 * Day,
	"ms": time.Millisecond, "us": time.Microsecond, "µs": time.Microsecond, "ns": time.Nanosecond,
}

// maxDuration is the longest duration: Go's (about 292 years), far past
// IAM's permanent expiry (2100), to which every expiry is capped anyway.
const maxDuration = time.Duration(math.MaxInt64)

// ParseDuration reads a duration as expires_in and renew_before take it:
// numbers each followed by a unit, s, m, h, d (24 hours) or w (7 days),
// in any order, e.g. "90d", "1w", "1d12h", "12h1d", "1.5h". It must be
// positive and a whole number of seconds.
func ParseDuration(s string) (time.Duration, error) {
	in := strings.TrimSpace(s)
	if in == "" {
		return 0, errors.New("empty duration")
	}
	notDuration := fmt.Errorf("%q is not a duration such as \"90d\", \"12h\", \"1w\" or \"1d12h\"", s)
	var total time.Duration
	for rest := in; rest != ""; {
		i := 0
		for i < len(rest) && (rest[i] >= '0' && rest[i] <= '9' || rest[i] == '.') {
			i++
		}
		j := i
		for j < len(rest) && (rest[j] < '0' || rest[j] > '9') && rest[j] != '.' {
			j++
		}
		unit, ok := units[rest[i:j]]
		if i == 0 || !ok {
			return 0, notDuration
		}
		n, err := strconv.ParseFloat(rest[:i], 64)
		if err != nil || strings.Count(rest[:i], ".") > 1 {
			return 0, notDuration
		}
		part := n * float64(unit)
		if part >= float64(maxDuration-total) {
			return 0, fmt.Errorf("%q is too long: a duration is at most about 292 years (106751d), and IAM's expiries end in 2100 anyway", s)
		}
		total += time.Duration(math.Round(part))
		rest = rest[j:]
	}
	switch {
	case total <= 0:
		return 0, fmt.Errorf("%q is not a positive duration", s)
	case total%time.Second != 0:
		return 0, fmt.Errorf("%q is not a whole number of seconds: IAM keeps expiries in seconds", s)
	}
	return total, nil
}

// Rolling is a rolling expiry: Every is expires_in, Before renew_before
// (0: never renewed).
type Rolling struct {
	Every, Before time.Duration
}

// Margin is how long before the renewal window opens a plan already
// renews: a day, or half the time between a renewal and the next window
// when that is shorter (so that a renewal always leaves the window). A
// plan saved for review and applied after the window opened then renews
// at its apply when it was made less than Margin before the window.
func (r Rolling) Margin() time.Duration {
	if r.Before <= 0 {
		return 0
	}
	return min(Day, (r.Every-r.Before)/2).Truncate(time.Second)
}

// RenewsFrom is the time, in unix seconds, after which a plan renews an
// expiry recorded at recorded: recorded − Before − Margin; 0 when the
// expiry is never renewed.
func (r Rolling) RenewsFrom(recorded int64) int64 {
	if r.Before <= 0 || recorded == 0 {
		return 0
	}
	return recorded - seconds(r.Before+r.Margin())
}

// Due reports whether a plan as of asOf renews the expiry recorded.
func (r Rolling) Due(recorded int64, asOf time.Time) bool {
	from := r.RenewsFrom(recorded)
	return from != 0 && asOf.Unix() > from
}

// Renewed is the expiry a renewal at at gives an expiry recorded as
// recorded: recorded plus the fewest whole periods of Every, at least
// one, that take it out of the window (Due), capped at permanent.
// Anchored on the recorded expiry, not on at, the cadence is the same
// whichever day the renewal runs.
func (r Rolling) Renewed(recorded int64, at time.Time, permanent int64) int64 {
	step := seconds(r.Every)
	periods := int64(1)
	if late := at.Unix() + seconds(r.Before+r.Margin()) - recorded; late >= step {
		periods = late/step + 1
	}
	if periods > (permanent-recorded)/step {
		return permanent
	}
	return min(recorded+periods*step, permanent)
}

// First is the rolling expiry an apply at now starts: now plus every, in
// unix seconds, capped at permanent (IAM's latest expiry).
func First(now time.Time, every time.Duration, permanent int64) int64 {
	return min(now.Unix()+seconds(every), permanent)
}

func seconds(d time.Duration) int64 { return int64(d / time.Second) }

// Recorded is what a resource's state holds of its rolling expiry: the
// expires_in it was set by (0: none, or it does not parse) and
// expires_at, in unix seconds (0: none).
type Recorded struct {
	Every time.Duration
	At    int64
}

// Kind is what a plan does to a rolling expiry.
type Kind int

const (
	// Keep: expires_at stays the recorded one, known in the plan.
	Keep Kind = iota
	// Start: the apply starts a new period, the apply's time plus
	// expires_in (a create, a new expires_in, nothing recorded).
	Start
	// Renew: the apply renews the recorded expiry (Renewed).
	Renew
	// Unsettled: expires_in or renew_before is not known until the apply,
	// which decides (AtApply).
	Unsettled
)

// Decision is what a plan does to a rolling expiry.
type Decision struct {
	Kind Kind
	// Recorded is the recorded expiry (0: none); Estimate the expiry the
	// apply sets if it runs at the plan's time (0: not known).
	Recorded, Estimate int64
}

// Restarts reports whether the apply starts a new period over a
// recorded expiry (expires_in changed).
func (d Decision) Restarts() bool { return d.Kind == Start && d.Recorded != 0 }

// Plan decides what a plan as of asOf does to a rolling expiry r (known:
// both durations are known and parse) over what the state records.
// asOf is the time the state was last read from IAM or written by an
// apply, which a plan saved for review and the plan its apply makes
// again (hours later, on another machine) both see: so both decide
// alike, which Terraform requires of them. Every decision that is not
// Keep leaves expires_at unknown in the plan, and the apply sets it
// (AtApply).
func Plan(prior Recorded, r Rolling, known bool, asOf time.Time, permanent int64) Decision {
	d := Decision{Kind: Keep, Recorded: prior.At, Estimate: prior.At}
	switch {
	case !known:
		d.Kind = Unsettled
		switch {
		case r.Every == 0:
			d.Estimate = 0 // expires_in not known
		case r.Every != prior.Every || prior.At == 0:
			d.Estimate = First(asOf, r.Every, permanent)
		}
	case prior.At == 0 || prior.Every != r.Every:
		d.Kind, d.Estimate = Start, First(asOf, r.Every, permanent)
	case r.Due(prior.At, asOf):
		d.Kind, d.Estimate = Renew, r.Renewed(prior.At, asOf, permanent)
	}
	return d
}

// AtApply is the expires_at an apply at now sets where its plan left it
// unknown: the start of a new period when expires_in changed or nothing
// is recorded; else the renewed expiry once the renewal is due (as it is
// for a plan that renewed: now comes after the plan's time), else the
// recorded one.
func AtApply(prior Recorded, r Rolling, now time.Time, permanent int64) int64 {
	switch {
	case prior.At == 0 || prior.Every != r.Every:
		return First(now, r.Every, permanent)
	case r.Due(prior.At, now):
		return r.Renewed(prior.At, now, permanent)
	}
	return prior.At
}

// Setting is one of expires_in and renew_before as the configuration
// writes it: Set is false when it is null, Known when it is set and known.
type Setting struct {
	Value      string
	Set, Known bool
}

// Problem is what is wrong with a rolling expiry's settings, on the
// attribute named.
type Problem struct {
	Attribute, Summary, Detail string
}

// Check says what expires_in and renew_before cannot mean, and returns
// the rolling expiry they set (ok: both parse, or renew_before is unset).
func Check(expiresIn, renewBefore Setting) (r Rolling, ok bool, problems []Problem) {
	parse := func(name string, s Setting, example string) (time.Duration, bool) {
		if !s.Known {
			return 0, false
		}
		d, err := ParseDuration(s.Value)
		if err != nil {
			problems = append(problems, Problem{name, "Invalid duration", fmt.Sprintf("%s: %v. Write a number and a unit, s, m, "+
				"h, d (24 hours) or w (7 days), or several, such as %s.", name, err, example)})
			return 0, false
		}
		return d, true
	}
	every, okEvery := parse("expires_in", expiresIn, `"90d", "1w" or "1d12h"`)
	before, okBefore := parse("renew_before", renewBefore, `"7d" or "1d12h"`)
	switch {
	case renewBefore.Set && !expiresIn.Set:
		problems = append(problems, Problem{"renew_before", "renew_before without expires_in",
			"renew_before says when to renew the rolling expiry that expires_in sets, and expires_in is not set. Set expires_in " +
				"as well (for example expires_in = \"90d\" with renew_before = \"7d\"), or remove renew_before."})
	case okEvery && okBefore && before >= every:
		problems = append(problems, Problem{"renew_before", "renew_before not shorter than expires_in",
			fmt.Sprintf("renew_before (%s) must be shorter than expires_in (%s): a renewal adds expires_in to the expiry, which "+
				"must take it out of the renewal window. Shorten renew_before (a week of 90 days, for example) or lengthen "+
				"expires_in.", renewBefore.Value, expiresIn.Value)})
	}
	r = Rolling{Every: every, Before: before}
	return r, okEvery && (okBefore || !renewBefore.Set) && len(problems) == 0, problems
}

// Describe writes a duration as expires_in takes it: "90d", "1d12h",
// "10s".
func Describe(d time.Duration) string {
	if d <= 0 {
		return "0s"
	}
	var b strings.Builder
	for _, u := range []struct {
		name string
		size time.Duration
	}{{"d", Day}, {"h", time.Hour}, {"m", time.Minute}, {"s", time.Second}} {
		if n := d / u.size; n > 0 {
			fmt.Fprintf(&b, "%d%s", n, u.name)
			d %= u.size
		}
	}
	return b.String()
}

// Until says, for a plan that renews (d as of asOf), to when: "until
// 2027-03-01T00:00:00Z, the recorded expiry plus expires_in (90d); an
// apply after 2027-02-22T00:00:00Z renews it a period further".
func Until(r Rolling, d Decision, asOf time.Time) string {
	step := seconds(r.Every)
	periods := ""
	if n := (d.Estimate - d.Recorded) / step; n > 1 && (d.Estimate-d.Recorded)%step == 0 {
		periods = fmt.Sprintf(" %d times, as the plan comes after the expiry has passed", n)
	}
	out := fmt.Sprintf("until %s, the recorded expiry plus expires_in (%s)%s", rfc3339(d.Estimate), Describe(r.Every), periods)
	if (d.Estimate-d.Recorded)%step == 0 {
		// Not capped at permanent: an apply late enough renews further.
		out += fmt.Sprintf("; an apply after %s renews it a period further", rfc3339(r.RenewsFrom(d.Estimate)))
	}
	return out
}

func rfc3339(unix int64) string { return time.Unix(unix, 0).UTC().Format(time.RFC3339) }

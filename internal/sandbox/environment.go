package sandbox

import (
	"errors"
	"fmt"
	"time"
)

// A row's time window: conditions on the backend's environment, "_bk_iam_env_.tz" (one time zone,
// eq) and "_bk_iam_env_.hms" (the time of day there, 10000×hour + 100×minute + second, compared with
// gt, gte, lt, lte, eq or in), as IAM's web UI writes a period_daily environment. The backend
// evaluates them against its own clock whenever it evaluates the row (bk-iam pdp/evalctx
// InitEnvironments and genTimeEnvs: the row's one tz, and hms in that zone; no other environment
// attribute is built): the access checks answer true within the window only, and the queries,
// which evaluate the environment even without resources, answer a row within its window without
// its environment conditions and leave a row outside it out. The list, the read by id and the
// debug tree's policies hold the expression as written.

// envType is the environment's "resource type" in an expression's field (bk-iam types.IamEnv).
const envType = "_bk_iam_env_"

// withEnvironment is set with the environment the backend builds for row e at now: the row's time
// zone and the time of day there, when e has a condition on the environment and names its zone.
// A row without one is evaluated on set alone.
func withEnvironment(set resourceSet, e expr, now time.Time) resourceSet {
	tz, ok := rowTimeZone(e)
	if !ok {
		return set
	}
	loc, err := time.LoadLocation(tz)
	if err != nil {
		return set // checked when the row was added; the backend fails such a row
	}
	t := now.In(loc)
	out := make(resourceSet, len(set)+1)
	for k, v := range set {
		out[k] = v
	}
	out[envType] = accessResource{Type: envType, Attribute: map[string]any{
		"tz": tz, "hms": float64(10000*t.Hour() + 100*t.Minute() + t.Second())}}
	return out
}

// rowTimeZone is the value of e's first "_bk_iam_env_.tz" condition.
func rowTimeZone(e expr) (string, bool) {
	if c := contentOf(e); c != nil {
		for _, sub := range c {
			if tz, ok := rowTimeZone(sub); ok {
				return tz, true
			}
		}
		return "", false
	}
	if e["field"] != envType+".tz" {
		return "", false
	}
	tz, ok := e["value"].(string)
	return tz, ok
}

// checkEnvironment checks a row's environment conditions as the backend can evaluate them: tz
// and hms only, one time zone IAM knows (eq) when any is written, hms numbers.
func checkEnvironment(e expr) error {
	var zones []string
	var hms bool
	var walk func(expr, string) error
	walk = func(e expr, at string) error {
		if c := contentOf(e); c != nil {
			for i, sub := range c {
				if err := walk(sub, fmt.Sprintf("%s.content[%d]", at, i)); err != nil {
					return err
				}
			}
			return nil
		}
		typ, attr := leafType(e)
		if typ != envType {
			return nil
		}
		switch op, _ := e["op"].(string); attr {
		case "tz":
			tz, ok := e["value"].(string)
			if op != "eq" || !ok {
				return fmt.Errorf("%s: %s.tz takes eq and one time zone", at, envType)
			}
			if _, err := time.LoadLocation(tz); err != nil {
				return fmt.Errorf("%s.value: %q is not a time zone IAM can load", at, tz)
			}
			zones = append(zones, tz)
		case "hms":
			for _, v := range leafValues(e) {
				if _, ok := v.(float64); !ok {
					return fmt.Errorf("%s.value: %s.hms compares numbers (10000×hour + 100×minute + second)", at, envType)
				}
			}
			hms = true
		default:
			return fmt.Errorf("%s.field: the backend builds %s.tz and %s.hms only, not %q", at, envType, envType, attr)
		}
		return nil
	}
	if err := walk(e, "expression"); err != nil {
		return err
	}
	switch {
	case len(zones) > 1:
		return errors.New("expression: a row's environment has one time zone (the backend refuses more)")
	case hms && len(zones) == 0:
		return fmt.Errorf("expression: a time of day (%s.hms) needs its time zone (%s.tz eq …)", envType, envType)
	}
	return nil
}

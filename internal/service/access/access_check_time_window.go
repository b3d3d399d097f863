package access

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-log/tflog"

	"github.com/bkiam/terraform-provider-bkiam/internal/bkiam"
	"github.com/bkiam/terraform-provider-bkiam/internal/policyexpr"
)

// maxWindowRows bounds the rows read by id to look for a time window behind
// a denial: one call each. A subject holding more rows of its denied actions
// than this is told that the rest were not read.
const maxWindowRows = 20

// deniedPolicy reads the subject's policy of the actions IAM denied: the
// policy query with its debug output, whose answer is the same effective
// expression and whose tree names the rows the query read (windowedDenials
// reads them), in the one call the check makes either way. Without a
// readable tree (the backend's to change, or too large) the plain query
// answers, and rows is nil.
func deniedPolicy(ctx context.Context, c *bkiam.Client, alone bkiam.AskAlone, system string, who bkiam.Subject,
	denied []string) ([]bkiam.ActionCondition, *bkiam.SubjectRows, error) {
	got, err := c.QuerySubjectRows(ctx, system, who, denied, alone)
	switch {
	case errors.Is(err, bkiam.ErrNoDebug), errors.Is(err, bkiam.ErrDebugUnreadable):
		tflog.Debug(ctx, "the policy query's debug output is not readable: time windows behind a denial are not read", map[string]any{"error": err.Error()})
		conditions, _, err := c.QueryByActions(ctx, system, who, denied, alone)
		return conditions, nil, err
	case err != nil:
		return nil, nil, err
	}
	conditions := make([]bkiam.ActionCondition, 0, len(denied))
	for _, a := range denied {
		conditions = append(conditions, bkiam.ActionCondition{Action: a, Condition: got.Conditions[a]})
	}
	return conditions, got, nil
}

// A policy's time window (a daily period of the environment _bk_iam_env_) is
// evaluated by IAM's policy query with its clock as it answers: outside the
// window the row is left out of the answer, so the denial the check reads
// shows nothing of it (as the real IAM answered). The rows the query read
// are in its debug output, and each holds its window as written in the read
// by id: windowedDenials reads them for the actions IAM denied and whose
// answered policy does not allow the request, and warns for each action that
// one of the subject's rows (its own or a group's) would allow the request
// within its window. Without the rows (got nil: no readable debug output)
// the denial stands as IAM's answer and nothing is said of a window.
func windowedDenials(ctx context.Context, c *bkiam.Client, system string, who bkiam.Subject, got *bkiam.SubjectRows,
	actions []string, request policyexpr.Request, diags *diag.Diagnostics) {
	if len(actions) == 0 || got == nil || got.AsManager || !got.Known {
		return
	}
	read := 0
	for _, action := range actions {
		rows := got.Rows[action]
		var unread int
		for i, r := range rows {
			if read == maxWindowRows {
				unread = len(rows) - i
				break
			}
			read++
			p, err := c.GetPolicy(ctx, system, r.ID)
			if err != nil {
				if !errors.Is(err, bkiam.ErrPolicyNotFound) {
					tflog.Debug(ctx, "a row behind a denial not read", map[string]any{"action": action, "id": r.ID, "error": err.Error()})
				}
				continue
			}
			v, err := evalCondition(p.Expression, request)
			if err != nil || v.Truth != policyexpr.Unknown || !onlyEnvironment(v.Gaps) {
				continue
			}
			diags.AddAttributeWarning(path.Root("allowed").AtMapKey(action), "Allowed only within a time window",
				fmt.Sprintf("IAM denied %s now, and %s's policy row %d for it (%s) allows it within a time window (%s), which IAM "+
					"evaluates with its own clock as it answers: the answer may differ at another time of day.",
					action, who.Type+" "+who.ID, p.ID, holder(p, who), timeWindowOf(p)))
			unread = 0
			break
		}
		if unread > 0 {
			diags.AddAttributeWarning(path.Root("allowed").AtMapKey(action), "Time windows not all read",
				fmt.Sprintf("IAM denied %s now. %s reaches %d rows of it; the provider read %d of the check's rows to look for a "+
					"time window that would allow it at another time of day, and left %d unread.", action, who.Type+" "+who.ID,
					len(rows), maxWindowRows, unread))
		}
	}
}

// holder says whose row p is: the subject's own, or a group's it reaches.
func holder(p bkiam.Policy, who bkiam.Subject) string {
	if strings.EqualFold(p.Subject.Type, who.Type) && strings.EqualFold(p.Subject.ID, who.ID) {
		return "its own"
	}
	return "held by " + p.Subject.Type + " " + p.Subject.ID
}

// timeWindowOf writes p's environment conditions as IAM holds them ("tz eq
// Asia/Shanghai; hms gte 90000; hms lte 180000").
func timeWindowOf(p bkiam.Policy) string {
	e, err := policyexpr.Parse(p.Expression)
	if err != nil {
		return "unreadable"
	}
	alts, _ := e.Alternatives()
	var parts []string
	for _, alt := range alts {
		for _, c := range alt {
			if c.Environment() {
				if s := c.Attribute + " " + c.Op + " " + strings.Join(c.Values, ", "); !slices.Contains(parts, s) {
					parts = append(parts, s)
				}
			}
		}
	}
	return strings.Join(parts, "; ")
}

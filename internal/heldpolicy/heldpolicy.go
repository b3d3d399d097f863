// Package heldpolicy reads what a subject holds for one action in IAM: every
// row IAM lists for it, merged as IAM evaluates them. It is what the
// resources and data sources that reason about a subject's policy share:
// drift detection, import, the plan-time expiry check and bkiam_expiring.
//
// A subject can have several rows for one action: a group's custom policy
// and each permission template's are separate rows, and a group's
// RBAC-stored grants sit in a list of their own. The subject holds their
// union (an OR of the rows' expressions) until the latest of their
// expiries.
package heldpolicy

import (
	"bytes"
	"context"
	"fmt"
	"slices"

	"github.com/bkiam/terraform-provider-bkiam/internal/bkiam"
	"github.com/bkiam/terraform-provider-bkiam/internal/policyexpr"
)

// Policy is what a subject holds for one action.
type Policy struct {
	// Expr is the union of the rows' expressions.
	Expr *policyexpr.Expr
	// ExpiredAt is the latest of the rows' expiries (unix seconds).
	ExpiredAt int64
	// Rows are the rows themselves, ordered by backend id.
	Rows []bkiam.Policy
}

// Read returns what subject holds of action in system, from the scans of
// the action's policy lists: nil when it holds nothing (never granted,
// revoked whole, or expired).
func Read(ctx context.Context, scans *bkiam.ScanCache, system, action string, subject bkiam.Subject) (*Policy, error) {
	rows, err := scans.Lookup(ctx, system, action, subject)
	if err != nil || len(rows) == 0 {
		return nil, err
	}
	return Of(subject, action, rows)
}

// Of merges rows of subject for action into one Policy; nil for none.
func Of(subject bkiam.Subject, action string, rows []bkiam.Policy) (*Policy, error) {
	if len(rows) == 0 {
		return nil, nil
	}
	p := &Policy{Rows: rows}
	raws := make([][]byte, len(rows))
	var err error
	for i, row := range rows {
		if p.Expr, err = policyexpr.Parse(row.Expression); err != nil {
			return nil, fmt.Errorf("cannot read the expression of %s's policy %d for %s: %w", SubjectName(subject), row.ID, action, err)
		}
		raws[i] = row.Expression
		p.ExpiredAt = max(p.ExpiredAt, row.ExpiredAt)
	}
	if len(raws) > 1 {
		// The rows are alternatives: an OR of them, each standing on its
		// own. Each parsed alone above, so their OR parses too.
		union := slices.Concat([]byte(`{"op":"OR","content":[`), bytes.Join(raws, []byte(",")), []byte("]}"))
		if p.Expr, err = policyexpr.Parse(union); err != nil {
			return nil, fmt.Errorf("cannot read the expression of %s's policies for %s: %w", SubjectName(subject), action, err)
		}
	}
	return p, nil
}

// SubjectName is a subject as messages name it: "user alice", "group 7".
func SubjectName(s bkiam.Subject) string { return s.Type + " " + s.ID }

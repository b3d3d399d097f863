package heldpolicy

import (
	"context"

	"github.com/bkiam/terraform-provider-bkiam/internal/bkiam"
)

// ClientSource is a Source over IAM's routes: the policy lists through scans (shared with
// detect_drift's when it is on).
type ClientSource struct {
	Client *bkiam.Client
	Scans  *bkiam.ScanCache
}

func (s ClientSource) OwnRows(context.Context, string, bkiam.Subject, []string) (map[string][]int64, bool, error) {
	return nil, false, ErrUnanswered
}

func (s ClientSource) Policy(context.Context, string, int64) (bkiam.Policy, error) {
	return bkiam.Policy{}, ErrGone
}

func (s ClientSource) Scan(ctx context.Context, system, action string, subject bkiam.Subject) (live, expired []bkiam.Policy, err error) {
	return s.Scans.LookupAll(ctx, system, action, subject)
}

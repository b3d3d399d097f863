package heldpolicy

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"

	"github.com/bkiam/terraform-provider-bkiam/internal/bkiam"
)

// ClientSource is a Source over IAM's routes: one subject's rows from the backend's policy query
// and its debug output (bkiam.Client.QuerySubjectRows), each row by id (GetPolicy), and the
// policy lists through scans (shared with detect_drift's when it is on) where those cannot tell.
// The debug output is undocumented: a backend or gateway that does not pass it on is asked once,
// then the lists answer for the rest of the process.
type ClientSource struct {
	Client *bkiam.Client
	Scans  *bkiam.ScanCache
	// Models, when set, tells which actions relate to another system's resource type, which the
	// backend's batch query refuses to answer without resources: those are asked alone
	// (bkiam.AskAlone). Without it the batch is tried first.
	Models *bkiam.ModelCache
	// noDebug is set once IAM answered without debug output.
	noDebug *atomic.Bool
}

// NewClientSource builds a ClientSource.
func NewClientSource(c *bkiam.Client, scans *bkiam.ScanCache, models *bkiam.ModelCache) ClientSource {
	return ClientSource{Client: c, Scans: scans, Models: models, noDebug: new(atomic.Bool)}
}

func (s ClientSource) OwnRows(ctx context.Context, system string, subject bkiam.Subject, actions []string) (map[string][]Row, bool, error) {
	if s.noDebug.Load() {
		return nil, false, ErrUnanswered
	}
	got, err := s.Client.QuerySubjectRows(ctx, system, subject, actions, s.Models.AskAlone(ctx, system))
	switch {
	case errors.Is(err, bkiam.ErrNoDebug), errors.Is(err, bkiam.ErrDebugUnreadable) && !errors.Is(err, bkiam.ErrBodyTooLarge):
		// The debug output is the backend's to change: once it is missing, or its shape is not
		// the one this provider reads, the lists answer for the rest of the process.
		s.noDebug.Store(true)
		return nil, false, fmt.Errorf("%w: %w", ErrUnanswered, err)
	case errors.Is(err, bkiam.ErrDebugUnreadable), errors.Is(err, bkiam.ErrSubjectFrozen):
		// Too large to read for this subject, or a frozen subject, which IAM's policy query
		// refuses (a leaver is often frozen first): the lists answer for it.
		return nil, false, fmt.Errorf("%w: %w", ErrUnanswered, err)
	case err != nil:
		return nil, false, fmt.Errorf("reading %s's policies of %s through IAM's policy query: %w", SubjectName(subject), system, err)
	case got.AsManager:
		// A manager is answered everything without a policy being read;
		// its own grants are in the lists.
		return nil, false, ErrUnanswered
	case !got.Known:
		return nil, false, nil
	}
	own := map[string][]Row{}
	for action, rows := range got.Rows {
		for _, r := range rows {
			if r.SubjectPK == got.PK {
				own[action] = append(own[action], Row{ID: r.ID, ExpiredAt: r.ExpiredAt})
			}
		}
	}
	return own, true, nil
}

func (s ClientSource) Policy(ctx context.Context, system string, id int64) (bkiam.Policy, error) {
	p, err := s.Client.GetPolicy(ctx, system, id)
	if errors.Is(err, bkiam.ErrPolicyNotFound) {
		return bkiam.Policy{}, fmt.Errorf("%w: %w", ErrGone, err)
	}
	return p, err
}

func (s ClientSource) Scan(ctx context.Context, system, action string, subject bkiam.Subject) (live, expired []bkiam.Policy, err error) {
	return s.Scans.LookupAll(ctx, system, action, subject)
}

func (s ClientSource) Scanned(system, action string, subject bkiam.Subject) (live, expired []bkiam.Policy, ok bool) {
	return s.Scans.LookupCached(system, action, subject)
}

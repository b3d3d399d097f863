package bkiam

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"
)

// ScanCache shares policy-list scans: one scan per (system, action, list) however many callers
// ask. A Terraform refresh reads every grant resource at once; each one's subject sits in the same
// per-action list, so one scan of ceil(count/500) calls answers them all, where a scan per
// resource would cost that many calls per resource.
//
// A subject holds the union of its rows (a group's custom policy and each permission template's
// are separate rows), and a group's single-type grants of an RBAC action are listed only in the
// RBAC list: Lookup returns every unexpired row of the subject, from the default list and, for a
// group, from the RBAC list too (a second scan, shared the same way, made only when a group is
// looked up, and with UseModels only for an action whose auth_type is rbac or all).
//
// Concurrent callers wait for the scan in flight. Invalidate records that this process wrote to a
// subject's rows of an action: a scan that started before the write still answers every other
// subject (a write changes its subject's rows only), and the callers already waiting for it (they
// asked before the write), but a later lookup of that subject scans again, and its scan answers
// everyone after it. Errors are not cached. Safe for concurrent use.
type ScanCache struct {
	client *Client
	now    func() time.Time

	mu      sync.Mutex
	results map[scanKey]scanResult  // finished scans, the latest started of each key
	flights map[scanKey]*scanFlight // the scan new callers join, per key
	// tick orders the starts of scans and this process's writes; written holds, per key and
	// subject (its ID folded to lower case, as IAM's database compares names), the tick of the
	// last write: a scan that started before it may hold the subject's old rows.
	tick    uint64
	written map[scanKey]map[Subject]uint64
	scans   int
	// models, when set, tells which actions IAM can store as RBAC
	// relations (their auth_type), so that a group's lookup of any other
	// action skips the RBAC list.
	models *ModelCache
	// limit, when positive, is the most policies a scan reads (Limit).
	limit int
}

// Limit bounds what each scan of the cache reads: a list whose first page announces more than
// limit policies is read no further, and its lookups answer the rows of that page with a
// *ScanLimitError. A scan costs IAM a count and a sort of the action's whole list per page, so a
// check that needs one subject's row must not cost the site's size. Call it before any Lookup;
// 0 (the default) reads every list whole, as detect_drift must.
func (s *ScanCache) Limit(limit int) { s.limit = limit }

// ScanLimitError is a lookup in a list longer than the cache's Limit: only its first page was
// read, and the subject may hold rows past it.
type ScanLimitError struct {
	System, Action string
	// Count is what the list announced; Limit the cache's bound.
	Count, Limit int
}

func (e *ScanLimitError) Error() string {
	return fmt.Sprintf("IAM's policy list of action %s in system %s holds %d policies, more than the %d the provider reads for one "+
		"subject; only its first page was read", e.Action, e.System, e.Count, e.Limit)
}

// UseModels lets Lookup learn each action's auth_type from the systems'
// models: a group's lookup then reads the RBAC list only for an action
// whose auth_type is rbac or all. Without models (or when a model cannot
// be read) both lists are read for groups. Call it before any Lookup.
func (s *ScanCache) UseModels(m *ModelCache) { s.models = m }

// needsRBAC reports whether a group's rows of the action may be in the
// RBAC list.
func (s *ScanCache) needsRBAC(ctx context.Context, system, action string) bool {
	if s.models == nil {
		return true
	}
	m, err := s.models.Get(ctx, system)
	if err != nil {
		return true // unknown: read both lists, as without a model
	}
	a := m.Action(action)
	return a == nil || a.RBAC()
}

type scanKey struct {
	system, action string
	kind           PolicyKind
}

// scanResult is a finished scan: every subject's rows (keyed by foldSubject), the tick it
// started at, and, for a list longer than the cache's limit, the error its lookups answer beside
// the rows of the page read.
type scanResult struct {
	bySubj  map[Subject][]Policy
	started uint64
	limited *ScanLimitError
}

// scanFlight is one scan and the callers waiting for it.
type scanFlight struct {
	done    chan struct{} // closed when bySubj/err are set
	bySubj  map[Subject][]Policy
	err     error
	limited *ScanLimitError
	started uint64             // the tick it started at
	waiters int                // callers still waiting; guarded by ScanCache.mu
	cancel  context.CancelFunc // stops the scan once nobody waits for it
}

// foldSubject is the key of subject's writes: IAM's database compares names without case.
func foldSubject(subject Subject) Subject {
	return Subject{Type: subject.Type, ID: strings.ToLower(subject.ID)}
}

// fresh reports whether a scan of k that started at started holds subject's rows as they are:
// this process has not written to them since; s.mu is held.
func (s *ScanCache) fresh(k scanKey, started uint64, subject Subject) bool {
	return s.written[k][foldSubject(subject)] < started
}

// NewScanCache builds a cache reading through c. now tells which policies have expired (nil
// means time.Now).
func NewScanCache(c *Client, now func() time.Time) *ScanCache {
	if now == nil {
		now = time.Now
	}
	return &ScanCache{client: c, now: now,
		results: map[scanKey]scanResult{}, flights: map[scanKey]*scanFlight{}, written: map[scanKey]map[Subject]uint64{}}
}

// Lookup returns the subject's unexpired rows for the action (expired_at <= now counts as gone),
// ordered by backend id; none when it holds nothing. A scan lists the rows that expired within
// ExpiredWindow too (LookupAll). If ctx ends while a scan runs, Lookup returns
// at once; the scan goes on for the other callers, and stops only when no caller waits for it any
// more.
func (s *ScanCache) Lookup(ctx context.Context, system, action string, subject Subject) ([]Policy, error) {
	live, _, err := s.LookupAll(ctx, system, action, subject)
	return live, err
}

// LookupAll is Lookup, with the subject's rows that have expired but IAM still lists: a scan lists
// the rows that expired within ExpiredWindow, which IAM keeps (a year, for a user's) and revives
// whole when the subject is granted the action again. In a list longer than the cache's Limit it
// answers the rows of the page read with a *ScanLimitError.
func (s *ScanCache) LookupAll(ctx context.Context, system, action string, subject Subject) (live, expired []Policy, err error) {
	kinds := []PolicyKind{PolicyKindABAC}
	if subject.Type == SubjectGroup && s.needsRBAC(ctx, system, action) {
		kinds = append(kinds, PolicyKindRBAC)
	}
	var rows []Policy
	var limited error
	for _, kind := range kinds {
		got, err := s.lookup(ctx, scanKey{system, action, kind}, subject)
		var tooLong *ScanLimitError
		switch {
		case errors.As(err, &tooLong):
			limited = cmp.Or(limited, err)
		case err != nil:
			return nil, nil, err
		}
		rows = append(rows, got...)
	}
	live, expired = s.split(rows)
	return live, expired, limited
}

// LookupCached is LookupAll for a user, answered only from a scan this cache has already made
// (ok false: none, or one that started before this process wrote to the user's rows); it reads
// nothing.
func (s *ScanCache) LookupCached(system, action string, subject Subject) (live, expired []Policy, ok bool) {
	if subject.Type == SubjectGroup {
		return nil, nil, false // a group's rows can be in the RBAC list too
	}
	k := scanKey{system, action, PolicyKindABAC}
	s.mu.Lock()
	res, ok := s.results[k]
	ok = ok && s.fresh(k, res.started, subject)
	s.mu.Unlock()
	if !ok {
		return nil, nil, false
	}
	live, expired = s.split(s.pick(res.bySubj, subject))
	return live, expired, true
}

// split splits rows into the live and the expired at the cache's now, each ordered by backend id.
func (s *ScanCache) split(rows []Policy) (live, expired []Policy) {
	now := s.now().Unix()
	for _, p := range rows {
		if p.ExpiredAt > now {
			live = append(live, p)
		} else {
			expired = append(expired, p)
		}
	}
	byID := func(a, b Policy) int { return cmp.Compare(a.ID, b.ID) }
	slices.SortFunc(live, byID)
	slices.SortFunc(expired, byID)
	return live, expired
}

// lookup is Lookup in one list.
func (s *ScanCache) lookup(ctx context.Context, k scanKey, subject Subject) ([]Policy, error) {
	list := "policy list"
	if k.kind == PolicyKindRBAC {
		list = "RBAC policy list"
	}
	s.mu.Lock()
	if res, ok := s.results[k]; ok && s.fresh(k, res.started, subject) {
		s.mu.Unlock()
		return s.pick(res.bySubj, subject), limitedErr(res.limited)
	}
	f := s.flights[k]
	if f == nil || !s.fresh(k, f.started, subject) {
		if err := ctx.Err(); err != nil { // no scan for a caller who has already gone
			s.mu.Unlock()
			return nil, fmt.Errorf("bkiam: %s of action %s in system %s not read: %w", list, k.action, k.system, err)
		}
		f = s.start(ctx, k)
	}
	f.waiters++
	s.mu.Unlock()

	select {
	case <-f.done:
	case <-ctx.Done():
		s.mu.Lock()
		select {
		case <-f.done: // finished meanwhile: the answer is there, use it
			s.mu.Unlock()
		default:
			f.waiters--
			if f.waiters == 0 {
				// Nobody else waits: stop the calls, and let the next caller start afresh.
				f.cancel()
				if s.flights[k] == f {
					delete(s.flights, k)
				}
			}
			s.mu.Unlock()
			return nil, fmt.Errorf("bkiam: stopped waiting for the %s of action %s in system %s: %w", list, k.action, k.system, ctx.Err())
		}
	}
	if f.err != nil {
		return nil, f.err
	}
	return s.pick(f.bySubj, subject), limitedErr(f.limited)
}

// limitedErr is e as an error: nil for none.
func limitedErr(e *ScanLimitError) error {
	if e == nil {
		return nil
	}
	return e
}

// start launches the scan of k; s.mu is held. The scan runs on a context detached from the
// caller's cancellation (keeping its values, the log settings among them), so that one caller
// giving up does not fail the others; each of its calls is still bounded by the client's
// per-attempt timeout and retry limit, and the scan is cancelled when its last waiter leaves.
func (s *ScanCache) start(ctx context.Context, k scanKey) *scanFlight {
	sctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	s.tick++
	f := &scanFlight{done: make(chan struct{}), cancel: cancel, started: s.tick}
	s.flights[k] = f
	s.scans++
	go func() {
		defer cancel()
		pols, err := s.client.scanPolicies(sctx, k.kind, k.system, k.action, ExpiredSince(s.now()), s.limit)
		var limited *ScanLimitError
		if errors.As(err, &limited) {
			err = nil // the rows of the page read, and the limit, answer every lookup
		}
		var bySubj map[Subject][]Policy
		if err == nil {
			// Every row counts: a subject holds the union of its rows. IAM compares
			// subject ids without case, and a grant to "Alice" is listed as alice's.
			bySubj = make(map[Subject][]Policy, len(pols))
			for _, p := range pols {
				key := foldSubject(p.Subject)
				bySubj[key] = append(bySubj[key], p)
			}
		}
		s.mu.Lock()
		defer s.mu.Unlock()
		f.bySubj, f.err, f.limited = bySubj, err, limited
		close(f.done)
		if s.flights[k] == f {
			delete(s.flights, k)
		}
		// The latest started scan is kept: a scan that started later (a subject's rows were
		// written since this one started) knows more, whichever ends first.
		if res, ok := s.results[k]; err == nil && (!ok || res.started < f.started) {
			s.results[k] = scanResult{bySubj: bySubj, started: f.started, limited: limited}
		}
	}()
	return f
}

// pick returns a copy of the subject's rows, expired ones included, whatever the case of its id.
func (s *ScanCache) pick(bySubj map[Subject][]Policy, subject Subject) []Policy {
	return slices.Clone(bySubj[foldSubject(subject)])
}

// Invalidate records that this process has written to (or is writing to) subject's rows of
// (system, action), in both lists: the next lookup of that subject scans again, and sees the write;
// the scans already made still answer every other subject.
func (s *ScanCache) Invalidate(system, action string, subject Subject) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.tick++
	for _, kind := range []PolicyKind{PolicyKindABAC, PolicyKindRBAC} {
		k := scanKey{system, action, kind}
		if s.written[k] == nil {
			s.written[k] = map[Subject]uint64{}
		}
		s.written[k][foldSubject(subject)] = s.tick
	}
}

// Scans returns how many list scans were started (for tests and logs).
func (s *ScanCache) Scans() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.scans
}

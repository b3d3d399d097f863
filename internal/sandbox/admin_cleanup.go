package sandbox

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"sync/atomic"
	"time"
)

// The leaver cleanup, DELETE /api/v1/open/admin/cleanup/users/permission/ (the SaaS's
// AdminSubjectPermissionCleanupViewSet and apps/user/tasks.py's UserPermissionCleaner, release/1.10).
// The view checks the body, writes one record per user and queues a Celery task per user, and
// answers {} at once; the task removes, in order, the user's custom (and temporary) policies in
// every system, its direct group memberships, its subject-template memberships and its manager
// roles. Department memberships are not the user's and stay. Here the task is a pending cleanup
// carried out once its delay has passed on the server's clock (lazily, as the grade-manager
// deletes are: before the next call or inspection that could see it), so that a client cannot
// tell it from IAM's: nothing changes when the call returns.

// defaultCleanupDelay stands for the Celery task's latency; small, so that tests wait little, but
// never zero, so that a client that reads at once sees what IAM's clients see: nothing done yet.
const defaultCleanupDelay = 500 * time.Millisecond

// WithCleanupDelay sets how long a leaver cleanup takes to be carried out, overriding the model's
// limits.cleanup_delay_ms; 0 carries it out before the next call. With WithNow, the delay runs on
// the injected clock.
func WithCleanupDelay(d time.Duration) Option {
	return func(s *Server) { s.cleanupDelay = &d }
}

// cleanupDelay is the WithCleanupDelay option, else the model's limit, else the default.
func (s *Server) cleanupDelayOf() time.Duration {
	if s.cleanupDelay != nil {
		return *s.cleanupDelay
	}
	if s.model.Limits.CleanupDelayMS > 0 {
		return time.Duration(s.model.Limits.CleanupDelayMS) * time.Millisecond
	}
	return defaultCleanupDelay
}

// pendingCleanup is a queued cleanup of one user: the SaaS's UserPermissionCleanupRecord with its
// task. BeforeAt is before_at (unix seconds), 0 for none.
type pendingCleanup struct {
	User     string
	BeforeAt int64
	Due      time.Time
}

// cleanupQueue is the store's queue of pending cleanups by user; pending counts them so that the
// calls that carry due cleanups out find an empty queue without the store's lock.
type cleanupQueue struct {
	byUser  map[string]*pendingCleanup
	pending atomic.Int64
}

// adminCleanup serves DELETE /api/v1/open/admin/cleanup/users/permission/: a JSON array of
// {type: "user", id, before_at?}, checked as SubjectSLZ(many=True) checks it, then as the view
// does (an empty array is 1902416, "至少传递一个用户").
func (s *Server) adminCleanup(c *call, _ *App, _ []string) (any, *saasError) {
	raw, err := io.ReadAll(http.MaxBytesReader(c.w, c.r.Body, s.maxBody))
	if err != nil {
		return nil, badMgmtJSON()
	}
	users, e := decodeCleanup(raw)
	if e != nil {
		return nil, e
	}
	if len(users) == 0 {
		return nil, mgmtError(codeInvalidArgs, "参数错误: 至少传递一个用户")
	}
	st := s.store
	st.mu.Lock()
	defer st.mu.Unlock()
	now := s.now()
	st.runCleanupsLocked(now) // what was due before this call is done before it queues again
	if st.cleanups.byUser == nil {
		st.cleanups.byUser = map[string]*pendingCleanup{}
	}
	for _, u := range users {
		// A cleanup of the user still running takes the new task's place: the SaaS's task finds
		// the record RUNNING and returns, dropping the call silently (its before_at too).
		if _, running := st.cleanups.byUser[u.User]; running {
			continue
		}
		u.Due = now.Add(s.cleanupDelayOf())
		st.cleanups.byUser[u.User] = u
		st.cleanups.pending.Add(1)
	}
	return map[string]any{}, nil
}

// decodeCleanup checks the body as SubjectSLZ(many=True) does: a list of objects with type (the one
// choice "user"), id (a non-blank string) and before_at (an integer, optional). All field errors
// at once, per item ({} for an item without), as DRF renders a list serializer's.
func decodeCleanup(raw []byte) ([]*pendingCleanup, *saasError) {
	body, err := decodeBody(raw)
	if err != nil {
		return nil, badMgmtJSON()
	}
	items, ok := body.([]any)
	if !ok {
		return nil, validationErr(fieldErrorsOf(fmt.Sprintf("Expected a list of items but got type \"%s\".", pyType(body)), "non_field_errors"))
	}
	var v validator
	var out []*pendingCleanup
	seen := map[string]bool{}
	for i, item := range items {
		obj, ok := item.(map[string]any)
		if !ok {
			v.errs.add(fmt.Sprintf("Invalid data. Expected a dictionary, but got %s.", pyType(item)), i, "non_field_errors")
			continue
		}
		v.choice(obj, "type", []string{"user"}, i)
		id := cleanupID(&v, obj, i)
		before := cleanupBeforeAt(&v, obj, i)
		if id != "" && !seen[id] { // one record per username (unique), one task each
			seen[id] = true
			out = append(out, &pendingCleanup{User: id, BeforeAt: before})
		}
	}
	if !v.errs.empty() {
		return nil, validationErr(v.errs)
	}
	return out, nil
}

func fieldErrorsOf(msg string, path ...any) fieldErrors {
	var fe fieldErrors
	fe.add(msg, path...)
	return fe
}

// cleanupID reads id, a CharField: present, a string (DRF takes numbers as their text), not blank.
func cleanupID(v *validator, obj map[string]any, i int) string {
	var s string
	switch x := obj["id"].(type) {
	case nil:
		if _, present := obj["id"]; present {
			v.errs.add("This field may not be null.", i, "id")
		} else {
			v.errs.add("This field is required.", i, "id")
		}
		return ""
	case string:
		s = strings.TrimSpace(x)
	case json.Number:
		s = x.String()
	default:
		v.errs.add("Not a valid string.", i, "id")
		return ""
	}
	if s == "" {
		v.errs.add("This field may not be blank.", i, "id")
	}
	return s
}

// cleanupBeforeAt reads before_at, an IntegerField with default None: absent or null is none; an
// integer or a string of one is taken.
func cleanupBeforeAt(v *validator, obj map[string]any, i int) int64 {
	var text string
	switch x := obj["before_at"].(type) {
	case nil:
		return 0
	case json.Number:
		text = x.String()
	case string:
		text = strings.TrimSpace(x)
	default:
		v.errs.add("A valid integer is required.", i, "before_at")
		return 0
	}
	n, err := strconv.ParseInt(text, 10, 64)
	if err != nil {
		v.errs.add("A valid integer is required.", i, "before_at")
		return 0
	}
	return n
}

// runDueCleanups carries out the cleanups whose time has come, for the calls that read state
// without the housekeeping passes (purgeExpiredLocked, purgeMgmtLocked), which do it too.
func (s *Server) runDueCleanups() {
	if s.store.cleanups.pending.Load() == 0 {
		return
	}
	s.store.mu.Lock()
	defer s.store.mu.Unlock()
	s.store.runCleanupsLocked(s.now())
}

// runCleanupsLocked carries out the due cleanups, each as the SaaS's task does (cleanUser), and
// saves the state. A failed save rolls the cleanups back and keeps them queued for the next call.
func (st *store) runCleanupsLocked(now time.Time) {
	if st.cleanups.pending.Load() == 0 {
		return
	}
	before := st.mgmt.clone()
	var puts []*policyPut
	var done []string
	for user, pc := range st.cleanups.byUser {
		if now.Before(pc.Due) {
			continue
		}
		puts = append(puts, st.cleanUserLocked(pc)...)
		done = append(done, user)
	}
	if len(done) == 0 {
		return
	}
	if e := st.saveMgmtLocked(before, puts...); e != nil {
		return // rolled back: the next call tries again
	}
	for _, u := range done {
		delete(st.cleanups.byUser, u)
	}
	st.cleanups.pending.Add(-int64(len(done)))
}

// cleanUserLocked removes what UserPermissionCleaner.clean removes, in its order, and returns the
// policy deletes for the caller to commit:
//   - every custom policy of the user in every system (the SaaS's policy table: the rows its
//     grants write and the rows with an attribute condition; before_at does not spare them), not
//     the rows a permission template gave the user, which the SaaS keeps in another table;
//   - its direct memberships of groups, unless before_at is given and the membership was created
//     after it; a removal is mirrored on the template mirroring the group, as GroupBiz does;
//   - its memberships of subject templates, likewise. The sandbox keeps no time per template
//     member: a mirror's member takes its group membership's, another the template's creation;
//   - its grade-manager roles (the members of a grade manager), likewise. The sandbox keeps no
//     time per grade-manager member either: each takes the grade manager's last write. The
//     sandbox models no super or system managers and no temporary policies.
//
// Memberships of the user's departments are the departments', and stay.
func (st *store) cleanUserLocked(pc *pendingCleanup) []*policyPut {
	var puts []*policyPut
	for k := range st.policies {
		if k.SubjectType == "user" && k.SubjectID == pc.User && k.TemplateID == 0 {
			puts = append(puts, &policyPut{key: k})
		}
	}
	ms := st.mgmt
	kept := func(at int64) bool { return pc.BeforeAt > 0 && at > pc.BeforeAt }
	user := memberKey{"user", pc.User}
	// Template relations' times, read before the group memberships go.
	templateAt := map[int64]int64{}
	for id, t := range ms.templates {
		if !t.Members[user] {
			continue
		}
		templateAt[id] = t.Created.Unix()
		if g := ms.groups[t.SourceGroup]; g != nil && g.Members[user] != nil {
			templateAt[id] = g.Members[user].CreatedAt
		}
	}
	for _, g := range ms.groups {
		if m := g.Members[user]; m != nil && !kept(m.CreatedAt) {
			delete(g.Members, user)
			ms.mirrorMembers(g, []memberKey{user}, false)
		}
	}
	for id, at := range templateAt {
		if t := ms.templates[id]; t != nil && !kept(at) {
			delete(t.Members, user)
		}
	}
	for _, gm := range ms.gms {
		at := gm.Updated
		if at.IsZero() {
			at = gm.Created
		}
		if i := slicesIndex(gm.Members, pc.User); i >= 0 && !kept(at.Unix()) {
			gm.Members = append(gm.Members[:i:i], gm.Members[i+1:]...)
		}
	}
	return puts
}

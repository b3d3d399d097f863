package sandbox

import (
	"maps"
	"slices"
	"sort"
	"sync"
	"time"
)

// policyKey identifies a policy row. batch_instance writes the subject's custom policy (TemplateID
// and ExprRow 0), one per (subject, system, action); a group also holds one row per permission
// template that grants the action (TemplateID > 0), and a subject any number of rows with an
// attribute condition, as the web UI grants them (ExprRow: the row's policy_id; see
// expression_policy.go). The SaaS calls never touch the last two.
type policyKey struct {
	System      string
	SubjectType string
	SubjectID   string
	Action      string
	TemplateID  int64
	ExprRow     int64
}

// custom reports whether the key is a subject's custom policy, the row the SaaS's grants and
// revokes write.
func (k policyKey) custom() bool { return k.TemplateID == 0 && k.ExprRow == 0 }

// policy is one stored custom policy. A single-type action (or one without types) keeps Paths; an
// action related to several types (a combined resource) keeps Groups, one per granted combination.
type policy struct {
	ID        int64 // the SaaS policy_id
	BackendID int64 // the backend's own id (read API), from a separate sequence
	Key       policyKey
	ExpiredAt int64
	Any       bool
	Combined  bool
	Paths     map[string][]Node
	Groups    []group
	// Collapsed records that the last write was a user grant of an ignore_iam_path action: the real
	// translator then writes bare ids to the backend; a later revoke writes full paths again.
	Collapsed bool
	// Cond is the expression of a row granted with an attribute condition (in the read routes'
	// form, as given), which holds no paths; nil for every other row.
	Cond expr
}

// group is one combination of a combined resource: type -> path key -> nodes. An empty type means any.
type group map[string]map[string][]Node

func (p *policy) clone() *policy {
	c := *p
	c.Paths = maps.Clone(p.Paths)
	c.Groups = make([]group, len(p.Groups))
	for i, g := range p.Groups {
		c.Groups[i] = group{}
		for t, ps := range g {
			c.Groups[i][t] = maps.Clone(ps)
		}
	}
	return &c
}

// instanceCount is statistics.instance_count: every path of every type (0 for any).
func (p *policy) instanceCount() int {
	n := len(p.Paths)
	for _, g := range p.Groups {
		for _, ps := range g {
			n += len(ps)
		}
	}
	return n
}

// typeCount counts the paths of one type after a merge, for the per-policy limit.
func (p *policy) typeCount(typ string) int {
	if !p.Combined {
		return len(p.Paths)
	}
	n := 0
	for _, g := range p.Groups {
		n += len(g[typ])
	}
	return n
}

// rbac reports whether the real server keeps this policy as RBAC relations rather than an ABAC
// expression: a group's instance policy of one type for an action whose auth_type is rbac or all.
func (p *policy) rbac(a *Action) bool {
	return a != nil && a.rbac() && p.Key.SubjectType == "group" && !p.Any && p.Cond == nil
}

func (p *policy) empty() bool {
	return !p.Any && len(p.Paths) == 0 && len(p.Groups) == 0
}

// resultEntry is one element of a grant/revoke answer's data.
type resultEntry struct {
	Action     actionRef  `json:"action"`
	PolicyID   int64      `json:"policy_id"`
	Statistics statistics `json:"statistics"` // always present, as on the real server
}

type actionRef struct {
	ID string `json:"id"`
}

type statistics struct {
	InstanceCount int `json:"instance_count"`
}

// grantSpec is what one call asks for one action: the paths per related type, in the action's order.
type grantSpec struct {
	action  *Action
	perType [][][]Node
}

// store holds the policies. One mutex serialises all writes, which includes the real server's
// per-subject lock; reads take the same lock so inspection always sees a committed state.
type store struct {
	mu            sync.Mutex
	policies      map[policyKey]*policy
	nextID        int64
	nextBackendID int64
	// synced are the model's directory users the authorization API has synced into IAM.
	synced map[string]bool
	// mgmt is the management API's state (mgmt_store.go); groupFloor is where its group ids start
	// (after the model's groups, so that ids never collide).
	mgmt       *mgmtState
	groupFloor int64
	// persist is called with mu held after every change; an error rolls the change back.
	persist func() error
	// purgedAt is the clock's second of the last housekeeping pass: a pass walks every policy,
	// so it runs at most once per clock second (purgeExpiredLocked).
	purgedAt int64
	// cleanups are the leaver cleanups queued and not yet carried out (admin_cleanup.go).
	cleanups cleanupQueue
}

// backendIDOffset keeps backend ids from ever equalling the SaaS policy_id of the same policy: both
// sequences advance together on each creation, so the offset is preserved.
const backendIDOffset = 1000

func newStore() *store {
	st := &store{}
	st.resetLocked()
	return st
}

func (st *store) resetLocked() {
	st.policies = map[policyKey]*policy{}
	st.synced = map[string]bool{}
	st.mgmt = newMgmtState(st.groupFloor)
	st.nextID = 1
	st.nextBackendID = 1 + backendIDOffset
	st.cleanups.byUser = nil
	st.cleanups.pending.Store(0)
}

// txn records the previous values of the keys a call touches so that a failed save can roll back.
type txn struct {
	st            *store
	old           map[policyKey]*policy
	nextID, nextB int64
}

func (st *store) begin() *txn {
	return &txn{st: st, old: map[policyKey]*policy{}, nextID: st.nextID, nextB: st.nextBackendID}
}

func (t *txn) put(k policyKey, p *policy) {
	if _, seen := t.old[k]; !seen {
		t.old[k] = t.st.policies[k]
	}
	if p == nil {
		delete(t.st.policies, k)
		return
	}
	if p.ID == 0 {
		p.ID = t.st.nextID
		p.BackendID = t.st.nextBackendID
		t.st.nextID++
		t.st.nextBackendID++
	}
	t.st.policies[k] = p
}

func (t *txn) commit() *saasError {
	if len(t.old) == 0 || t.st.persist == nil {
		return nil
	}
	if err := t.st.persist(); err != nil {
		for k, p := range t.old {
			if p == nil {
				delete(t.st.policies, k)
			} else {
				t.st.policies[k] = p
			}
		}
		t.st.nextID, t.st.nextBackendID = t.nextID, t.nextB
		return newSaaSError(codeSystemError, "save state: "+err.Error())
	}
	return nil
}

// grant merges specs into the subject's policies, after the housekeeping due at now
// (purgeExpiredLocked). A new policy expires at newExpiry; an existing one, expired or not, takes
// expiry only when it is greater (0, "not given", changes nothing). Every policy is computed on a
// copy and checked against the per-policy limit before anything is stored, so a failing call
// changes nothing.
func (st *store) grant(now time.Time, system string, subj subject, specs []grantSpec, expiry, newExpiry int64, lim Limits) ([]resultEntry, *saasError) {
	st.mu.Lock()
	defer st.mu.Unlock()
	if e := st.purgeExpiredLocked(now); e != nil {
		return nil, e
	}
	return st.grantLocked(system, subj, specs, expiry, newExpiry, lim)
}

// grantLocked is grant with st.mu held.
func (st *store) grantLocked(system string, subj subject, specs []grantSpec, expiry, newExpiry int64, lim Limits) ([]resultEntry, *saasError) {
	updated, e := mergeGrants(func(k policyKey) *policy { return st.policies[k] }, system, subj, specs, expiry, newExpiry, lim)
	if e != nil {
		return nil, e
	}
	t := st.begin()
	for _, p := range updated {
		t.put(p.Key, p)
	}
	if subj.Type == "user" {
		st.raiseConditionRowsLocked(t, system, subj, specs, expiry)
	}
	var restore func()
	if subj.Type == "group" {
		restore = st.widenScopeLocked(system, subj.ID, specs)
	}
	if err := t.commit(); err != nil {
		if restore != nil {
			restore()
		}
		return nil, err
	}
	return st.subjectPoliciesLocked(system, subj), nil
}

// mergeGrants computes, on copies, the subject's policies after a grant of specs, one per spec in
// order, from the policies held (held answers nil for none), checking each against the per-policy
// limit. Nothing is stored.
func mergeGrants(held func(policyKey) *policy, system string, subj subject, specs []grantSpec, expiry, newExpiry int64, lim Limits) ([]*policy, *saasError) {
	updated := make([]*policy, len(specs))
	for i, sp := range specs {
		k := policyKey{System: system, SubjectType: subj.Type, SubjectID: subj.ID, Action: sp.action.ID}
		var p *policy
		changed := true
		if old := held(k); old != nil {
			// The policy keeps its id and its expiry unless expired_at is greater: a grant without
			// one leaves an expired policy expired, a later one revives it.
			p = old.clone()
			p.ExpiredAt = max(p.ExpiredAt, expiry)
			changed = mergeGrant(p, sp)
		} else {
			p = &policy{Key: k, ExpiredAt: newExpiry, Combined: len(sp.action.typeIDs) > 1, Paths: map[string][]Node{}}
			mergeGrant(p, sp)
		}
		for _, typ := range sp.action.typeIDs {
			if n := p.typeCount(typ); n > lim.PolicyInstances {
				return nil, newSaaSError(codeValidation, "the number of instances of resource type["+typ+"] in the policy of action["+
					sp.action.ID+"] exceeds the limit "+itoa(lim.PolicyInstances))
			}
		}
		if changed {
			// The translator rewrites the backend expression only when the content changed; for a user
			// and an ignore_iam_path action it writes bare ids.
			p.Collapsed = subj.Type == "user" && sp.action.IgnoreIAMPath
		}
		updated[i] = p
	}
	return updated, nil
}

// mergeGrant merges a grant into p and reports whether p's content changed.
func mergeGrant(p *policy, sp grantSpec) bool {
	if p.Any {
		return false // any already covers everything
	}
	allEmpty := true
	for _, paths := range sp.perType {
		if len(paths) > 0 {
			allEmpty = false
		}
	}
	if allEmpty { // instances: [] (or an action without types) = any instance
		p.Any, p.Paths, p.Groups = true, map[string][]Node{}, nil
		return true
	}
	if !p.Combined {
		n := len(p.Paths)
		for _, path := range sp.perType[0] {
			p.Paths[pathKey(path)] = path
		}
		return len(p.Paths) != n
	}
	g := group{}
	for ti, typ := range sp.action.typeIDs {
		g[typ] = map[string][]Node{}
		for _, path := range sp.perType[ti] {
			g[typ][pathKey(path)] = path
		}
	}
	// The real server appends the new resource group unless an existing group already contains it
	// (equal or wider in every type), and drops the existing groups that the new one contains.
	for _, existing := range p.Groups {
		if groupContains(existing, g) {
			return false
		}
	}
	kept := p.Groups[:0]
	for _, existing := range p.Groups {
		if !groupContains(g, existing) {
			kept = append(kept, existing)
		}
	}
	p.Groups = append(kept, g)
	return true
}

// groupContains reports whether every type's paths of inner are within outer's (an empty type is
// any instance, which contains everything and is contained only by any).
func groupContains(outer, inner group) bool {
	for t, ips := range inner {
		ops := outer[t]
		if len(ops) == 0 {
			continue
		}
		if len(ips) == 0 {
			return false
		}
		for k := range ips {
			if _, ok := ops[k]; !ok {
				return false
			}
		}
	}
	for t, ops := range outer {
		if _, ok := inner[t]; !ok && len(ops) > 0 {
			return false
		}
	}
	return true
}

// revoke removes the requested paths, after the housekeeping due at now (purgeExpiredLocked).
// Actions without a policy are skipped silently; paths not in a policy leave it unchanged (expiry
// included); an emptied policy is deleted and its old id returned.
func (st *store) revoke(now time.Time, system string, subj subject, specs []grantSpec) ([]resultEntry, *saasError) {
	st.mu.Lock()
	defer st.mu.Unlock()
	if e := st.purgeExpiredLocked(now); e != nil {
		return nil, e
	}
	return st.revokeLocked(system, subj, specs)
}

// revokeLocked is revoke with st.mu held.
func (st *store) revokeLocked(system string, subj subject, specs []grantSpec) ([]resultEntry, *saasError) {
	t := st.begin()
	data := []resultEntry{}
	for _, sp := range specs {
		k := policyKey{System: system, SubjectType: subj.Type, SubjectID: subj.ID, Action: sp.action.ID}
		old := st.policies[k]
		if old == nil {
			continue
		}
		p := old.clone()
		changed := mergeRevoke(p, sp)
		if changed {
			p.Collapsed = false // the translator writes full paths on a revoke
		}
		if p.empty() {
			t.put(k, nil)
		} else if changed {
			t.put(k, p)
		}
		count := p.instanceCount()
		if p.empty() {
			count = old.instanceCount() // an emptied policy reports what it held
		}
		data = append(data, resultEntry{Action: actionRef{ID: sp.action.ID}, PolicyID: p.ID,
			Statistics: statistics{InstanceCount: count}})
	}
	if err := t.commit(); err != nil {
		return nil, err
	}
	return data, nil
}

// mergeRevoke applies a revoke to p and reports whether p changed.
func mergeRevoke(p *policy, sp grantSpec) bool {
	allEmpty := true
	for _, paths := range sp.perType {
		if len(paths) > 0 {
			allEmpty = false
		}
	}
	if allEmpty {
		// The real server deletes the policy of an action without a resource type whole; for an
		// action with related types, instances: [] revokes nothing, whatever the policy holds.
		if len(sp.action.typeIDs) == 0 {
			p.Any, p.Paths, p.Groups = false, map[string][]Node{}, nil
			return true
		}
		return false
	}
	if p.Any {
		return false // instances are not subtracted from "any"
	}
	changed := false
	if !p.Combined {
		for _, path := range sp.perType[0] {
			k := pathKey(path)
			if _, ok := p.Paths[k]; ok {
				delete(p.Paths, k)
				changed = true
			}
		}
		return changed
	}
	// The real server removes only the groups fully contained in the revoked one (every type's paths
	// within the request); a group the request only overlaps stays whole, silently.
	req := group{}
	for ti, typ := range sp.action.typeIDs {
		req[typ] = map[string][]Node{}
		for _, path := range sp.perType[ti] {
			req[typ][pathKey(path)] = path
		}
	}
	kept := p.Groups[:0]
	for _, g := range p.Groups {
		if revokeContains(req, g) {
			changed = true
			continue
		}
		kept = append(kept, g)
	}
	p.Groups = kept
	return changed
}

// revokeContains reports whether a revoke request contains the stored group g: every type of g has
// paths, all of them in the request. A request type without paths revokes nothing (as instances: []
// revokes nothing), so a group with an "any" type is never removed by a revoke.
func revokeContains(req, g group) bool {
	for t, ps := range g {
		if len(ps) == 0 || len(req[t]) == 0 {
			return false
		}
		for k := range ps {
			if _, ok := req[t][k]; !ok {
				return false
			}
		}
	}
	return true
}

// purgeExpiredLocked deletes the users' custom policies (with their rows of attribute conditions,
// which the web UI writes as custom policies too) that expired more than expiredPolicyKeepSec
// before now (expired_at < now - one year), as the real IAM's housekeeping does daily; the sandbox
// does it lazily, before each call reads or writes policies. Until then an expired policy is a row
// like any other, and a grant merges into it; after it, a grant creates a new policy (a new id,
// the default expiry). Group policies never expire and template rows are not the housekeeping's.
// A failed save rolls the purge back.
func (st *store) purgeExpiredLocked(now time.Time) *saasError {
	st.runCleanupsLocked(now)
	if now.Unix() == st.purgedAt {
		return nil // done this second: a burst of calls walks the policies once
	}
	cutoff := now.Unix() - expiredPolicyKeepSec
	t := st.begin()
	for k, p := range st.policies {
		if k.SubjectType == "user" && k.TemplateID == 0 && p.ExpiredAt < cutoff {
			t.put(k, nil)
		}
	}
	if e := t.commit(); e != nil {
		return e // rolled back: the next call tries again
	}
	st.purgedAt = now.Unix()
	return nil
}

// subjectPoliciesLocked lists every custom policy of the subject in the system: the grant answer's
// data (the known server bug), ordered by policy_id.
func (st *store) subjectPoliciesLocked(system string, subj subject) []resultEntry {
	var ps []*policy
	for k, p := range st.policies {
		if k.System == system && k.SubjectType == subj.Type && k.SubjectID == subj.ID && k.custom() {
			ps = append(ps, p)
		}
	}
	sort.Slice(ps, func(i, j int) bool { return ps[i].ID < ps[j].ID })
	data := make([]resultEntry, 0, len(ps))
	for _, p := range ps {
		data = append(data, resultEntry{Action: actionRef{ID: p.Key.Action}, PolicyID: p.ID,
			Statistics: statistics{InstanceCount: p.instanceCount()}})
	}
	return data
}

// seedTemplatesLocked adds the model's template policies that the store lacks (on start, after a
// state file is loaded, and after a reset). It reports whether it added any.
func (st *store) seedTemplatesLocked(m *Model) bool {
	added := false
	for _, sys := range m.Systems {
		for _, tp := range sys.TemplatePolicies {
			p, err := m.templatePolicy(sys.ID, tp, nil)
			if err != nil || st.policies[p.Key] != nil {
				continue // checked on model load; a stored row (from the state file) wins
			}
			st.addLocked(p)
			added = true
		}
	}
	return added
}

// addLocked stores a new policy row with fresh ids.
func (st *store) addLocked(p *policy) {
	p.ID, p.BackendID = st.nextID, st.nextBackendID
	st.nextID++
	st.nextBackendID++
	st.policies[p.Key] = p
}

// sortedPoliciesLocked returns all policies ordered by policy_id.
func (st *store) sortedPoliciesLocked() []*policy {
	ps := slices.Collect(maps.Values(st.policies))
	sort.Slice(ps, func(i, j int) bool { return ps[i].ID < ps[j].ID })
	return ps
}

// raiseConditionRowsLocked gives a user's rows of attribute conditions (POST
// /_sandbox/expression_policies) the expiry a grant of their action gives its custom policy: in
// IAM the web UI's grant and the API's are one policy, whose one expiry every grant raises, an
// expired one revived; the store keeps the condition apart only because it holds grants as paths.
// st.mu is held.
func (st *store) raiseConditionRowsLocked(t *txn, system string, subj subject, specs []grantSpec, expiry int64) {
	for _, sp := range specs {
		for k, p := range st.policies {
			if k.ExprRow == 0 || k.System != system || k.SubjectType != subj.Type || k.SubjectID != subj.ID || k.Action != sp.action.ID ||
				p.ExpiredAt >= expiry {
				continue
			}
			raised := p.clone()
			raised.ExpiredAt = expiry
			t.put(k, raised)
		}
	}
}

package sandbox

import (
	"sort"
	"strings"
	"time"
)

// What the backend's access checks count (handlers_access.go serves them): the policy rows a
// subject holds, its own and its groups', evaluated the way the backend's decision point does.
// The rows are the store's, rendered as the read routes render them (expression.go), so that a
// check and the policy list can never disagree about what a row grants.

// accessResource is one resource of an access check. Attribute carries what the caller knows of
// the instance; only "_bk_iam_path_" (a path or a list of paths to the instance's parent) is read.
type accessResource struct {
	System    string         `json:"system"`
	Type      string         `json:"type"`
	ID        string         `json:"id"`
	Attribute map[string]any `json:"attribute"`
}

// resourceSet indexes a check's resources for the evaluation of an action's rows, by type id, as
// the expressions name them ("host.id"). The backend's evaluation context keys a resource by
// "system.type" and its stored conditions name the related type's system, so a resource counts
// only as one of the action's related types, system included: another resource (a type of another
// system, or of no related type) is left out, as the backend finds no condition on it. A type given
// twice keeps the last.
type resourceSet map[string]accessResource

func newResourceSet(a *Action, rs []accessResource) resourceSet {
	set := resourceSet{}
	for _, r := range rs {
		if a.relatesTo(r.System, r.Type) {
			set[r.Type] = r
		}
	}
	return set
}

// matchesAction is the backend's check of an auth's resources (bk-iam Request.ValidateActionResource):
// as many as the action has related types, each one of them, system and type. The backend compares
// with the set of the related types, so the order is not checked (nor is a type given twice, which
// leaves another out).
func matchesAction(a *Action, rs []accessResource) bool {
	if len(rs) != len(a.related) {
		return false
	}
	for _, r := range rs {
		if !a.relatesTo(r.System, r.Type) {
			return false
		}
	}
	return true
}

// matchesRemote is the queries' check (bk-iam Request.ValidateActionRemoteResource): a resource of
// the action's system must be one of its local related types, which may be given or not; the
// related types of other systems ("remote") must all be given: as many resources of other systems
// as there are remote types, each of one of their ids. As in the backend, a resource of another
// system is compared with the remote types by its type id alone (then the evaluation, which keys
// by system, leaves it out: newResourceSet).
func matchesRemote(a *Action, rs []accessResource) bool {
	local, remote := map[string]bool{}, map[string]bool{}
	for _, t := range a.related {
		if t.System == a.system {
			local[t.Type] = true
		} else {
			remote[t.Type] = true
		}
	}
	given := 0
	for _, r := range rs {
		switch {
		case r.System == a.system && !local[r.Type]:
			return false
		case r.System == a.system:
		case !remote[r.Type]:
			return false
		default:
			given++
		}
	}
	return given == len(remote)
}

// effectiveRowsLocked lists the rows that count for subj's access to action in system at now,
// ordered by backend id: unexpired rows (custom and template, RBAC included) of the subject and,
// for a user, of every group it reaches: as an unexpired member, or through a subject template
// bound to the group until after now. A subject IAM does not know holds
// none: the backend answers it as one without permissions, not as an error.
func (s *Server) effectiveRowsLocked(system, action string, subj subject, now int64, force bool) []*policy {
	holders, known := s.holdersLocked(subj, now)
	if !known {
		return nil
	}
	var rows []*policy
	for k, p := range s.store.policies {
		if k.System == system && k.Action == action && rowUnexpired(p, now, force) && holders[subject{Type: k.SubjectType, ID: k.SubjectID}] {
			rows = append(rows, p)
		}
	}
	sort.Slice(rows, func(i, j int) bool { return rows[i].BackendID < rows[j].BackendID })
	return rows
}

// rowUnexpired is the backend's expiry test of a policy row. Its caches keep expired_at > now, so a
// row expiring this second no longer counts; ?force=1 bypasses them, and the database query keeps
// expired_at >= now (bk-iam's selectAuthBySubjectAction).
func rowUnexpired(p *policy, now int64, force bool) bool {
	return p.ExpiredAt > now || force && p.ExpiredAt == now
}

// holdersLocked returns the subjects whose rows count for subj: itself and, for a user, the
// groups it reaches (accessGroupsLocked). Only users and groups are subjects here; any other type
// is unknown. A group IAM does not know holds no rows (deleting one deletes its rows), so it needs
// no check of its own.
func (s *Server) holdersLocked(subj subject, now int64) (map[subject]bool, bool) {
	switch subj.Type {
	case "user":
		if !s.model.users[subj.ID] && !s.store.synced[subj.ID] {
			return nil, false
		}
		holders := map[subject]bool{subj: true}
		for _, g := range s.accessGroupsLocked(subj.ID, now) {
			holders[subject{Type: "group", ID: g}] = true
		}
		return holders, true
	case "group":
		return map[subject]bool{subj: true}, true
	}
	return nil, false
}

// accessGroupsLocked lists the groups whose rows count for user in the access checks: those it is
// an unexpired member of (userGroupsLocked) and those it reaches through a subject template
// (templateGroupsLocked), each once. The backend's auth reads subject_system_group, into which it
// folds the template bindings as well as the memberships.
func (s *Server) accessGroupsLocked(user string, now int64) []string {
	keys := s.userSubjectsLocked(user)
	seen := map[string]bool{}
	var out []string
	for _, id := range append(s.memberGroupsLocked(keys, now), s.templateGroupsLocked(keys, now)...) {
		if !seen[id] {
			seen[id] = true
			out = append(out, id)
		}
	}
	return out
}

// userGroupsLocked lists the groups user is an unexpired member of: directly, or through one of
// its departments or any ancestor of one. The SaaS writes a user's ancestor departments into IAM's
// organisation as well as the direct ones, so a group joined by a parent department reaches
// everyone below it. It reads the memberships only (the backend's subject_relation), not the
// groups reached through a subject template: what the backend's user-groups route answers.
func (s *Server) userGroupsLocked(user string, now int64) []string {
	return s.memberGroupsLocked(s.userSubjectsLocked(user), now)
}

// userSubjectsLocked lists the subjects IAM's organisation holds user as: itself, each department
// it belongs to and the ancestors of each.
func (s *Server) userSubjectsLocked(user string) []memberKey {
	keys := []memberKey{{"user", user}}
	for _, d := range s.model.UserDepartments[user] {
		for _, a := range s.model.departmentLine(d) {
			keys = append(keys, memberKey{"department", a})
		}
	}
	return keys
}

// memberGroupsLocked lists the groups holding one of keys as an unexpired member.
func (s *Server) memberGroupsLocked(keys []memberKey, now int64) []string {
	var out []string
	for id, g := range s.store.mgmt.groups {
		for _, k := range keys {
			if m := g.Members[k]; m != nil && m.ExpiredAt > now {
				out = append(out, itoa64(id))
				break
			}
		}
	}
	return out
}

// allowedBy reports whether any row allows the resources. An action related to no type is allowed
// by any row; otherwise a check without resources is not (the backend refuses to evaluate it).
// A row with a time window allows only within it, by the clock at now (environment.go).
func allowedBy(rows []*policy, a *Action, rs []accessResource, now time.Time) bool {
	if len(rows) == 0 {
		return false
	}
	if len(a.related) == 0 {
		return true
	}
	if len(rs) == 0 {
		return false
	}
	set := newResourceSet(a, rs)
	for _, p := range rows {
		e := p.expression(a)
		if evalExpr(e, withEnvironment(set, e, now)) {
			return true
		}
	}
	return false
}

// rowAllows is allowedBy for one row.
func rowAllows(p *policy, a *Action, rs []accessResource, now time.Time) bool {
	return allowedBy([]*policy{p}, a, rs, now)
}

// partialRow is partialExpr of row p with the environment the backend builds for it at now: a
// time window is decided, so a row within it is left without it, and a row outside it fails.
func partialRow(p *policy, a *Action, set resourceSet, now time.Time) (bool, expr) {
	e := p.expression(a)
	return partialExpr(e, withEnvironment(set, e, now))
}

// evalExpr evaluates an expression for resources: AND, OR, any (always true) and the leaves of
// evalLeaf. A field of a type the resources lack is false.
func evalExpr(e expr, set resourceSet) bool {
	switch e["op"] {
	case "AND":
		for _, c := range contentOf(e) {
			if !evalExpr(c, set) {
				return false
			}
		}
		return true
	case "OR":
		for _, c := range contentOf(e) {
			if evalExpr(c, set) {
				return true
			}
		}
		return false
	case "any":
		return true
	}
	return evalLeaf(e, set)
}

func contentOf(e expr) []expr {
	c, _ := e["content"].([]expr)
	return c
}

// leafType is the resource type a leaf's field names ("host" of "host.id"), "" for none.
func leafType(e expr) (typ, attr string) {
	field, _ := e["field"].(string)
	dot := strings.LastIndexByte(field, '.')
	if dot < 0 {
		return "", ""
	}
	return field[:dot], field[dot+1:]
}

// partialExpr is the backend's partial evaluation of a row for the resources a query gives: false
// when a condition on a given type fails the row, else what is left to decide, the conditions on
// the types not given (the any of no field when nothing is left). Without resources (nor an
// environment, partialRow) the row is left whole.
func partialExpr(e expr, set resourceSet) (bool, expr) {
	if len(set) == 0 {
		return true, e
	}
	switch e["op"] {
	case "AND", "OR":
		return partialLogic(e, set)
	case "any":
		return true, anyLeaf("")
	}
	if typ, _ := leafType(e); !hasType(set, typ) {
		return true, e
	}
	if evalLeaf(e, set) {
		return true, anyLeaf("")
	}
	return false, nil
}

func hasType(set resourceSet, typ string) bool {
	_, ok := set[typ]
	return ok
}

// partialLogic partially evaluates an AND or an OR: an AND fails with any part and drops the parts
// decided true; an OR holds with any part decided true and drops the parts decided false.
func partialLogic(e expr, set resourceSet) (bool, expr) {
	and := e["op"] == "AND"
	var rest []expr
	for _, c := range contentOf(e) {
		ok, left := partialExpr(c, set)
		switch {
		case and && !ok:
			return false, nil
		case !ok:
			continue
		case left["op"] == "any" && left["field"] == "":
			if !and {
				return true, left
			}
		default:
			rest = append(rest, left)
		}
	}
	switch {
	case len(rest) > 0:
		return true, composite(e["op"].(string), rest)
	case and:
		return true, anyLeaf("")
	}
	return false, nil
}

// effectiveExpression merges the conditions of the rows that count into the one expression the
// backend answers: {} when none counts; the first any, whole, when one is an any; else the eq and
// in leaves of one field merged into one in (values concatenated, a repeated id repeated, as the
// backend does; fields in name order, after the other conditions, where the backend's order
// varies), and an OR of what is left.
func effectiveExpression(conds []expr) expr {
	if len(conds) == 0 {
		return expr{}
	}
	for _, c := range conds {
		if c["op"] == "any" {
			return c
		}
	}
	if len(conds) > 1 {
		conds = mergeEqIn(conds)
	}
	return composite("OR", conds)
}

func mergeEqIn(conds []expr) []expr {
	byField := map[string][]expr{}
	var out []expr
	for _, c := range conds {
		if op := c["op"]; op == "eq" || op == "in" {
			field, _ := c["field"].(string)
			byField[field] = append(byField[field], c)
			continue
		}
		out = append(out, c)
	}
	for _, field := range sortedKeys(byField) {
		same := byField[field]
		if len(same) == 1 {
			out = append(out, same[0])
			continue
		}
		var values []any
		for _, c := range same {
			values = append(values, leafValues(c)...)
		}
		out = append(out, leaf(field, "in", values))
	}
	return out
}

package sandbox

import (
	"sort"
	"time"
)

// The backend's debug output (bk-iam pkg/logging/debug): with ?debug (any value) the v2 access
// checks add a "debug" tree beside code, message and data, the steps the decision point took for
// each action and what it read. The sandbox writes the parts a caller can rely on as the real
// backend does — each action's subject and its key, and the policy rows the backend's database
// query returned, {PK, SubjectPK, ExpressionPK, ExpiredAt}, in the innermost entry — and keeps the
// rest (times, step names, the merged expression, the rows' internal expressions) plausible, as
// recorded from a real IAM.

// debugEntry is one node of the tree (the backend's debug.Entry).
type debugEntry struct {
	Time      string            `json:"time"`
	Context   map[string]any    `json:"context"`
	Steps     []debugStep       `json:"steps"`
	Evals     map[string]string `json:"evals"`
	Error     string            `json:"error"`
	SubDebugs []*debugEntry     `json:"sub_debugs"`
}

type debugStep struct {
	Index int    `json:"index"`
	Name  string `json:"name"`
}

func newDebugEntry(now time.Time) *debugEntry {
	return &debugEntry{Time: now.UTC().Format(time.RFC3339Nano), Context: map[string]any{}, Steps: []debugStep{},
		Evals: map[string]string{}, SubDebugs: []*debugEntry{}}
}

func (e *debugEntry) step(names ...string) {
	for _, n := range names {
		e.Steps = append(e.Steps, debugStep{Index: len(e.Steps) + 1, Name: n})
	}
}

// The evaluation marks of a policy in an entry's evals.
const (
	evalPass    = "pass"
	evalNoPass  = "no pass"
	evalUnknown = "unknown"
)

// debugRow is a row the backend's policy query returned, with its subject's key.
type debugRow struct {
	p         *policy
	subjectPK int64
}

// actionTrace is what a route decided for one action, for its entry: the action (nil when unknown),
// the backend's error when it failed on the action or the resources, and for a query the condition
// it answered.
type actionTrace struct {
	id     string
	a      *Action
	fail   string
	answer expr
}

// actionEntry writes one action's entry as the backend's decision point does (pdp.Eval for auth,
// pdp.Query for the queries): the request, then one step per stage it reached. A subject IAM
// does not know stops the entry after "Fetch subject details", its attributes empty.
func (ac *accessCall) actionEntry(tr actionTrace) *debugEntry {
	s := ac.s
	e := newDebugEntry(s.now())
	subj := ac.body.Subject
	e.Context["system"] = ac.system
	e.Context["subject"] = map[string]any{"Type": subj.Type, "ID": subj.ID, "Attribute": map[string]any{"Attribute": map[string]any{}}}
	e.Context["action"] = map[string]any{"ID": tr.id, "Attribute": map[string]any{"Attribute": map[string]any{}}}
	e.Context["resources"] = debugResources(ac.body.Resources)
	e.Context["cacheEnabled"] = !ac.force
	query := ac.isQuery()
	e.step("Fetch action details")
	if tr.a == nil {
		e.Error = tr.fail
		return e
	}
	a := tr.a
	e.Context["action"] = debugAction(s.model, a)
	switch {
	case !query:
		e.step("Validate action resource")
	case ac.checksRemote():
		e.step("Validate action remote resource")
	}
	if tr.fail != "" {
		e.Error = tr.fail
		return e
	}
	e.step("Fetch subject details")
	pk, known := s.subjectPKLocked(subj)
	if !known {
		return e
	}
	e.Context["subject"] = map[string]any{"Type": subj.Type, "ID": subj.ID,
		"Attribute": map[string]any{"Attribute": map[string]any{"department": s.departmentPKsLocked(subj), "pk": pk}}}
	e.step("Get Effect AuthType Group PKs")
	abac, rbac := s.groupPKsLocked(ac.system, subj, ac.now)
	e.Context["abacGroupPks"] = abac
	e.Context["rbacGroupPks"] = rbac
	e.step("Query Policies")
	rows := s.debugRowsLocked(ac.system, a, subj, ac.now, ac.force)
	e.SubDebugs = append(e.SubDebugs, ac.policyQueryEntry(a, pk, rows))
	if len(rows) == 0 {
		return e
	}
	objects := make([]map[string]any, len(rows))
	for i, r := range rows {
		objects[i] = policyObject(a, r.p)
	}
	e.Context["policies"] = objects
	set := newResourceSet(a, ac.body.Resources)
	if query {
		e.step("Filter policies by eval resources")
		for _, r := range rows {
			mark := evalNoPass
			if ok, _ := partialRow(r.p, a, set, time.Unix(ac.now, 0)); ok {
				mark = evalPass
			}
			e.Evals[itoa64(r.p.BackendID)] = mark
		}
		if len(tr.answer) > 0 {
			e.Context["expression"] = tr.answer
		}
		return e
	}
	// Auth marks every row unknown, then the first that allows pass, or all no pass.
	conds := make([]expr, len(rows))
	for i, r := range rows {
		conds[i] = r.p.expression(a)
		e.Evals[itoa64(r.p.BackendID)] = evalUnknown
	}
	e.Context["expression"] = effectiveExpression(conds)
	e.step("Eval")
	for _, r := range rows {
		if rowAllows(r.p, a, ac.body.Resources, time.Unix(ac.now, 0)) {
			e.Evals[itoa64(r.p.BackendID)] = evalPass
			return e
		}
	}
	for _, r := range rows {
		e.Evals[itoa64(r.p.BackendID)] = evalNoPass
	}
	return e
}

// policyQueryEntry is the entry of the backend's policy query (prp): the rows with their internal
// expressions, then two entries of its own, the database's rows and the temporary policies (which
// the sandbox does not emulate: always none).
func (ac *accessCall) policyQueryEntry(a *Action, subjectPK int64, rows []debugRow) *debugEntry {
	s := ac.s
	actionPK := s.model.actionPK(ac.system, a.ID)
	e := newDebugEntry(s.now())
	e.step("query policy", "query temporary policy", "get action auth type")
	objects := make([]map[string]any, len(rows))
	for i, r := range rows {
		objects[i] = policyObject(a, r.p)
	}
	e.Context["actionAuthType"] = authTypeNumber(a)
	e.Context["cacheEnabled"] = !ac.force
	e.Context["effectPolicies"] = objects
	e.Context["policies"] = nil
	if len(rows) > 0 {
		e.Context["policies"] = objects
	}
	e.Context["temporaryPolicies"] = nil

	dao := newDebugEntry(s.now())
	dao.step("Get Effect Subject PKs", "Get Action PK", "List Policy by Subject Action")
	effect := make([]map[string]any, len(rows))
	noTypes := len(a.related) == 0
	for i, r := range rows {
		exprPK := r.p.BackendID // each row its own expression: a stable number, as the real one is
		if noTypes {
			exprPK = -1
		}
		effect[i] = map[string]any{"PK": r.p.BackendID, "SubjectPK": r.subjectPK, "ExpressionPK": exprPK, "ExpiredAt": r.p.ExpiredAt}
	}
	dao.Context["actionPK"] = actionPK
	dao.Context["effectPolicies"] = effect
	switch {
	case len(rows) == 0:
		dao.Context["got_no_policies"] = true
	case noTypes:
		dao.Context["without_resource_types"] = true
	default:
		dao.step("List Expression by PKs", "Sort and Uniq expressions")
		pks := make([]int64, len(rows))
		exprs := make([]map[string]any, len(rows))
		for i, r := range rows {
			pks[i] = r.p.BackendID
			text, sig := internalExpression(a, r.p)
			exprs[i] = map[string]any{"PK": r.p.BackendID, "Expression": text, "Signature": sig}
		}
		sort.Slice(exprs, func(i, j int) bool { return exprs[i]["PK"].(int64) < exprs[j]["PK"].(int64) })
		dao.Context["expressionPKs"] = pks
		dao.Context["expressions"] = exprs
	}
	temp := newDebugEntry(s.now())
	temp.step("Get Subject PK", "Get Action PK", "List ThinTemporary Policy By Subject Action", "thin temporary policies is empty so return")
	temp.Context["actionPK"] = actionPK
	temp.Context["subjectPK"] = subjectPK
	temp.Context["thinTemporaryPolicies"] = []any{}
	e.SubDebugs = append(e.SubDebugs, dao, temp)
	return e
}

// debugRowsLocked lists the rows the backend's policy query reads for subj and action: the rows of
// the subject and of the groups it reaches, unexpired by the route's test (rowUnexpired), in the
// order the database's index gives them (subject key, expiry, id; as recorded). Rows stored as
// RBAC relations are not among them: the backend reads those in a query of its own.
func (s *Server) debugRowsLocked(system string, a *Action, subj subject, now int64, force bool) []debugRow {
	var rows []debugRow
	for _, p := range s.effectiveRowsLocked(system, a.ID, subj, now, force) {
		if p.rbac(a) {
			continue
		}
		pk, _ := s.subjectPKLocked(subject{Type: p.Key.SubjectType, ID: p.Key.SubjectID})
		rows = append(rows, debugRow{p: p, subjectPK: pk})
	}
	sort.Slice(rows, func(i, j int) bool {
		ri, rj := rows[i], rows[j]
		if ri.subjectPK != rj.subjectPK {
			return ri.subjectPK < rj.subjectPK
		}
		if ri.p.ExpiredAt != rj.p.ExpiredAt {
			return ri.p.ExpiredAt < rj.p.ExpiredAt
		}
		return ri.p.BackendID < rj.p.BackendID
	})
	return rows
}

// groupPKsLocked lists the keys of the groups subj reaches that hold rows in system, split as the
// backend splits them by how those rows are stored: ABAC ([] when none) and RBAC (nil when none).
func (s *Server) groupPKsLocked(system string, subj subject, now int64) (abac, rbac []int64) {
	abac = []int64{}
	if subj.Type != "user" {
		return abac, nil
	}
	for _, g := range s.accessGroupsLocked(subj.ID, now) {
		var hasABAC, hasRBAC bool
		for k, p := range s.store.policies {
			if k.System == system && k.SubjectType == "group" && k.SubjectID == g {
				if p.rbac(s.model.systems[system].actions[k.Action]) {
					hasRBAC = true
				} else {
					hasABAC = true
				}
			}
		}
		pk, _ := s.subjectPKLocked(subject{Type: "group", ID: g})
		if hasABAC {
			abac = append(abac, pk)
		}
		if hasRBAC {
			rbac = append(rbac, pk)
		}
	}
	sort.Slice(abac, func(i, j int) bool { return abac[i] < abac[j] })
	sort.Slice(rbac, func(i, j int) bool { return rbac[i] < rbac[j] })
	return abac, rbac
}

// departmentPKsLocked are the keys of the departments IAM holds a user in (its own and their
// ancestors); [] for a group.
func (s *Server) departmentPKsLocked(subj subject) []int64 {
	out := []int64{}
	if subj.Type != "user" {
		return out
	}
	seen := map[int64]bool{}
	for _, k := range s.userSubjectsLocked(subj.ID) {
		if pk := s.model.departmentPK(k.ID); k.Type == "department" && pk > 0 && !seen[pk] {
			seen[pk] = true
			out = append(out, pk)
		}
	}
	return out
}

// debugAction is the action as the backend's decision point holds it once fetched: its related
// types each with its own system.
func debugAction(m *Model, a *Action) map[string]any {
	types := make([]map[string]string, len(a.related))
	for i, t := range a.related {
		types[i] = map[string]string{"System": t.System, "Type": t.Type}
	}
	return map[string]any{"ID": a.ID, "Attribute": map[string]any{"Attribute": map[string]any{
		"auth_type": authTypeNumber(a), "pk": m.actionPK(a.system, a.ID), "resource_type": types}}}
}

// authTypeNumber is the backend's number of an action's auth_type.
func authTypeNumber(a *Action) int {
	switch a.AuthType {
	case "rbac":
		return 2
	case "all":
		return 15
	}
	return 1
}

// debugResources writes the request's resources as the backend's evaluation holds them: the id
// among the attributes.
func debugResources(rs []accessResource) []map[string]any {
	out := make([]map[string]any, len(rs))
	for i, r := range rs {
		attr := map[string]any{}
		for k, v := range r.Attribute {
			attr[k] = v
		}
		attr["id"] = r.ID
		out[i] = map[string]any{"System": r.System, "Type": r.Type, "ID": r.ID, "Attribute": attr}
	}
	return out
}

// policyObject is a row as the backend's policy query holds it.
func policyObject(a *Action, p *policy) map[string]any {
	text, sig := internalExpression(a, p)
	return map[string]any{"Version": "1", "ID": p.BackendID, "Expression": text, "ExpressionSignature": sig, "ExpiredAt": p.ExpiredAt}
}

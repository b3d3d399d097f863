package sandbox

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"sort"
	"strconv"
	"strings"
)

// A group's custom permissions through the management API (the package doc of internal/bkiam,
// "The management API"): grant and revoke in the batch_path shape without subject, operate or
// expiry, a list in the normalised resource-group shape, the actions list, and the delete by
// action that deletes every custom policy of the group in the system (the SaaS's bug, unless the
// model's quirks turn it off). The policies are the authorization API's: one store, one policy
// per (system, group, action), whichever API granted it.

// groupPolicyBody is a grant or revoke body.
type groupPolicyBody struct {
	System  *string `json:"system"`
	Actions *[]struct {
		ID *string `json:"id"`
	} `json:"actions"`
	Resources *[]struct {
		System *string `json:"system"`
		Type   *string `json:"type"`
		Paths  *[][]struct {
			System *string `json:"system"`
			Type   *string `json:"type"`
			ID     *string `json:"id"`
			Name   *string `json:"name"`
		} `json:"paths"`
	} `json:"resources"`
}

// decodeGroupPolicy checks a grant or revoke body (withResources) or a delete-by-action body, and
// returns the system (the path's when absent or blank), the actions and the resources.
func decodeGroupPolicy(raw []byte, pathSystem string, withResources bool) (string, []string, []resourceReq, *saasError) {
	var b groupPolicyBody
	if json.Unmarshal(raw, &b) != nil {
		return "", nil, nil, badMgmtJSON()
	}
	var fe fieldErrors
	system := strings.TrimSpace(deref(b.System))
	if system == "" {
		system = pathSystem
	}
	var actions []string
	switch {
	case b.Actions == nil:
		fe.add("This field is required.", "actions")
	case len(*b.Actions) == 0:
		fe.add("This list may not be empty.", "actions")
	default:
		for i, a := range *b.Actions {
			charField(&fe, a.ID, false, 0, 0, "actions", i, "id")
			id := strings.TrimSpace(deref(a.ID))
			if slices.Contains(actions, id) {
				fe.add("actions must not repeat an id.", "actions")
			}
			actions = append(actions, id)
		}
	}
	var resources []resourceReq
	if withResources {
		if b.Resources == nil {
			// A list field without allow_null: null and absence are told apart.
			var fields map[string]json.RawMessage
			_ = json.Unmarshal(raw, &fields)
			if v, ok := fields["resources"]; ok && string(v) == "null" {
				fe.add("This field may not be null.", "resources")
			} else {
				fe.add("This field is required.", "resources")
			}
		} else {
			for i, r := range *b.Resources {
				charField(&fe, r.System, false, 0, 0, "resources", i, "system")
				charField(&fe, r.Type, false, 0, 0, "resources", i, "type")
				req := resourceReq{System: strings.TrimSpace(deref(r.System)), Type: strings.TrimSpace(deref(r.Type))}
				if r.Paths == nil {
					fe.add("This field is required.", "resources", i, "paths")
					continue
				}
				for j, p := range *r.Paths {
					if len(p) == 0 {
						fe.add("This list may not be empty.", "resources", i, "paths", j)
					}
					path := make([]Node, 0, len(p))
					for k, n := range p {
						charField(&fe, n.System, false, 0, 0, "resources", i, "paths", j, k, "system")
						charField(&fe, n.Type, false, 0, 0, "resources", i, "paths", j, k, "type")
						charField(&fe, n.ID, false, 0, 36, "resources", i, "paths", j, k, "id")
						if n.Name == nil {
							fe.add("This field is required.", "resources", i, "paths", j, k, "name")
						}
						path = append(path, Node{System: strings.TrimSpace(deref(n.System)), Type: strings.TrimSpace(deref(n.Type)),
							ID: strings.TrimSpace(deref(n.ID))})
					}
					req.Paths = append(req.Paths, path)
				}
				resources = append(resources, req)
			}
		}
	}
	if !fe.empty() {
		return "", nil, nil, validationErr(fe)
	}
	return system, actions, resources, nil
}

// groupPolicySpecs checks the actions and resources against the model, as a batch_path grant is.
func (mc *mgmtCall) groupPolicySpecs(system string, actions []string, resources []resourceReq) (*System, []grantSpec, *saasError) {
	sys := mc.s.model.systems[system]
	if sys == nil {
		return nil, nil, mgmtError(codeInvalidArgs, fmt.Sprintf("system[%s] not exists", system))
	}
	specs, e := mc.s.buildSpecs(sys, &instanceReq{System: system, Actions: actions, Resources: resources})
	if e != nil {
		return nil, nil, e // named already
	}
	return sys, specs, nil
}

// checkScope refuses, for a grade manager's group, what its authorization scope does not cover:
// 400 1902412, as the SaaS re-raises the scope check's FORBIDDEN. A system manager's group may be
// granted anything of its system.
func (mc *mgmtCall) checkScope(g *mgmtGroup, system string, actions []string, resources []resourceReq) *saasError {
	refuse := func(detail string) *saasError {
		return validationText(fmt.Sprintf("系统：%s 模板：0 校验错误：%s", system, detail))
	}
	if g.GradeManager == 0 {
		if system != g.System {
			return refuse(fmt.Sprintf("system[%s] is not the system manager's system[%s]", system, g.System))
		}
		return nil
	}
	gm := mc.ms.gms[g.GradeManager]
	for _, a := range actions {
		var scope *mgmtScope
		for i := range gm.Scopes {
			if gm.Scopes[i].System == system && slices.Contains(gm.Scopes[i].Actions, a) {
				scope = &gm.Scopes[i]
			}
		}
		if scope == nil {
			return refuse(fmt.Sprintf("action[%s] is outside the grade manager's authorization scope", a))
		}
		for _, r := range resources {
			for _, p := range r.Paths {
				if !scopeCovers(scope, r, p) {
					return refuse(fmt.Sprintf("the instance %s of action[%s] is outside the grade manager's authorization scope", pathKey(p), a))
				}
			}
		}
	}
	return nil
}

// scopeCovers reports whether a scope's paths of r's type cover p, as IAM's SaaS decides it: by
// string prefix. Both paths become "/type,id/…/" (no systems); a scope path ending in ",*/" is cut
// to a prefix there, and one without a trailing * must be the grant's path or a prefix of it. So a
// one-node "*" admits grants of one node only (/host,*/ admits /host,5/, not /biz,2/host,5/), and a
// "*" above the last node is not a wildcard (/biz,*/host,*/ admits no real grant). A type with no
// paths at all is the unlimited scope: every instance of it.
func scopeCovers(scope *mgmtScope, r resourceReq, p []Node) bool {
	grant := scopePath(p)
	for _, st := range scope.Resources {
		if st.System != r.System || st.Type != r.Type {
			continue
		}
		if len(st.Paths) == 0 {
			return true
		}
		for _, sp := range st.Paths {
			if len(sp) == 0 {
				continue
			}
			prefix := scopePath(sp)
			if strings.HasSuffix(prefix, ",*/") {
				prefix = strings.TrimSuffix(prefix, "*/")
			}
			if strings.HasPrefix(grant, prefix) {
				return true
			}
		}
	}
	return false
}

// scopePath is a path as IAM's scope check writes it: "/type,id/…/", without systems.
func scopePath(p []Node) string {
	var b strings.Builder
	b.WriteString("/")
	for _, n := range p {
		b.WriteString(n.Type + "," + n.ID + "/")
	}
	return b.String()
}

func groupSubject(g *mgmtGroup) subject { return subject{Type: "group", ID: itoa64(g.ID)} }

func itoa64(n int64) string { return fmt.Sprint(n) }

// grantGroupPolicies merges the body into the group's policies (permanent, like every group
// policy). The store commits (and saves) the policies itself.
func (mc *mgmtCall) grantGroupPolicies(g *mgmtGroup) (any, bool, *saasError) {
	system, actions, resources, e := decodeGroupPolicy(mc.raw, mc.system, true)
	if e != nil {
		return nil, false, e
	}
	sys, specs, e := mc.groupPolicySpecs(system, actions, resources)
	if e != nil {
		return nil, false, e
	}
	if e := mc.checkScope(g, system, actions, resources); e != nil {
		return nil, false, e
	}
	if _, e := mc.s.store.grantLocked(sys.ID, groupSubject(g), specs, permanentExpiredAt, permanentExpiredAt, mc.s.model.Limits); e != nil {
		return nil, false, e // named already
	}
	return map[string]any{}, false, nil
}

// revokeGroupPolicies subtracts the body from the group's policies; an emptied policy goes.
func (mc *mgmtCall) revokeGroupPolicies(g *mgmtGroup) (any, bool, *saasError) {
	system, actions, resources, e := decodeGroupPolicy(mc.raw, mc.system, true)
	if e != nil {
		return nil, false, e
	}
	sys, specs, e := mc.groupPolicySpecs(system, actions, resources)
	if e != nil {
		return nil, false, e
	}
	if _, e := mc.s.store.revokeLocked(sys.ID, groupSubject(g), specs); e != nil {
		return nil, false, e // named already
	}
	return map[string]any{}, false, nil
}

// deleteGroupPolicies is DELETE …/actions/-/policies/: it deletes the custom policies of the given
// actions, or, as the SaaS does (its action filter is evaluated and thrown away), every custom
// policy of the group in the system unless the model's quirks turn that off.
func (mc *mgmtCall) deleteGroupPolicies(g *mgmtGroup) (any, bool, *saasError) {
	system, actions, _, e := decodeGroupPolicy(mc.raw, mc.system, false)
	if e != nil {
		return nil, false, e
	}
	all := mc.s.model.Quirks.groupPolicyDeleteIgnoresActions()
	st := mc.s.store
	t := st.begin()
	for k := range st.policies {
		if k.System == system && k.SubjectType == "group" && k.SubjectID == itoa64(g.ID) && k.custom() &&
			(all || slices.Contains(actions, k.Action)) {
			t.put(k, nil)
		}
	}
	if e := t.commit(); e != nil {
		return nil, false, e
	}
	return map[string]any{}, false, nil
}

// groupPolicyActions is GET …/policies/-/actions/: one {id} per custom policy in the path system.
func (mc *mgmtCall) groupPolicyActions(g *mgmtGroup) (any, bool, *saasError) {
	out := []map[string]string{}
	for _, p := range mc.groupPolicies(g) {
		out = append(out, map[string]string{"id": p.Key.Action})
	}
	return out, false, nil
}

// groupPolicies are the group's custom policies in the path system, by action.
func (mc *mgmtCall) groupPolicies(g *mgmtGroup) []*policy {
	var out []*policy
	for k, p := range mc.s.store.policies {
		if k.System == mc.system && k.SubjectType == "group" && k.SubjectID == itoa64(g.ID) && k.custom() {
			out = append(out, p)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Key.Action < out[j].Key.Action })
	return out
}

// listGroupPolicies is GET groups/{id}/policies/: the group's custom policies in the path system in
// the SaaS's normalised shape, resource groups with fresh ids on every read (the SaaS's are made
// on every grant), paths grouped into instances by the type of their last node that is not "*".
func (mc *mgmtCall) listGroupPolicies(g *mgmtGroup) (any, bool, *saasError) {
	out := []map[string]any{}
	sys := mc.s.model.systems[mc.system]
	for _, p := range mc.groupPolicies(g) {
		var a *Action
		if sys != nil {
			a = sys.actions[p.Key.Action]
		}
		name, authType := "", "abac"
		if a != nil {
			name = a.Name
			if a.AuthType != "" {
				authType = a.AuthType
			}
		}
		out = append(out, map[string]any{"id": p.Key.Action, "policy_id": p.ID, "backend_policy_id": 0,
			"expired_at": p.ExpiredAt, "expired_display": "永久", "auth_type": authType, "type": "", "name": name,
			"description": "", "sensitivity_level": "L1", "resource_groups": mc.resourceGroups(p, a)})
	}
	return out, false, nil
}

func (mc *mgmtCall) resourceGroups(p *policy, a *Action) []map[string]any {
	if a == nil || len(a.related) == 0 {
		return []map[string]any{{"id": newUUID(), "environments": []any{}, "related_resource_types": []any{}}}
	}
	// Each related type under its own system, which for another system's type is not the policy's.
	rrt := func(t typeRef, paths map[string][]Node) map[string]any {
		condition := []any{}
		if len(paths) > 0 {
			condition = append(condition, map[string]any{"id": newUUID(), "attributes": []any{}, "instances": instancesOf(paths)})
		}
		return map[string]any{"system_id": t.System, "type": t.Type, "condition": condition}
	}
	switch {
	case p.Any:
		var types []any
		for _, t := range a.related {
			types = append(types, rrt(t, nil))
		}
		return []map[string]any{{"id": newUUID(), "environments": []any{}, "related_resource_types": types}}
	case !p.Combined:
		return []map[string]any{{"id": newUUID(), "environments": []any{}, "related_resource_types": []any{rrt(a.related[0], p.Paths)}}}
	}
	out := []map[string]any{}
	for _, gr := range p.Groups {
		var types []any
		for _, t := range a.related {
			types = append(types, rrt(t, gr[t.Type]))
		}
		out = append(out, map[string]any{"id": newUUID(), "environments": []any{}, "related_resource_types": types})
	}
	return out
}

// instancesOf groups paths by the type of their last node whose id is not "*".
func instancesOf(paths map[string][]Node) []any {
	byType := map[string][]any{}
	var types []string
	for _, key := range slices.Sorted(maps.Keys(paths)) {
		p := paths[key]
		typ := p[len(p)-1].Type
		for i := len(p) - 1; i >= 0; i-- {
			if p[i].ID != "*" {
				typ = p[i].Type
				break
			}
		}
		nodes := make([]any, 0, len(p))
		for _, n := range p {
			nodes = append(nodes, map[string]any{"system_id": n.System, "type": n.Type, "type_name": n.Type, "id": n.ID, "name": ""})
		}
		if _, seen := byType[typ]; !seen {
			types = append(types, typ)
		}
		byType[typ] = append(byType[typ], nodes)
	}
	out := make([]any, 0, len(types))
	for _, typ := range types {
		out = append(out, map[string]any{"type": typ, "name": typ, "path": byType[typ]})
	}
	return out
}

// resourceReqs is the scope's resource types as a grant's resources.
func (sc mgmtScope) resourceReqs() []resourceReq {
	out := make([]resourceReq, len(sc.Resources))
	for i, r := range sc.Resources {
		out[i] = resourceReq(r)
	}
	return out
}

// syncGroupPolicies are the changes that make a grade manager's sync group hold its authorization
// scope, as the SaaS's create and update do: the group's custom policies of actions that a system
// in the scope no longer lists are deleted (policies of systems the scope no longer names stay),
// then each scope is merged in as a grant (permanent; nothing already held is taken away, so a
// narrowed instance list does not narrow the group). specs are the scopes' checked grants.
func (mc *mgmtCall) syncGroupPolicies(gm *gradeManager, g *mgmtGroup, specs [][]grantSpec) ([]*policyPut, *saasError) {
	subj := groupSubject(g)
	inScope := map[string]map[string]bool{}
	for _, sc := range gm.Scopes {
		if inScope[sc.System] == nil {
			inScope[sc.System] = map[string]bool{}
		}
		for _, a := range sc.Actions {
			inScope[sc.System][a] = true
		}
	}
	work := map[policyKey]*policy{}
	var order []policyKey
	put := func(k policyKey, p *policy) {
		if _, seen := work[k]; !seen {
			order = append(order, k)
		}
		work[k] = p
	}
	var outOfScope []policyKey
	for k := range mc.s.store.policies {
		if k.SubjectType == subj.Type && k.SubjectID == subj.ID && k.custom() && inScope[k.System] != nil && !inScope[k.System][k.Action] {
			outOfScope = append(outOfScope, k)
		}
	}
	sort.Slice(outOfScope, func(i, j int) bool {
		return outOfScope[i].System+"/"+outOfScope[i].Action < outOfScope[j].System+"/"+outOfScope[j].Action
	})
	for _, k := range outOfScope {
		put(k, nil)
	}
	held := func(k policyKey) *policy {
		if p, ok := work[k]; ok {
			return p
		}
		return mc.s.store.policies[k]
	}
	for i, sc := range gm.Scopes {
		updated, e := mergeGrants(held, sc.System, subj, specs[i], permanentExpiredAt, permanentExpiredAt, mc.s.model.Limits)
		if e != nil {
			return nil, e
		}
		for _, p := range updated {
			put(p.Key, p)
		}
	}
	out := make([]*policyPut, len(order))
	for i, k := range order {
		out[i] = &policyPut{key: k, policy: work[k]}
	}
	return out, nil
}

// widenScopeLocked widens the authorization scope of the grade manager of group (an id of the
// authorization API's subject) to cover a grant of specs in system, as the SaaS's open
// authorization API does before a grant to a group (incr_update_auth_scope: seen on the real IAM,
// a batch_instance grant to one group let the management API grant the same instance to the grade
// manager's other groups, and the revoke left it so): an action no scope names gets a scope of its
// own with the grant's paths, an uncovered path joins the first scope naming the action. A group
// of the model or of a system manager has no scope to widen. It returns what restores the scopes
// (a save that fails changes nothing), or nil when nothing changed. st.mu is held.
func (st *store) widenScopeLocked(system, group string, specs []grantSpec) (restore func()) {
	id, err := strconv.ParseInt(group, 10, 64)
	if err != nil {
		return nil
	}
	g := st.mgmt.groups[id]
	if g == nil || g.GradeManager == 0 {
		return nil
	}
	gm := st.mgmt.gms[g.GradeManager]
	if gm == nil {
		return nil
	}
	old := copyScopes(gm.Scopes)
	changed := false
	for _, sp := range specs {
		at := -1
		for i := range gm.Scopes {
			if gm.Scopes[i].System == system && slices.Contains(gm.Scopes[i].Actions, sp.action.ID) {
				at = i
				break
			}
		}
		// A scope's resource types are named by their own systems, as a grant names them.
		if at < 0 {
			sc := mgmtScope{System: system, Actions: []string{sp.action.ID}}
			for ti, t := range sp.action.related {
				sc.Resources = append(sc.Resources, mgmtScopeType{System: t.System, Type: t.Type, Paths: slices.Clone(sp.perType[ti])})
			}
			gm.Scopes = append(gm.Scopes, sc)
			changed = true
			continue
		}
		for ti, t := range sp.action.related {
			r := resourceReq{System: t.System, Type: t.Type}
			for _, p := range sp.perType[ti] {
				if scopeCovers(&gm.Scopes[at], r, p) {
					continue
				}
				sc := &gm.Scopes[at]
				k := slices.IndexFunc(sc.Resources, func(st mgmtScopeType) bool { return st.System == t.System && st.Type == t.Type })
				if k < 0 {
					sc.Resources = append(sc.Resources, mgmtScopeType{System: t.System, Type: t.Type})
					k = len(sc.Resources) - 1
				}
				sc.Resources[k].Paths = append(sc.Resources[k].Paths, p)
				changed = true
			}
		}
	}
	if !changed {
		gm.Scopes = old
		return nil
	}
	return func() { gm.Scopes = old }
}

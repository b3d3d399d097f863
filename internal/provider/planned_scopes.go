package provider

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"

	"github.com/hashicorp/terraform-plugin-go/tftypes"

	"github.com/bkiam/terraform-provider-bkiam/internal/bkiam"
	"github.com/bkiam/terraform-provider-bkiam/internal/protocol"
)

// The plan-time scope check of bkiam_group_permission. IAM refuses at apply
// a group permission outside the authorization scope of the group's grade
// manager, and its API offers no way to check first: no route leads from a
// group to its grade manager, and a grade manager's read leaves the scope
// out. What this process plans is known, though: bkiam_grade_manager and
// bkiam_group record here, as they are planned, each grade manager's scope
// and each group's grade manager, and a group permission planned after them
// (its group_id refers to the group, which refers to the grade manager, so
// Terraform plans them first) is checked against the scope as the plan
// leaves it. Where the chain is not known (a literal group_id, a grade
// manager outside the configuration), the check is skipped and IAM's answer
// at apply names the fix. Only what a plan decided is recorded, never what
// a refresh read, so a scope widened by the same plan is the one checked.
type plannedScopes struct {
	mu            sync.Mutex
	gradeManagers map[string]plannedGradeManager // by grade manager id
	groups        map[string]string              // group id → grade manager id
}

type plannedGradeManager struct {
	name   string
	scopes []bkiam.AuthorizationScope
}

func newPlannedScopes() *plannedScopes {
	return &plannedScopes{gradeManagers: map[string]plannedGradeManager{}, groups: map[string]string{}}
}

// setGradeManager records a grade manager's planned scope; a nil scopes
// (not known, or destroyed) forgets it.
func (p *plannedScopes) setGradeManager(id, name string, scopes []bkiam.AuthorizationScope) {
	if p == nil || id == "" {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if scopes == nil {
		delete(p.gradeManagers, id)
		return
	}
	p.gradeManagers[id] = plannedGradeManager{name: name, scopes: scopes}
}

// setGroup records a group's planned grade manager.
func (p *plannedScopes) setGroup(id, gradeManager string) {
	if p == nil || id == "" || gradeManager == "" {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.groups[id] = gradeManager
}

// of is the planned grade manager of a group, if this process planned both.
func (p *plannedScopes) of(group string) (id string, gm plannedGradeManager, ok bool) {
	if p == nil {
		return "", plannedGradeManager{}, false
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	id, ok = p.groups[group]
	if ok {
		gm, ok = p.gradeManagers[id]
	}
	return id, gm, ok
}

// checkPlannedScope refuses, at plan, the actions and instances of a group
// permission that its grade manager's planned scope does not admit (see
// plannedScopes), naming the scope and the fix.
func checkPlannedScope(data *providerData, m groupPermissionModel, diags *protocol.Diagnostics) {
	group, okG := m.GroupID.Get()
	system, okS := m.System.Get()
	actions, okA := protocol.StringsOf(m.Actions)
	entries, okR := m.Resources.Get()
	if data == nil || !okG || !okS || !okA || !okR {
		return
	}
	gmID, gm, ok := data.plannedScopes.of(group)
	if !ok {
		return
	}
	who := fmt.Sprintf("grade manager %s (%q)", gmID, gm.name)
	for _, action := range actions {
		var in []bkiam.AuthorizationScope
		for _, sc := range gm.scopes {
			if sc.System == system && slices.ContainsFunc(sc.Actions, func(a bkiam.Action) bool { return a.ID == action }) {
				in = append(in, sc)
			}
		}
		if len(in) == 0 {
			diags.AddAttributeError(protocol.Root("actions").WithElementKeyValue(tftypes.NewValue(tftypes.String, action)), "Outside the grade manager's scope",
				fmt.Sprintf("The group's %s, as this plan leaves it, has no authorization scope of %s with the action %q, and IAM "+
					"refuses a group permission outside it. Add %q to an authorization_scopes entry of system %q, or remove it here.",
					who, system, action, action, system))
			continue
		}
		for i, e := range entries {
			entry, _ := e.Get()
			rs, okRS := entry.System.Get()
			typ, okT := entry.Type.Get()
			instances, okI := entry.Instances.Get()
			if !okRS || !okT || !okI {
				continue
			}
			scopePaths, typed := scopeOfType(in, rs, typ)
			at := protocol.Root("resources").WithElementKeyInt(i).WithAttributeName("instances")
			for _, key := range slices.Sorted(maps.Keys(instances)) {
				nodes := []bkiam.PathNode{{System: rs, Type: typ, ID: key}}
				if strings.HasPrefix(key, "/") {
					var err error
					if nodes, err = parsePathKey(key); err != nil {
						continue // refused by validation
					}
				}
				if typed && bkiam.ScopeCovers(scopePaths, nodes) {
					continue
				}
				diags.AddAttributeError(at.WithElementKeyString(key), "Outside the grade manager's scope",
					fmt.Sprintf("The instance %q of %s/%s for the action %q is outside the authorization scope of the group's %s, "+
						"as this plan leaves it, and IAM would refuse it. %s IAM compares the instance's path (%s) with the "+
						"scope's by string prefix, a trailing * cut: { id = \"*\" } admits instances given by their id alone, "+
						"and only all_instances = true admits every instance. Widen the grade manager's authorization_scopes, or "+
						"grant less.", key, rs, typ, action, who, describeScope(typed, scopePaths), bkiam.ScopePath(nodes)))
			}
		}
	}
}

// scopeOfType gathers the paths the scopes admit of one resource type: nil
// with typed true is the unlimited scope (some scope names the type with no
// paths); typed false means no scope names the type.
func scopeOfType(scopes []bkiam.AuthorizationScope, system, typ string) (paths [][]bkiam.PathNode, typed bool) {
	for _, sc := range scopes {
		for _, r := range sc.Resources {
			if r.System != system || r.Type != typ {
				continue
			}
			if len(r.Paths) == 0 {
				return nil, true
			}
			paths, typed = append(paths, r.Paths...), true
		}
	}
	return paths, typed
}

// describeScope says what a scope holds of one resource type.
func describeScope(typed bool, paths [][]bkiam.PathNode) string {
	if !typed {
		return "Its scope for the action names no instance of this type."
	}
	shown := make([]string, 0, min(len(paths), 5))
	for _, p := range paths[:min(len(paths), 5)] {
		shown = append(shown, bkiam.ScopePath(p))
	}
	more := ""
	if len(paths) > 5 {
		more = fmt.Sprintf(" and %d more", len(paths)-5)
	}
	return fmt.Sprintf("Its scope for the type holds %s%s.", strings.Join(shown, ", "), more)
}

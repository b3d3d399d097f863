package management

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/hashicorp/terraform-plugin-go/tftypes"

	"github.com/bkiam/terraform-provider-bkiam/internal/bkiam"
	"github.com/bkiam/terraform-provider-bkiam/internal/conns"
	"github.com/bkiam/terraform-provider-bkiam/internal/protocol"
	"github.com/bkiam/terraform-provider-bkiam/internal/verify"
)

// checkPlannedScope refuses, at plan, the actions and instances of a group
// permission that its grade manager's planned scope does not admit (see
// plannedScopes), naming the scope and the fix.
func checkPlannedScope(data *conns.Data, m GroupPermissionModel, diags *protocol.Diagnostics) {
	group, okG := m.GroupID.Get()
	system, okS := m.System.Get()
	actions, okA := protocol.StringsOf(m.Actions)
	entries, okR := m.Resources.Get()
	if data == nil || !okG || !okS || !okA || !okR {
		return
	}
	gmID, gm, ok := data.PlannedScopes.Of(group)
	if !ok {
		return
	}
	who := fmt.Sprintf("grade manager %s (%q)", gmID, gm.Name)
	for _, action := range actions {
		var in []bkiam.AuthorizationScope
		for _, sc := range gm.Scopes {
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
			scopePaths, typed := bkiam.ScopeOfType(in, rs, typ)
			at := protocol.Root("resources").WithElementKeyInt(i).WithAttributeName("instances")
			for _, key := range slices.Sorted(maps.Keys(instances)) {
				nodes := []bkiam.PathNode{{System: rs, Type: typ, ID: key}}
				if strings.HasPrefix(key, "/") {
					var err error
					if nodes, err = verify.ParsePath(key); err != nil {
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

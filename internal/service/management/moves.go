package management

import (
	"fmt"
	"strings"

	"github.com/bkiam/terraform-provider-bkiam/internal/bkiam"
	"github.com/bkiam/terraform-provider-bkiam/internal/protocol"
	"github.com/bkiam/terraform-provider-bkiam/internal/service/authz"
)

// A group's custom policy in a system is one thing in IAM, whichever API
// writes it: bkiam_instance_grant with a group as subject (the
// authorization API) and bkiam_group_permission (the management API)
// describe it alike, with the same actions, resources and private state.
// So a moved block between the two only renames the object in state: it
// sends IAM nothing, and the next plan shows only what the configuration
// changes (TestAccMoveInstanceGrantToGroupPermission).

// Moves are the moved blocks across types the provider takes.
func Moves() []protocol.Move {
	return []protocol.Move{
		protocol.NewMove("bkiam_instance_grant", "bkiam_group_permission", "a grant to a group",
			authz.InstanceGrant{}.Decode, GroupPermission{}.Encode, permissionFromGrant),
		protocol.NewMove("bkiam_group_permission", "bkiam_instance_grant", "any group permission",
			GroupPermission{}.Decode, authz.InstanceGrant{}.Encode, grantFromPermission),
	}
}

// permissionFromGrant is a group's instance grant as a group permission.
// The management API reaches the group through the system of the
// actions, as group_system unset says; the policy ids, which the
// permission does not show, are dropped.
func permissionFromGrant(g authz.InstanceGrantModel, diags *protocol.Diagnostics) (GroupPermissionModel, bool) {
	subject, _ := g.Subject.Get()
	typ, _ := subject.Type.Get()
	id, _ := subject.ID.Get()
	if typ != bkiam.SubjectGroup {
		diags.AddError("Unsupported move", fmt.Sprintf("A bkiam_group_permission takes the state of a bkiam_instance_grant "+
			"only when its subject is a group; this one grants %s %q. A user's grants stay bkiam_instance_grant.", typ, id))
		return GroupPermissionModel{}, false
	}
	if g.Actions.IsNull() || g.Resources.IsNull() {
		system, _ := g.System.Get()
		diags.AddError("Unsupported move", fmt.Sprintf("This bkiam_instance_grant of group %s in %s was imported without its actions "+
			"and holds nothing known yet, so it names no permission to move. Remove it from state (a removed block with destroy "+
			"= false, or terraform state rm) and import the bkiam_group_permission by %s/%s/ACTION[,ACTION…].", id, system, system, id))
		return GroupPermissionModel{}, false
	}
	m := GroupPermissionModel{
		System: g.System, GroupID: subject.ID, Actions: g.Actions, Resources: g.Resources, Timeouts: g.Timeouts,
	}
	m.ID = permissionID(m)
	return m, true
}

// grantFromPermission is a group permission as an instance grant to the
// group, which the authorization API reaches in the system of the
// actions (group_system routed only the management API's calls). Group
// policies never expire; the policy ids are unknown to the permission,
// and so empty, as after an import, until the next grant.
func grantFromPermission(p GroupPermissionModel, diags *protocol.Diagnostics) (authz.InstanceGrantModel, bool) {
	g := p.asGrant()
	system, _ := p.System.Get()
	group, _ := p.GroupID.Get()
	if p.Actions.IsNull() || p.Resources.IsNull() {
		diags.AddError("Unsupported move", fmt.Sprintf("This bkiam_group_permission of group %s in %s holds nothing known yet, so "+
			"it names no grant to move. Apply it once before moving it.", group, system))
		return authz.InstanceGrantModel{}, false
	}
	entries, _ := p.Resources.Get()
	for _, e := range entries {
		r, _ := e.Get()
		instances, _ := r.Instances.Get()
		for key := range instances {
			if strings.HasPrefix(key, "/") {
				diags.AddError("Unsupported move", fmt.Sprintf("This bkiam_group_permission of group %s names the instance %q by "+
					"its path, which a bkiam_instance_grant cannot: it names instances by id only. Keep it a "+
					"bkiam_group_permission.", group, key))
				return authz.InstanceGrantModel{}, false
			}
		}
	}
	if via, ok := p.managedBy(); ok && via != system {
		diags.AddWarning("The grant's calls go through "+system,
			fmt.Sprintf("This bkiam_group_permission of group %s reached it through %s's management API (group_system). A "+
				"bkiam_instance_grant calls the authorization API of %s, the system of its actions: its next change fails "+
				"unless the app is a client of %s.", group, via, system, system))
	}
	g.ID = protocol.Known(system + "/" + bkiam.SubjectGroup + "/" + group)
	g.Policies = protocol.Known(map[string]protocol.Value[int64]{})
	return g, true
}

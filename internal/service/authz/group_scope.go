package authz

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/bkiam/terraform-provider-bkiam/internal/bkiam"
	"github.com/bkiam/terraform-provider-bkiam/internal/conns"
	"github.com/bkiam/terraform-provider-bkiam/internal/grantplan"
	"github.com/bkiam/terraform-provider-bkiam/internal/protocol"
)

// What IAM changes beside a grant to a group. A grant through the
// authorization API (batch_instance, this resource) to a user group also
// widens the authorization scope of the group's grade manager to cover
// what it grants, when the scope does not cover it yet, and no revoke
// narrows it back (the SaaS's open authorization API calls
// incr_update_auth_scope; seen on the real IAM: after a batch_instance
// grant of host_view on h2 to one group, the management API granted h2 to
// another group of the grade manager, which it had refused before). The
// grade manager's members may then grant those instances to any group of
// theirs. bkiam_group_permission grants through the management API,
// which checks the scope instead. Nothing else is granted beside a grant:
// the related actions (依赖操作) are added by the web UI, not by the
// authorization or management APIs.

// widensScope warns that a plan granting actions to a group may widen its
// grade manager's authorization scope, unless this process planned that
// grade manager and its scope covers the grant.
func widensScope(data *conns.Data, next GrantView, actions []string, diags *protocol.Diagnostics) {
	_, gm, known := data.PlannedScopes.Of(next.Subject.ID)
	if known && scopeCoversGrant(gm.Scopes, next.System, actions, next.Grant.Resources) {
		return
	}
	diags.AddAttributeWarning(protocol.Root("subject"), "Group grant widens its grade manager's scope",
		fmt.Sprintf("A grant to a user group through IAM's authorization API, as this resource grants, also widens the "+
			"authorization scope of the group's grade manager to cover %s when it does not cover it yet, and no revoke narrows it "+
			"back: the grade manager's members may then grant it to any group of theirs. To keep the scope as it is, grant the "+
			"group with bkiam_group_permission (IAM's management API, which checks the scope instead; a moved block turns this "+
			"resource into one without a call).", strings.Join(actions, ", ")))
}

// scopeCoversGrant reports whether scopes admit every action on every
// instance of resources, by IAM's prefix rule (bkiam.ScopeCovers); a
// combined resource, every type of it.
func scopeCoversGrant(scopes []bkiam.AuthorizationScope, system string, actions []string, resources []grantplan.Resource) bool {
	for _, action := range actions {
		var in []bkiam.AuthorizationScope
		for _, sc := range scopes {
			if sc.System == system && slices.ContainsFunc(sc.Actions, func(a bkiam.Action) bool { return a.ID == action }) {
				in = append(in, sc)
			}
		}
		if len(in) == 0 {
			return false
		}
		for _, r := range resources {
			paths, typed := bkiam.ScopeOfType(in, r.System, r.Type)
			if !typed {
				return false
			}
			for _, id := range slices.Sorted(maps.Keys(r.Instances)) {
				if !bkiam.ScopeCovers(paths, []bkiam.PathNode{{System: r.System, Type: r.Type, ID: id}}) {
					return false
				}
			}
		}
	}
	return true
}

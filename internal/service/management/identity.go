package management

import (
	"cmp"
	"context"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/resource/identityschema"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/bkiam/terraform-provider-bkiam/internal/protocol"
)

// The identities of the management API's resources (see DESIGN.md,
// "Resource identity").

func requiredString(description string) identityschema.StringAttribute {
	return identityschema.StringAttribute{Description: description, RequiredForImport: true}
}

// IdentitySchema: a group's members are named by the group, which the
// system manages.
func (GroupMembers) IdentitySchema(context.Context) identityschema.Schema {
	return identityschema.Schema{Attributes: map[string]identityschema.Attribute{
		"system":   requiredString("The system whose management API manages the group."),
		"group_id": requiredString("The group's numeric id."),
	}}
}

func (GroupMembers) IdentityOf(m GroupMembersModel) protocol.Identity {
	return protocol.Identity{"system": m.System, "group_id": m.GroupID}
}

func (GroupMembers) ImportID(id protocol.Identity, _ *protocol.Diagnostics) string {
	return id.Str("system") + "/" + id.Str("group_id")
}

func (GroupMembers) MutableIdentity() bool { return false }

// IdentitySchema: a group permission is what a group holds of some
// actions of a system: IAM keeps a policy per group and action. The
// actions change in place, so the identity follows them
// (MutableIdentity).
func (GroupPermission) IdentitySchema(context.Context) identityschema.Schema {
	return identityschema.Schema{Attributes: map[string]identityschema.Attribute{
		"system":   requiredString("The system of the actions, e.g. `bk_cmdb`."),
		"group_id": requiredString("The group's numeric id."),
		"actions": identityschema.ListAttribute{ElementType: types.StringType, RequiredForImport: true,
			Description: "The actions, sorted: the import reads what the group holds of them."},
	}}
}

func (GroupPermission) IdentityOf(m GroupPermissionModel) protocol.Identity {
	return protocol.Identity{"system": m.System, "group_id": m.GroupID, "actions": protocol.SortedStrings(m.Actions)}
}

func (GroupPermission) ImportID(id protocol.Identity, _ *protocol.Diagnostics) string {
	return id.Str("system") + "/" + id.Str("group_id") + "/" + strings.Join(id.List("actions"), ",")
}

func (GroupPermission) MutableIdentity() bool { return true }

var (
	_ resource.ResourceWithIdentity = &gradeManagerResource{}
	_ resource.ResourceWithIdentity = &groupResource{}
)

// IdentitySchema: a person's memberships are named by the system, the
// person and the groups the resource lists, which change in place
// (MutableIdentity): the resource holds only those groups, so an import
// names them.
func (UserGroups) IdentitySchema(context.Context) identityschema.Schema {
	return identityschema.Schema{Attributes: map[string]identityschema.Attribute{
		"system":      requiredString("The system whose management API manages the groups."),
		"member_type": requiredString("`user` or `department`."),
		"member_id":   requiredString("The username, or the department's numeric id."),
		"groups": identityschema.ListAttribute{ElementType: types.StringType, RequiredForImport: true,
			Description: "The groups' numeric ids, sorted: the import reads the person's membership in them."},
	}}
}

func (UserGroups) IdentityOf(m UserGroupsModel) protocol.Identity {
	k := memberOf(m)
	id := protocol.Identity{"system": m.System, "member_type": protocol.Unknown[string](), "member_id": protocol.Unknown[string]()}
	if k.Type != "" {
		id["member_type"], id["member_id"] = protocol.Known(k.Type), protocol.Known(k.ID)
	}
	var groups protocol.StringsValue
	if elems, ok := m.Groups.Get(); ok {
		ids := slices.Collect(maps.Keys(elems))
		slices.SortFunc(ids, func(a, b string) int { return cmp.Compare(groupOrder(a), groupOrder(b)) })
		groups = protocol.KnownStrings(ids)
	} else {
		groups = protocol.Unknown[[]protocol.StringValue]()
	}
	id["groups"] = groups
	return id
}

// groupOrder sorts group ids by number.
func groupOrder(id string) int64 {
	n, _ := strconv.ParseInt(id, 10, 64)
	return n
}

func (UserGroups) ImportID(id protocol.Identity, _ *protocol.Diagnostics) string {
	return id.Str("system") + "/" + id.Str("member_type") + "/" + id.Str("member_id") + "/" + strings.Join(id.List("groups"), ",")
}

func (UserGroups) MutableIdentity() bool { return true }

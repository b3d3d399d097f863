package management

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"iter"
	"maps"
	"slices"
	"strconv"

	"github.com/hashicorp/terraform-plugin-framework-validators/listresourcevalidator"
	"github.com/hashicorp/terraform-plugin-framework-validators/stringvalidator"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/list"
	listschema "github.com/hashicorp/terraform-plugin-framework/list/schema"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"github.com/hashicorp/terraform-plugin-go/tftypes"

	"github.com/bkiam/terraform-provider-bkiam/internal/bkiam"
	"github.com/bkiam/terraform-provider-bkiam/internal/listing"
	"github.com/bkiam/terraform-provider-bkiam/internal/memberplan"
	"github.com/bkiam/terraform-provider-bkiam/internal/protocol"
	"github.com/bkiam/terraform-provider-bkiam/internal/service/authz"
	"github.com/bkiam/terraform-provider-bkiam/internal/verify"
)

// The list resources of the management API (Terraform 1.14+, `terraform
// query`): what a site already holds, streamed page by page, each result
// with the identity `import { identity = {…} }` takes and, for
// -generate-config-out, the state an import by that identity reads, so
// that applying the generated file changes nothing in IAM and plans empty
// after. See DESIGN.md, "Adopting a site".

func listError(summary string, err error) iter.Seq[list.ListResult] {
	var diags diag.Diagnostics
	diags.AddError(summary, managementError(summary, err))
	return listing.Errors(diags)
}

func systemAttribute(description string) listschema.StringAttribute {
	return listschema.StringAttribute{Required: true, Description: description, Validators: []validator.String{verify.IAMIDValidator{}}}
}

func positiveIDAttribute(description string) listschema.StringAttribute {
	return listschema.StringAttribute{Required: true, Description: description,
		Validators: []validator.String{stringvalidator.RegexMatches(positiveIDPattern, "must be a numeric id IAM gave, e.g. \"42\"")}}
}

func parseID(s string) int64 {
	n, _ := strconv.ParseInt(s, 10, 64)
	return n
}

// ---- bkiam_grade_manager ----

type gradeManagerList struct{ listing.Base }

func NewGradeManagerListResource() list.ListResource {
	return &gradeManagerList{listing.Base{Name: "grade_manager"}}
}

type gradeManagerListConfig struct {
	System  types.String  `tfsdk:"system"`
	Name    types.String  `tfsdk:"name"`
	Managed types.Dynamic `tfsdk:"managed"`
}

func (l *gradeManagerList) ListResourceConfigSchema(_ context.Context, _ list.ListResourceSchemaRequest, resp *list.ListResourceSchemaResponse) {
	resp.Schema = listschema.Schema{
		MarkdownDescription: "The grade managers `system` created through the management API (IAM's v1 grade-manager list; " +
			"those made in the web UI are not the system's, and IAM does not list them). IAM cannot read a grade manager's " +
			"scopes or its sync group's name back: the generated blocks leave `authorization_scopes` and `subject_scopes` " +
			"null, which imports and plans (IAM keeps the scopes it holds); write both, as the IAM web UI shows them, before " +
			"changing the grade manager, whose every update replaces them whole. One call per page of 500, and one per " +
			"grade manager with `include_resource`; IAM pages by offset, so a grade manager made or deleted while the list " +
			"runs can be missed or listed twice.",
		Attributes: map[string]listschema.Attribute{
			"system": systemAttribute("The system whose grade managers to list, e.g. `bk_cmdb`."),
			"name": listschema.StringAttribute{Optional: true,
				Description: "Only grade managers whose name contains this, case-insensitively (IAM's filter)."},
			"managed": listing.ManagedAttribute(),
		},
	}
}

func (l *gradeManagerList) List(ctx context.Context, req list.ListRequest, stream *list.ListResultsStream) {
	config, c, ok := listing.Begin[gradeManagerListConfig](ctx, &l.Base, req, stream)
	if !ok {
		return
	}
	managed, ok := listing.ReadManaged(ctx, "bkiam_grade_manager", config.Managed, stream)
	if !ok {
		return
	}
	system := config.System.ValueString()
	stream.Results = func(push func(list.ListResult) bool) {
		push = listing.Limited(req.Limit, managed.Leave(push))
		var failed list.ListResult
		more := true
		err := c.EachGradeManager(ctx, system, config.Name.ValueString(), func(info bkiam.GradeManagerInfo) bool {
			id := strconv.FormatInt(info.ID, 10)
			attrs := map[string]any{}
			if req.IncludeResource {
				gm, err := c.GradeManager(ctx, system, info.ID)
				if err != nil {
					failed = listing.Error("Cannot read the grade manager", managementError(fmt.Sprintf("Reading grade manager %d in %s", info.ID, system), err))
					return false
				}
				attrs = map[string]any{"id": id, "system": system, "name": gm.Name, "description": gm.Description,
					"members": gm.Members, "sync_perm": gm.SyncPerm}
			}
			result := listing.ValueResult(ctx, req, info.Name, map[string]string{"system": system, "id": id}, attrs)
			more = push(result)
			return more
		})
		if err != nil && more {
			push(listing.Error("Cannot list the grade managers", managementError("Listing the grade managers of "+system, err)))
		} else if failed.Diagnostics.HasError() {
			push(failed)
		}
	}
}

// ---- bkiam_group ----

type groupList struct{ listing.Base }

func NewGroupListResource() list.ListResource { return &groupList{listing.Base{Name: "group"}} }

type groupListConfig struct {
	System         types.String  `tfsdk:"system"`
	GradeManagerID types.String  `tfsdk:"grade_manager_id"`
	Name           types.String  `tfsdk:"name"`
	Description    types.String  `tfsdk:"description"`
	Action         types.String  `tfsdk:"action"`
	Managed        types.Dynamic `tfsdk:"managed"`
}

func groupListAttributes(what string) map[string]listschema.Attribute {
	return map[string]listschema.Attribute{
		"system":           systemAttribute("The system that created the grade manager."),
		"grade_manager_id": positiveIDAttribute("The grade manager whose " + what + " to list (its own groups, not its subset managers')."),
		"name": listschema.StringAttribute{Optional: true,
			Description: "Only groups whose name contains this, case-insensitively (IAM's filter)."},
		"description": listschema.StringAttribute{Optional: true,
			Description: "Only groups whose description contains this, case-insensitively (IAM's filter)."},
		"action": listschema.StringAttribute{Optional: true, Validators: []validator.String{verify.IAMIDValidator{}},
			Description: "Only groups holding a permission of this action of `system`, e.g. `view_host` (IAM's `action_id` " +
				"filter; IAM's filters by resource instance are not offered)."},
		"managed": listing.ManagedAttribute(),
	}
}

// syncGroupTold says how the group lists tell a grade manager's sync group
// (syncGroup), and syncGroupCalls what that costs.
const (
	syncGroupTold = "The sync group is told by IAM's mark, which a rename keeps and which only IAM's v1 group list " +
		"answers (the management API `group_list`, for the system that created the grade manager); where the app may not " +
		"read that list, by IAM's default name (`NAME administrator group`, `NAME-管理员组`), with a warning that a " +
		"renamed sync group would be listed as an ordinary group."
	syncGroupCalls = "with `sync_perm`, one more per 500 groups of the grade manager and its subset managers, to read " +
		"IAM's mark"
)

func (l *groupList) ListResourceConfigSchema(_ context.Context, _ list.ListResourceSchemaRequest, resp *list.ListResourceSchemaResponse) {
	resp.Schema = listschema.Schema{
		MarkdownDescription: "The groups of a grade manager the system created, newest first. IAM lists no system manager's " +
			"groups. The grade manager's sync group is left out with a warning: IAM rewrites it from the grade manager, so " +
			"it is managed through `bkiam_grade_manager`. " + syncGroupTold + " Two calls, one more per page of 500 groups " +
			"and, " + syncGroupCalls + "; IAM pages by offset, so a group made or deleted while the list runs can be missed " +
			"or listed twice.",
		Attributes: groupListAttributes("groups"),
	}
}

// eachGroup streams the groups config names, for the group, members and
// permission lists, but the grade manager's sync group, which it leaves
// out with a warning (what names the kind being listed): visit pushes
// each other group's results and answers whether to go on.
func eachGroup(ctx context.Context, c *bkiam.Client, config groupListConfig, what string, push func(list.ListResult) bool,
	visit func(bkiam.Group) bool) {
	system, gm := config.System.ValueString(), parseID(config.GradeManagerID.ValueString())
	sync, err := syncGroupOf(ctx, c, system, gm)
	if err != nil {
		push(listing.Error("Cannot read the grade manager", managementError(fmt.Sprintf("Reading grade manager %d in %s", gm, system), err)))
		return
	}
	if sync.unmarked != nil && !push(sync.byName(what)) {
		return
	}
	more := true
	err = c.EachGroup(ctx, system, gm, bkiam.GroupFilter{Name: config.Name.ValueString(), Description: config.Description.ValueString(),
		Action: config.Action.ValueString()},
		func(g bkiam.Group) bool {
			if sync.is(g) {
				more = push(sync.leftOut(g, what))
				return more
			}
			more = visit(g)
			return more
		})
	if err != nil && more {
		push(listing.Error("Cannot list the groups", managementError(fmt.Sprintf("Listing the groups of grade manager %d in %s", gm, system), err)))
	}
}

// A grade manager's sync group (sync_perm) is IAM's: every update of the
// grade manager rewrites its members and permissions from the grade
// manager's, and a change of its members is mirrored back onto the grade
// manager. It is managed through bkiam_grade_manager, so no list adopts it
// as a group, its members or its permissions.
//
// IAM marks it, and only it, with the group attribute source_from_role,
// which a rename keeps and which the v1 group list answers
// (bkiam.Client.SyncGroupIDs): that mark tells it, whatever its name. Where
// the mark cannot be read (the app not allowed IAM's group_list, a SaaS
// that answers no attributes) the sync group is told by IAM's default
// names (syncGroupNames), which a rename loses, and the lists say so
// (byName) rather than guess silently.
type syncGroup struct {
	gradeManager bkiam.GradeManager
	// marked are the groups IAM marks as sync groups, by id; nil when the
	// grade manager has no sync_perm or the marks could not be read.
	marked map[int64]bool
	// names are IAM's default names, used only when the marks could not be
	// read (unmarked is why).
	names    []string
	unmarked error
}

// syncGroupOf reads grade manager gm (one call) and, with sync_perm, the
// marks of its groups (one call per page of 500 of its groups, its subset
// managers' included). Without sync_perm it has no sync group: IAM
// deletes the sync group when sync_perm is turned off.
func syncGroupOf(ctx context.Context, c *bkiam.Client, system string, gm int64) (syncGroup, error) {
	info, err := c.GradeManager(ctx, system, gm)
	if err != nil {
		return syncGroup{}, err
	}
	s := syncGroup{gradeManager: *info}
	if !info.SyncPerm {
		return s, nil
	}
	marked, err := c.SyncGroupIDs(ctx, gm)
	switch {
	case err == nil:
		s.marked = marked
	case errors.Is(err, bkiam.ErrForbidden) || errors.Is(err, bkiam.ErrNotFound) || errors.Is(err, bkiam.ErrNoGroupAttributes):
		s.names, s.unmarked = syncGroupNames(info.Name), err
	default:
		return syncGroup{}, fmt.Errorf("reading the marks of its groups (IAM's v1 group list): %w", err)
	}
	return s, nil
}

// syncGroupNames are IAM's default names of a grade manager's sync group:
// the SaaS suffixes the grade manager's name with "-管理员组" translated
// into the request's language, and it answers its open APIs (the
// management API among them) in English. So a sync group made through
// the management API, as every grade manager a system created is, is
// "NAME administrator group" (seen on the real IAM); one made again from
// the web UI, "NAME-管理员组".
func syncGroupNames(gradeManager string) []string {
	return []string{gradeManager + " administrator group", gradeManager + "-管理员组"}
}

// is tells whether g is the sync group: by IAM's mark where it was read,
// else by IAM's default names.
func (s syncGroup) is(g bkiam.Group) bool {
	if s.marked != nil {
		return s.marked[g.ID]
	}
	return slices.Contains(s.names, g.Name)
}

// byName is the warning of a list of what that could not read IAM's mark
// of the sync group and tells it by IAM's default names.
func (s syncGroup) byName(what string) list.ListResult {
	return listing.Warning("Sync group told by its default name only", fmt.Sprintf("IAM marks the sync group of grade manager %q (id %d) "+
		"only in its v1 group list, which could not be read: %v. This list of %s tells the sync group by IAM's default names "+
		"instead, %q and %q: if it was renamed (in the IAM web UI, or through group_name), it is listed here as an ordinary "+
		"group, and a bkiam_group, bkiam_group_members or bkiam_group_permission generated for it would fight IAM, which "+
		"rewrites it from the grade manager. Allow the app IAM's management API group_list (the v1 group list) for the "+
		"system that created the grade manager and list again, or leave out of the generated configuration the group "+
		"whose members are the grade manager's members.", s.gradeManager.Name, s.gradeManager.ID, s.unmarked, what, s.names[0], s.names[1]))
}

// leftOut is the warning that leaves the sync group g out of a list of what.
func (s syncGroup) leftOut(g bkiam.Group, what string) list.ListResult {
	return listing.Warning(fmt.Sprintf("Sync group %q left out of the %s", g.Name, what), fmt.Sprintf("Group %q (id %d), the sync group of grade manager %q (id %d), is left out "+
		"of this list of %s. IAM rewrites the sync group's members and permissions from the grade manager's on every update of it, "+
		"and mirrors a change of its members back onto the grade manager: manage them through bkiam_grade_manager (members, "+
		"authorization_scopes, sync_perm), never as a bkiam_group, bkiam_group_members or bkiam_group_permission.",
		g.Name, g.ID, s.gradeManager.Name, s.gradeManager.ID, what))
}

func (l *groupList) List(ctx context.Context, req list.ListRequest, stream *list.ListResultsStream) {
	config, c, ok := listing.Begin[groupListConfig](ctx, &l.Base, req, stream)
	if !ok {
		return
	}
	managed, ok := listing.ReadManaged(ctx, "bkiam_group", config.Managed, stream)
	if !ok {
		return
	}
	stream.Results = func(push func(list.ListResult) bool) {
		push = listing.Limited(req.Limit, managed.Leave(push))
		eachGroup(ctx, c, config, "groups", push, func(g bkiam.Group) bool {
			system, gm, id := config.System.ValueString(), config.GradeManagerID.ValueString(), strconv.FormatInt(g.ID, 10)
			return push(listing.ValueResult(ctx, req, g.Name, map[string]string{"system": system, "grade_manager_id": gm, "id": id},
				map[string]any{"id": id, "system": system, "grade_manager_id": gm, "name": g.Name, "description": g.Description,
					"readonly": g.Readonly}))
		})
	}
}

// ---- bkiam_group_members ----

type groupMembersList struct{ listing.Base }

func NewGroupMembersListResource() list.ListResource {
	return &groupMembersList{listing.Base{Name: "group_members"}}
}

func (l *groupMembersList) ListResourceConfigSchema(_ context.Context, _ list.ListResourceSchemaRequest, resp *list.ListResourceSchemaResponse) {
	resp.Schema = listschema.Schema{
		MarkdownDescription: "The members of each group of a grade manager the system created: one result per group, " +
			"with its users and departments and their expiries. The grade manager's sync group is left out with a warning: " +
			"IAM syncs its members from the grade manager's, so they are managed through `bkiam_grade_manager`'s `members`. " +
			syncGroupTold + " Two calls, one more per page of 500 groups, one per group with `include_resource` and, " +
			syncGroupCalls + ".",
		Attributes: groupListAttributes("groups' members"),
	}
}

func (l *groupMembersList) List(ctx context.Context, req list.ListRequest, stream *list.ListResultsStream) {
	config, c, ok := listing.Begin[groupListConfig](ctx, &l.Base, req, stream)
	if !ok {
		return
	}
	managed, ok := listing.ReadManaged(ctx, "bkiam_group_members", config.Managed, stream)
	if !ok {
		return
	}
	system := config.System.ValueString()
	stream.Results = func(push func(list.ListResult) bool) {
		push = listing.Limited(req.Limit, managed.Leave(push))
		eachGroup(ctx, c, config, "members", push, func(g bkiam.Group) bool {
			if owner := managed.MembershipOwner(system, strconv.FormatInt(g.ID, 10), "", ""); owner != "" {
				return push(listing.Warning("Left out: memberships managed person by person",
					fmt.Sprintf("The members of group %q (id %d) are left out: %s manages a membership in it, as managed says, and a "+
						"bkiam_group_members would own the group's members whole. Keep the group's memberships in bkiam_user_groups, "+
						"or move them into one bkiam_group_members first.", g.Name, g.ID, owner)))
			}
			m := GroupMembersModel{System: protocol.Known(system), GroupID: protocol.Known(strconv.FormatInt(g.ID, 10))}
			m.ID = protocol.Known(system + "/" + strconv.FormatInt(g.ID, 10))
			if req.IncludeResource {
				held, err := GroupMembers{}.readMembers(ctx, c, system, g.ID)
				if err != nil {
					push(listing.Error("Cannot read the group's members",
						managementError(fmt.Sprintf("Reading the members of group %d in %s", g.ID, system), err)))
					return false
				}
				m = listedMembers(m, held)
				if refused, ok := listing.Refused(func() string { return fmt.Sprintf("The members of group %q (id %d)", g.Name, g.ID) }, func(diags *protocol.Diagnostics) {
					GroupMembers{}.Validate(ctx, m, diags)
				}); ok {
					return push(refused)
				}
			}
			return push(listing.ProtocolResult(ctx, req, g.Name, GroupMembers{}.IdentityOf(m),
				func(typ tftypes.Object) tftypes.Value { return GroupMembers{}.Encode(typ, m) }))
		})
	}
}

// listedMembers is m with the members held, as a read after an import
// records them.
func listedMembers(m GroupMembersModel, held memberplan.Members) GroupMembersModel {
	m.Users = membersValue(held, memberUser, noRollingExpiry, false, protocol.StringMapValue{}, protocol.StringMapValue{})
	m.Departments = membersValue(held, memberDepartment, noRollingExpiry, false, protocol.StringMapValue{}, protocol.StringMapValue{})
	return m
}

// ---- bkiam_user_groups ----

type userGroupsList struct{ listing.Base }

func NewUserGroupsListResource() list.ListResource {
	return &userGroupsList{listing.Base{Name: "user_groups"}}
}

type userGroupsListConfig struct {
	System         types.String  `tfsdk:"system"`
	GradeManagerID types.String  `tfsdk:"grade_manager_id"`
	Users          types.List    `tfsdk:"users"`
	Managed        types.Dynamic `tfsdk:"managed"`
}

func (l *userGroupsList) ListResourceConfigSchema(_ context.Context, _ list.ListResourceSchemaRequest, resp *list.ListResourceSchemaResponse) {
	resp.Schema = listschema.Schema{
		MarkdownDescription: "The memberships in a grade manager's groups, person by person: one result per user or " +
			"department, with the groups they are in and each expiry, for adopting people's memberships as " +
			"`bkiam_user_groups` (a new hire's, a team's) rather than groups' as `bkiam_group_members`. The grade manager's " +
			"sync group is left out with a warning (IAM's, managed through `bkiam_grade_manager`). " + syncGroupTold + " A group whose members a " +
			"`bkiam_group_members` in `managed` owns is left out, and so is a membership a `bkiam_user_groups` in `managed` " +
			"holds, so the generated blocks never claim a membership a resource in state claims; do not query this and the " +
			"`bkiam_group_members` list of the same grade manager in one run (each would generate the memberships the other " +
			"does; the second run, given `managed`, leaves them out). Two calls, one more per page of 500 groups, one per " +
			"group and page of 500 members and, " + syncGroupCalls + ": the people are known only once every group is read.",
		Attributes: map[string]listschema.Attribute{
			"system":           systemAttribute("The system that created the grade manager."),
			"grade_manager_id": positiveIDAttribute("The grade manager whose groups' memberships to list."),
			"users": listschema.ListAttribute{Optional: true, ElementType: types.StringType,
				Description: "Only these users' memberships (departments are then left out), e.g. `[\"alice\"]`."},
			"managed": listing.ManagedAttribute(),
		},
	}
}

func (l *userGroupsList) List(ctx context.Context, req list.ListRequest, stream *list.ListResultsStream) {
	config, c, ok := listing.Begin[userGroupsListConfig](ctx, &l.Base, req, stream)
	if !ok {
		return
	}
	managed, ok := listing.ReadManaged(ctx, "bkiam_user_groups", config.Managed, stream)
	if !ok {
		return
	}
	var only []string
	if !config.Users.IsNull() {
		if diags := config.Users.ElementsAs(ctx, &only, false); diags.HasError() {
			stream.Results = listing.Errors(diags)
			return
		}
	}
	system := config.System.ValueString()
	stream.Results = func(push func(list.ListResult) bool) {
		push = listing.Limited(req.Limit, push)
		people := map[memberplan.Key]map[int64]int64{}
		failed := false
		groups := groupListConfig{System: config.System, GradeManagerID: config.GradeManagerID}
		eachGroup(ctx, c, groups, "memberships", push, func(g bkiam.Group) bool {
			group := strconv.FormatInt(g.ID, 10)
			if owner := managed.GroupOwner(system, group); owner != "" {
				return push(listing.Warning("Left out: group managed whole",
					fmt.Sprintf("The memberships in group %q (id %d) are left out: %s owns its members whole, as managed says.", g.Name, g.ID, owner)))
			}
			held, err := GroupMembers{}.readMembers(ctx, c, system, g.ID)
			if err != nil {
				failed = true
				push(listing.Error("Cannot read the group's members",
					managementError(fmt.Sprintf("Reading the members of group %d in %s", g.ID, system), err)))
				return false
			}
			for k, exp := range held {
				if only != nil && (k.Type != memberUser || !slices.Contains(only, k.ID)) {
					continue
				}
				if owner := managed.MembershipOwner(system, group, k.Type, k.ID); owner != "" {
					continue // adopted already: the person's result leaves it out
				}
				if people[k] == nil {
					people[k] = map[int64]int64{}
				}
				people[k][g.ID] = exp
			}
			return true
		})
		if failed {
			return
		}
		keys := slices.Collect(maps.Keys(people))
		slices.SortFunc(keys, func(a, b memberplan.Key) int { return cmp.Compare(a.Type+"/"+a.ID, b.Type+"/"+b.ID) })
		for _, k := range keys {
			m := UserGroupsModel{System: protocol.Known(system), ID: protocol.Known(system + "/" + k.Type + "/" + k.ID)}
			if k.Type == memberUser {
				m.User = protocol.Known(k.ID)
			} else {
				m.Department = protocol.Known(k.ID)
			}
			m.Groups = groupsValue(people[k], 0, false, protocol.StringMapValue{}, protocol.StringMapValue{})
			if refused, ok := listing.Refused(func() string { return "The memberships of " + describePerson(k) }, func(diags *protocol.Diagnostics) {
				UserGroups{}.Validate(ctx, m, diags)
			}); ok {
				if !push(refused) {
					return
				}
				continue
			}
			if !push(listing.ProtocolResult(ctx, req, describePerson(k), UserGroups{}.IdentityOf(m),
				func(typ tftypes.Object) tftypes.Value { return UserGroups{}.Encode(typ, m) })) {
				return
			}
		}
	}
}

// ---- bkiam_group_permission ----

type groupPermissionList struct{ listing.Base }

func NewGroupPermissionListResource() list.ListResource {
	return &groupPermissionList{listing.Base{Name: "group_permission"}}
}

type groupPermissionListConfig struct {
	System         types.String  `tfsdk:"system"`
	GroupID        types.String  `tfsdk:"group_id"`
	GradeManagerID types.String  `tfsdk:"grade_manager_id"`
	Managed        types.Dynamic `tfsdk:"managed"`
}

func (l *groupPermissionList) ListResourceConfigSchema(_ context.Context, _ list.ListResourceSchemaRequest, resp *list.ListResourceSchemaResponse) {
	resp.Schema = listschema.Schema{
		MarkdownDescription: "What groups hold of the actions of `system`: every group of a grade manager (`grade_manager_id`) " +
			"or one group (`group_id`), one result per group and action (IAM keeps a policy per group and action; group " +
			"them into one resource by hand where they hold the same instances). This is the kind that adopts a group's " +
			"custom policy: `bkiam_instance_grant`'s list leaves groups out. IAM's management API lists the group's own " +
			"policy apart from the rows it holds through permission templates, which are left alone (no revoke of the " +
			"group's policy takes them away). IAM lists a group's permissions by the system that manages the group, so the " +
			"app must be a client of it. Left out with a warning: the grade manager's sync group (IAM rewrites it from the " +
			"grade manager: manage it through `bkiam_grade_manager`), a policy over every instance of a type, over several " +
			"combinations of types or with conditions on attributes (a resource never grants those), and any block the " +
			"provider would refuse at plan (an instance id `*`, which IAM matches literally). " + syncGroupTold + " Calls: by " +
			"grade manager, one to read it, one per page of 500 groups and one per group and, " + syncGroupCalls + "; by " +
			"group, one, and, to tell whether the group is a sync group, one per grade manager the system created until the " +
			"group's (plus one to list them and one to read it) and, " + syncGroupCalls + ".",
		Attributes: map[string]listschema.Attribute{
			"system": systemAttribute("The system of the actions, which manages the groups, e.g. `bk_cmdb`."),
			"group_id": listschema.StringAttribute{Optional: true, Description: "One group's numeric id. Exactly one of `group_id` and `grade_manager_id`.",
				Validators: []validator.String{stringvalidator.RegexMatches(positiveIDPattern, "must be a numeric id IAM gave, e.g. \"42\"")}},
			"grade_manager_id": listschema.StringAttribute{Optional: true,
				Description: "A grade manager the system created, whose groups' permissions to list (its own groups, not its subset " +
					"managers'). Exactly one of `group_id` and `grade_manager_id`.",
				Validators: []validator.String{stringvalidator.RegexMatches(positiveIDPattern, "must be a numeric id IAM gave, e.g. \"42\"")}},
			"managed": listing.ManagedAttribute(),
		},
	}
}

func (l *groupPermissionList) ListResourceConfigValidators(context.Context) []list.ConfigValidator {
	return []list.ConfigValidator{listresourcevalidator.ExactlyOneOf(path.MatchRoot("group_id"), path.MatchRoot("grade_manager_id"))}
}

func (l *groupPermissionList) List(ctx context.Context, req list.ListRequest, stream *list.ListResultsStream) {
	config, c, ok := listing.Begin[groupPermissionListConfig](ctx, &l.Base, req, stream)
	if !ok {
		return
	}
	managed, ok := listing.ReadManaged(ctx, "bkiam_group_permission", config.Managed, stream)
	if !ok {
		return
	}
	system := config.System.ValueString()
	if gm := config.GradeManagerID.ValueString(); gm != "" {
		stream.Results = func(push func(list.ListResult) bool) {
			push = listing.Limited(req.Limit, managed.Leave(push))
			eachGroup(ctx, c, groupListConfig{System: config.System, GradeManagerID: config.GradeManagerID}, "permissions", push,
				func(g bkiam.Group) bool {
					policies, err := c.GroupPolicies(ctx, system, g.ID)
					if err != nil {
						push(listing.Error("Cannot list the group's permissions",
							managementError(fmt.Sprintf("Listing the permissions of group %d in %s", g.ID, system), err)))
						return false
					}
					for _, p := range policies {
						if !push(l.result(ctx, req, system, g, p)) {
							return false
						}
					}
					return true
				})
		}
		return
	}
	group := parseID(config.GroupID.ValueString())
	policies, err := c.GroupPolicies(ctx, system, group)
	if err != nil {
		stream.Results = listError(fmt.Sprintf("Listing the permissions of group %d in %s", group, system), err)
		return
	}
	stream.Results = func(push func(list.ListResult) bool) {
		push = listing.Limited(req.Limit, managed.Leave(push))
		if len(policies) > 0 {
			sync, g, err := syncGroupWith(ctx, c, system, group)
			if err != nil {
				push(listing.Error("Cannot tell whether the group is a sync group",
					managementError(fmt.Sprintf("Looking for group %d among the groups of the grade managers of %s", group, system), err)))
				return
			}
			if g != nil && sync.unmarked != nil && !push(sync.byName("permissions")) {
				return
			}
			if g != nil && sync.is(*g) {
				push(sync.leftOut(*g, "permissions"))
				return
			}
		}
		for _, p := range policies {
			if !push(l.result(ctx, req, system, bkiam.Group{ID: group}, p)) {
				return
			}
		}
	}
}

// syncGroupWith finds the grade manager the system created whose own
// group group is, and that grade manager's sync group (syncGroupOf), to
// tell whether group is it: IAM has no route from a group to its grade
// manager, so each grade manager's groups are searched by IAM's id filter
// (one call to list the grade managers, one per grade manager until the
// owner, then syncGroupOf's). g is nil when the group is none's (a system
// manager's, a subset manager's).
func syncGroupWith(ctx context.Context, c *bkiam.Client, system string, group int64) (syncGroup, *bkiam.Group, error) {
	var found *bkiam.Group
	var owner int64
	var lookupErr error
	err := c.EachGradeManager(ctx, system, "", func(gm bkiam.GradeManagerInfo) bool {
		groups, err := c.ListGroups(ctx, system, gm.ID, bkiam.GroupFilter{ID: group})
		if err != nil {
			lookupErr = err
			return false
		}
		for i, g := range groups {
			if g.ID == group {
				found, owner = &groups[i], gm.ID
				return false
			}
		}
		return true
	})
	if err = errors.Join(err, lookupErr); err != nil || found == nil {
		return syncGroup{}, nil, err
	}
	sync, err := syncGroupOf(ctx, c, system, owner)
	if err != nil {
		return syncGroup{}, nil, err
	}
	return sync, found, nil
}

// result is group g's permission of one action, or a warning that leaves
// it out.
func (l *groupPermissionList) result(ctx context.Context, req list.ListRequest, system string, g bkiam.Group, p bkiam.GroupPolicy) list.ListResult {
	group := strconv.FormatInt(g.ID, 10)
	resources, err := listedResources(p)
	if err != nil {
		return listing.Warning("Permission left out", fmt.Sprintf("Group %s's permission of %s in %s is not listed: %v.", group, p.Action, system, err))
	}
	m := GroupPermissionModel{System: protocol.Known(system), GroupID: protocol.Known(group),
		Actions: protocol.KnownStrings([]string{p.Action}), Resources: authz.ResourcesValue(resources)}
	m.ID = permissionID(m)
	if refused, ok := listing.Refused(func() string { return fmt.Sprintf("Group %s's permission of %s", group, p.Action) }, func(diags *protocol.Diagnostics) {
		GroupPermission{}.Validate(ctx, m, diags)
		GroupPermission{}.CheckModel(ctx, l.Data, m, diags)
	}); ok {
		return refused
	}
	name := p.Action
	if g.Name != "" {
		name = g.Name + ": " + p.Action
	}
	return listing.ProtocolResult(ctx, req, name, GroupPermission{}.IdentityOf(m),
		func(typ tftypes.Object) tftypes.Value { return GroupPermission{}.Encode(typ, m) })
}

var (
	_ list.ListResourceWithConfigure        = &gradeManagerList{}
	_ list.ListResourceWithConfigure        = &groupList{}
	_ list.ListResourceWithConfigure        = &groupMembersList{}
	_ list.ListResourceWithConfigure        = &groupPermissionList{}
	_ list.ListResourceWithConfigValidators = &groupPermissionList{}
)

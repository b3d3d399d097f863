package management

import (
	"context"
	"fmt"
	"iter"
	"strconv"

	"github.com/hashicorp/terraform-plugin-framework-validators/stringvalidator"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/list"
	listschema "github.com/hashicorp/terraform-plugin-framework/list/schema"
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
	System types.String `tfsdk:"system"`
	Name   types.String `tfsdk:"name"`
}

func (l *gradeManagerList) ListResourceConfigSchema(_ context.Context, _ list.ListResourceSchemaRequest, resp *list.ListResourceSchemaResponse) {
	resp.Schema = listschema.Schema{
		MarkdownDescription: "The grade managers `system` created through the management API (IAM's v1 grade-manager list; " +
			"those made in the web UI are not the system's, and IAM does not list them). IAM cannot read a grade manager's " +
			"scopes or its sync group's name back: the generated blocks leave `authorization_scopes` and `subject_scopes` " +
			"out, and the configuration must give them before the import can plan. One call per page of 500, and one per " +
			"grade manager with `include_resource`.",
		Attributes: map[string]listschema.Attribute{
			"system": systemAttribute("The system whose grade managers to list, e.g. `bk_cmdb`."),
			"name": listschema.StringAttribute{Optional: true,
				Description: "Only grade managers whose name contains this, case-insensitively (IAM's filter)."},
		},
	}
}

func (l *gradeManagerList) List(ctx context.Context, req list.ListRequest, stream *list.ListResultsStream) {
	config, c, ok := listing.Begin[gradeManagerListConfig](ctx, &l.Base, req, stream)
	if !ok {
		return
	}
	system := config.System.ValueString()
	stream.Results = func(push func(list.ListResult) bool) {
		push = listing.Limited(req.Limit, push)
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
	System         types.String `tfsdk:"system"`
	GradeManagerID types.String `tfsdk:"grade_manager_id"`
	Name           types.String `tfsdk:"name"`
	Description    types.String `tfsdk:"description"`
	Action         types.String `tfsdk:"action"`
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
	}
}

func (l *groupList) ListResourceConfigSchema(_ context.Context, _ list.ListResourceSchemaRequest, resp *list.ListResourceSchemaResponse) {
	resp.Schema = listschema.Schema{
		MarkdownDescription: "The groups of a grade manager the system created, newest first. IAM lists no system manager's " +
			"groups. One call per page of 500 groups.",
		Attributes: groupListAttributes("groups"),
	}
}

// eachGroup streams the groups config names, for the group and members lists.
func eachGroup(ctx context.Context, c *bkiam.Client, config groupListConfig, push func(list.ListResult) bool,
	result func(bkiam.Group) (list.ListResult, bool)) {
	system, gm := config.System.ValueString(), parseID(config.GradeManagerID.ValueString())
	more := true
	err := c.EachGroup(ctx, system, gm, bkiam.GroupFilter{Name: config.Name.ValueString(), Description: config.Description.ValueString(),
		Action: config.Action.ValueString()},
		func(g bkiam.Group) bool {
			r, ok := result(g)
			more = push(r) && ok
			return more
		})
	if err != nil && more {
		push(listing.Error("Cannot list the groups", managementError(fmt.Sprintf("Listing the groups of grade manager %d in %s", gm, system), err)))
	}
}

func (l *groupList) List(ctx context.Context, req list.ListRequest, stream *list.ListResultsStream) {
	config, c, ok := listing.Begin[groupListConfig](ctx, &l.Base, req, stream)
	if !ok {
		return
	}
	stream.Results = func(push func(list.ListResult) bool) {
		eachGroup(ctx, c, config, listing.Limited(req.Limit, push), func(g bkiam.Group) (list.ListResult, bool) {
			system, gm, id := config.System.ValueString(), config.GradeManagerID.ValueString(), strconv.FormatInt(g.ID, 10)
			return listing.ValueResult(ctx, req, g.Name, map[string]string{"system": system, "grade_manager_id": gm, "id": id},
				map[string]any{"id": id, "system": system, "grade_manager_id": gm, "name": g.Name, "description": g.Description,
					"readonly": g.Readonly}), true
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
			"with its users and departments and their expiries. One call per page of 500 groups, and one per group with " +
			"`include_resource`.",
		Attributes: groupListAttributes("groups' members"),
	}
}

func (l *groupMembersList) List(ctx context.Context, req list.ListRequest, stream *list.ListResultsStream) {
	config, c, ok := listing.Begin[groupListConfig](ctx, &l.Base, req, stream)
	if !ok {
		return
	}
	system := config.System.ValueString()
	stream.Results = func(push func(list.ListResult) bool) {
		eachGroup(ctx, c, config, listing.Limited(req.Limit, push), func(g bkiam.Group) (list.ListResult, bool) {
			m := GroupMembersModel{System: protocol.Known(system), GroupID: protocol.Known(strconv.FormatInt(g.ID, 10))}
			m.ID = protocol.Known(system + "/" + strconv.FormatInt(g.ID, 10))
			if req.IncludeResource {
				held, err := GroupMembers{}.readMembers(ctx, c, system, g.ID)
				if err != nil {
					return listing.Error("Cannot read the group's members",
						managementError(fmt.Sprintf("Reading the members of group %d in %s", g.ID, system), err)), false
				}
				m = listedMembers(m, held)
			}
			return listing.ProtocolResult(ctx, req, g.Name, GroupMembers{}.IdentityOf(m),
				func(typ tftypes.Object) tftypes.Value { return GroupMembers{}.Encode(typ, m) }), true
		})
	}
}

// listedMembers is m with the members held, as a read after an import
// records them.
func listedMembers(m GroupMembersModel, held memberplan.Members) GroupMembersModel {
	m.Users = membersValue(held, memberUser, protocol.StringMapValue{}, protocol.StringMapValue{})
	m.Departments = membersValue(held, memberDepartment, protocol.StringMapValue{}, protocol.StringMapValue{})
	return m
}

// ---- bkiam_group_permission ----

type groupPermissionList struct{ listing.Base }

func NewGroupPermissionListResource() list.ListResource {
	return &groupPermissionList{listing.Base{Name: "group_permission"}}
}

type groupPermissionListConfig struct {
	System  types.String `tfsdk:"system"`
	GroupID types.String `tfsdk:"group_id"`
}

func (l *groupPermissionList) ListResourceConfigSchema(_ context.Context, _ list.ListResourceSchemaRequest, resp *list.ListResourceSchemaResponse) {
	resp.Schema = listschema.Schema{
		MarkdownDescription: "What a group holds of the actions of `system`, one result per action (IAM keeps a policy " +
			"per group and action; group them into one resource by hand where they hold the same instances). IAM lists a " +
			"group's permissions by the system that manages the group, so the app must be a client of it. A policy over " +
			"every instance of a type, or over several combinations of types, is left out with a warning: a resource " +
			"never grants those. One call, as IAM's list is not paged.",
		Attributes: map[string]listschema.Attribute{
			"system":   systemAttribute("The system of the actions, which manages the group, e.g. `bk_cmdb`."),
			"group_id": positiveIDAttribute("The group's numeric id."),
		},
	}
}

func (l *groupPermissionList) List(ctx context.Context, req list.ListRequest, stream *list.ListResultsStream) {
	config, c, ok := listing.Begin[groupPermissionListConfig](ctx, &l.Base, req, stream)
	if !ok {
		return
	}
	system, group := config.System.ValueString(), config.GroupID.ValueString()
	policies, err := c.GroupPolicies(ctx, system, parseID(group))
	if err != nil {
		stream.Results = listError(fmt.Sprintf("Listing the permissions of group %s in %s", group, system), err)
		return
	}
	stream.Results = func(push func(list.ListResult) bool) {
		push = listing.Limited(req.Limit, push)
		for _, p := range policies {
			resources, err := listedResources(p)
			if err != nil {
				if !push(listing.Warning("Permission left out",
					fmt.Sprintf("Group %s's permission of %s in %s is not listed: %v.", group, p.Action, system, err))) {
					return
				}
				continue
			}
			m := GroupPermissionModel{System: protocol.Known(system), GroupID: protocol.Known(group),
				Actions: protocol.KnownStrings([]string{p.Action}), Resources: authz.ResourcesValue(resources)}
			m.ID = permissionID(m)
			if !push(listing.ProtocolResult(ctx, req, p.Action, GroupPermission{}.IdentityOf(m),
				func(typ tftypes.Object) tftypes.Value { return GroupPermission{}.Encode(typ, m) })) {
				return
			}
		}
	}
}

var (
	_ list.ListResourceWithConfigure = &gradeManagerList{}
	_ list.ListResourceWithConfigure = &groupList{}
	_ list.ListResourceWithConfigure = &groupMembersList{}
	_ list.ListResourceWithConfigure = &groupPermissionList{}
)

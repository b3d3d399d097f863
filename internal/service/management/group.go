package management

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"strings"

	"github.com/hashicorp/terraform-plugin-framework-timeouts/resource/timeouts"
	"github.com/hashicorp/terraform-plugin-framework-validators/stringvalidator"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/resource/identityschema"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/booldefault"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/boolplanmodifier"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/planmodifier"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/stringdefault"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/stringplanmodifier"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
	"github.com/hashicorp/terraform-plugin-framework/tfsdk"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/bkiam/terraform-provider-bkiam/internal/bkiam"
	"github.com/bkiam/terraform-provider-bkiam/internal/conns"
	"github.com/bkiam/terraform-provider-bkiam/internal/protocol"
	"github.com/bkiam/terraform-provider-bkiam/internal/verify"
)

// groupResource is bkiam_group: a user group of a grade manager (or of a
// system's system manager), created through the management API.
type groupResource struct {
	data *conns.Data
}

var (
	_ resource.ResourceWithConfigure   = &groupResource{}
	_ resource.ResourceWithImportState = &groupResource{}
	_ resource.ResourceWithModifyPlan  = &groupResource{}
)

func NewGroupResource() resource.Resource { return &groupResource{} }

// systemManager is the grade_manager_id of a system manager's groups: the
// management API's "-".
const systemManager = "-"

// maxGroupNameOnUpdate is the longest name IAM's group update takes
// (create takes 512).
const maxGroupNameOnUpdate = 128

// gradeManagerIDPattern is a grade manager's id, or the system manager.
var gradeManagerIDPattern = regexp.MustCompile(`^([1-9][0-9]*|-)$`)

type groupModel struct {
	ID             types.String   `tfsdk:"id"`
	System         types.String   `tfsdk:"system"`
	GradeManagerID types.String   `tfsdk:"grade_manager_id"`
	Name           types.String   `tfsdk:"name"`
	Description    types.String   `tfsdk:"description"`
	Readonly       types.Bool     `tfsdk:"readonly"`
	Timeouts       timeouts.Value `tfsdk:"timeouts"`
}

func (r *groupResource) Metadata(_ context.Context, req resource.MetadataRequest, resp *resource.MetadataResponse) {
	resp.TypeName = req.ProviderTypeName + "_group"
}

func (r *groupResource) Schema(ctx context.Context, _ resource.SchemaRequest, resp *resource.SchemaResponse) {
	resp.Schema = schema.Schema{
		MarkdownDescription: "A user group (用户组) of BlueKing IAM under a grade manager, or under a system's system " +
			"manager, created through the management API. Its members are `bkiam_group_members`. API gateway only.",
		Attributes: map[string]schema.Attribute{
			"id": schema.StringAttribute{
				Computed:            true,
				MarkdownDescription: "The group's numeric id, as `bkiam_group_members.group_id` and grants to the group take it.",
				PlanModifiers:       []planmodifier.String{stringplanmodifier.UseStateForUnknown()},
			},
			"system": schema.StringAttribute{
				Required: true,
				MarkdownDescription: "The system whose management API manages the group: the system that created the grade " +
					"manager, or whose system manager owns the group. Changing it replaces the group.",
				Validators:    []validator.String{verify.IAMIDValidator{}},
				PlanModifiers: []planmodifier.String{stringplanmodifier.RequiresReplace()},
			},
			"grade_manager_id": schema.StringAttribute{
				Required: true,
				MarkdownDescription: "The grade manager the group belongs to (`bkiam_grade_manager.x.id`), or `\"-\"` for the " +
					"system manager of `system`. IAM cannot list a system manager's groups, so such a group's name and " +
					"description are kept from state, not read back. Changing it replaces the group.",
				Validators: []validator.String{stringvalidator.RegexMatches(gradeManagerIDPattern,
					"must be a grade manager's numeric id, or \"-\" for the system manager")},
				PlanModifiers: []planmodifier.String{stringplanmodifier.RequiresReplace()},
			},
			"name": schema.StringAttribute{
				Required: true,
				MarkdownDescription: "The group's name, unique within its grade manager (compared case-insensitively). IAM " +
					"creates groups with names of 2 to 512 characters but renames them only to names of at most 128: a " +
					"rename to a longer one replaces the group. No surrounding white space (IAM trims it).",
				Validators:    []validator.String{stringvalidator.LengthBetween(2, 512), verify.TrimmedValidator{}},
				PlanModifiers: []planmodifier.String{stringplanmodifier.RequiresReplaceIf(renameNeedsReplace, "A rename to a name longer than 128 characters replaces the group: IAM's group update takes at most 128.", "A rename to a name longer than 128 characters replaces the group: IAM's group update takes at most 128.")},
			},
			"description": schema.StringAttribute{
				Optional: true, Computed: true, Default: stringdefault.StaticString(""),
				MarkdownDescription: "What the group is for; empty by default, at most 512 characters. IAM keeps the old " +
					"description when an update sends an empty one, so clearing it replaces the group.",
				Validators: []validator.String{stringvalidator.LengthAtMost(512), verify.TrimmedValidator{}},
				PlanModifiers: []planmodifier.String{stringplanmodifier.RequiresReplaceIf(clearNeedsReplace,
					"Clearing the description replaces the group: IAM keeps the old one when an update sends an empty one.",
					"Clearing the description replaces the group: IAM keeps the old one when an update sends an empty one.")},
			},
			"readonly": schema.BoolAttribute{
				Optional: true, Computed: true, Default: booldefault.StaticBool(false),
				MarkdownDescription: "Whether the IAM web UI may not change the group (the management API still may). IAM has " +
					"no update of it: changing it replaces the group.",
				PlanModifiers: []planmodifier.Bool{boolplanmodifier.RequiresReplace()},
			},
			"timeouts": timeouts.Attributes(ctx, timeouts.Opts{Create: true, Update: true, Delete: true}),
		},
	}
}

func renameNeedsReplace(_ context.Context, req planmodifier.StringRequest, resp *stringplanmodifier.RequiresReplaceIfFuncResponse) {
	resp.RequiresReplace = !req.StateValue.IsNull() && len([]rune(req.PlanValue.ValueString())) > maxGroupNameOnUpdate
}

func clearNeedsReplace(_ context.Context, req planmodifier.StringRequest, resp *stringplanmodifier.RequiresReplaceIfFuncResponse) {
	resp.RequiresReplace = req.StateValue.ValueString() != "" && req.PlanValue.ValueString() == "" && !req.PlanValue.IsUnknown()
}

func (r *groupResource) Configure(_ context.Context, req resource.ConfigureRequest, resp *resource.ConfigureResponse) {
	r.data = conns.FromProviderData(req.ProviderData, "bkiam_group", &resp.Diagnostics)
}

// ModifyPlan records the group's grade manager for the plan-time scope
// check (plannedScopes), and refuses, for a create or a change, a provider
// that cannot reach the management API.
func (r *groupResource) ModifyPlan(ctx context.Context, req resource.ModifyPlanRequest, resp *resource.ModifyPlanResponse) {
	if r.data != nil && !req.Plan.Raw.IsNull() {
		// For the plan-time scope check of bkiam_group_permission.
		var id, gm types.String
		req.Plan.GetAttribute(ctx, path.Root("id"), &id)
		req.Plan.GetAttribute(ctx, path.Root("grade_manager_id"), &gm)
		if !id.IsUnknown() && !gm.IsUnknown() {
			r.data.PlannedScopes.SetGroup(id.ValueString(), gm.ValueString())
		}
	}
	if req.Plan.Raw.IsNull() || req.Plan.Raw.Equal(req.State.Raw) {
		return
	}
	if summary, detail, ok := managementNeedsGateway(r.data, "bkiam_group"); ok {
		resp.Diagnostics.AddError(summary, detail)
	}
}

func (r *groupResource) Create(ctx context.Context, req resource.CreateRequest, resp *resource.CreateResponse) {
	var plan groupModel
	resp.Diagnostics.Append(req.Plan.Get(ctx, &plan)...)
	timeout, diags := plan.Timeouts.Create(ctx, protocol.DefaultTimeout)
	resp.Diagnostics.Append(diags...)
	if resp.Diagnostics.HasError() || !r.configured(&resp.Diagnostics) {
		return
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	system, gm, name := plan.System.ValueString(), plan.GradeManagerID.ValueString(), plan.Name.ValueString()
	ids, err := r.data.Client.CreateGroups(ctx, system, gm, []bkiam.GroupSpec{{
		Name: name, Description: plan.Description.ValueString(), Readonly: plan.Readonly.ValueBool(),
	}})
	if err == nil && len(ids) != 1 {
		err = fmt.Errorf("IAM answered %d group ids for one group", len(ids))
	}
	if err != nil && lostCreate(err) && gm != systemManager {
		// IAM may have made the group: look for it by its exact name.
		gmID, _ := strconv.ParseInt(gm, 10, 64)
		g, ferr := r.data.Client.GroupByName(ctx, system, gmID, name)
		if ferr == nil && g != nil && g.Description == plan.Description.ValueString() && g.Readonly == plan.Readonly.ValueBool() {
			resp.Diagnostics.AddWarning("Group found after a lost answer",
				fmt.Sprintf("IAM's answer to the create of group %q under grade manager %s in %s did not arrive (%v). The provider "+
					"found group %d of that name, description and readonly flag, and records it.", name, gm, system, err, g.ID))
			ids, err = []int64{g.ID}, nil
		}
	}
	if err != nil {
		resp.Diagnostics.AddError("Cannot create the group",
			managementError(fmt.Sprintf("Creating group %q under grade manager %s in %s", name, gm, system), err))
		return
	}
	plan.ID = types.StringValue(strconv.FormatInt(ids[0], 10))
	resp.Diagnostics.Append(resp.State.Set(ctx, plan)...)
	resp.Diagnostics.Append(setGroupIdentity(ctx, resp.Identity, plan)...)
}

func (r *groupResource) Read(ctx context.Context, req resource.ReadRequest, resp *resource.ReadResponse) {
	var state groupModel
	resp.Diagnostics.Append(req.State.Get(ctx, &state)...)
	// The identity of what Terraform holds, even if the read finds it gone
	// (the framework wants one after every read, and state written before
	// identities has none).
	resp.Diagnostics.Append(setGroupIdentity(ctx, resp.Identity, state)...)
	if resp.Diagnostics.HasError() || !r.configured(&resp.Diagnostics) {
		return
	}
	system, gmID := state.System.ValueString(), state.GradeManagerID.ValueString()
	id, err := strconv.ParseInt(state.ID.ValueString(), 10, 64)
	if err != nil {
		resp.Diagnostics.AddAttributeError(path.Root("id"), "Invalid group id", fmt.Sprintf("The state holds id %q, which is not numeric.", state.ID.ValueString()))
		return
	}
	label := fmt.Sprintf("bkiam_group %q (id %d)", state.Name.ValueString(), id)
	object := fmt.Sprintf("group %d in %s", id, system)
	if gmID == systemManager {
		// IAM lists no system manager's groups: whether the group still
		// exists shows in its member list, whose ownership 403 only a
		// deleted group answers (management.go).
		_, err := r.data.Client.GroupMembers(ctx, system, id)
		if errors.Is(err, bkiam.ErrNotOwned) {
			summary, detail, _ := goneOrUnconfirmed(label, object, true, nil)
			resp.Diagnostics.AddWarning(summary, detail)
			resp.State.RemoveResource(ctx)
		} else if err != nil {
			resp.Diagnostics.AddError("Cannot read the group", managementError(fmt.Sprintf("Reading group %d in %s", id, system), err))
		}
		return
	}
	gm, _ := strconv.ParseInt(gmID, 10, 64)
	groups, err := r.data.Client.ListGroups(ctx, system, gm, bkiam.GroupFilter{ID: id})
	if errors.Is(err, bkiam.ErrNotOwned) {
		// The grade manager refuses: gone, with its groups, if its list
		// confirms it.
		gone, checkErr := goneCheck{client: r.data.Client, system: system}.gradeManagerGone(ctx, gm)
		summary, detail, ok := goneOrUnconfirmed(label, fmt.Sprintf("%s (grade manager %d)", object, gm), gone, checkErr)
		if !ok {
			resp.Diagnostics.AddError(summary, detail)
			return
		}
		resp.Diagnostics.AddWarning(summary, detail)
		resp.State.RemoveResource(ctx)
		return
	}
	if err != nil {
		resp.Diagnostics.AddError("Cannot read the group", managementError(fmt.Sprintf("Reading group %d of grade manager %d in %s", id, gm, system), err))
		return
	}
	var found *bkiam.Group
	for i := range groups {
		if groups[i].ID == id {
			found = &groups[i]
		}
	}
	if found == nil {
		summary, detail, _ := goneOrUnconfirmed(label, object, true, nil)
		resp.Diagnostics.AddWarning(summary, detail)
		resp.State.RemoveResource(ctx)
		return
	}
	state.Name = types.StringValue(found.Name)
	state.Description = types.StringValue(found.Description)
	state.Readonly = types.BoolValue(found.Readonly)
	resp.Diagnostics.Append(resp.State.Set(ctx, state)...)
	resp.Diagnostics.Append(setGroupIdentity(ctx, resp.Identity, state)...)
}

func (r *groupResource) Update(ctx context.Context, req resource.UpdateRequest, resp *resource.UpdateResponse) {
	var plan groupModel
	resp.Diagnostics.Append(req.Plan.Get(ctx, &plan)...)
	timeout, diags := plan.Timeouts.Update(ctx, protocol.DefaultTimeout)
	resp.Diagnostics.Append(diags...)
	if resp.Diagnostics.HasError() || !r.configured(&resp.Diagnostics) {
		return
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	system := plan.System.ValueString()
	id, _ := strconv.ParseInt(plan.ID.ValueString(), 10, 64)
	if err := r.data.Client.UpdateGroup(ctx, system, id, plan.Name.ValueString(), plan.Description.ValueString()); err != nil {
		resp.Diagnostics.AddError("Cannot update the group", managementError(fmt.Sprintf("Updating group %d in %s", id, system), err))
		return
	}
	resp.Diagnostics.Append(resp.State.Set(ctx, plan)...)
	resp.Diagnostics.Append(setGroupIdentity(ctx, resp.Identity, plan)...)
}

func (r *groupResource) Delete(ctx context.Context, req resource.DeleteRequest, resp *resource.DeleteResponse) {
	var state groupModel
	resp.Diagnostics.Append(req.State.Get(ctx, &state)...)
	timeout, diags := state.Timeouts.Delete(ctx, protocol.DefaultTimeout)
	resp.Diagnostics.Append(diags...)
	if resp.Diagnostics.HasError() || !r.configured(&resp.Diagnostics) {
		return
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	system := state.System.ValueString()
	id, _ := strconv.ParseInt(state.ID.ValueString(), 10, 64)
	err := r.data.Client.DeleteGroup(ctx, system, id)
	if err != nil && !errors.Is(err, bkiam.ErrNotOwned) { // the ownership 403: gone already
		resp.Diagnostics.AddError("Cannot delete the group", managementError(fmt.Sprintf("Deleting group %d in %s", id, system), err))
	}
}

// ImportState takes SYSTEM/GRADE_MANAGER_ID/GROUP_ID; the read fills the
// rest. A system manager's group cannot be read back, so it cannot be
// imported.
func (r *groupResource) ImportState(ctx context.Context, req resource.ImportStateRequest, resp *resource.ImportStateResponse) {
	importID := req.ID
	if req.Identity != nil && !req.Identity.Raw.IsNull() {
		var identity groupIdentity
		if resp.Diagnostics.Append(req.Identity.Get(ctx, &identity)...); resp.Diagnostics.HasError() {
			return
		}
		importID = identity.System.ValueString() + "/" + identity.GradeManagerID.ValueString() + "/" + identity.ID.ValueString()
	}
	parts := strings.Split(importID, "/")
	if len(parts) == 3 && parts[1] == systemManager {
		resp.Diagnostics.AddError("Cannot import a system manager's group",
			"IAM's management API lists the groups of grade managers only, so a group under the system manager (\"-\") "+
				"cannot be read back to import. Declare it in the configuration, or recreate it under a grade manager.")
		return
	}
	if len(parts) != 3 || strings.TrimSpace(parts[0]) == "" || !positiveID(parts[1]) || !positiveID(parts[2]) {
		resp.Diagnostics.AddError("Invalid import ID", fmt.Sprintf("Expected SYSTEM/GRADE_MANAGER_ID/GROUP_ID, e.g. bk_cmdb/12/345; got %q.", importID))
		return
	}
	resp.Diagnostics.Append(resp.State.SetAttribute(ctx, path.Root("system"), parts[0])...)
	resp.Diagnostics.Append(resp.State.SetAttribute(ctx, path.Root("grade_manager_id"), parts[1])...)
	resp.Diagnostics.Append(resp.State.SetAttribute(ctx, path.Root("id"), parts[2])...)
}

// groupIdentity is the group's identity: its system, grade manager and
// id, none of which changes.
type groupIdentity struct {
	System         types.String `tfsdk:"system"`
	GradeManagerID types.String `tfsdk:"grade_manager_id"`
	ID             types.String `tfsdk:"id"`
}

func (r *groupResource) IdentitySchema(_ context.Context, _ resource.IdentitySchemaRequest, resp *resource.IdentitySchemaResponse) {
	resp.IdentitySchema = identityschema.Schema{Attributes: map[string]identityschema.Attribute{
		"system":           requiredString("The system whose management API manages the group."),
		"grade_manager_id": requiredString("The group's grade manager, or `-` for the system manager."),
		"id":               requiredString("The group's numeric id."),
	}}
}

func setGroupIdentity(ctx context.Context, to *tfsdk.ResourceIdentity, m groupModel) diag.Diagnostics {
	if to == nil {
		return nil
	}
	return to.Set(ctx, groupIdentity{System: m.System, GradeManagerID: m.GradeManagerID, ID: m.ID})
}

func positiveID(s string) bool {
	n, err := strconv.ParseInt(s, 10, 64)
	return err == nil && n > 0
}

func (r *groupResource) configured(diags *diag.Diagnostics) bool {
	if r.data == nil {
		diags.AddError("Provider not configured", "bkiam_group was used before the provider was configured; this is a bug in the provider.")
		return false
	}
	return true
}

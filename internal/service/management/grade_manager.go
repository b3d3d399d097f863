package management

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/hashicorp/terraform-plugin-framework-timeouts/resource/timeouts"
	"github.com/hashicorp/terraform-plugin-framework-validators/listvalidator"
	"github.com/hashicorp/terraform-plugin-framework-validators/setvalidator"
	"github.com/hashicorp/terraform-plugin-framework-validators/stringvalidator"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/resource/identityschema"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/booldefault"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/planmodifier"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/stringdefault"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/stringplanmodifier"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
	"github.com/hashicorp/terraform-plugin-framework/tfsdk"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"github.com/hashicorp/terraform-plugin-go/tftypes"
	"github.com/hashicorp/terraform-plugin-log/tflog"

	"github.com/bkiam/terraform-provider-bkiam/internal/bkiam"
	"github.com/bkiam/terraform-provider-bkiam/internal/conns"
	"github.com/bkiam/terraform-provider-bkiam/internal/protocol"
	"github.com/bkiam/terraform-provider-bkiam/internal/verify"
)

// gradeManagerResource is bkiam_grade_manager: a grade manager (分级管理员)
// created, and so owned, by a system through the management API. Its
// values are small, so the framework serves it.
type gradeManagerResource struct {
	data *conns.Data
}

var (
	_ resource.ResourceWithConfigure      = &gradeManagerResource{}
	_ resource.ResourceWithImportState    = &gradeManagerResource{}
	_ resource.ResourceWithModifyPlan     = &gradeManagerResource{}
	_ resource.ResourceWithValidateConfig = &gradeManagerResource{}
)

func NewGradeManagerResource() resource.Resource { return &gradeManagerResource{} }

// gradeManagerDeleteTimeout bounds the wait for IAM to carry out a
// delete, which it does in a background task.
const gradeManagerDeleteTimeout = 10 * time.Minute

type gradeManagerModel struct {
	ID                  types.String   `tfsdk:"id"`
	System              types.String   `tfsdk:"system"`
	Name                types.String   `tfsdk:"name"`
	Description         types.String   `tfsdk:"description"`
	Members             types.Set      `tfsdk:"members"`
	AuthorizationScopes []scopeModel   `tfsdk:"authorization_scopes"`
	SubjectScopes       []subjectScope `tfsdk:"subject_scopes"`
	SyncPerm            types.Bool     `tfsdk:"sync_perm"`
	GroupName           types.String   `tfsdk:"group_name"`
	Timeouts            timeouts.Value `tfsdk:"timeouts"`
}

type scopeModel struct {
	System    types.String         `tfsdk:"system"`
	Actions   []types.String       `tfsdk:"actions"`
	Resources []scopeResourceModel `tfsdk:"resources"`
}

type scopeResourceModel struct {
	System       types.String         `tfsdk:"system"`
	Type         types.String         `tfsdk:"type"`
	Instances    []scopeInstanceModel `tfsdk:"instances"`
	AllInstances types.Bool           `tfsdk:"all_instances"`
}

type scopeInstanceModel struct {
	ID        types.String     `tfsdk:"id"`
	Name      types.String     `tfsdk:"name"`
	Ancestors []scopeNodeModel `tfsdk:"ancestors"`
}

type scopeNodeModel struct {
	System types.String `tfsdk:"system"`
	Type   types.String `tfsdk:"type"`
	ID     types.String `tfsdk:"id"`
}

type subjectScope struct {
	Type types.String `tfsdk:"type"`
	ID   types.String `tfsdk:"id"`
}

func (r *gradeManagerResource) Metadata(_ context.Context, req resource.MetadataRequest, resp *resource.MetadataResponse) {
	resp.TypeName = req.ProviderTypeName + "_grade_manager"
}

func (r *gradeManagerResource) Schema(ctx context.Context, _ resource.SchemaRequest, resp *resource.SchemaResponse) {
	resp.Schema = schema.Schema{
		MarkdownDescription: "A grade manager (分级管理员) of BlueKing IAM, created through the management API by a system, " +
			"which then owns it: only apps that are clients of that system can change or delete it. A grade manager " +
			"may grant, within its authorization scopes, to the subjects of its subject scopes, through its user groups " +
			"(`bkiam_group`). API gateway only.",
		Attributes: map[string]schema.Attribute{
			"id": schema.StringAttribute{
				Computed:            true,
				MarkdownDescription: "The grade manager's numeric id, as `bkiam_group.grade_manager_id` takes it.",
				PlanModifiers:       []planmodifier.String{stringplanmodifier.UseStateForUnknown()},
			},
			"system": schema.StringAttribute{
				Required: true,
				MarkdownDescription: "The system that creates and owns the grade manager, e.g. `bk_cmdb`: its management " +
					"API is called, and the provider's app must be a client of it. Changing it replaces the grade manager.",
				Validators:    []validator.String{verify.IAMIDValidator{}},
				PlanModifiers: []planmodifier.String{stringplanmodifier.RequiresReplace()},
			},
			"name": schema.StringAttribute{
				Required: true,
				MarkdownDescription: "The grade manager's name, unique across IAM (compared case-insensitively, among " +
					"every grade manager and pending application), at most 512 characters, without surrounding white space " +
					"(IAM trims it).",
				Validators: []validator.String{stringvalidator.LengthBetween(1, 512), verify.TrimmedValidator{}},
			},
			"description": schema.StringAttribute{
				Optional: true, Computed: true, Default: stringdefault.StaticString(""),
				MarkdownDescription: "What the grade manager is for; empty by default, at most 255 characters.",
				Validators:          []validator.String{stringvalidator.LengthAtMost(255), verify.TrimmedValidator{}},
			},
			"members": schema.SetAttribute{
				Required:    true,
				ElementType: types.StringType,
				MarkdownDescription: "The usernames that administer the grade manager: at least one, at most 1 000, each " +
					"at most 64 characters. IAM does not check that they exist.",
				Validators: []validator.Set{setvalidator.SizeBetween(1, 1000),
					setvalidator.ValueStringsAre(stringvalidator.LengthBetween(1, 64))},
			},
			"authorization_scopes": schema.ListNestedAttribute{
				Optional: true,
				MarkdownDescription: "What the grade manager may grant: per system, actions and the resources they may " +
					"be granted on. IAM checks the actions and resource types against the system's model. IAM cannot read " +
					"the scopes back: they are kept from the configuration, and a change made outside Terraform goes " +
					"unnoticed (the next change of the resource sends the configured scopes again). Needed to create a grade " +
					"manager. Left out (an imported grade manager, as `terraform query` generates it), it is not managed by this " +
					"configuration: IAM keeps what it holds. But IAM replaces the scopes whole on every update, so a plan that " +
					"changes the grade manager fails until both scopes are written as they are in IAM (the IAM web UI shows them).",
				Validators: []validator.List{listvalidator.SizeAtLeast(1)},
				NestedObject: schema.NestedAttributeObject{Attributes: map[string]schema.Attribute{
					"system": schema.StringAttribute{Required: true, MarkdownDescription: "The system of the actions.",
						Validators: []validator.String{verify.IAMIDValidator{}}},
					"actions": schema.ListAttribute{Required: true, ElementType: types.StringType,
						MarkdownDescription: "The action ids: at least one, no duplicates.",
						Validators: []validator.List{listvalidator.SizeAtLeast(1), listvalidator.UniqueValues(),
							listvalidator.ValueStringsAre(verify.IAMIDValidator{})}},
					"resources": schema.ListNestedAttribute{
						Optional: true,
						MarkdownDescription: "The resource types of the actions, in the order the system relates them, each with " +
							"the instance paths the grade manager may grant; none for actions related to no type.",
						NestedObject: schema.NestedAttributeObject{Attributes: map[string]schema.Attribute{
							"system": schema.StringAttribute{Required: true, MarkdownDescription: "The resource type's system.",
								Validators: []validator.String{verify.IAMIDValidator{}}},
							"type": schema.StringAttribute{Required: true, MarkdownDescription: "The resource type.",
								Validators: []validator.String{verify.IAMIDValidator{}}},
							"all_instances": schema.BoolAttribute{
								Optional: true,
								MarkdownDescription: "`true` for the unlimited scope: every instance of the type, however it is given " +
									"(IAM's scope with no paths). Set it instead of `instances`; `{ id = \"*\" }` is not the same.",
							},
							"instances": schema.ListNestedAttribute{
								Optional: true,
								MarkdownDescription: "The instances of the type the grade manager may grant, each under its ancestors " +
									"in the system's topology. IAM compares a grant's path with these by prefix: `{ id = \"*\", ancestors = " +
									"[{ system = \"bk_cmdb\", type = \"biz\", id = \"2\" }] }` admits every instance under business 2; " +
									"`{ id = \"*\" }` admits any instance given by its id alone (as `bkiam_group_permission` gives a plain " +
									"key), not one given under ancestors; a `*` above the last node is no wildcard. With `sync_perm`, the " +
									"sync group is granted the scope as written, where a lone `*` is the literal id `*` and matches no real " +
									"instance.",
								Validators: []validator.List{listvalidator.SizeAtLeast(1)},
								NestedObject: schema.NestedAttributeObject{Attributes: map[string]schema.Attribute{
									"id": schema.StringAttribute{Required: true, MarkdownDescription: "The instance's id, or `*` (see `instances`).",
										Validators: []validator.String{verify.IAMIDValidator{}, stringvalidator.LengthAtMost(36)}},
									"name": schema.StringAttribute{Optional: true, Computed: true, Default: stringdefault.StaticString(""),
										MarkdownDescription: "The instance's display name; empty by default."},
									"ancestors": schema.ListNestedAttribute{
										Optional:            true,
										MarkdownDescription: "The instance's ancestors, outermost first.",
										NestedObject: schema.NestedAttributeObject{Attributes: map[string]schema.Attribute{
											"system": schema.StringAttribute{Required: true, MarkdownDescription: "The ancestor's system.",
												Validators: []validator.String{verify.IAMIDValidator{}}},
											"type": schema.StringAttribute{Required: true, MarkdownDescription: "The ancestor's resource type.",
												Validators: []validator.String{verify.IAMIDValidator{}}},
											"id": schema.StringAttribute{Required: true, MarkdownDescription: "The ancestor's id, or `*`.",
												Validators: []validator.String{verify.IAMIDValidator{}, stringvalidator.LengthAtMost(36)}},
										}},
									},
								}},
							},
						}},
					},
				}},
			},
			"subject_scopes": schema.ListNestedAttribute{
				Optional: true,
				MarkdownDescription: "Who the grade manager's groups may hold: users and departments, or " +
					"`{ type = \"*\", id = \"*\" }` for everyone. IAM cannot read them back: they are kept from the configuration. " +
					"Needed to create a grade manager; left out, as `authorization_scopes`: IAM keeps what it holds, and a plan " +
					"that changes the grade manager fails until both are written.",
				Validators: []validator.List{listvalidator.SizeAtLeast(1)},
				NestedObject: schema.NestedAttributeObject{Attributes: map[string]schema.Attribute{
					"type": schema.StringAttribute{Required: true, MarkdownDescription: "`user`, `department` or `*`.",
						Validators: []validator.String{stringvalidator.OneOf("user", "department", "*")}},
					"id": schema.StringAttribute{Required: true, MarkdownDescription: "A username, a numeric department id, or `*` " +
						"(with type `*`).", Validators: []validator.String{verify.IAMIDValidator{}}},
				}},
			},
			"sync_perm": schema.BoolAttribute{
				Optional: true, Computed: true, Default: booldefault.StaticBool(false),
				MarkdownDescription: "Whether IAM keeps a *sync group*: a user group holding the grade manager's members " +
					"with its whole authorization scope. Every update sends it, so the group never goes by omission.",
			},
			"group_name": schema.StringAttribute{
				Optional: true,
				MarkdownDescription: "The sync group's name; IAM's default is `<name> administrator group` for a grade manager made through the " +
					"management API (IAM answers it in English), `<name>-管理员组` when the web UI makes it. IAM cannot read it back: " +
					"it is kept from the configuration. Unset, a rename of the grade manager also renames the sync group, to " +
					"IAM's default for the new name (IAM would keep the old one; the lists tell the sync group by IAM's mark, " +
					"but by its default name where the app may not read the mark); the plan says so.",
				Validators: []validator.String{stringvalidator.LengthBetween(1, 512)},
			},
			"timeouts": timeouts.Attributes(ctx, timeouts.Opts{Create: true, Update: true, Delete: true,
				DeleteDescription: "How long a destroy waits for IAM to carry out the delete, which it does in a background " +
					"task (default 10m)."}),
		},
	}
}

func (r *gradeManagerResource) Configure(_ context.Context, req resource.ConfigureRequest, resp *resource.ConfigureResponse) {
	r.data = conns.FromProviderData(req.ProviderData, "bkiam_grade_manager", &resp.Diagnostics)
}

// ValidateConfig checks what the schema cannot say of one attribute.
func (r *gradeManagerResource) ValidateConfig(ctx context.Context, req resource.ValidateConfigRequest, resp *resource.ValidateConfigResponse) {
	walkScopeResources(ctx, req.Config, false, &resp.Diagnostics)
	var scopes []subjectScope
	resp.Diagnostics.Append(req.Config.GetAttribute(ctx, path.Root("subject_scopes"), &scopes)...)
	for i, s := range scopes {
		at := path.Root("subject_scopes").AtListIndex(i)
		typ, id := s.Type.ValueString(), s.ID.ValueString()
		if s.Type.IsUnknown() || s.ID.IsUnknown() {
			continue
		}
		switch {
		case (typ == "*") != (id == "*"):
			resp.Diagnostics.AddAttributeError(at, "Invalid subject scope",
				fmt.Sprintf("subject_scopes[%d] is { type = %q, id = %q }: everyone is { type = \"*\", id = \"*\" }, and the id \"*\" "+
					"goes with no other type.", i, typ, id))
		case typ == "department":
			if n, err := strconv.ParseInt(id, 10, 64); err != nil || n <= 0 {
				resp.Diagnostics.AddAttributeError(at.AtName("id"), "Invalid department id",
					fmt.Sprintf("subject_scopes[%d].id: department ids are the numeric ids of IAM's organisation, such as \"12\"; got %q.", i, id))
			}
		}
	}
}

// walkScopeResources checks what the schema cannot say of the configured
// authorization scopes' resources (warnSync: see checkScopeStars).
func walkScopeResources(ctx context.Context, config tfsdk.Config, warnSync bool, diags *diag.Diagnostics) {
	// Decoded with framework values, which may be unknown at validation.
	var authScopes []struct {
		System    types.String `tfsdk:"system"`
		Actions   types.List   `tfsdk:"actions"`
		Resources types.List   `tfsdk:"resources"`
	}
	diags.Append(config.GetAttribute(ctx, path.Root("authorization_scopes"), &authScopes)...)
	for i, sc := range authScopes {
		if sc.Resources.IsUnknown() || sc.Resources.IsNull() {
			continue
		}
		var resources []struct {
			System       types.String `tfsdk:"system"`
			Type         types.String `tfsdk:"type"`
			Instances    types.List   `tfsdk:"instances"`
			AllInstances types.Bool   `tfsdk:"all_instances"`
		}
		diags.Append(sc.Resources.ElementsAs(ctx, &resources, false)...)
		for j, res := range resources {
			at := path.Root("authorization_scopes").AtListIndex(i).AtName("resources").AtListIndex(j)
			if res.AllInstances.IsUnknown() || res.Instances.IsUnknown() {
				continue
			}
			all := res.AllInstances.ValueBool()
			checkScopeStars(ctx, config, at, res.Type.ValueString(), res.Instances, warnSync, diags)
			switch {
			case all && !res.Instances.IsNull():
				diags.AddAttributeError(at.AtName("all_instances"), "Both all_instances and instances",
					fmt.Sprintf("authorization_scopes[%d].resources[%d] sets all_instances = true and instances: the unlimited scope "+
						"already holds every instance. Remove instances, or all_instances.", i, j))
			case !all && res.Instances.IsNull():
				diags.AddAttributeError(at, "No instances",
					fmt.Sprintf("authorization_scopes[%d].resources[%d] names no instances: list the instances the grade manager "+
						"may grant, or set all_instances = true for every instance of the type.", i, j))
			}
		}
	}
}

// checkScopeStars refuses an ancestor "*" in a scope's instance, which IAM's
// prefix comparison reads as the literal id (it admits no real grant), and
// (warnSync: at plan, so that the warning shows once) warns of a lone
// { id = "*" } with sync_perm: the sync group is granted the scope as
// written, where a one-node "*" is the literal id "*".
func checkScopeStars(ctx context.Context, config tfsdk.Config, at path.Path, typ string, instances types.List, warnSync bool, diags *diag.Diagnostics) {
	if instances.IsNull() || instances.IsUnknown() {
		return
	}
	var list []struct {
		ID        types.String `tfsdk:"id"`
		Name      types.String `tfsdk:"name"`
		Ancestors types.List   `tfsdk:"ancestors"`
	}
	if d := instances.ElementsAs(ctx, &list, false); d.HasError() {
		return
	}
	var syncPerm types.Bool
	config.GetAttribute(ctx, path.Root("sync_perm"), &syncPerm)
	for k, inst := range list {
		iat := at.AtName("instances").AtListIndex(k)
		var ancestors []struct {
			System types.String `tfsdk:"system"`
			Type   types.String `tfsdk:"type"`
			ID     types.String `tfsdk:"id"`
		}
		if !inst.Ancestors.IsNull() && !inst.Ancestors.IsUnknown() {
			if d := inst.Ancestors.ElementsAs(ctx, &ancestors, false); d.HasError() {
				continue
			}
		}
		for a, anc := range ancestors {
			if anc.ID.ValueString() == "*" {
				diags.AddAttributeError(iat.AtName("ancestors").AtListIndex(a).AtName("id"), "An ancestor * is no wildcard",
					fmt.Sprintf("IAM compares a grant's path with a scope's by string prefix, and only a * in the last node "+
						"(the instance's id) stands for any id there: a * above it is the literal id \"*\", so this scope "+
						"instance would admit no real grant. Give the ancestor's id (one scope instance per ancestor), drop "+
						"the ancestors for instances given by their id alone, or set all_instances = true for every %s.", typ))
			}
		}
		if warnSync && inst.ID.ValueString() == "*" && len(ancestors) == 0 && syncPerm.ValueBool() {
			diags.AddAttributeWarning(iat.AtName("id"), "The sync group gets the literal id *",
				fmt.Sprintf("With sync_perm, IAM grants the sync group this scope as written, and to IAM a lone * is the "+
					"literal id \"*\", not every %s: the sync group would be granted no real instance of it. For every "+
					"instance write all_instances = true (IAM's unlimited scope) instead of instances = [{ id = \"*\" }].", typ))
		}
	}
}

// ModifyPlan refuses, for a create or a change, a provider that cannot
// reach the management API, and (check_model) scopes the model refuses.
func (r *gradeManagerResource) ModifyPlan(ctx context.Context, req resource.ModifyPlanRequest, resp *resource.ModifyPlanResponse) {
	r.recordPlannedScope(ctx, req)
	if req.Plan.Raw.IsNull() || req.Plan.Raw.Equal(req.State.Raw) {
		return
	}
	if summary, detail, ok := managementNeedsGateway(r.data, "bkiam_grade_manager"); ok {
		resp.Diagnostics.AddError(summary, detail)
		return
	}
	if !checkScopesSet(ctx, req, &resp.Diagnostics) {
		return
	}
	var warnings diag.Diagnostics
	walkScopeResources(ctx, req.Config, true, &warnings)
	resp.Diagnostics.Append(warnings.Warnings()...)
	var scopes []scopeModel
	if d := req.Plan.GetAttribute(ctx, path.Root("authorization_scopes"), &scopes); d.HasError() {
		return // not yet known: the check runs when it is
	}
	checkScopeModels(ctx, r.data, scopes, &resp.Diagnostics)
	if from, to, ok := syncGroupRename(ctx, req.State, req.Plan); ok {
		resp.Diagnostics.AddAttributeWarning(path.Root("name"), "Sync group renamed with the grade manager",
			fmt.Sprintf("The apply renames the grade manager's sync group from %q to %q, IAM's default name for its new name. "+
				"IAM keeps a sync group's name when its grade manager is renamed, unless the update names it; the lists "+
				"(terraform query) tell the sync group by IAM's mark, but by its default name where the app may not read "+
				"the mark (IAM's group_list), and would then offer it as an ordinary group. Set group_name to give it "+
				"another name.", from, to))
	}
}

// syncGroupRename returns the default sync group names before and after
// an update that renames a grade manager with a sync group whose name the
// configuration leaves to IAM: the update then names it (Update), so that
// it keeps IAM's default name, by which the lists tell it where they
// cannot read IAM's mark (syncGroupOf).
func syncGroupRename(ctx context.Context, state tfsdk.State, plan tfsdk.Plan) (from, to string, ok bool) {
	if state.Raw.IsNull() || plan.Raw.IsNull() {
		return "", "", false
	}
	var was, will gradeManagerModel
	if state.Get(ctx, &was).HasError() || plan.Get(ctx, &will).HasError() {
		return "", "", false
	}
	if !will.SyncPerm.ValueBool() || !will.GroupName.IsNull() || will.Name.IsUnknown() || will.Name.Equal(was.Name) {
		return "", "", false
	}
	return syncGroupNames(was.Name.ValueString())[0], syncGroupNames(will.Name.ValueString())[0], true
}

// checkScopesSet refuses a create or an update of a grade manager whose
// authorization_scopes or subject_scopes are null. Null is "not managed
// here: IAM keeps what it holds", which an import leaves (IAM cannot read
// them back) and a no-change plan or a destroy keeps; but IAM needs both
// at create, and its update is a full replace that needs both.
func checkScopesSet(ctx context.Context, req resource.ModifyPlanRequest, diags *diag.Diagnostics) bool {
	var changing []string
	if !req.State.Raw.IsNull() {
		changing = changedAttributes(req.Plan.Raw, req.State.Raw)
	}
	ok := true
	for _, attr := range []string{"authorization_scopes", "subject_scopes"} {
		var v types.List
		if d := req.Plan.GetAttribute(ctx, path.Root(attr), &v); d.HasError() || !v.IsNull() {
			continue
		}
		summary, detail := scopesNotSet(attr, req.State.Raw.IsNull(), changing)
		diags.AddAttributeError(path.Root(attr), summary, detail)
		ok = false
	}
	return ok
}

// scopesNotSet is the plan error of a create (creating) or an update that
// changes changing while attr is null.
func scopesNotSet(attr string, creating bool, changing []string) (summary, detail string) {
	if creating {
		return "Scopes needed to create a grade manager",
			fmt.Sprintf("%s is not set, and IAM creates a grade manager only with both authorization_scopes and "+
				"subject_scopes: write them. (Leaving them out is for a grade manager that exists, imported: IAM then keeps "+
				"what it holds.)", attr)
	}
	what := "the grade manager"
	if len(changing) > 0 {
		what = strings.Join(changing, ", ")
	}
	return "Scopes needed to update the grade manager",
		fmt.Sprintf("%s is not set, and this plan updates the grade manager (%s). IAM replaces a grade manager's "+
			"scopes whole on every update and cannot read them back: write authorization_scopes and subject_scopes as they "+
			"are in IAM (the IAM web UI shows them) before changing %s.", attr, what, what)
}

// changedAttributes names the top-level attributes whose planned value is
// not the state's, id aside.
func changedAttributes(plan, state tftypes.Value) []string {
	var p, s map[string]tftypes.Value
	if plan.As(&p) != nil || state.As(&s) != nil {
		return nil
	}
	var out []string
	for _, k := range slices.Sorted(maps.Keys(p)) {
		if k != "id" && !p[k].Equal(s[k]) {
			out = append(out, k)
		}
	}
	return out
}

// recordPlannedScope records the scope this plan leaves the grade manager
// with, for the plan-time scope check of bkiam_group_permission
// (plannedScopes); a destroy, or a scope not yet known, forgets it.
func (r *gradeManagerResource) recordPlannedScope(ctx context.Context, req resource.ModifyPlanRequest) {
	if r.data == nil {
		return
	}
	var id, name types.String
	var prior types.String
	req.State.GetAttribute(ctx, path.Root("id"), &prior)
	if req.Plan.Raw.IsNull() {
		r.data.PlannedScopes.SetGradeManager(prior.ValueString(), "", nil)
		return
	}
	req.Plan.GetAttribute(ctx, path.Root("id"), &id)
	req.Plan.GetAttribute(ctx, path.Root("name"), &name)
	if id.IsUnknown() || id.IsNull() {
		return
	}
	// Null scopes are IAM's, which it cannot read back: unknown, not
	// empty, so the group permissions' check is skipped.
	var raw types.List
	req.Plan.GetAttribute(ctx, path.Root("authorization_scopes"), &raw)
	var m gradeManagerModel
	if raw.IsNull() || raw.IsUnknown() {
		r.data.PlannedScopes.SetGradeManager(id.ValueString(), "", nil)
		return
	}
	if d := req.Plan.GetAttribute(ctx, path.Root("authorization_scopes"), &m.AuthorizationScopes); d.HasError() || !scopesKnown(m.AuthorizationScopes) {
		r.data.PlannedScopes.SetGradeManager(id.ValueString(), "", nil)
		return
	}
	r.data.PlannedScopes.SetGradeManager(id.ValueString(), name.ValueString(), m.authorizationScopes())
}

// scopesKnown reports whether every value of the scopes is known.
func scopesKnown(scopes []scopeModel) bool {
	for _, s := range scopes {
		if s.System.IsUnknown() || slices.ContainsFunc(s.Actions, types.String.IsUnknown) {
			return false
		}
		for _, r := range s.Resources {
			if r.System.IsUnknown() || r.Type.IsUnknown() || r.AllInstances.IsUnknown() {
				return false
			}
			for _, in := range r.Instances {
				if in.ID.IsUnknown() || slices.ContainsFunc(in.Ancestors, func(a scopeNodeModel) bool {
					return a.System.IsUnknown() || a.Type.IsUnknown() || a.ID.IsUnknown()
				}) {
					return false
				}
			}
		}
	}
	return true
}

// checkScopeModels checks each authorization scope against the model its
// system registered in IAM, as IAM checks a grade manager's create and
// update: its actions exist and the resources give their related resource
// types in order (else 1902412 or 1902417 at apply). What is unknown is
// skipped.
func checkScopeModels(ctx context.Context, data *conns.Data, scopes []scopeModel, diags *diag.Diagnostics) {
	if data == nil || !data.CheckModel || data.Models == nil {
		return
	}
	for i, sc := range scopes {
		if sc.System.IsUnknown() || sc.System.IsNull() {
			continue
		}
		system := sc.System.ValueString()
		at := path.Root("authorization_scopes").AtListIndex(i)
		model, err := data.Models.Get(ctx, system)
		if err != nil {
			diags.AddAttributeError(at.AtName("system"), "Cannot read the model of system "+system,
				fmt.Sprintf("The plan checks each authorization scope against the model its system registered in IAM, and "+
					"reading the model of %s failed: %s. Fix the cause, or set check_model = false in the provider configuration "+
					"to plan without the checks (IAM then refuses what the model does not allow at apply).", system, err))
			continue
		}
		got := make([]*[2]string, len(sc.Resources))
		for j, res := range sc.Resources {
			if !res.System.IsUnknown() && !res.Type.IsUnknown() {
				got[j] = &[2]string{res.System.ValueString(), res.Type.ValueString()}
			}
		}
		where := fmt.Sprintf("authorization_scopes[%d].resources", i)
		for j, a := range sc.Actions {
			if a.IsUnknown() || a.IsNull() {
				continue
			}
			id := a.ValueString()
			action := model.Action(id)
			if action == nil {
				diags.AddAttributeError(at.AtName("actions").AtListIndex(j), "Unknown action",
					fmt.Sprintf("System %s has no action %q in its IAM model; IAM would refuse the grade manager's scope.%s",
						model.System, id, verify.Closest(id, verify.ActionIDs(model))))
				continue
			}
			for _, p := range verify.RelatedTypeProblems(model, *action, got, where, "name it in an authorization scope of its own",
				"authorization scopes of their own") {
				resAt := at.AtName("resources")
				if p.Index >= 0 {
					resAt = resAt.AtListIndex(p.Index)
				}
				diags.AddAttributeError(resAt, p.Summary, p.Detail)
			}
		}
	}
}

// authorizationScopes are the scopes as IAM takes them.
func (m gradeManagerModel) authorizationScopes() []bkiam.AuthorizationScope {
	out := []bkiam.AuthorizationScope{}
	for _, s := range m.AuthorizationScopes {
		scope := bkiam.AuthorizationScope{System: s.System.ValueString(), Actions: []bkiam.Action{}, Resources: []bkiam.PathResource{}}
		for _, a := range s.Actions {
			scope.Actions = append(scope.Actions, bkiam.Action{ID: a.ValueString()})
		}
		for _, res := range s.Resources {
			// All instances is IAM's unlimited scope: the type with no paths ("paths": []).
			pr := bkiam.PathResource{System: res.System.ValueString(), Type: res.Type.ValueString(), Paths: [][]bkiam.PathNode{}}
			for _, in := range res.Instances {
				nodes := make([]bkiam.PathNode, 0, len(in.Ancestors)+1)
				for _, a := range in.Ancestors {
					nodes = append(nodes, bkiam.PathNode{System: a.System.ValueString(), Type: a.Type.ValueString(), ID: a.ID.ValueString()})
				}
				nodes = append(nodes, bkiam.PathNode{System: pr.System, Type: pr.Type, ID: in.ID.ValueString(), Name: in.Name.ValueString()})
				pr.Paths = append(pr.Paths, nodes)
			}
			scope.Resources = append(scope.Resources, pr)
		}
		out = append(out, scope)
	}
	return out
}

// spec is the body of a create or a full-replace update.
func (m gradeManagerModel) spec(ctx context.Context) (bkiam.GradeManagerSpec, diag.Diagnostics) {
	var diags diag.Diagnostics
	spec := bkiam.GradeManagerSpec{
		Name: m.Name.ValueString(), Description: m.Description.ValueString(),
		SyncPerm: m.SyncPerm.ValueBool(), GroupName: m.GroupName.ValueString(),
	}
	diags.Append(m.Members.ElementsAs(ctx, &spec.Members, false)...)
	spec.AuthorizationScopes = m.authorizationScopes()
	for _, s := range m.SubjectScopes {
		spec.SubjectScopes = append(spec.SubjectScopes, bkiam.SubjectScope{Type: s.Type.ValueString(), ID: s.ID.ValueString()})
	}
	return spec, diags
}

func (r *gradeManagerResource) Create(ctx context.Context, req resource.CreateRequest, resp *resource.CreateResponse) {
	var plan gradeManagerModel
	resp.Diagnostics.Append(req.Plan.Get(ctx, &plan)...)
	timeout, diags := plan.Timeouts.Create(ctx, protocol.DefaultTimeout)
	resp.Diagnostics.Append(diags...)
	spec, diags := plan.spec(ctx)
	resp.Diagnostics.Append(diags...)
	if resp.Diagnostics.HasError() || !r.configured(&resp.Diagnostics) {
		return
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	system := plan.System.ValueString()
	id, err := r.data.Client.CreateGradeManager(ctx, system, spec)
	if err != nil && spec.SyncPerm && bkiam.BackendRefused(err) {
		// IAM commits the grade manager before its backend builds the sync group: a refusal
		// there (a member the backend does not know) leaves the grade manager without it.
		if found := r.findCreated(ctx, system, spec); found > 0 {
			plan.ID = types.StringValue(strconv.FormatInt(found, 10))
			resp.Diagnostics.Append(resp.State.Set(ctx, plan)...)
			resp.Diagnostics.Append(setGradeManagerIdentity(ctx, resp.Identity, plan)...)
			resp.Diagnostics.AddError("Grade manager created without its sync group",
				managementError(fmt.Sprintf("IAM created grade manager %d (%q in %s), then failed to build its sync group", found, spec.Name, system), err)+
					" The grade manager is recorded in state, tainted, so that the next apply replaces it with one that has its "+
					"sync group; or set sync_perm = false.")
			return
		}
	}
	if err != nil && lostCreate(err) {
		if found := r.findCreated(ctx, system, spec); found > 0 {
			resp.Diagnostics.AddWarning("Grade manager found after a lost answer",
				fmt.Sprintf("IAM's answer to the create of grade manager %q in %s did not arrive (%v). The provider found grade "+
					"manager %d, which %s created with that name, the same description and the same members, and records it.",
					spec.Name, system, err, found, system))
			id, err = found, nil
		}
	}
	if err != nil {
		resp.Diagnostics.AddError("Cannot create the grade manager",
			managementError(fmt.Sprintf("Creating grade manager %q in %s", spec.Name, system), err))
		return
	}
	plan.ID = types.StringValue(strconv.FormatInt(id, 10))
	resp.Diagnostics.Append(resp.State.Set(ctx, plan)...)
	resp.Diagnostics.Append(setGradeManagerIdentity(ctx, resp.Identity, plan)...)
}

// findCreated looks for the grade manager a create whose answer was lost
// may have made: the system's grade manager of that exact name, with the
// description and members asked for. 0 when there is none, or more than
// one, or the lookup fails.
func (r *gradeManagerResource) findCreated(ctx context.Context, system string, spec bkiam.GradeManagerSpec) int64 {
	found, err := r.data.Client.GradeManagersNamed(ctx, system, spec.Name)
	if err != nil || len(found) != 1 {
		tflog.Warn(ctx, "could not find the grade manager of a lost create", map[string]any{"found": len(found), "error": fmt.Sprint(err)})
		return 0
	}
	gm, err := r.data.Client.GradeManager(ctx, system, found[0].ID)
	if err != nil || gm.Description != spec.Description || !sameSet(gm.Members, spec.Members) {
		return 0
	}
	return gm.ID
}

func sameSet(a, b []string) bool {
	a, b = slices.Clone(a), slices.Clone(b)
	slices.Sort(a)
	slices.Sort(b)
	return slices.Equal(slices.Compact(a), slices.Compact(b))
}

func (r *gradeManagerResource) Read(ctx context.Context, req resource.ReadRequest, resp *resource.ReadResponse) {
	var state gradeManagerModel
	resp.Diagnostics.Append(req.State.Get(ctx, &state)...)
	// The identity of what Terraform holds, even if the read finds it gone
	// (the framework wants one after every read, and state written before
	// identities has none).
	resp.Diagnostics.Append(setGradeManagerIdentity(ctx, resp.Identity, state)...)
	if resp.Diagnostics.HasError() || !r.configured(&resp.Diagnostics) {
		return
	}
	id, err := strconv.ParseInt(state.ID.ValueString(), 10, 64)
	if err != nil {
		resp.Diagnostics.AddAttributeError(path.Root("id"), "Invalid grade manager id", fmt.Sprintf("The state holds id %q, which is not numeric.", state.ID.ValueString()))
		return
	}
	system := state.System.ValueString()
	gm, err := r.data.Client.GradeManager(ctx, system, id)
	if errors.Is(err, bkiam.ErrNotOwned) {
		// Gone, if IAM's list confirms it (management.go).
		gone, checkErr := goneCheck{client: r.data.Client, system: system}.gradeManagerGone(ctx, id)
		summary, detail, ok := goneOrUnconfirmed(fmt.Sprintf("bkiam_grade_manager %q (id %d)", state.Name.ValueString(), id),
			fmt.Sprintf("grade manager %d in %s", id, system), gone, checkErr)
		if !ok {
			resp.Diagnostics.AddError(summary, detail)
			return
		}
		resp.Diagnostics.AddWarning(summary, detail)
		resp.State.RemoveResource(ctx)
		return
	}
	if err != nil {
		resp.Diagnostics.AddError("Cannot read the grade manager", managementError(fmt.Sprintf("Reading grade manager %d in %s", id, system), err))
		return
	}
	state.Name = types.StringValue(gm.Name)
	state.Description = types.StringValue(gm.Description)
	members, diags := types.SetValueFrom(ctx, types.StringType, gm.Members)
	resp.Diagnostics.Append(diags...)
	state.Members = members
	state.SyncPerm = types.BoolValue(gm.SyncPerm)
	if gm.SyncPerm {
		// IAM answers sync_perm as set even when it never built the sync group (a member its
		// backend refused) or the group was deleted: look for the group itself.
		missing, name, err := r.syncGroupMissing(ctx, system, id, gm.Name, state.GroupName)
		switch {
		case err != nil:
			resp.Diagnostics.AddError("Cannot read the grade manager", managementError(
				fmt.Sprintf("Looking up the sync group %q of grade manager %d in %s", name, id, system), err))
			return
		case missing:
			// Recorded as off, so that the plan shows the update that builds it again.
			state.SyncPerm = types.BoolValue(false)
			resp.Diagnostics.AddWarning("Sync group missing",
				fmt.Sprintf("bkiam_grade_manager %q (id %d): IAM says sync_perm is set, but the grade manager has no group named "+
					"%q. The plan sends sync_perm again, which makes IAM build it.", gm.Name, id, name))
		}
	}
	resp.Diagnostics.Append(resp.State.Set(ctx, state)...)
	resp.Diagnostics.Append(setGradeManagerIdentity(ctx, resp.Identity, state)...)
}

// syncGroupMissing reports whether the grade manager certainly has no sync group. IAM cannot read
// the sync group's name back: with group_name in state it is that; without, it is one of IAM's
// defaults (syncGroupNames), or an import left group_name unknown, so then only a grade manager
// with no group at all certainly lacks it.
func (r *gradeManagerResource) syncGroupMissing(ctx context.Context, system string, id int64, gmName string, groupName types.String) (bool, string, error) {
	if name := groupName.ValueString(); name != "" {
		group, err := r.data.Client.GroupByName(ctx, system, id, name)
		return err == nil && group == nil, name, err
	}
	name := syncGroupNames(gmName)[0]
	groups, err := r.data.Client.ListGroups(ctx, system, id, bkiam.GroupFilter{})
	return err == nil && len(groups) == 0, name, err
}

func (r *gradeManagerResource) Update(ctx context.Context, req resource.UpdateRequest, resp *resource.UpdateResponse) {
	var plan gradeManagerModel
	resp.Diagnostics.Append(req.Plan.Get(ctx, &plan)...)
	timeout, diags := plan.Timeouts.Update(ctx, protocol.DefaultTimeout)
	resp.Diagnostics.Append(diags...)
	spec, diags := plan.spec(ctx)
	resp.Diagnostics.Append(diags...)
	if resp.Diagnostics.HasError() || !r.configured(&resp.Diagnostics) {
		return
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	id, _ := strconv.ParseInt(plan.ID.ValueString(), 10, 64)
	system := plan.System.ValueString()
	// A full replace: sync_perm and group_name always go with it, or IAM
	// would delete the sync group.
	if _, to, ok := syncGroupRename(ctx, req.State, req.Plan); ok {
		spec.GroupName = to // the plan said so (ModifyPlan)
	}
	if err := r.data.Client.UpdateGradeManager(ctx, system, id, spec); err != nil {
		resp.Diagnostics.AddError("Cannot update the grade manager", managementError(fmt.Sprintf("Updating grade manager %d in %s", id, system), err))
		return
	}
	resp.Diagnostics.Append(resp.State.Set(ctx, plan)...)
	resp.Diagnostics.Append(setGradeManagerIdentity(ctx, resp.Identity, plan)...)
}

func (r *gradeManagerResource) Delete(ctx context.Context, req resource.DeleteRequest, resp *resource.DeleteResponse) {
	var state gradeManagerModel
	resp.Diagnostics.Append(req.State.Get(ctx, &state)...)
	timeout, diags := state.Timeouts.Delete(ctx, gradeManagerDeleteTimeout)
	resp.Diagnostics.Append(diags...)
	if resp.Diagnostics.HasError() || !r.configured(&resp.Diagnostics) {
		return
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	id, _ := strconv.ParseInt(state.ID.ValueString(), 10, 64)
	system := state.System.ValueString()
	err := r.data.Client.DeleteGradeManager(ctx, system, id)
	if errors.Is(err, bkiam.ErrNotOwned) {
		return // gone already
	}
	if err != nil {
		resp.Diagnostics.AddError("Cannot delete the grade manager", managementError(fmt.Sprintf("Deleting grade manager %d in %s", id, system), err))
		return
	}
	// IAM answers at once and deletes in a background task, groups and
	// members included: wait until it no longer has the grade manager.
	wait := 250 * time.Millisecond
	for {
		_, err := r.data.Client.GradeManager(ctx, system, id)
		switch {
		case errors.Is(err, bkiam.ErrNotOwned):
			return
		case err != nil && ctx.Err() == nil:
			resp.Diagnostics.AddError("Cannot tell whether the grade manager is deleted",
				managementError(fmt.Sprintf("IAM accepted the delete of grade manager %d in %s, but reading it back failed", id, system), err))
			return
		}
		select {
		case <-ctx.Done():
			resp.Diagnostics.AddError("The grade manager is still there",
				fmt.Sprintf("IAM accepted the delete of grade manager %d in %s, but still had it after %s: IAM deletes grade "+
					"managers in a background task, with their groups and members. Check IAM's task queue (celery) and run "+
					"terraform destroy again; a longer timeouts.delete waits longer.", id, system, timeout))
			return
		case <-time.After(wait):
			wait = min(2*wait, 2*time.Second)
		}
	}
}

// ImportState takes SYSTEM/ID, or the identity { system, id }. What IAM
// cannot read back (the scopes, the sync group's name) comes from the
// configuration at the next apply.
func (r *gradeManagerResource) ImportState(ctx context.Context, req resource.ImportStateRequest, resp *resource.ImportStateResponse) {
	importID := req.ID
	if req.Identity != nil && !req.Identity.Raw.IsNull() {
		var identity gradeManagerIdentity
		if resp.Diagnostics.Append(req.Identity.Get(ctx, &identity)...); resp.Diagnostics.HasError() {
			return
		}
		importID = identity.System.ValueString() + "/" + identity.ID.ValueString()
	}
	system, id, ok := strings.Cut(importID, "/")
	if n, err := strconv.ParseInt(id, 10, 64); !ok || strings.TrimSpace(system) == "" || err != nil || n <= 0 {
		resp.Diagnostics.AddError("Invalid import ID", fmt.Sprintf("Expected SYSTEM/GRADE_MANAGER_ID, e.g. bk_cmdb/12; got %q.", importID))
		return
	}
	resp.Diagnostics.Append(resp.State.SetAttribute(ctx, path.Root("system"), system)...)
	resp.Diagnostics.Append(resp.State.SetAttribute(ctx, path.Root("id"), id)...)
}

// gradeManagerIdentity is the grade manager's identity: the system that
// created it and its id, neither of which changes.
type gradeManagerIdentity struct {
	System types.String `tfsdk:"system"`
	ID     types.String `tfsdk:"id"`
}

func (r *gradeManagerResource) IdentitySchema(_ context.Context, _ resource.IdentitySchemaRequest, resp *resource.IdentitySchemaResponse) {
	resp.IdentitySchema = identityschema.Schema{Attributes: map[string]identityschema.Attribute{
		"system": requiredString("The system that created the grade manager."),
		"id":     requiredString("The grade manager's numeric id."),
	}}
}

func setGradeManagerIdentity(ctx context.Context, to *tfsdk.ResourceIdentity, m gradeManagerModel) diag.Diagnostics {
	if to == nil {
		return nil
	}
	return to.Set(ctx, gradeManagerIdentity{System: m.System, ID: m.ID})
}

func (r *gradeManagerResource) configured(diags *diag.Diagnostics) bool {
	if r.data == nil {
		diags.AddError("Provider not configured", "bkiam_grade_manager was used before the provider was configured; this is a bug in the provider.")
		return false
	}
	return true
}

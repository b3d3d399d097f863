package provider

import (
	"context"
	"fmt"
	"sort"
	"strings"

	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/bkiam/terraform-provider-bkiam/internal/grantplan"
)

var (
	_ resource.Resource                   = (*creatorGrantResource)(nil)
	_ resource.ResourceWithConfigure      = (*creatorGrantResource)(nil)
	_ resource.ResourceWithValidateConfig = (*creatorGrantResource)(nil)
	_ resource.ResourceWithModifyPlan     = (*creatorGrantResource)(nil)
	_ resource.ResourceWithImportState    = (*creatorGrantResource)(nil)
)

// creatorGrantResource is bkiam_creator_grant.
type creatorGrantResource struct {
	data *providerData
}

// NewCreatorGrantResource returns the bkiam_creator_grant resource.
func NewCreatorGrantResource() resource.Resource { return &creatorGrantResource{} }

func (r *creatorGrantResource) Metadata(_ context.Context, req resource.MetadataRequest, resp *resource.MetadataResponse) {
	resp.TypeName = req.ProviderTypeName + "_creator_grant"
}

func (r *creatorGrantResource) Schema(ctx context.Context, _ resource.SchemaRequest, resp *resource.SchemaResponse) {
	resp.Schema = creatorGrantSchema(ctx)
}

func (r *creatorGrantResource) Configure(_ context.Context, req resource.ConfigureRequest, resp *resource.ConfigureResponse) {
	r.data = configuredData(req.ProviderData, &resp.Diagnostics)
}

func (r *creatorGrantResource) ValidateConfig(ctx context.Context, req resource.ValidateConfigRequest, resp *resource.ValidateConfigResponse) {
	var creator types.String
	resp.Diagnostics.Append(req.Config.GetAttribute(ctx, path.Root("creator"), &creator)...)
	if !creator.IsNull() && !creator.IsUnknown() && strings.EqualFold(creator.ValueString(), "admin") {
		resp.Diagnostics.AddAttributeWarning(path.Root("creator"), "IAM ignores creator grants to admin",
			"The user admin already holds every permission, so IAM accepts this grant and stores nothing. "+
				"The resource records policy IDs of 0.")
	}
}

// ModifyPlan shows the recorded actions and policy ids an update keeps:
// with actions set, they are known in advance.
func (r *creatorGrantResource) ModifyPlan(ctx context.Context, req resource.ModifyPlanRequest, resp *resource.ModifyPlanResponse) {
	if req.Plan.Raw.IsNull() || req.State.Raw.IsNull() {
		return
	}
	var plan, state creatorGrantModel
	resp.Diagnostics.Append(req.Plan.Get(ctx, &plan)...)
	resp.Diagnostics.Append(req.State.Get(ctx, &state)...)
	if resp.Diagnostics.HasError() || plan.Actions.IsNull() || plan.Actions.IsUnknown() || !plan.Actions.Equal(state.Actions) ||
		state.Policies.IsNull() {
		return
	}
	if held, d := readCreatorHoldings(ctx, req.Private, creatorTarget(state)); d.HasError() || held != nil {
		return // a run failed midway
	}
	ids := statePolicyMap(ctx, state.Policies)
	elems := map[string]attr.Value{}
	var actions []string
	resp.Diagnostics.Append(plan.Actions.ElementsAs(ctx, &actions, false)...)
	for _, a := range actions {
		if id, ok := ids[a]; ok {
			elems[a] = types.Int64Value(id)
		} else {
			elems[a] = types.Int64Unknown()
		}
	}
	policies, d := types.MapValue(types.Int64Type, elems)
	resp.Diagnostics.Append(d...)
	resp.Diagnostics.Append(resp.Plan.SetAttribute(ctx, path.Root("policies"), policies)...)
	resp.Diagnostics.Append(resp.Plan.SetAttribute(ctx, path.Root("granted_actions"), plan.Actions)...)
}

func (r *creatorGrantResource) Create(ctx context.Context, req resource.CreateRequest, resp *resource.CreateResponse) {
	var plan creatorGrantModel
	resp.Diagnostics.Append(req.Plan.Get(ctx, &plan)...)
	if resp.Diagnostics.HasError() || !requireConfigured(r.data, &resp.Diagnostics) {
		return
	}
	timeout, d := plan.Timeouts.Create(ctx, defaultTimeout)
	resp.Diagnostics.Append(d...)
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()

	next, d := creatorInstances(ctx, plan.Instances)
	resp.Diagnostics.Append(d...)
	if resp.Diagnostics.HasError() {
		return
	}
	runner := r.runner(ctx, plan, grantplan.CreatorHoldings{}, &resp.Diagnostics)
	plan.ID = types.StringValue(creatorGrantID(plan))
	ok := r.apply(ctx, runner, next, &resp.Diagnostics)
	if !ok && len(runner.held) == 0 {
		return // nothing granted: no resource to record
	}
	// On failure Terraform marks the resource tainted; the next apply
	// revokes what was granted and registers everything again.
	r.save(ctx, &plan, next, runner, ok, &resp.State, resp.Private, &resp.Diagnostics)
}

func (r *creatorGrantResource) Read(context.Context, resource.ReadRequest, *resource.ReadResponse) {
	// IAM has no API that reads a grant back by the ids a grant returns,
	// and creator grants never expire: Read trusts state and makes no call.
}

func (r *creatorGrantResource) Update(ctx context.Context, req resource.UpdateRequest, resp *resource.UpdateResponse) {
	var plan, state creatorGrantModel
	resp.Diagnostics.Append(req.Plan.Get(ctx, &plan)...)
	resp.Diagnostics.Append(req.State.Get(ctx, &state)...)
	if resp.Diagnostics.HasError() || !requireConfigured(r.data, &resp.Diagnostics) {
		return
	}
	timeout, d := plan.Timeouts.Update(ctx, defaultTimeout)
	resp.Diagnostics.Append(d...)
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()

	held, d := r.holdings(ctx, req.Private, state)
	resp.Diagnostics.Append(d...)
	next, d := creatorInstances(ctx, plan.Instances)
	resp.Diagnostics.Append(d...)
	if resp.Diagnostics.HasError() {
		return
	}
	runner := r.runner(ctx, state, held, &resp.Diagnostics)
	runner.expected = expectedActions(ctx, plan)
	plan.ID = types.StringValue(creatorGrantID(plan))
	ok := r.apply(ctx, runner, next, &resp.Diagnostics)
	r.save(ctx, &plan, next, runner, ok, &resp.State, resp.Private, &resp.Diagnostics)
}

func (r *creatorGrantResource) Delete(ctx context.Context, req resource.DeleteRequest, resp *resource.DeleteResponse) {
	var state creatorGrantModel
	resp.Diagnostics.Append(req.State.Get(ctx, &state)...)
	if resp.Diagnostics.HasError() || !requireConfigured(r.data, &resp.Diagnostics) {
		return
	}
	timeout, d := state.Timeouts.Delete(ctx, defaultTimeout)
	resp.Diagnostics.Append(d...)
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()

	held, d := r.holdings(ctx, req.Private, state)
	resp.Diagnostics.Append(d...)
	if resp.Diagnostics.HasError() {
		return
	}
	runner := r.runner(ctx, state, held, &resp.Diagnostics)
	if r.apply(ctx, runner, nil, &resp.Diagnostics) {
		return
	}
	r.save(ctx, &state, nil, runner, false, &resp.State, resp.Private, &resp.Diagnostics)
}

// ImportState adopts SYSTEM/TYPE/CREATOR: as for bkiam_instance_grant, the
// next apply registers what the configuration declares, a no-op in IAM
// wherever the creator already holds it.
func (r *creatorGrantResource) ImportState(ctx context.Context, req resource.ImportStateRequest, resp *resource.ImportStateResponse) {
	parts := strings.Split(req.ID, "/")
	if len(parts) != 3 || strings.TrimSpace(parts[0]) == "" || strings.TrimSpace(parts[1]) == "" || strings.TrimSpace(parts[2]) == "" {
		resp.Diagnostics.AddError("Invalid import ID",
			fmt.Sprintf("Expected SYSTEM/TYPE/CREATOR, e.g. bk_sops/mini_app/alice; got %q.", req.ID))
		return
	}
	resp.Diagnostics.Append(resp.State.SetAttribute(ctx, path.Root("id"), req.ID)...)
	resp.Diagnostics.Append(resp.State.SetAttribute(ctx, path.Root("system"), parts[0])...)
	resp.Diagnostics.Append(resp.State.SetAttribute(ctx, path.Root("type"), parts[1])...)
	resp.Diagnostics.Append(resp.State.SetAttribute(ctx, path.Root("creator"), parts[2])...)
}

func requireConfigured(data *providerData, diags *diag.Diagnostics) bool {
	if data == nil {
		diags.AddError("Provider not configured",
			"The bkiam provider was not configured before this resource was used. This is a bug in the provider or in Terraform.")
		return false
	}
	return true
}

func creatorTarget(m creatorGrantModel) grantplan.CreatorTarget {
	return grantplan.CreatorTarget{System: m.System.ValueString(), Type: m.Type.ValueString()}
}

func creatorGrantID(m creatorGrantModel) string {
	return m.System.ValueString() + "/" + m.Type.ValueString() + "/" + m.Creator.ValueString()
}

// runner starts from what m (state, or the plan on create) records.
func (r *creatorGrantResource) runner(ctx context.Context, m creatorGrantModel, held grantplan.CreatorHoldings, diags *diag.Diagnostics) *creatorRunner {
	runner := &creatorRunner{
		client:   r.data.client,
		target:   creatorTarget(m),
		creator:  m.Creator.ValueString(),
		held:     held,
		expected: expectedActions(ctx, m),
		granted:  map[string]bool{},
		policies: statePolicyMap(ctx, m.Policies),
	}
	if !m.GrantedActions.IsNull() && !m.GrantedActions.IsUnknown() {
		var granted []string
		diags.Append(m.GrantedActions.ElementsAs(ctx, &granted, false)...)
		for _, a := range granted {
			runner.granted[a] = true
		}
	}
	return runner
}

func expectedActions(ctx context.Context, m creatorGrantModel) []string {
	if m.Actions.IsNull() || m.Actions.IsUnknown() {
		return nil
	}
	var actions []string
	_ = m.Actions.ElementsAs(ctx, &actions, false)
	sort.Strings(actions)
	return actions
}

func statePolicyMap(ctx context.Context, v types.Map) map[string]int64 {
	out := map[string]int64{}
	if !v.IsNull() && !v.IsUnknown() {
		_ = v.ElementsAs(ctx, &out, false)
	}
	return out
}

func (r *creatorGrantResource) apply(ctx context.Context, runner *creatorRunner, next map[string]grantplan.CreatorInstance, diags *diag.Diagnostics) bool {
	return planAndRun(ctx, func() ([]grantplan.CreatorCall, error) {
		return grantplan.PlanCreator(runner.target, runner.held, next, r.data.limits())
	}, runner.run, diags)
}

// holdings returns what the creator holds: from private state after a
// failed run, else from the public state.
func (r *creatorGrantResource) holdings(ctx context.Context, private privateGetter, state creatorGrantModel) (grantplan.CreatorHoldings, diag.Diagnostics) {
	t := creatorTarget(state)
	held, diags := readCreatorHoldings(ctx, private, t)
	if diags.HasError() || held != nil {
		return held, diags
	}
	if state.Instances.IsNull() {
		return grantplan.CreatorHoldings{}, diags // imported: nothing known
	}
	instances, d := creatorInstances(ctx, state.Instances)
	diags.Append(d...)
	return grantplan.CreatorHeld(t, instances), diags
}

// save records the run: the plan when it did everything, else the view
// of what is held, with private state for what the view cannot say.
func (r *creatorGrantResource) save(ctx context.Context, m *creatorGrantModel, next map[string]grantplan.CreatorInstance, runner *creatorRunner,
	complete bool, state stateSetter, private privateSetter, diags *diag.Diagnostics) {
	granted := runner.actions()
	grantedValue, d := types.SetValueFrom(ctx, types.StringType, granted)
	diags.Append(d...)
	m.GrantedActions = grantedValue
	m.Policies = policiesValue(granted, runner.policies, diags)
	if complete {
		diags.Append(state.Set(ctx, m)...)
		diags.Append(writeCreatorHoldings(ctx, private, nil)...)
		return
	}
	view, exact := runner.held.View(runner.target, next)
	m.Instances = creatorInstancesValue(view, diags)
	diags.Append(state.Set(ctx, m)...)
	if exact {
		diags.Append(writeCreatorHoldings(ctx, private, nil)...)
	} else {
		diags.Append(writeCreatorHoldings(ctx, private, runner.held)...)
	}
}

// creatorInstances converts the instances attribute.
func creatorInstances(ctx context.Context, v types.Map) (map[string]grantplan.CreatorInstance, diag.Diagnostics) {
	var diags diag.Diagnostics
	models := map[string]creatorInstanceModel{}
	diags.Append(v.ElementsAs(ctx, &models, false)...)
	out := make(map[string]grantplan.CreatorInstance, len(models))
	for id, m := range models {
		in := grantplan.CreatorInstance{ID: id, Name: m.Name.ValueString()}
		if !m.Ancestors.IsNull() {
			var ancestors []ancestorModel
			diags.Append(m.Ancestors.ElementsAs(ctx, &ancestors, false)...)
			for _, a := range ancestors {
				in.Ancestors = append(in.Ancestors, grantplan.Node{System: a.System.ValueString(), Type: a.Type.ValueString(), ID: a.ID.ValueString()})
			}
		}
		out[id] = in
	}
	return out, diags
}

func creatorInstancesValue(instances map[string]grantplan.CreatorInstance, diags *diag.Diagnostics) types.Map {
	elems := make(map[string]attr.Value, len(instances))
	for id, in := range instances {
		ancestors := types.ListNull(ancestorType)
		if len(in.Ancestors) > 0 {
			var nodes []attr.Value
			for _, a := range in.Ancestors {
				node, d := types.ObjectValue(ancestorAttrTypes, map[string]attr.Value{
					"system": types.StringValue(a.System), "type": types.StringValue(a.Type), "id": types.StringValue(a.ID),
				})
				diags.Append(d...)
				nodes = append(nodes, node)
			}
			list, d := types.ListValue(ancestorType, nodes)
			diags.Append(d...)
			ancestors = list
		}
		obj, d := types.ObjectValue(creatorInstanceAttrTypes, map[string]attr.Value{"name": types.StringValue(in.Name), "ancestors": ancestors})
		diags.Append(d...)
		elems[id] = obj
	}
	v, d := types.MapValue(creatorInstanceType, elems)
	diags.Append(d...)
	return v
}

package provider

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/hashicorp/terraform-plugin-framework-timetypes/timetypes"
	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"github.com/hashicorp/terraform-plugin-framework/types/basetypes"

	"github.com/bkiam/terraform-provider-bkiam/internal/bkiam"
	"github.com/bkiam/terraform-provider-bkiam/internal/grantplan"
)

var (
	_ resource.Resource                   = (*instanceGrantResource)(nil)
	_ resource.ResourceWithConfigure      = (*instanceGrantResource)(nil)
	_ resource.ResourceWithValidateConfig = (*instanceGrantResource)(nil)
	_ resource.ResourceWithModifyPlan     = (*instanceGrantResource)(nil)
	_ resource.ResourceWithImportState    = (*instanceGrantResource)(nil)
)

// defaultTimeout bounds a create, update or delete without a timeouts block.
const defaultTimeout = 30 * time.Minute

// instanceGrantResource is bkiam_instance_grant.
type instanceGrantResource struct {
	data *providerData
}

// NewInstanceGrantResource returns the bkiam_instance_grant resource.
func NewInstanceGrantResource() resource.Resource { return &instanceGrantResource{} }

func (r *instanceGrantResource) Metadata(_ context.Context, req resource.MetadataRequest, resp *resource.MetadataResponse) {
	resp.TypeName = req.ProviderTypeName + "_instance_grant"
}

func (r *instanceGrantResource) Schema(ctx context.Context, _ resource.SchemaRequest, resp *resource.SchemaResponse) {
	resp.Schema = instanceGrantSchema(ctx)
}

func (r *instanceGrantResource) Configure(_ context.Context, req resource.ConfigureRequest, resp *resource.ConfigureResponse) {
	r.data = configuredData(req.ProviderData, &resp.Diagnostics)
}

// configuredData unpacks what the provider's Configure handed over; nil
// before the provider is configured (validation runs before that).
func configuredData(raw any, diags *diag.Diagnostics) *providerData {
	if raw == nil {
		return nil
	}
	data, ok := raw.(*providerData)
	if !ok {
		diags.AddError("Unexpected provider data", fmt.Sprintf("Expected *providerData, got %T. This is a bug in the provider.", raw))
		return nil
	}
	return data
}

// ValidateConfig checks what the attribute validators cannot see alone:
// the subject's type against its id and against expires_at.
func (r *instanceGrantResource) ValidateConfig(ctx context.Context, req resource.ValidateConfigRequest, resp *resource.ValidateConfigResponse) {
	var m instanceGrantModel
	resp.Diagnostics.Append(req.Config.Get(ctx, &m)...)
	if resp.Diagnostics.HasError() {
		return
	}
	subject, known := knownSubject(ctx, m.Subject, &resp.Diagnostics)
	if known {
		checkSubject(subject, path.Root("subject").AtName("id"), &resp.Diagnostics)
	}
	checkExpiresAt(m.ExpiresAt, subject, known, &resp.Diagnostics)
}

// knownSubject returns the subject when both its fields are known.
func knownSubject(ctx context.Context, v types.Object, diags *diag.Diagnostics) (bkiam.Subject, bool) {
	if v.IsNull() || v.IsUnknown() {
		return bkiam.Subject{}, false
	}
	var s subjectModel
	diags.Append(v.As(ctx, &s, basetypes.ObjectAsOptions{})...)
	if diags.HasError() || s.Type.IsUnknown() || s.ID.IsUnknown() || s.Type.IsNull() || s.ID.IsNull() {
		return bkiam.Subject{}, false
	}
	return bkiam.Subject{Type: s.Type.ValueString(), ID: s.ID.ValueString()}, true
}

// checkSubject reports a non-numeric group id and warns about admin.
func checkSubject(s bkiam.Subject, idPath path.Path, diags *diag.Diagnostics) {
	switch {
	case s.Type == subjectGroup:
		if _, err := strconv.ParseUint(s.ID, 10, 63); err != nil {
			diags.AddAttributeError(idPath, "Group IDs are numeric",
				fmt.Sprintf("subject.id must be the numeric ID of an IAM user group when subject.type is \"group\", got %q.", s.ID))
		}
	case strings.EqualFold(s.ID, "admin"):
		diags.AddAttributeWarning(idPath, "IAM ignores grants to admin",
			"The user admin already holds every permission, so IAM accepts this grant and stores nothing. "+
				"The resource records policy IDs of 0.")
	}
}

// checkExpiresAt enforces IAM's rules for expired_at that hold whatever
// the time: the expiry in the past is checked when a plan would send it
// (checkExpiryAhead), so that an expired grant can still be refreshed and
// destroyed.
func checkExpiresAt(v timetypes.RFC3339, subject bkiam.Subject, subjectKnown bool, diags *diag.Diagnostics) {
	if v.IsNull() || v.IsUnknown() {
		return
	}
	p := path.Root("expires_at")
	if subjectKnown && subject.Type == subjectGroup {
		diags.AddAttributeError(p, "Group grants do not expire",
			"IAM keeps group policies forever and ignores an expiry. Remove expires_at, or grant to users instead.")
		return
	}
	t, d := v.ValueRFC3339Time()
	if d.HasError() {
		diags.Append(d...) // the type's own validation says why
		return
	}
	if t.Unix() > bkiam.PermanentExpiry {
		diags.AddAttributeError(p, "Expiry too late",
			fmt.Sprintf("expires_at must be no later than 2100-01-01T00:00:00Z, IAM's \"permanent\", got %s. Remove it for a permanent grant.", v.ValueString()))
	}
}

// checkExpiryAhead refuses to plan sending an expiry that has passed: IAM
// would refuse it.
func checkExpiryAhead(v timetypes.RFC3339, now time.Time, diags *diag.Diagnostics) {
	if v.IsNull() || v.IsUnknown() {
		return
	}
	if t, d := v.ValueRFC3339Time(); !d.HasError() && !t.After(now) {
		diags.AddAttributeError(path.Root("expires_at"), "Expiry in the past",
			fmt.Sprintf("expires_at is %s, which has passed; IAM refuses expiries that are not in the future. Set a later time or remove it for a permanent grant.", v.ValueString()))
	}
}

func (r *instanceGrantResource) ModifyPlan(ctx context.Context, req resource.ModifyPlanRequest, resp *resource.ModifyPlanResponse) {
	if req.Plan.Raw.IsNull() {
		return // destroy: nothing to check, whatever the expiry
	}
	var plan, state instanceGrantModel
	resp.Diagnostics.Append(req.Plan.Get(ctx, &plan)...)
	if resp.Diagnostics.HasError() {
		return
	}
	if req.State.Raw.IsNull() {
		checkExpiryAhead(plan.ExpiresAt, time.Now(), &resp.Diagnostics)
		return // create: policies are unknown
	}
	resp.Diagnostics.Append(req.State.Get(ctx, &state)...)
	if resp.Diagnostics.HasError() {
		return
	}
	if !plan.ExpiresAt.Equal(state.ExpiresAt) {
		checkExpiryAhead(plan.ExpiresAt, time.Now(), &resp.Diagnostics)
	}
	r.planPolicies(ctx, req, plan, state, resp)
}

// planPolicies shows the policy ids that an update keeps, instead of
// "known after apply" for all of them.
func (r *instanceGrantResource) planPolicies(ctx context.Context, req resource.ModifyPlanRequest, plan, state instanceGrantModel, resp *resource.ModifyPlanResponse) {
	if held, diags := readHoldings(ctx, req.Private); diags.HasError() || held != nil {
		resp.Diagnostics.Append(diags...)
		return // a run failed midway: any policy may be granted anew
	}
	if plan.Actions.IsUnknown() || plan.Resources.IsUnknown() || plan.ExpiresAt.IsUnknown() ||
		state.Actions.IsNull() || state.Policies.IsNull() {
		return
	}
	next, diags := desiredGrant(ctx, plan)
	if diags.HasError() {
		return // unknown nested values: leave policies unknown
	}
	old, diags := desiredGrant(ctx, state)
	if diags.HasError() {
		return
	}
	// Policy ids survive every change but those that revoke an action
	// whole before granting it again.
	if next.ExpiresAt < old.ExpiresAt || (len(next.Resources) > 1 && !sameGrantInstances(old, next)) {
		return
	}
	statePolicies := map[string]int64{}
	resp.Diagnostics.Append(state.Policies.ElementsAs(ctx, &statePolicies, false)...)
	elems := map[string]attr.Value{}
	for _, a := range next.Actions {
		id, ok := statePolicies[a]
		if ok && contains(old.Actions, a) {
			elems[a] = types.Int64Value(id)
		} else {
			elems[a] = types.Int64Unknown()
		}
	}
	policies, d := types.MapValue(types.Int64Type, elems)
	resp.Diagnostics.Append(d...)
	resp.Diagnostics.Append(resp.Plan.SetAttribute(ctx, path.Root("policies"), policies)...)
}

func sameGrantInstances(a, b grantplan.Grant) bool {
	return grantplan.Held(&grantplan.Grant{Actions: []string{"x"}, Resources: a.Resources}).
		Equal(grantplan.Held(&grantplan.Grant{Actions: []string{"x"}, Resources: b.Resources}))
}

func (r *instanceGrantResource) Create(ctx context.Context, req resource.CreateRequest, resp *resource.CreateResponse) {
	var plan instanceGrantModel
	resp.Diagnostics.Append(req.Plan.Get(ctx, &plan)...)
	if resp.Diagnostics.HasError() || !requireConfigured(r.data, &resp.Diagnostics) {
		return
	}
	timeout, d := plan.Timeouts.Create(ctx, defaultTimeout)
	resp.Diagnostics.Append(d...)
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()

	next, d := desiredGrant(ctx, plan)
	resp.Diagnostics.Append(d...)
	if resp.Diagnostics.HasError() {
		return
	}
	runner := r.runner(plan, grantplan.Holdings{}, nil)
	ok := r.apply(ctx, runner, &next, &resp.Diagnostics)
	plan.ID = types.StringValue(grantID(plan))
	if ok {
		r.saveComplete(ctx, &plan, next, runner, &resp.State, resp.Private, &resp.Diagnostics)
		return
	}
	if len(runner.held) == 0 {
		return // nothing granted: no resource to record
	}
	// Something was granted: record it, so that it is not lost. Terraform
	// marks the resource tainted; the next apply revokes it and grants
	// everything again.
	r.savePartial(ctx, &plan, &next, runner, &resp.State, resp.Private, &resp.Diagnostics)
}

func (r *instanceGrantResource) Read(ctx context.Context, req resource.ReadRequest, resp *resource.ReadResponse) {
	// IAM has no API that reads a grant back by the ids a grant returns,
	// so Read trusts state and makes no call, except to notice an expiry.
	var state instanceGrantModel
	resp.Diagnostics.Append(req.State.Get(ctx, &state)...)
	if resp.Diagnostics.HasError() || state.ExpiresAt.IsNull() || state.ExpiresAt.IsUnknown() {
		return
	}
	subject, known := knownSubject(ctx, state.Subject, &resp.Diagnostics)
	t, d := state.ExpiresAt.ValueRFC3339Time()
	if !known || subject.Type != subjectUser || d.HasError() || t.After(time.Now()) {
		return
	}
	resp.Diagnostics.AddWarning("Grant expired",
		fmt.Sprintf("The grant of %s to %s %s in %s expired at %s, so IAM no longer holds it. It is removed from state: "+
			"set a later expires_at (or remove it) and apply to grant it again.",
			joinSet(ctx, state.Actions), subject.Type, subject.ID, state.System.ValueString(), state.ExpiresAt.ValueString()))
	resp.State.RemoveResource(ctx)
}

func (r *instanceGrantResource) Update(ctx context.Context, req resource.UpdateRequest, resp *resource.UpdateResponse) {
	var plan, state instanceGrantModel
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
	next, d := desiredGrant(ctx, plan)
	resp.Diagnostics.Append(d...)
	if resp.Diagnostics.HasError() {
		return
	}
	runner := r.runner(plan, held, statePolicies(ctx, state))
	plan.ID = types.StringValue(grantID(plan))
	if r.apply(ctx, runner, &next, &resp.Diagnostics) {
		r.saveComplete(ctx, &plan, next, runner, &resp.State, resp.Private, &resp.Diagnostics)
		return
	}
	r.savePartial(ctx, &plan, &next, runner, &resp.State, resp.Private, &resp.Diagnostics)
}

func (r *instanceGrantResource) Delete(ctx context.Context, req resource.DeleteRequest, resp *resource.DeleteResponse) {
	var state instanceGrantModel
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
	runner := r.runner(state, held, statePolicies(ctx, state))
	if r.apply(ctx, runner, nil, &resp.Diagnostics) {
		return // the framework removes the resource from state
	}
	r.savePartial(ctx, &state, nil, runner, &resp.State, resp.Private, &resp.Diagnostics)
}

// ImportState adopts the grants of SYSTEM/SUBJECT_TYPE/SUBJECT_ID. IAM
// cannot say what the subject holds, so the imported resource holds
// nothing that is known; the next apply grants what the configuration
// declares, which IAM treats as a no-op wherever it already holds.
func (r *instanceGrantResource) ImportState(ctx context.Context, req resource.ImportStateRequest, resp *resource.ImportStateResponse) {
	parts := strings.SplitN(req.ID, "/", 3)
	if len(parts) != 3 || strings.TrimSpace(parts[0]) == "" || strings.TrimSpace(parts[2]) == "" ||
		(parts[1] != subjectUser && parts[1] != subjectGroup) {
		resp.Diagnostics.AddError("Invalid import ID",
			fmt.Sprintf("Expected SYSTEM/SUBJECT_TYPE/SUBJECT_ID with SUBJECT_TYPE user or group, e.g. bk_cmdb/user/alice; got %q.", req.ID))
		return
	}
	subject := bkiam.Subject{Type: parts[1], ID: parts[2]}
	checkSubject(subject, path.Root("id"), &resp.Diagnostics)
	if resp.Diagnostics.HasError() {
		return
	}
	subjectValue, d := types.ObjectValue(subjectAttrTypes, map[string]attr.Value{
		"type": types.StringValue(subject.Type), "id": types.StringValue(subject.ID),
	})
	resp.Diagnostics.Append(d...)
	resp.Diagnostics.Append(resp.State.SetAttribute(ctx, path.Root("id"), req.ID)...)
	resp.Diagnostics.Append(resp.State.SetAttribute(ctx, path.Root("system"), parts[0])...)
	resp.Diagnostics.Append(resp.State.SetAttribute(ctx, path.Root("subject"), subjectValue)...)
}

func (r *instanceGrantResource) runner(m instanceGrantModel, held grantplan.Holdings, policies map[string]int64) *grantRunner {
	var s subjectModel
	_ = m.Subject.As(context.Background(), &s, basetypes.ObjectAsOptions{})
	if policies == nil {
		policies = map[string]int64{}
	}
	return &grantRunner{
		client:   r.data.instances,
		system:   m.System.ValueString(),
		subject:  bkiam.Subject{Type: s.Type.ValueString(), ID: s.ID.ValueString()},
		held:     held,
		policies: policies,
	}
}

// apply plans from what the runner holds to next and runs the calls; it
// reports whether every call succeeded.
func (r *instanceGrantResource) apply(ctx context.Context, runner *grantRunner, next *grantplan.Grant, diags *diag.Diagnostics) bool {
	return planAndRun(ctx, func() ([]grantplan.Call, error) { return grantplan.Plan(runner.held, next, r.data.limits()) }, runner.run, diags)
}

// holdings returns what the resource holds: from private state after a
// failed run, else from its public state.
func (r *instanceGrantResource) holdings(ctx context.Context, private privateGetter, state instanceGrantModel) (grantplan.Holdings, diag.Diagnostics) {
	held, diags := readHoldings(ctx, private)
	if diags.HasError() || held != nil {
		return held, diags
	}
	if state.Actions.IsNull() {
		return grantplan.Holdings{}, diags // imported: nothing known
	}
	g, d := desiredGrant(ctx, state)
	diags.Append(d...)
	return grantplan.Held(&g), diags
}

// saveComplete records a run that did everything: state is the plan.
func (r *instanceGrantResource) saveComplete(ctx context.Context, plan *instanceGrantModel, next grantplan.Grant, runner *grantRunner,
	state stateSetter, private privateSetter, diags *diag.Diagnostics) {
	plan.Policies = policiesValue(next.Actions, runner.policies, diags)
	diags.Append(state.Set(ctx, plan)...)
	diags.Append(writeHoldings(ctx, private, nil)...)
}

// savePartial records a run that stopped midway: state shows the view of
// what is held, and private state keeps the exact holdings when the view
// cannot.
func (r *instanceGrantResource) savePartial(ctx context.Context, m *instanceGrantModel, next *grantplan.Grant, runner *grantRunner,
	state stateSetter, private privateSetter, diags *diag.Diagnostics) {
	var shape []grantplan.Resource
	if next != nil {
		shape = next.Resources
	} else if g, d := desiredGrant(ctx, *m); !d.HasError() {
		shape = g.Resources
	}
	view := runner.held.View(next, shape)
	viewModel := *m
	setGrant(ctx, &viewModel, view, next, diags)
	viewModel.Policies = policiesValue(view.Actions, runner.policies, diags)
	diags.Append(state.Set(ctx, &viewModel)...)
	if grantplan.Held(&view).Equal(runner.held) {
		diags.Append(writeHoldings(ctx, private, nil)...)
	} else {
		diags.Append(writeHoldings(ctx, private, runner.held)...)
	}
}

// stateSetter is tfsdk.State, as the CRUD responses hold it.
type stateSetter interface {
	Set(ctx context.Context, val any) diag.Diagnostics
}

func grantID(m instanceGrantModel) string {
	var s subjectModel
	_ = m.Subject.As(context.Background(), &s, basetypes.ObjectAsOptions{})
	return m.System.ValueString() + "/" + s.Type.ValueString() + "/" + s.ID.ValueString()
}

func statePolicies(ctx context.Context, m instanceGrantModel) map[string]int64 {
	out := map[string]int64{}
	if !m.Policies.IsNull() && !m.Policies.IsUnknown() {
		_ = m.Policies.ElementsAs(ctx, &out, false)
	}
	return out
}

func policiesValue(actions []string, ids map[string]int64, diags *diag.Diagnostics) types.Map {
	elems := make(map[string]attr.Value, len(actions))
	for _, a := range actions {
		if id, ok := ids[a]; ok {
			elems[a] = types.Int64Value(id)
		}
	}
	v, d := types.MapValue(types.Int64Type, elems)
	diags.Append(d...)
	return v
}

func joinSet(ctx context.Context, s types.Set) string {
	var items []string
	_ = s.ElementsAs(ctx, &items, false)
	return strings.Join(items, ", ")
}

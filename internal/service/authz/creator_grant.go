package authz

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/bkiam/terraform-provider-bkiam/internal/applyrun"
	"github.com/bkiam/terraform-provider-bkiam/internal/bkiam"
	"github.com/bkiam/terraform-provider-bkiam/internal/conns"
	"github.com/bkiam/terraform-provider-bkiam/internal/grantplan"
	"github.com/bkiam/terraform-provider-bkiam/internal/ledger"
	"github.com/bkiam/terraform-provider-bkiam/internal/protocol"
	"github.com/bkiam/terraform-provider-bkiam/internal/sharedgrants"
	"github.com/bkiam/terraform-provider-bkiam/internal/verify"
)

// CreatorGrant is bkiam_creator_grant: a creator of instances, registered
// with batch_resource_creator_action and revoked path by path with
// batch_path. Its model and codec are in creator_grant_codec.go, the
// calls it sends in creator_grant_runner.go.
type CreatorGrant struct{}

func (CreatorGrant) Name() string { return "creator_grant" }

func (CreatorGrant) Schema(context.Context) schema.Schema {
	return schema.Schema{
		// Version 1: instances became names by key (version 0: objects of
		// name and ancestors by id), upgraded by StateUpgrades.
		Version: 1,
		MarkdownDescription: "Registers a user as the creator of resource instances in one BlueKing IAM system, through " +
			"IAM's `batch_resource_creator_action` API, so that IAM grants the creator the actions the system " +
			"configured for the resource type (its *resource creator actions*).\n\n" +
			"IAM has no creator revoke: destroy revokes, with `batch_path`, each instance's path (its ancestors, " +
			"then the instance) for the actions the grant recorded.\n\n" +
			"IAM grants a creator permanently, and keeps one expiry per user and action: registering an instance " +
			"makes the creator's whole policy of each creator action permanent, instances granted elsewhere with an " +
			"expiry included. The plan says so, naming them (provider setting `expiry_conflicts`).",
		Attributes: map[string]schema.Attribute{
			"id": schema.StringAttribute{
				Computed:            true,
				MarkdownDescription: "`SYSTEM/TYPE/CREATOR`, the form `terraform import` takes.",
			},
			"system": schema.StringAttribute{
				Required:            true,
				MarkdownDescription: "ID of the IAM system, e.g. `bk_sops`. Changing it replaces the grant.",
			},
			"type": schema.StringAttribute{
				Required: true,
				MarkdownDescription: "ID of the resource type whose instances the creator created, e.g. `mini_app`. The system " +
					"must have registered creator actions for it. Changing it replaces the grant.",
			},
			"creator": schema.StringAttribute{
				Required: true,
				MarkdownDescription: "Username of the creator. IAM ignores creator grants to `admin`, who holds everything. " +
					"Changing it replaces the grant.",
			},
			"instances": schema.MapAttribute{
				Required:    true,
				ElementType: types.StringType,
				MarkdownDescription: fmt.Sprintf("The created instances: at least one, at most %d, each key an instance's id, or "+
					"its path under its ancestors in IAM's notation (`/SYSTEM,TYPE,ID/…/`, outermost ancestor first, the "+
					"instance last, e.g. `/bk_sops,project,project1/bk_sops,mini_app,mini_app1/`), each value its display name. "+
					"IAM looks the ancestors' names up itself, through the system's callback; an ancestor it cannot find fails "+
					"the grant. IAM keeps the name an instance was first granted with, so a change of name alone sends "+
					"nothing. Adding an instance grants it; removing one revokes its path; moving one (a new path) grants the "+
					"new path, then revokes the old one.", conns.MaxPolicyInstances),
			},
			"actions": schema.SetAttribute{
				Optional:    true,
				ElementType: types.StringType,
				MarkdownDescription: "The creator actions to expect, e.g. `[\"mini_app_view\", \"mini_app_edit\"]`. When set, " +
					"exactly these are recorded (and revoked on destroy), and the apply fails if IAM did not grant one of " +
					"them. When unset, the actions of the type's creator configuration in the system's model are recorded " +
					"(IAM's answer also lists the creator's other policies in the system), which needs the model: through " +
					"the ESB or with `check_model = false`, set it. Changing it replaces the grant.",
			},
			"granted_actions": schema.SetAttribute{
				Computed:            true,
				ElementType:         types.StringType,
				MarkdownDescription: "The actions recorded as granted: revoked from every path on destroy.",
			},
			"policies": schema.MapAttribute{
				Computed:    true,
				ElementType: types.Int64Type,
				MarkdownDescription: "IAM's policy ID of each granted action (action ID → policy ID), as the creator " +
					"grant answers it (the IAM SaaS's id); `0` for `admin`.",
			},
			"timeouts": protocol.TimeoutsAttribute(),
		},
	}
}

// creatorView is a bkiam_creator_grant model in the planner's terms.
type creatorView struct {
	model   CreatorGrantModel
	target  grantplan.CreatorTarget
	creator string
	// instances is nil when any part of it is unknown, or null as in an
	// imported resource.
	instances map[string]grantplan.CreatorInstance
	// actions is the actions attribute, sorted; nil when unset.
	actions  []string
	granted  []string
	policies map[string]int64
}

func viewCreator(m CreatorGrantModel) creatorView {
	c := creatorView{model: m}
	c.target.System, _ = m.System.Get()
	c.target.Type, _ = m.Type.Get()
	c.creator, _ = m.Creator.Get()
	c.instances = creatorInstancesOf(c.target, m.Instances)
	if actions, ok := protocol.StringsOf(m.Actions); ok {
		slices.Sort(actions)
		c.actions = actions
	}
	c.granted, _ = protocol.StringsOf(m.GrantedActions)
	c.policies = protocol.Int64MapOf(m.Policies)
	return c
}

// ImportState adopts SYSTEM/TYPE/CREATOR: as for bkiam_instance_grant, the
// next apply registers what the configuration declares, a no-op in IAM
// wherever the creator already holds it.
func (CreatorGrant) ImportState(_ context.Context, id string, diags *protocol.Diagnostics) (CreatorGrantModel, protocol.PrivateState) {
	var m CreatorGrantModel
	parts := strings.Split(id, "/")
	if len(parts) != 3 || strings.TrimSpace(parts[0]) == "" || strings.TrimSpace(parts[1]) == "" || strings.TrimSpace(parts[2]) == "" {
		diags.AddError("Invalid import ID",
			fmt.Sprintf("Expected SYSTEM/TYPE/CREATOR, e.g. bk_sops/mini_app/alice; got %q.", id))
		return m, nil
	}
	m.ID, m.System, m.Type, m.Creator = protocol.Known(id), protocol.Known(parts[0]), protocol.Known(parts[1]), protocol.Known(parts[2])
	return m, nil
}

func (CreatorGrant) Validate(_ context.Context, config CreatorGrantModel, diags *protocol.Diagnostics) {
	verify.CheckID(protocol.Root("system"), config.System, diags)
	verify.CheckID(protocol.Root("type"), config.Type, diags)
	verify.CheckID(protocol.Root("creator"), config.Creator, diags)
	if creator, ok := config.Creator.Get(); ok && strings.EqualFold(creator, "admin") {
		diags.AddAttributeWarning(protocol.Root("creator"), "IAM ignores creator grants to admin",
			"The user admin already holds every permission, so IAM accepts this grant and stores nothing. "+
				"The resource records policy IDs of 0.")
	}
	checkCreatorInstances(config, diags)
	verify.CheckActions(protocol.Root("actions"), config.Actions, "Name the creator actions to expect, or omit actions to record those of the type's creator configuration.", diags)
	protocol.CheckTimeouts(config.Timeouts, diags)
}

func (CreatorGrant) CheckModel(ctx context.Context, data *conns.Data, proposed CreatorGrantModel, diags *protocol.Diagnostics) {
	checkCreatorGrantModel(ctx, data, proposed, diags)
}

func (CreatorGrant) Plan(_ context.Context, req protocol.PlanRequest[CreatorGrantModel], diags *protocol.Diagnostics) protocol.PlanResponse[CreatorGrantModel] {
	planned := req.Proposed
	planned.GrantedActions, planned.Policies = protocol.Unknown[[]protocol.StringValue](), protocol.Unknown[map[string]protocol.Value[int64]]()
	if req.Prior == nil {
		planned.ID = protocol.Unknown[string]()
		return protocol.PlanResponse[CreatorGrantModel]{Planned: planned}
	}
	prior := *req.Prior
	var out protocol.PlanResponse[CreatorGrantModel]
	for _, attr := range []struct {
		name    string
		changed bool
	}{
		{"system", planned.System != prior.System},
		{"type", planned.Type != prior.Type},
		{"creator", planned.Creator != prior.Creator},
		{"actions", !protocol.SameStrings(planned.Actions, prior.Actions)},
	} {
		if attr.changed {
			out.RequiresReplace = append(out.RequiresReplace, protocol.Root(attr.name))
		}
	}
	planned.ID = prior.ID
	if planned.ID.IsNull() {
		planned.ID = protocol.Unknown[string]()
	}
	// With actions set and unchanged, the recorded actions and the policy
	// ids an update keeps are known in advance, unless a run failed midway;
	// an update that registers an instance may meet a policy revoked whole
	// outside Terraform and recreated under a new id, so its ids are known
	// after apply.
	plan, state := viewCreator(req.Proposed), viewCreator(prior)
	if plan.actions != nil && protocol.SameStrings(req.Proposed.Actions, prior.Actions) && !prior.Policies.IsNull() &&
		readCreatorHoldings(req.Private, state.target, diags) == nil {
		planned.GrantedActions = req.Proposed.Actions
		registers := false
		if plan.instances != nil && state.instances != nil {
			held := grantplan.CreatorHeld(state.target, state.instances)
			for path := range grantplan.CreatorHeld(plan.target, plan.instances) {
				if _, ok := held[path]; !ok {
					registers = true
				}
			}
		}
		planned.Policies = plannedPolicies(plan.actions, state.policies, func(string) bool { return !registers })
	}
	out.Planned = planned
	return out
}

func (r CreatorGrant) Apply(ctx context.Context, data *conns.Data, req protocol.ApplyRequest[CreatorGrantModel], diags *protocol.Diagnostics) (*CreatorGrantModel, protocol.PrivateState) {
	private := req.Private
	current, next := protocol.ViewsOf(req, viewCreator)
	if next != nil && next.instances == nil {
		diags.AddError("Unknown instances at apply", "Terraform asked to apply instances that are not fully known. This is a bug in Terraform or the provider.")
		return req.Prior, private
	}
	// The run starts from what state records (the plan's empty record on
	// create) and expects the actions the plan names.
	from := current
	if from == nil {
		from = &creatorView{model: next.model, target: next.target, creator: next.creator}
	}
	runner := &creatorGrantRunner{
		client:   data.Client,
		target:   from.target,
		creator:  from.creator,
		held:     r.holdings(req.Private, current, diags),
		expected: from.actions,
		granted:  map[string]bool{},
		policies: from.policies,
		shared:   sharedgrants.HandleOf(ctx),
	}
	if runner.policies == nil {
		runner.policies = map[string]int64{}
	}
	for _, a := range from.granted {
		runner.granted[a] = true
	}
	var want map[string]grantplan.CreatorInstance
	result := from
	if next != nil {
		runner.expected = next.actions
		want = next.instances
		result = next
		if next.actions == nil {
			// The plan made sure the model can be read (checkCreatorGrantModel); the
			// apply walk's own plan read it already.
			runner.configured = creatorConfigActions(ctx, data, next.model.System, next.target.Type, diags)
		}
	}
	if diags.HasError() {
		return req.Prior, private
	}
	runner.limits = data.Limits()
	runner.resource, runner.data, runner.current, runner.next, runner.result = r, data, current, next, result
	runner.want, runner.private = want, private
	return applyrun.Run(ctx, sharedgrants.HandleOf(ctx), runner, protocol.TimeoutOf(result.model.Timeouts, req.Operation()), current == nil, next == nil, diags)
}

// Refreshes: only detect_drift changes a creator grant's state on
// refresh (creator grants never expire), so without it the state goes
// back as it came, never decoded.
func (CreatorGrant) Refreshes(data *conns.Data) bool {
	return data != nil && data.Scans != nil
}

// Read keeps, with detect_drift, only the paths IAM still holds for the
// creator, so that the plan registers the others again.
func (r CreatorGrant) Read(ctx context.Context, data *conns.Data, req protocol.ReadRequest[CreatorGrantModel], diags *protocol.Diagnostics) (*CreatorGrantModel, protocol.PrivateState, bool) {
	state, private := req.State, req.Private
	c := viewCreator(state)
	held := r.holdings(private, &c, diags)
	if diags.HasError() || len(held) == 0 || len(c.granted) == 0 {
		return &state, private, false // nothing recorded to check
	}
	now, err := creatorStillHeld(ctx, data.Scans, c, held)
	if err != nil {
		diags.AddError("Cannot read grants back from IAM",
			fmt.Sprintf("detect_drift could not read what creator %s holds in %s: %v. State is kept as it was; fix the cause, "+
				"or turn detect_drift off.", c.creator, c.target.System, err))
		return &state, private, false
	}
	var lost []string
	doubtCleared := false
	for path, h := range held {
		if _, ok := now[path]; !ok {
			lost = append(lost, h.Instance.ID)
		} else if h.Doubt {
			doubtCleared = true
		}
	}
	if len(lost) == 0 && !doubtCleared {
		return &state, private, false
	}
	if len(lost) > 0 {
		diags.AddWarning("Creator grants revoked outside Terraform",
			fmt.Sprintf("IAM no longer holds the creator actions of %s on %d of the %s/%s instances this resource registered (%s). "+
				"They are removed from state, so the plan registers them again.", c.creator, len(lost), c.target.System,
				c.target.Type, protocol.SomeIDs(lost)))
	}
	if len(now) == 0 {
		return nil, nil, true
	}
	view, exact := now.View(c.target, c.instances)
	private = maps.Clone(private)
	if exact {
		writeCreatorHoldings(private, nil, diags)
	} else {
		writeCreatorHoldings(private, now, diags)
	}
	m := state
	m.Instances = creatorInstancesValue(c.target, view)
	return &m, private, true
}

// holdings returns what the creator holds: from private state after a
// failed run, else from the public state; nothing before a create.
func (CreatorGrant) holdings(private protocol.PrivateState, state *creatorView, diags *protocol.Diagnostics) grantplan.CreatorHoldings {
	if state == nil {
		return grantplan.CreatorHoldings{}
	}
	if held := readCreatorHoldings(private, state.target, diags); held != nil {
		return held
	}
	if state.instances == nil {
		return grantplan.CreatorHoldings{} // imported: nothing known
	}
	return grantplan.CreatorHeld(state.target, state.instances)
}

// Claims are the creator's paths, for the actions it records: those IAM
// reported, else those configured, else AnyAction (a create that records
// what IAM grants: unknown until IAM answers).
func (CreatorGrant) Claims(m CreatorGrantModel) ledger.Claims {
	c := viewCreator(m)
	if c.instances == nil || c.target.System == "" || c.creator == "" {
		return ledger.Claims{}
	}
	actions := c.granted
	if !m.GrantedActions.IsKnown() {
		actions = c.actions
		if actions == nil {
			actions = []string{ledger.AnyAction}
		}
	}
	return creatorClaims(c.target, c.creator, actions, grantplan.CreatorHeld(c.target, c.instances))
}

func creatorScope(t grantplan.CreatorTarget, creator string) ledger.Scope {
	return grantScope(t.System, bkiam.Subject{Type: bkiam.SubjectUser, ID: creator})
}

// creatorClaims claims every held path for each action; creator grants
// are permanent.
func creatorClaims(t grantplan.CreatorTarget, creator string, actions []string, held grantplan.CreatorHoldings) ledger.Claims {
	if len(actions) == 0 || len(held) == 0 {
		return ledger.Claims{}
	}
	paths := slices.Collect(maps.Keys(held))
	// IAM makes every action of the type's creator configuration
	// permanent, those the resource names or not.
	c := ledger.Claims{Scope: creatorScope(t, creator), Actions: map[string]ledger.Action{}, EveryAction: bkiam.PermanentExpiry}
	for _, a := range actions {
		c.Actions[a] = ledger.Action{Paths: paths, ExpiresAt: bkiam.PermanentExpiry}
	}
	return c
}

func (CreatorGrant) Label(m CreatorGrantModel) string {
	c := viewCreator(m)
	label := fmt.Sprintf("%q", c.target.System+"/"+c.target.Type+"/"+c.creator)
	if c.instances != nil {
		label += " registering " + protocol.SomeIDs(slices.Collect(maps.Keys(c.instances)))
	}
	return label
}

// Reassert: an update that registers again shows what it records as
// unknown.
func (CreatorGrant) Reassert(planned CreatorGrantModel) CreatorGrantModel {
	planned.GrantedActions, planned.Policies = protocol.Unknown[[]protocol.StringValue](), protocol.Unknown[map[string]protocol.Value[int64]]()
	return planned
}

package authz

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"github.com/hashicorp/terraform-plugin-go/tftypes"

	"github.com/bkiam/terraform-provider-bkiam/internal/applyrun"
	"github.com/bkiam/terraform-provider-bkiam/internal/bkiam"
	"github.com/bkiam/terraform-provider-bkiam/internal/conns"
	"github.com/bkiam/terraform-provider-bkiam/internal/grantplan"
	"github.com/bkiam/terraform-provider-bkiam/internal/heldpolicy"
	"github.com/bkiam/terraform-provider-bkiam/internal/ledger"
	"github.com/bkiam/terraform-provider-bkiam/internal/protocol"
	"github.com/bkiam/terraform-provider-bkiam/internal/rolling"
	"github.com/bkiam/terraform-provider-bkiam/internal/sharedgrants"
	"github.com/bkiam/terraform-provider-bkiam/internal/verify"
)

// InstanceGrant is bkiam_instance_grant: a subject's actions on resource
// instances, granted and revoked with batch_instance. Its model and codec
// are in instance_grant_codec.go, the calls it sends in
// instance_grant_runner.go.
type InstanceGrant struct {
	// Via, unless nil, sends the grant's calls instead of the
	// authorization API: bkiam_group_permission's management API.
	Via func(data *conns.Data) conns.InstanceCaller
	// Limits, unless nil, replaces the authorization API's batch limits.
	Limits func(data *conns.Data) grantplan.Limits
	// Gone, unless nil, tells whether a destroy whose call failed with err
	// found the object the grant lives in gone, which ends it as done
	// (bkiam_group_permission: its group; applyrun.Change's Gone).
	Gone func(ctx context.Context, err error) bool
}

func (InstanceGrant) Name() string { return "instance_grant" }

func (InstanceGrant) Schema(context.Context) schema.Schema {
	return schema.Schema{
		MarkdownDescription: "Grants a subject (a user or a group) a set of actions on resource instances in one " +
			"BlueKing IAM system, through IAM's `batch_instance` API.\n\n" +
			"Create grants every action over every instance; destroy revokes them. A change sends only the " +
			"difference, in the fewest calls the server's limits allow (`grant_batch_size`, `revoke_batch_size`), " +
			"grants before revokes so that access both versions agree on is never interrupted.",
		Attributes: map[string]schema.Attribute{
			"id": schema.StringAttribute{
				Computed:            true,
				MarkdownDescription: "`SYSTEM/SUBJECT_TYPE/SUBJECT_ID`, the form `terraform import` takes.",
			},
			"system": schema.StringAttribute{
				Required:            true,
				MarkdownDescription: "ID of the IAM system the actions belong to, e.g. `bk_cmdb`. Changing it replaces the grant.",
			},
			"subject": schema.SingleNestedAttribute{
				Required: true,
				MarkdownDescription: "Who receives the permissions. Changing it replaces the grant (revoking from the " +
					"old subject, granting to the new one).",
				Attributes: map[string]schema.Attribute{
					"type": schema.StringAttribute{
						Required:            true,
						MarkdownDescription: "`user` or `group`.",
					},
					"id": schema.StringAttribute{
						Required:            true,
						MarkdownDescription: "The username, or the numeric ID of the group. IAM ignores grants to the user `admin`, who holds everything.",
					},
				},
			},
			"actions": schema.SetAttribute{
				Required:    true,
				ElementType: types.StringType,
				MarkdownDescription: "IDs of the actions to grant, e.g. `[\"view_host\", \"edit_host\"]`. All of them must " +
					"relate to the same resource types, given in `resources`. Adding an action grants it over every " +
					"instance; removing one revokes it from every instance.",
			},
			"resources": schema.ListNestedAttribute{
				Required: true,
				MarkdownDescription: "One entry per resource type the actions relate to, in the order the actions " +
					"declare them: one entry for most actions, several for a *combined resource* (an action on a " +
					"business and a host together), `[]` for actions related to no resource type. Each action is " +
					"granted on the combination of all entries.",
				NestedObject: schema.NestedAttributeObject{
					Attributes: map[string]schema.Attribute{
						"system": schema.StringAttribute{
							Required:            true,
							MarkdownDescription: "System of the resource type, usually the same as `system`.",
						},
						"type": schema.StringAttribute{
							Required:            true,
							MarkdownDescription: "ID of the resource type, e.g. `host`.",
						},
						"instances": schema.MapAttribute{
							Required:    true,
							ElementType: types.StringType,
							MarkdownDescription: fmt.Sprintf("The instances: a map of instance ID to display name, with at least "+
								"one and at most %d entries (IAM's limit per subject, action and type). IAM keeps the name an "+
								"instance was first granted with, so a change of name alone sends nothing. An empty map is "+
								"refused: to IAM an empty instance list means *every* instance.", conns.MaxPolicyInstances),
						},
					},
				},
			},
			"expires_in": schema.StringAttribute{
				Optional: true,
				MarkdownDescription: "A rolling expiry instead of `expires_at`: the grant lasts this long from the apply that " +
					"creates it, e.g. `\"90d\"` (units `w`, `d`, `h`, `m`, `s`, as in `\"1d12h\"`). The date is recorded in " +
					"`expires_at`. Users only. A change of it grants again with the new date, counted from that apply " +
					"(a shorter one lowers the expiry by revoking and granting again, which the plan says).",
			},
			"renew_before": schema.StringAttribute{
				Optional: true,
				MarkdownDescription: "With `expires_in`: how long before `expires_at` a plan renews the grant, e.g. `\"7d\"`, " +
					"shorter than `expires_in`. A plan inside the window, or within a margin before it (a day, or half the gap " +
					"between `expires_in` and `renew_before` when shorter), renews: `expires_at` is known after apply, the " +
					"recorded date plus `expires_in` (so the cadence holds whatever day the plan runs), and the plan says how " +
					"many instances it renews and to when. A plan goes by the time the state was last read or written, so that " +
					"a saved plan's apply, however late, agrees with it. The apply renews them with one call, a grant of one " +
					"of them with the later expiry, as IAM raises the expiry of everything a policy holds on any grant into " +
					"it. Outside the window the plan is empty. Unset, the grant is never renewed: it lapses at `expires_at` " +
					"and the plan warns.",
			},
			"expires_at": schema.StringAttribute{
				Optional: true,
				Computed: true,
				MarkdownDescription: "With `expires_in`, the date the provider computed (`known after apply` on create). " +
					"Otherwise when the grant expires, as an RFC 3339 time such as `2027-06-30T00:00:00Z`, in the future " +
					"and no later than `2100-01-01T00:00:00Z`. Unset means permanent: the provider then sends IAM's " +
					"permanent expiry explicitly, as a user grant without one would expire after 365 days. Users only; " +
					"group grants never expire. A later time costs no call of its own: IAM raises the expiry of everything " +
					"a policy holds on any grant into it, so the apply sends it with the instances the plan adds or, when " +
					"it adds none, with a grant of one instance the grant holds (one call). Instances revoked outside " +
					"Terraform are granted again only where the plan shows them added (a refresh with `detect_drift` reads " +
					"them back). An earlier one, or a " +
					"time after a permanent grant, revokes and grants again, because IAM only ever raises an expiry: access " +
					"lapses for the moment between the two calls. IAM keeps one expiry per user and action, the latest " +
					"any grant gave: another grant of the action to the user can make this one outlast its `expires_at`, " +
					"and this one can raise the expiry of instances it does not manage. The plan says both, from the " +
					"user's policy it reads (provider setting `expiry_conflicts`); with `detect_drift`, a refresh says when " +
					"IAM's expiry differs from the recorded one.",
			},
			"policies": schema.MapAttribute{
				Computed:    true,
				ElementType: types.Int64Type,
				MarkdownDescription: "IAM's policy ID of each granted action (action ID → policy ID), as a grant answers " +
					"it: the IAM SaaS's id, which IAM's policy list (read by `detect_drift` and import) does not show. IAM " +
					"keeps one policy per subject and action, shared with other grants of the same action; `0` for grants " +
					"to `admin`; empty after an import until the next grant.",
			},
			"timeouts": protocol.TimeoutsAttribute(),
		},
	}
}

// GrantView is a bkiam_instance_grant model in the planner's terms.
type GrantView struct {
	Model   InstanceGrantModel
	System  string
	Subject bkiam.Subject
	// Grant is what the model declares; known is false when any part of
	// it is unknown, or null as in an imported resource.
	Grant    grantplan.Grant
	Known    bool
	Policies map[string]int64
}

func ViewGrant(m InstanceGrantModel) GrantView {
	g := GrantView{Model: m}
	g.System, _ = m.System.Get()
	subject, _ := m.Subject.Get()
	g.Subject.Type, _ = subject.Type.Get()
	g.Subject.ID, _ = subject.ID.Get()
	g.Policies = protocol.Int64MapOf(m.Policies)
	g.Grant, g.Known = grantOf(m, g.Subject.Type)
	return g
}

// withEstimate is g with the expiry a plan estimates for a rolling
// expires_at it leaves unknown (0: none), by which the plan judges it.
func withEstimate(g GrantView, estimate int64) GrantView {
	if g.Known || estimate == 0 || !g.Model.ExpiresAt.IsUnknown() {
		return g
	}
	model := g.Model
	model.ExpiresAt = protocol.Known(formatExpiry(estimate))
	return ViewGrant(model)
}

// grantOf converts the grant's attributes; false when any is unknown.
func grantOf(m InstanceGrantModel, subjectType string) (grantplan.Grant, bool) {
	var g grantplan.Grant
	actions, ok := protocol.StringsOf(m.Actions)
	if !ok {
		return g, false
	}
	slices.Sort(actions)
	g.Actions = actions
	entries, ok := m.Resources.Get()
	if !ok {
		return g, false
	}
	for _, e := range entries {
		entry, okEntry := e.Get()
		system, okSystem := entry.System.Get()
		typ, okType := entry.Type.Get()
		instances, okInstances := protocol.StringMapOf(entry.Instances)
		if !okEntry || !okSystem || !okType || !okInstances {
			return g, false
		}
		g.Resources = append(g.Resources, grantplan.Resource{System: system, Type: typ, Instances: instances})
	}
	// A rolling expiry the apply sets is unknown here: a plan judges it by
	// its estimate (withEstimate); reading the clock here would make two
	// views of one grant differ.
	g.ExpiresAt, ok = expiresUnix(m.ExpiresAt, subjectType)
	return g, ok
}

// expiresUnix is the expired_at to send. Unset is sent as IAM's permanent
// value, never omitted: a user policy granted without one expires after a
// year. Group policies never expire, whatever is sent.
func expiresUnix(v protocol.StringValue, subjectType string) (int64, bool) {
	if subjectType == bkiam.SubjectGroup || v.IsNull() {
		return bkiam.PermanentExpiry, true
	}
	s, ok := v.Get()
	if !ok {
		return 0, false
	}
	t, err := time.Parse(time.RFC3339, s)
	if err != nil {
		return 0, false
	}
	return t.Unix(), true
}

// ImportState takes SYSTEM/SUBJECT_TYPE/SUBJECT_ID, which adopts the
// subject's grants holding nothing known (the next apply grants what the
// configuration declares, which IAM treats as a no-op wherever it already
// holds), or SYSTEM/SUBJECT_TYPE/SUBJECT_ID/ACTION[,ACTION…] followed by
// the actions' resource types, each RESOURCE_SYSTEM/TYPE (none for
// actions related to no resource type, several for a combined resource),
// which asks the read that follows to fill in what the subject holds of
// those actions, when detect_drift is on (see read).
func (InstanceGrant) ImportState(_ context.Context, id string, diags *protocol.Diagnostics) (InstanceGrantModel, protocol.PrivateState) {
	var m InstanceGrantModel
	private := protocol.PrivateState{}
	parts := strings.Split(id, "/")
	if (len(parts) != 3 && len(parts) != 4 && (len(parts) < 6 || len(parts)%2 != 0)) ||
		slices.ContainsFunc(parts, func(p string) bool { return strings.TrimSpace(p) == "" }) ||
		(parts[1] != bkiam.SubjectUser && parts[1] != bkiam.SubjectGroup) {
		diags.AddError("Invalid import ID",
			fmt.Sprintf("Expected SYSTEM/SUBJECT_TYPE/SUBJECT_ID with SUBJECT_TYPE user or group, e.g. bk_cmdb/user/alice, "+
				"or, to read what the subject holds (detect_drift), SYSTEM/SUBJECT_TYPE/SUBJECT_ID/ACTION[,ACTION…]/RESOURCE_SYSTEM/TYPE, "+
				"e.g. bk_cmdb/user/alice/view_host,edit_host/bk_cmdb/host; got %q. Actions related to no resource type end "+
				"at the actions (bk_cmdb/user/alice/create_biz); a combined resource names each of its types in order "+
				"(bk_cmdb/user/alice/edit_biz_host/bk_cmdb/biz/bk_cmdb/host).", id))
		return m, private
	}
	subject := bkiam.Subject{Type: parts[1], ID: parts[2]}
	checkSubject(subject, protocol.Root("id"), diags)
	m.ID = protocol.Known(strings.Join(parts[:3], "/"))
	m.System = protocol.Known(parts[0])
	m.Subject = protocol.Known(SubjectModel{Type: protocol.Known(subject.Type), ID: protocol.Known(subject.ID)})
	if len(parts) == 3 {
		return m, private
	}
	actions := strings.Split(parts[3], ",")
	if slices.ContainsFunc(actions, func(a string) bool { return strings.TrimSpace(a) == "" }) {
		diags.AddError("Invalid import ID",
			fmt.Sprintf("The actions of import ID %q are a comma-separated list without blanks, e.g. view_host,edit_host.", id))
		return m, private
	}
	var types []grantplan.Resource
	for i := 4; i < len(parts); i += 2 {
		types = append(types, grantplan.Resource{System: parts[i], Type: parts[i+1]})
	}
	private.Set(privateImportKey, newImportRequest(actions, types), diags)
	return m, private
}

// The paths Validate names: built once, as a listing validates every
// object it generates (listing.Refused), and a path per object was a tenth
// of its allocations. Paths are values: extending one copies it.
var (
	pathSystem          = protocol.Root("system")
	pathSubjectID       = protocol.Root("subject").WithAttributeName("id")
	pathActions         = protocol.Root("actions")
	pathResource0       = protocol.Root("resources").WithElementKeyInt(0)
	pathResource0Fields = map[string]*tftypes.AttributePath{
		"system": pathResource0.WithAttributeName("system"), "type": pathResource0.WithAttributeName("type"),
		"instances": pathResource0.WithAttributeName("instances"),
	}
)

// resourcePath is resources[i].field.
func resourcePath(i int, field string) *tftypes.AttributePath {
	if i == 0 {
		return pathResource0Fields[field]
	}
	return protocol.Root("resources").WithElementKeyInt(i).WithAttributeName(field)
}

func (InstanceGrant) Validate(_ context.Context, config InstanceGrantModel, diags *protocol.Diagnostics) {
	verify.CheckID(pathSystem, config.System, diags)

	subject, _ := config.Subject.Get()
	subjectType, typeKnown := subject.Type.Get()
	if typeKnown && subjectType != bkiam.SubjectUser && subjectType != bkiam.SubjectGroup {
		diags.AddAttributeError(protocol.Root("subject").WithAttributeName("type"), "Unknown subject type",
			fmt.Sprintf(`subject.type value must be one of "user" or "group", got %s.`, strconv.Quote(subjectType)))
		typeKnown = false
	}
	idPath := pathSubjectID
	verify.CheckID(idPath, subject.ID, diags)
	if id, ok := subject.ID.Get(); ok && typeKnown {
		checkSubject(bkiam.Subject{Type: subjectType, ID: id}, idPath, diags)
	}

	verify.CheckActions(pathActions, config.Actions, "Name the actions to grant, or remove the resource.", diags)

	entries, _ := config.Resources.Get()
	for i, e := range entries {
		entry, _ := e.Get()
		verify.CheckID(resourcePath(i, "system"), entry.System, diags)
		verify.CheckID(resourcePath(i, "type"), entry.Type, diags)
		instancesPath := resourcePath(i, "instances")
		instances, ok := entry.Instances.Get()
		if !ok {
			continue
		}
		verify.CheckInstanceCount(instancesPath, len(instances), diags)
		verify.CheckInstanceIDs(instancesPath, instances, diags)
		verify.CheckNames(instancesPath, instances, diags)
	}

	checkExpiresAt(config.ExpiresAt, subjectType, typeKnown, diags)
	checkRolling(config, subjectType, typeKnown, diags)
	protocol.CheckTimeouts(config.Timeouts, diags)
}

// checkSubject reports a non-numeric group id and warns about admin.
func checkSubject(s bkiam.Subject, at *tftypes.AttributePath, diags *protocol.Diagnostics) {
	switch {
	case s.Type == bkiam.SubjectGroup:
		if _, err := strconv.ParseUint(s.ID, 10, 63); err != nil {
			diags.AddAttributeError(at, "Group IDs are numeric",
				fmt.Sprintf("subject.id must be the numeric ID of an IAM user group when subject.type is \"group\", got %q.", s.ID))
		}
	case strings.EqualFold(s.ID, "admin"):
		diags.AddAttributeWarning(at, "IAM ignores grants to admin",
			"The user admin already holds every permission, so IAM accepts this grant and stores nothing. "+
				"The resource records policy IDs of 0.")
	}
}

// checkExpiresAt enforces IAM's rules for expired_at that hold whatever
// the time: the expiry in the past is checked when a plan would send it
// (checkExpiryAhead), so that an expired grant can still be refreshed and
// destroyed.
func checkExpiresAt(v protocol.StringValue, subjectType string, subjectKnown bool, diags *protocol.Diagnostics) {
	s, ok := v.Get()
	if !ok {
		return
	}
	at := protocol.Root("expires_at")
	t, err := time.Parse(time.RFC3339, s)
	if err != nil {
		diags.AddAttributeError(at, "Invalid RFC 3339 time",
			fmt.Sprintf("expires_at must be an RFC 3339 time such as \"2027-06-30T00:00:00Z\", got %q.", s))
		return
	}
	if subjectKnown && subjectType == bkiam.SubjectGroup {
		diags.AddAttributeError(at, "Group grants do not expire",
			"IAM keeps group policies forever and ignores an expiry. Remove expires_at, or grant to users instead.")
		return
	}
	if t.Unix() > bkiam.PermanentExpiry {
		diags.AddAttributeError(at, "Expiry too late",
			fmt.Sprintf("expires_at must be no later than 2100-01-01T00:00:00Z, IAM's \"permanent\", got %s. Remove it for a permanent grant.", s))
	}
}

// expiryPassed reports an expires_at that is set and has passed.
func expiryPassed(v protocol.StringValue, now time.Time) bool {
	s, ok := v.Get()
	if !ok {
		return false
	}
	t, err := time.Parse(time.RFC3339, s)
	return err == nil && !t.After(now)
}

// checkExpiryAhead refuses to plan sending an expiry that has passed: IAM
// would refuse it.
func checkExpiryAhead(v protocol.StringValue, now time.Time, diags *protocol.Diagnostics) {
	s, ok := v.Get()
	if !ok {
		return
	}
	if t, err := time.Parse(time.RFC3339, s); err == nil && !t.After(now) {
		diags.AddAttributeError(protocol.Root("expires_at"), "Expiry in the past",
			fmt.Sprintf("expires_at is %s, which has passed; IAM refuses expiries that are not in the future. Set a later time or remove it for a permanent grant.", s))
	}
}

func (InstanceGrant) CheckModel(ctx context.Context, data *conns.Data, proposed InstanceGrantModel, diags *protocol.Diagnostics) {
	checkInstanceGrantModel(ctx, data, proposed, diags)
}

func (r InstanceGrant) Plan(_ context.Context, req protocol.PlanRequest[InstanceGrantModel], diags *protocol.Diagnostics) protocol.PlanResponse[InstanceGrantModel] {
	planned := req.Proposed
	var estimate int64 // the expiry the apply sets where the plan leaves it unknown
	switch {
	case !planned.ExpiresIn.IsNull():
		estimate = planRolling(&planned, req.Prior, req.Time(), diags)
	case req.Prior != nil && !planned.ExpiresAt.IsNull() && req.ConfigNull != nil && req.ConfigNull("expires_at"):
		// expires_at is computed for a rolling expiry, so Terraform
		// proposes the recorded one when the configuration has none:
		// without expires_in that means permanent.
		planned.ExpiresAt = protocol.StringValue{}
	}
	if req.Prior == nil {
		checkExpiryAhead(planned.ExpiresAt, time.Now(), diags)
		planned.ID, planned.Policies = protocol.Unknown[string](), protocol.Unknown[map[string]protocol.Value[int64]]()
		return protocol.PlanResponse[InstanceGrantModel]{Planned: planned}
	}
	prior := *req.Prior
	var out protocol.PlanResponse[InstanceGrantModel]
	if planned.System != prior.System {
		out.RequiresReplace = append(out.RequiresReplace, protocol.Root("system"))
	}
	if planned.Subject != prior.Subject {
		out.RequiresReplace = append(out.RequiresReplace, protocol.Root("subject"))
	}
	if planned.ExpiresAt != prior.ExpiresAt || expiryPassed(prior.ExpiresAt, time.Now()) {
		// A change of an expired grant grants with its expiry, which IAM
		// refuses once it has passed: it can stay as it is, be destroyed,
		// or get a later expiry.
		if planned.ExpiresIn.IsNull() {
			checkExpiryAhead(planned.ExpiresAt, time.Now(), diags)
		} else {
			checkRollingAhead(planned, time.Now(), diags)
		}
	}
	planned.ID = prior.ID
	if planned.ID.IsNull() {
		planned.ID = protocol.Unknown[string]()
	}
	planned.Policies = r.plannedPolicies(withEstimate(ViewGrant(planned), estimate), ViewGrant(prior), req.Private, diags)
	out.Planned = planned
	return out
}

// plannedPolicies shows the policy ids that an update keeps, instead of
// "known after apply" for all of them.
func (InstanceGrant) plannedPolicies(plan, state GrantView, private protocol.PrivateState, diags *protocol.Diagnostics) protocol.Int64MapValue {
	if ReadHoldings(private, diags) != nil || !plan.Known || !state.Known || state.Model.Policies.IsNull() {
		return protocol.Unknown[map[string]protocol.Value[int64]]() // after a run that failed midway, any policy may be granted anew
	}
	next, old := plan.Grant, state.Grant
	// Policy ids survive every change but those that revoke an action
	// whole before granting it again.
	if next.ExpiresAt < old.ExpiresAt || (len(next.Resources) > 1 && !sameGrantInstances(old, next)) {
		return protocol.Unknown[map[string]protocol.Value[int64]]()
	}
	// An action the update grants to may get a new policy: one revoked
	// whole outside Terraform since the last refresh is created again, under
	// a new id. Only the ids of actions the update does not grant to are
	// known at plan.
	calls, err := grantplan.Plan(grantplan.Held(&old), &next, grantplan.Limits{Grant: 1 << 30, Revoke: 1 << 30})
	if err != nil {
		return protocol.Unknown[map[string]protocol.Value[int64]]()
	}
	granted := map[string]bool{}
	for _, c := range calls {
		if c.Operation == grantplan.OperationGrant {
			for _, a := range c.Actions {
				granted[a] = true
			}
		}
	}
	return plannedPolicies(next.Actions, state.Policies, func(a string) bool { return slices.Contains(old.Actions, a) && !granted[a] })
}

func sameGrantInstances(a, b grantplan.Grant) bool {
	return grantplan.Held(&grantplan.Grant{Actions: []string{"x"}, Resources: a.Resources}).
		Equal(grantplan.Held(&grantplan.Grant{Actions: []string{"x"}, Resources: b.Resources}))
}

func (r InstanceGrant) Apply(ctx context.Context, data *conns.Data, req protocol.ApplyRequest[InstanceGrantModel], diags *protocol.Diagnostics) (*InstanceGrantModel, protocol.PrivateState) {
	private := req.Private
	rolling.Settle(&req, time.Now(), func(m *InstanceGrantModel, at protocol.StringValue) { m.ExpiresAt = at })
	current, next := protocol.ViewsOf(req, ViewGrant)
	if next != nil && !next.Known {
		diags.AddError("Unknown grant at apply", "Terraform asked to apply a grant that is not fully known. This is a bug in Terraform or the provider.")
		return req.Prior, private
	}
	held := grantplan.Holdings{}
	if current != nil {
		held = r.Holdings(private, *current, diags)
	}
	if diags.HasError() {
		return req.Prior, private
	}
	planned := next
	if planned == nil {
		planned = current
	}
	caller := data.Instances
	if r.Via != nil {
		caller = r.Via(data)
	}
	limits := data.Limits()
	if r.Limits != nil {
		limits = r.Limits(data)
	}
	runner := &instanceGrantRunner{client: caller, system: planned.System, subject: planned.Subject, held: held,
		policies: map[string]int64{}, shared: sharedgrants.HandleOf(ctx), limits: limits,
		resource: r, data: data, current: current, next: next, planned: planned, private: private}
	if current != nil {
		runner.policies = current.Policies
	}
	state, private := applyrun.Run(ctx, sharedgrants.HandleOf(ctx), runner, protocol.TimeoutOf(planned.Model.Timeouts, req.Operation()), current == nil, next == nil, diags)
	if !diags.HasError() {
		reportRenewal(req.Prior, state, diags)
	}
	if next != nil {
		private = recordSeenRows(data, private, next.System, next.Subject, next.Grant.Actions)
	}
	return state, rolling.WithRenewal(private, state)
}

// Holdings returns what the resource holds: from private state after a
// failed run, else from its public state.
func (InstanceGrant) Holdings(private protocol.PrivateState, state GrantView, diags *protocol.Diagnostics) grantplan.Holdings {
	if held := ReadHoldings(private, diags); held != nil {
		return held
	}
	if !state.Known {
		return grantplan.Holdings{} // imported: nothing known
	}
	return grantplan.Held(&state.Grant)
}

// partial records a run that stopped midway: state shows the view of what
// is held, and private state keeps the exact holdings when the view
// cannot. A create that stopped shows the upper bound of what it may have
// granted instead: Terraform taints it and destroys it with its public
// state alone (a tainted object's private state does not reach the
// destroy of its replacement), so the view must name every grant in
// doubt.
func (r InstanceGrant) partial(g *GrantView, next *grantplan.Grant, runner *instanceGrantRunner, create bool, private protocol.PrivateState, diags *protocol.Diagnostics) InstanceGrantModel {
	shape := g.Grant.Resources
	if next != nil {
		shape = next.Resources
	}
	view := runner.held.View(next, shape)
	if create {
		view = runner.held.UpperBound(shape)
	}
	RecordHoldings(private, runner.held, view, diags)
	m := g.Model
	m.ID = protocol.Known(grantID(g.System, g.Subject))
	m.Actions = protocol.KnownStrings(view.Actions)
	m.Resources = ResourcesValue(view.Resources)
	m.ExpiresAt = expiresValue(view.ExpiresAt, next, g.Model.ExpiresAt)
	m.Policies = policiesValue(view.Actions, runner.policies)
	return m
}

func ResourcesValue(resources []grantplan.Resource) protocol.Value[[]protocol.Value[ResourceModel]] {
	entries := make([]protocol.Value[ResourceModel], len(resources))
	for i, res := range resources {
		entries[i] = protocol.Known(ResourceModel{System: protocol.Known(res.System), Type: protocol.Known(res.Type), Instances: protocol.KnownStringMap(res.Instances)})
	}
	return protocol.Known(entries)
}

// expiresValue is the expires_at of a view: an expiry equal to next's
// keeps the configuration's spelling, so that it shows no change.
func expiresValue(expiresAt int64, next *grantplan.Grant, configured protocol.StringValue) protocol.StringValue {
	switch {
	case next != nil && expiresAt == next.ExpiresAt, expiresAt == 0:
		// 0: no action is shown held, so there is no expiry to show.
		return configured
	case expiresAt == bkiam.PermanentExpiry:
		return protocol.StringValue{}
	default:
		return protocol.Known(time.Unix(expiresAt, 0).UTC().Format(time.RFC3339))
	}
}

// Refreshes: a refresh always looks at the state, to notice that a user
// grant expired.
func (InstanceGrant) Refreshes(*conns.Data) bool { return true }

// Read warns about a user grant that has expired, which stays in state as
// it is (below); with detect_drift, it keeps of the record only what IAM
// still holds, and completes an import by actions and resource type.
func (r InstanceGrant) Read(ctx context.Context, data *conns.Data, req protocol.ReadRequest[InstanceGrantModel], diags *protocol.Diagnostics) (*InstanceGrantModel, protocol.PrivateState, bool) {
	state, private, changed := r.read(ctx, data, req, diags)
	if state == nil || diags.HasError() || data == nil || data.Scans == nil {
		return state, private, changed
	}
	// The lists detect_drift read name the user's rows: kept, so that a
	// later plan reads them by id once they expired (seen_rows.go).
	g := ViewGrant(*state)
	if !g.Known || g.Subject.Type != bkiam.SubjectUser {
		return state, private, changed
	}
	ids := map[string][]int64{}
	for _, a := range g.Grant.Actions {
		live, expired, ok := data.Scans.LookupCached(g.System, a, g.Subject)
		for _, p := range slices.Concat(live, expired) {
			if ok {
				ids[a] = append(ids[a], p.ID)
			}
		}
	}
	private, recorded := withSeenRows(private, g.Subject, g.Grant.Actions, ids)
	return state, private, changed || recorded
}

// read is Read but for the rows it keeps.
func (r InstanceGrant) read(ctx context.Context, data *conns.Data, req protocol.ReadRequest[InstanceGrantModel], diags *protocol.Diagnostics) (*InstanceGrantModel, protocol.PrivateState, bool) {
	state, private := req.State, req.Private
	g := ViewGrant(state)
	driftOn := data != nil && data.Scans != nil
	pending := readImportRequest(private, diags)
	// With detect_drift, what IAM holds of an expired grant is read below,
	// and the warning says it for certain.
	readsBack := driftOn && g.Known && pending == nil
	expired := r.expired(state, private, !readsBack, diags)
	if diags.HasError() {
		return &state, private, false
	}
	if pending != nil {
		private = maps.Clone(private)
		delete(private, privateImportKey)
		if !driftOn {
			// Without detect_drift, import adopts the subject's grants and
			// holds nothing known, as the short import ID does.
			diags.AddWarning("Import without detect_drift",
				"The import ID names actions and a resource type, but only detect_drift can read what the subject holds of them. "+
					"The resource is adopted holding nothing known: the next apply grants what the configuration declares.")
			return &state, private, true
		}
		return r.readImport(ctx, data.Scans, g, *pending, private, diags)
	}
	if !driftOn || !g.Known {
		// Nothing to read back: detect_drift is off, or an import adopted
		// the resource holding nothing recorded.
		return &state, private, false
	}
	held := r.Holdings(private, g, diags)
	if diags.HasError() {
		return &state, private, false
	}
	now, iamExpiry, err := stillHeld(ctx, data.Scans, g.System, g.Subject, held)
	if err != nil {
		if expired {
			r.expired(state, private, true, diags) // the warning without the read
		}
		diags.AddError("Cannot read grants back from IAM",
			fmt.Sprintf("detect_drift could not read what %s holds in %s: %v. State is kept as it was; fix the cause, or turn "+
				"detect_drift off.", subjectName(g.Subject), g.System, err))
		return &state, private, false
	}
	if at, ok := renewedOutside(state, now, iamExpiry); ok && !expired && now.Equal(held) {
		// A rolling grant renewed in IAM (a grant of the same action by
		// another, a renewal in the web UI): a later expiry satisfies
		// expires_in. State records it, so that the next renewal counts
		// from it and no plan lowers it.
		diags.AddWarning("Renewed outside Terraform",
			fmt.Sprintf("IAM keeps %s's %s until %s, later than the recorded expires_at %s. A later expiry satisfies expires_in: "+
				"state records it as expires_at, and the next renewal counts from it.", subjectName(g.Subject),
				describeActions(g.Grant.Actions), formatExpiry(at), formatExpiry(g.Grant.ExpiresAt)))
		renewed := state
		renewed.ExpiresAt = protocol.Known(formatExpiry(at))
		return &renewed, private, true
	}
	if drift := DescribeExpiryDrift(now, iamExpiry); drift != "" && g.Subject.Type == bkiam.SubjectUser && !expired {
		// Said, not corrected: recording IAM's expiry would plan a change
		// of expires_at, whose apply lowers an expiry by revoke and grant.
		diags.AddWarning("IAM keeps another expiry",
			fmt.Sprintf("IAM keeps one expiry per user and action, the latest any grant gave, and only ever raises it: %s holds "+
				"%s. Another grant of the same action to %s (outside this resource, or by another) set it, so this resource's "+
				"expires_at does not decide when the access ends. State keeps the configured expiry.", subjectName(g.Subject),
				drift, g.Subject.ID))
	}
	if expired {
		warnExpired(state, now, iamExpiry, diags)
	}
	if now.Equal(held) {
		return &state, private, false
	}
	if expired {
		// What IAM still holds of an expired grant (nothing, unless another
		// grant keeps the policy alive) goes to the private record; the
		// public state keeps the configuration, so that the plan stays
		// empty instead of granting again with an expiry that has passed.
		private = maps.Clone(private)
		writeHoldings(private, now, diags)
		return &state, private, true
	}
	if loss := DescribeLoss(held, now); loss != "" {
		diags.AddWarning("Grants revoked outside Terraform",
			fmt.Sprintf("IAM no longer holds what this resource granted %s in %s: %s. It is removed from state, so the plan "+
				"grants it again.", subjectName(g.Subject), g.System, loss))
	}
	if len(now) == 0 {
		return nil, nil, true
	}
	view := now.View(&g.Grant, g.Grant.Resources)
	private = maps.Clone(private)
	RecordHoldings(private, now, view, diags)
	m := state
	m.Actions = protocol.KnownStrings(view.Actions)
	m.Resources = ResourcesValue(view.Resources)
	m.ExpiresAt = expiresValue(view.ExpiresAt, &g.Grant, state.ExpiresAt)
	m.Policies = policiesValue(view.Actions, g.Policies)
	return &m, private, true
}

// readImport completes an import: what the subject holds of the actions,
// read from IAM, with ids as names.
func (InstanceGrant) readImport(ctx context.Context, scans *bkiam.ScanCache, g GrantView, pending importRequest, private protocol.PrivateState, diags *protocol.Diagnostics) (*InstanceGrantModel, protocol.PrivateState, bool) {
	actions := slices.Sorted(slices.Values(pending.Actions))
	types := pending.types()
	var held grantplan.Holdings
	var err error
	switch len(types) {
	case 0:
		held, err = importedWithoutType(ctx, scans, g.System, g.Subject, actions)
	case 1:
		held, err = importedHoldings(ctx, scans, g.System, g.Subject, actions, types[0])
	default:
		held, err = importedCombinations(ctx, scans, g.System, g.Subject, actions, types)
	}
	if err != nil {
		diags.AddError("Cannot import the grant", err.Error()+".")
		return &g.Model, private, false
	}
	m, view := importedGrantOf(g.Model, g.System, g.Subject, held, types)
	RecordHoldings(private, held, view, diags)
	return &m, private, true
}

// importedWithoutType reads what the subject holds of actions related to
// no resource type: a policy over everything (an any on field ""), which
// IAM keeps until it is revoked whole.
func importedWithoutType(ctx context.Context, scans *bkiam.ScanCache, system string, subject bkiam.Subject, actions []string) (grantplan.Holdings, error) {
	held := grantplan.Holdings{}
	for _, action := range actions {
		policy, err := heldpolicy.Read(ctx, scans, system, action, subject)
		if err != nil {
			return nil, err
		}
		if policy == nil {
			continue
		}
		if _, everything := policy.Expr.Instances(""); !everything {
			return nil, fmt.Errorf("%s holds %s on resource instances, not as an action related to no resource type; "+
				"name its resource types after the actions in the import", subjectName(subject), action)
		}
		held[action] = grantplan.Holding{ExpiresAt: policy.ExpiredAt}
	}
	if len(held) == 0 {
		return nil, fmt.Errorf("%s holds none of %s; there is nothing to import", subjectName(subject), strings.Join(actions, ", "))
	}
	return held, nil
}

// importedCombinations reads what the subject holds of actions on a
// combined resource of types: for each action, the one combination its
// policy grants (an AND of the types' instance ids, which a grant of the
// resource writes), each instance named by its id. A policy holding
// several combinations of an action, or every instance of a type, cannot
// be one bkiam_instance_grant.
func importedCombinations(ctx context.Context, scans *bkiam.ScanCache, system string, subject bkiam.Subject, actions []string, types []grantplan.Resource) (grantplan.Holdings, error) {
	names := make([]string, len(types))
	for i, t := range types {
		names[i] = t.System + "/" + t.Type
	}
	held := grantplan.Holdings{}
	for _, action := range actions {
		policy, err := heldpolicy.Read(ctx, scans, system, action, subject)
		if err != nil {
			return nil, err
		}
		if policy == nil {
			continue
		}
		// The rows heldPolicy read (the scan is cached), each searched for
		// its own combinations.
		rows, err := scans.Lookup(ctx, system, action, subject)
		if err != nil {
			return nil, err
		}
		var found []map[string][]string
		for _, row := range rows {
			groups, everything, err := combinationsOf(row.Expression, types)
			if err != nil {
				return nil, fmt.Errorf("cannot read the expression of %s's policy %d for %s: %w", subjectName(subject), row.ID, action, err)
			}
			if everything {
				return nil, fmt.Errorf("%s holds %s on every instance of one of %s (a grant with an empty instance list); "+
					"bkiam_instance_grant never grants that, so it cannot be imported", subjectName(subject), action, strings.Join(names, " × "))
			}
			for _, g := range groups {
				if !slices.ContainsFunc(found, func(f map[string][]string) bool { return sameCombination(f, g) }) {
					found = append(found, g)
				}
			}
		}
		switch {
		case len(found) == 0:
			continue
		case len(found) > 1:
			return nil, fmt.Errorf("%s holds %s on %d combinations of %s; a bkiam_instance_grant holds one, so it cannot be imported",
				subjectName(subject), action, len(found), strings.Join(names, " × "))
		case !policy.Expr.HoldsCombination(found[0]):
			continue // not a combination that stands on its own: as a refresh would read it, not held
		}
		h := grantplan.Holding{ExpiresAt: policy.ExpiredAt}
		for _, t := range types {
			instances := make(map[string]string, len(found[0][t.Type]))
			for _, id := range found[0][t.Type] {
				instances[id] = id
			}
			h.Resources = append(h.Resources, grantplan.Resource{System: t.System, Type: t.Type, Instances: instances})
		}
		held[action] = h
	}
	if len(held) == 0 {
		return nil, fmt.Errorf("%s holds none of %s on a combination of %s instances; there is nothing to import",
			subjectName(subject), strings.Join(actions, ", "), strings.Join(names, " × "))
	}
	return held, nil
}

// combinationsOf finds in a policy expression the combinations of types
// it grants: each AND, at the root or under ORs, whose members are the
// instance ids of exactly these types (an eq or in on "TYPE.id", or an OR
// of them, one member per type), as ids by type. everything reports such
// an AND granting every instance of a type (an any). An AND nested in
// another AND is narrowed by its siblings and is not one.
func combinationsOf(raw []byte, types []grantplan.Resource) (groups []map[string][]string, everything bool, err error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var root any
	if err := dec.Decode(&root); err != nil {
		return nil, false, err
	}
	wanted := map[string]bool{}
	for _, t := range types {
		wanted[t.Type] = true
	}
	var walk func(v any)
	walk = func(v any) {
		n, _ := v.(map[string]any)
		switch n["op"] {
		case "OR":
			content, _ := n["content"].([]any)
			for _, c := range content {
				walk(c)
			}
		case "AND":
			content, _ := n["content"].([]any)
			g := map[string][]string{}
			anyOf := false
			for _, c := range content {
				typ, ids, all, ok := typeIDs(c)
				if _, seen := g[typ]; !ok || !wanted[typ] || seen {
					return
				}
				g[typ], anyOf = ids, anyOf || all
			}
			if len(g) != len(wanted) {
				return
			}
			if anyOf {
				everything = true
				return
			}
			groups = append(groups, g)
		}
	}
	walk(root)
	return groups, everything, nil
}

// typeIDs reads a condition on one type's instance ids: an eq or in on
// "TYPE.id" (all: an any), or an OR of such conditions on one type.
func typeIDs(v any) (typ string, ids []string, all, ok bool) {
	n, _ := v.(map[string]any)
	op, _ := n["op"].(string)
	if op == "OR" {
		content, _ := n["content"].([]any)
		for _, c := range content {
			t, cids, call, cok := typeIDs(c)
			if !cok || (typ != "" && t != typ) {
				return "", nil, false, false
			}
			typ, all = t, all || call
			ids = append(ids, cids...)
		}
		slices.Sort(ids)
		return typ, slices.Compact(ids), all, typ != ""
	}
	field, _ := n["field"].(string)
	typ, ok = strings.CutSuffix(field, ".id")
	if !ok || typ == "" || strings.Contains(typ, ".") {
		return "", nil, false, false
	}
	switch op {
	case "any":
		return typ, nil, true, true
	case "eq":
		id, isID := scalarID(n["value"])
		return typ, []string{id}, false, isID
	case "in":
		values, _ := n["value"].([]any)
		for _, x := range values {
			id, isID := scalarID(x)
			if !isID {
				return "", nil, false, false
			}
			ids = append(ids, id)
		}
		slices.Sort(ids)
		return typ, slices.Compact(ids), false, len(ids) > 0
	}
	return "", nil, false, false
}

// scalarID is an id of an expression: a string, or a number as written.
func scalarID(v any) (string, bool) {
	switch x := v.(type) {
	case string:
		return x, true
	case json.Number:
		return x.String(), true
	}
	return "", false
}

func sameCombination(a, b map[string][]string) bool {
	return maps.EqualFunc(a, b, slices.Equal[[]string])
}

// importedGrantOf is m holding what IAM holds (held) of actions on any
// resource types (shape, in order: none, one, or those of a combined
// resource): what an import records, and what a listing of the grants
// returns (grantModel), so that importing a listed grant plans nothing.
func importedGrantOf(m InstanceGrantModel, system string, subject bkiam.Subject, held grantplan.Holdings, shape []grantplan.Resource) (InstanceGrantModel, grantplan.Grant) {
	if subject.Type == bkiam.SubjectGroup {
		for action, h := range held {
			h.ExpiresAt = bkiam.PermanentExpiry // group policies never expire
			held[action] = h
		}
	}
	view := held.View(nil, shape)
	return grantModel(m, system, subject, view), view
}

// grantModel is m holding view: the grant of a subject as an import reads
// it (importedGrantOf), or as a list result shows it.
func grantModel(m InstanceGrantModel, system string, subject bkiam.Subject, view grantplan.Grant) InstanceGrantModel {
	m.ID = protocol.Known(grantID(system, subject))
	m.System = protocol.Known(system)
	m.Subject = protocol.Known(SubjectModel{Type: protocol.Known(subject.Type), ID: protocol.Known(subject.ID)})
	m.Actions = protocol.KnownStrings(view.Actions)
	m.Resources = ResourcesValue(view.Resources)
	m.ExpiresAt = expiresValue(view.ExpiresAt, nil, protocol.StringValue{})
	// No policy ids: the rows an import reads carry the backend's ids
	// (bkiam.Policy.ID), which number the policies otherwise than the
	// SaaS ids a grant answers and policies holds (internal/bkiam's
	// package doc). Recorded here, the next grant's answer would differ
	// from them, and the runner would take every imported action for a
	// policy revoked whole outside Terraform (lost) and grant all it
	// holds again. The ids come with the first grant of each action.
	m.Policies = policiesValue(nil, nil)
	return m
}

// expired reports a user grant whose expiry has passed, with a warning.
// It is not dropped from state: IAM keeps one expiry per subject and
// action, the latest, so another grant of the same subject and action can
// keep the policy, and these instances in it, alive after this expiry; a
// state that forgot them could never revoke them. The resource stays as
// it is (an upper bound of what IAM holds, narrowed by detect_drift), its
// plan stays empty, and its destroy revokes what it may still hold.
func (InstanceGrant) expired(state InstanceGrantModel, private protocol.PrivateState, warn bool, diags *protocol.Diagnostics) bool {
	expires, ok := state.ExpiresAt.Get()
	subject, _ := state.Subject.Get()
	if subjectType, _ := subject.Type.Get(); !ok || subjectType != bkiam.SubjectUser {
		return false
	}
	t, err := time.Parse(time.RFC3339, expires)
	if err != nil || t.After(time.Now()) {
		return false
	}
	// The public expiry is the earliest of the actions'; after a run that
	// failed midway, the exact record may hold actions that expire later,
	// or that the public state leaves out. Forgetting those would lose
	// track of grants IAM still holds.
	if held := ReadHoldings(private, diags); held != nil {
		for _, h := range held {
			if h.ExpiresAt == bkiam.PermanentExpiry || time.Unix(h.ExpiresAt, 0).After(time.Now()) {
				return false
			}
		}
	}
	if diags.HasError() {
		return false
	}
	if !warn {
		return true // warnExpired says it once IAM is read
	}
	g := ViewGrant(state)
	diags.AddWarning("Grant expired",
		fmt.Sprintf("The grant of %s to %s %s in %s expired at %s. IAM no longer holds it, unless another grant of the same "+
			"subject and action keeps its policy alive with a later expiry (IAM keeps one expiry per subject and action). It "+
			"stays in state as it is: remove the resource to revoke whatever IAM still holds of it, or set a later "+
			"expires_at (or remove it) to grant it again.",
			strings.Join(g.Grant.Actions, ", "), g.Subject.Type, g.Subject.ID, g.System, expires))
	return true
}

// warnExpired is the warning of an expired user grant once detect_drift
// has read what IAM still holds of it (now, and the expiry IAM keeps of
// each action): for certain, either nothing, or what another grant of
// the same subject and action keeps alive.
func warnExpired(state InstanceGrantModel, now grantplan.Holdings, iamExpiry map[string]int64, diags *protocol.Diagnostics) {
	g := ViewGrant(state)
	expires, _ := state.ExpiresAt.Get()
	what := fmt.Sprintf("The grant of %s to %s in %s expired at %s.", strings.Join(g.Grant.Actions, ", "), subjectName(g.Subject), g.System, expires)
	if len(now) == 0 {
		diags.AddWarning("Grant expired",
			what+" IAM no longer holds any of it (read back with detect_drift). It stays in state as it is: remove the "+
				"resource, or set a later expires_at (or remove it) to grant it again.")
		return
	}
	var alive []string
	for _, action := range slices.Sorted(maps.Keys(now)) {
		alive = append(alive, fmt.Sprintf("%s (%s)", action, expiryText(iamExpiry[action], "until")))
	}
	diags.AddWarning("Grant expired, but IAM still holds it",
		what+fmt.Sprintf(" IAM still holds it, read back with detect_drift: another grant of the same subject and action keeps "+
			"the policy alive, and IAM keeps one expiry per subject and action: %s. It stays in state as it is: remove the "+
			"resource to revoke what IAM still holds of it, or set a later expires_at (or remove it) to manage it again.",
			strings.Join(alive, ", ")))
}

func grantID(system string, subject bkiam.Subject) string {
	return system + "/" + subject.Type + "/" + subject.ID
}

// Claims are the paths the grant holds: one per instance of a single
// resource type; the whole combination for a combined resource, which
// IAM stores as one group; "/" for actions related to no type.
func (InstanceGrant) Claims(m InstanceGrantModel) ledger.Claims {
	g, ok := claimedGrant(m)
	if !ok {
		return ledger.Claims{}
	}
	return grantClaims(g.System, g.Subject, grantplan.Held(&g.Grant))
}

// claimedGrant is the grant as far as it names paths: its system, subject,
// actions and instance ids. Unlike ViewGrant it needs neither the
// instances' names nor the expiry, which name no path (an expiry not
// known yet claims 0, which compares with no other); false when a path is
// not known.
func claimedGrant(m InstanceGrantModel) (GrantView, bool) {
	g := ViewGrant(m)
	if g.System == "" || g.Subject.Type == "" || g.Subject.ID == "" {
		return g, false
	}
	if g.Known {
		return g, true
	}
	actions, ok := protocol.StringsOf(m.Actions)
	entries, okEntries := m.Resources.Get()
	if !ok || !okEntries {
		return g, false
	}
	slices.Sort(actions)
	grant := grantplan.Grant{Actions: actions}
	for _, e := range entries {
		entry, okEntry := e.Get()
		system, okSystem := entry.System.Get()
		typ, okType := entry.Type.Get()
		instances, okInstances := entry.Instances.Get()
		if !okEntry || !okSystem || !okType || !okInstances {
			return g, false
		}
		ids := make(map[string]string, len(instances))
		for id, name := range instances {
			ids[id], _ = name.Get()
		}
		grant.Resources = append(grant.Resources, grantplan.Resource{System: system, Type: typ, Instances: ids})
	}
	grant.ExpiresAt, _ = expiresUnix(m.ExpiresAt, g.Subject.Type)
	g.Grant = grant
	return g, true
}

// grantClaims are the claims of holdings.
func grantClaims(system string, subject bkiam.Subject, held grantplan.Holdings) ledger.Claims {
	c := ledger.Claims{Scope: grantScope(system, subject), Actions: map[string]ledger.Action{}}
	for action, h := range held {
		c.Actions[action] = ledger.Action{Paths: grantPaths(h.Resources), ExpiresAt: h.ExpiresAt}
	}
	if len(c.Actions) == 0 {
		c.Actions = nil
	}
	return c
}

// grantScope is the scope of a grant's claims: IAM compares subject ids
// without case (a grant to "Alice" is alice's policy), so the ledger does.
func grantScope(system string, subject bkiam.Subject) ledger.Scope {
	return ledger.Scope{System: system, SubjectType: subject.Type, SubjectID: strings.ToLower(subject.ID)}
}

func grantPaths(resources []grantplan.Resource) []string {
	switch len(resources) {
	case 0:
		return []string{"/"}
	case 1:
		r := resources[0]
		paths := make([]string, 0, len(r.Instances))
		for id := range r.Instances {
			paths = append(paths, sharedgrants.InstancePath(r.System, r.Type, id))
		}
		return paths
	}
	return []string{combinationPath(resources)}
}

// combinationPath names a combined resource's group: its types and
// instance ids, in order.
func combinationPath(resources []grantplan.Resource) string {
	parts := make([]string, len(resources))
	for i, r := range resources {
		ids := slices.Sorted(maps.Keys(r.Instances))
		for j, id := range ids {
			ids[j] = sharedgrants.EscapeID(id)
		}
		parts[i] = r.System + "," + r.Type + ":" + strings.Join(ids, ",")
	}
	return "combination " + strings.Join(parts, " × ")
}

// Label names the grant by its id, which two grants of one subject share,
// and by what it grants, which tells them apart.
func (InstanceGrant) Label(m InstanceGrantModel) string {
	g := ViewGrant(m)
	return fmt.Sprintf("%q", grantID(g.System, g.Subject)) + GrantContent(g)
}

// GrantContent describes what a grant grants, for labels: " granting
// view_host on bk_cmdb/host 1, 2, 3"; empty when not known.
func GrantContent(g GrantView) string {
	if !g.Known || len(g.Grant.Actions) == 0 {
		return ""
	}
	var on []string
	for _, r := range g.Grant.Resources {
		on = append(on, r.System+"/"+r.Type+" "+protocol.SomeIDs(slices.Collect(maps.Keys(r.Instances))))
	}
	return " granting " + strings.Join(g.Grant.Actions, ", ") + " on " + strings.Join(on, " with ")
}

// Reassert: an update that grants again shows its policies as unknown.
func (InstanceGrant) Reassert(planned InstanceGrantModel) InstanceGrantModel {
	planned.Policies = protocol.Unknown[map[string]protocol.Value[int64]]()
	return planned
}

// PendingScope: the grant's paths are not known until apply, as when its
// instances come from another resource (sharedgrants.Unknowable); an
// imported grant, which holds nothing known, is not pending.
func (InstanceGrant) PendingScope(m InstanceGrantModel) (pending bool, scope ledger.Scope, actions []string, known bool) {
	g, claimed := claimedGrant(m)
	if claimed || m.Actions.IsNull() && m.Resources.IsNull() {
		return false, ledger.Scope{}, nil, false
	}
	if a, ok := protocol.StringsOf(m.Actions); ok {
		actions = a
	}
	return true, grantScope(g.System, g.Subject), actions, g.System != "" && g.Subject.Type != "" && g.Subject.ID != ""
}

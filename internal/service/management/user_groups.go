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

	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"github.com/hashicorp/terraform-plugin-go/tftypes"

	"github.com/bkiam/terraform-provider-bkiam/internal/applyrun"
	"github.com/bkiam/terraform-provider-bkiam/internal/bkiam"
	"github.com/bkiam/terraform-provider-bkiam/internal/conns"
	"github.com/bkiam/terraform-provider-bkiam/internal/ledger"
	"github.com/bkiam/terraform-provider-bkiam/internal/memberplan"
	"github.com/bkiam/terraform-provider-bkiam/internal/protocol"
	"github.com/bkiam/terraform-provider-bkiam/internal/renewal"
	"github.com/bkiam/terraform-provider-bkiam/internal/rolling"
	"github.com/bkiam/terraform-provider-bkiam/internal/sharedgrants"
	"github.com/bkiam/terraform-provider-bkiam/internal/verify"
)

// UserGroups is bkiam_user_groups: one user's (or department's)
// membership in a set of the app's groups, seen from the person. It is
// additive: it adds and removes the person in the groups it lists and in
// no other, so it lives beside the memberships IAM keeps for the person
// elsewhere (a department's, a subject template's, a grade manager's sync
// group, groups of other systems). A group whose members a
// bkiam_group_members owns whole cannot be listed here too: the plan of
// the second fails (sharedgrants.PartOwner). IAM has no call that adds a
// member to many groups, so a change is one call per group it touches;
// the read is one call per 100 groups (bkiam.MemberGroupDetails).
type UserGroups struct{}

func (UserGroups) Name() string { return "user_groups" }

func (UserGroups) Schema(context.Context) schema.Schema {
	return schema.Schema{
		MarkdownDescription: "One user's (or one department's) membership in a set of BlueKing IAM user groups, each with " +
			"an expiry, through IAM's management API (API gateway only): the person's side of `bkiam_group_members`. " +
			"The resource is additive: it adds the person to the groups it lists and, when a group leaves the map or the " +
			"resource is destroyed, removes the person from exactly that group. Memberships it does not list are never " +
			"touched: other groups, and what IAM keeps itself (the groups of the person's departments, of a subject template, " +
			"a grade manager's sync group). A group whose members a `bkiam_group_members` of the configuration owns cannot " +
			"be listed here as well: the plan fails naming both. The groups must be the app's (made by grade managers its " +
			"system created). A change is one call per group it touches (IAM has no call that adds a member to many groups); " +
			"a refresh reads the memberships in one call per 100 groups.",
		Attributes: map[string]schema.Attribute{
			"id": schema.StringAttribute{
				Computed:            true,
				MarkdownDescription: "`SYSTEM/user/USERNAME` or `SYSTEM/department/DEPARTMENT_ID`.",
			},
			"system": schema.StringAttribute{
				Required: true,
				MarkdownDescription: "The system whose management API manages the groups: the system that created their grade " +
					"managers. Changing it replaces the resource.",
			},
			"user": schema.StringAttribute{
				Optional:            true,
				MarkdownDescription: "The username whose memberships these are. Exactly one of `user` and `department`. Changing it replaces the resource.",
			},
			"department": schema.StringAttribute{
				Optional:            true,
				MarkdownDescription: "The numeric id of the department whose memberships these are, e.g. `\"12\"`. Exactly one of `user` and `department`. Changing it replaces the resource.",
			},
			"groups": schema.MapAttribute{
				Required:    true,
				ElementType: types.StringType,
				MarkdownDescription: "The groups, by numeric id (e.g. `bkiam_group.dev.id`) → when the membership expires: " +
					"`\"permanent\"`, an RFC 3339 time such as `\"2027-06-30T00:00:00Z\"` (no later than `2100-01-01T00:00:00Z`, IAM's " +
					"permanent), or `\"expires_in\"` to follow the rolling expiry of `expires_in` (the date is `expires_at`). IAM " +
					"raises an expiry in place but cannot lower one: a lowered expiry is applied by removing the person from the " +
					"group and adding them again, and the plan says so.",
			},
			"expires_in": schema.StringAttribute{
				Optional: true,
				MarkdownDescription: "A rolling expiry for the groups valued `\"expires_in\"`, as `bkiam_group_members` has it: a " +
					"duration such as `\"90d\"` (units `s`, `m`, `h`, `d`, `w`, combined as in `\"1d12h\"`). The apply that sets " +
					"or changes it gives those memberships the expiry `expires_at` = the apply's time + `expires_in`; a group " +
					"added later gets the current `expires_at`.",
			},
			"renew_before": schema.StringAttribute{
				Optional: true,
				MarkdownDescription: "Renews the rolling expiry when less than this duration is left before `expires_at` (or " +
					"will be within a margin: a day, or half the gap between `expires_in` and `renew_before` when shorter), as " +
					"`bkiam_group_members` does: the plan warns `Renewing memberships` and leaves `expires_at` known after apply; " +
					"the apply raises the memberships' expiry in place, one call per group, never a removal. A plan goes by the " +
					"time the state was last read or written, so that a saved plan's apply, however late, agrees with it.",
			},
			"enforce_expiry": schema.BoolAttribute{
				Optional: true,
				MarkdownDescription: "What a later expiry in IAM of a group valued `\"expires_in\"` means (the person renewed in " +
					"IAM's web UI). By default (`false`) it is kept and the plan stays empty; `true` holds the membership at " +
					"exactly `expires_at`, which IAM lowers only by removing the person and adding them again. The refresh reads " +
					"memberships by the recorded setting: a change of `enforce_expiry` takes effect from the refresh after the " +
					"apply that records it.",
			},
			"expires_at": schema.StringAttribute{
				Computed:            true,
				MarkdownDescription: "The rolling expiry of the groups valued `\"expires_in\"`, in RFC 3339 (UTC). Null without `expires_in`.",
			},
			"timeouts": protocol.TimeoutsAttribute(),
		},
	}
}

// userGroupsView is a bkiam_user_groups model in the planner's terms.
type userGroupsView struct {
	model  UserGroupsModel
	system string
	// member is the person; Type is "" while it is not known.
	member memberplan.Key
	// groups are the memberships, group → expiry; nil when a part is
	// unknown.
	groups map[int64]int64
}

func viewUserGroups(m UserGroupsModel) userGroupsView {
	v := userGroupsView{model: m, member: memberOf(m)}
	v.system, _ = m.System.Get()
	if m.Groups.IsUnknown() {
		return v
	}
	follows := expiryAt(m.ExpiresAt)
	elems, _ := m.Groups.Get()
	groups := make(map[int64]int64, len(elems))
	for id, e := range elems {
		n, err := strconv.ParseInt(id, 10, 64)
		exp, ok := memberExpiry(e, follows)
		if err != nil || !ok {
			return v
		}
		groups[n] = exp
	}
	v.groups = groups
	return v
}

// memberOf is the person of m; Type "" while it is not known.
func memberOf(m UserGroupsModel) memberplan.Key {
	if u, ok := m.User.Get(); ok {
		return memberplan.Key{Type: memberUser, ID: u}
	}
	if d, ok := m.Department.Get(); ok {
		return memberplan.Key{Type: memberDepartment, ID: d}
	}
	return memberplan.Key{}
}

// RollingAttrs are the memberships' rolling expiry attributes
// (rolling.Model).
func (m UserGroupsModel) RollingAttrs() rolling.Attrs {
	return rolling.Attrs{ExpiresIn: m.ExpiresIn, RenewBefore: m.RenewBefore, ExpiresAt: m.ExpiresAt}
}

// groupFollowers are the groups of m valued "expires_in", sorted; known
// is false when the map or a value is unknown.
func groupFollowers(m UserGroupsModel) (ids []string, known bool) { return followersIn(m.Groups) }

// ImportState takes SYSTEM/user/USERNAME/GROUP_ID,GROUP_ID… (or
// department/ID): the groups to read, since the resource holds only
// those it lists. The read that follows fills their expiries from IAM.
func (UserGroups) ImportState(_ context.Context, id string, diags *protocol.Diagnostics) (UserGroupsModel, protocol.PrivateState) {
	var m UserGroupsModel
	parts := strings.Split(id, "/")
	bad := func() {
		diags.AddError("Invalid import ID", fmt.Sprintf("Expected SYSTEM/user/USERNAME/GROUP_ID,GROUP_ID… or "+
			"SYSTEM/department/DEPARTMENT_ID/GROUP_ID,…, e.g. bk_cmdb/user/alice/42,43: the resource holds only the groups it "+
			"lists, so the import names them; got %q.", id))
	}
	if len(parts) != 4 || strings.TrimSpace(parts[0]) == "" || parts[2] == "" || (parts[1] != memberUser && parts[1] != memberDepartment) {
		bad()
		return m, nil
	}
	groups := map[string]protocol.StringValue{}
	for _, g := range strings.Split(parts[3], ",") {
		if n, err := strconv.ParseInt(g, 10, 64); err != nil || n <= 0 {
			bad()
			return m, nil
		}
		groups[g] = protocol.Known(permanentMember) // the read replaces it with IAM's expiry
	}
	m.System, m.Groups = protocol.Known(parts[0]), protocol.Known(groups)
	if parts[1] == memberUser {
		m.User = protocol.Known(parts[2])
	} else {
		m.Department = protocol.Known(parts[2])
	}
	m.ID = protocol.Known(parts[0] + "/" + parts[1] + "/" + parts[2])
	return m, nil
}

func (UserGroups) Validate(_ context.Context, config UserGroupsModel, diags *protocol.Diagnostics) {
	verify.CheckID(protocol.Root("system"), config.System, diags)
	switch {
	case config.User.IsNull() && config.Department.IsNull():
		diags.AddAttributeError(protocol.Root("user"), "Whose memberships",
			"Set user (a username, e.g. \"alice\") or department (a department id, e.g. \"12\"): the person whose memberships these are.")
	case !config.User.IsNull() && !config.Department.IsNull():
		diags.AddAttributeError(protocol.Root("department"), "Both user and department",
			"user and department are both set; a bkiam_user_groups is one person's memberships. Keep one, and write the other's "+
				"memberships in a resource of its own.")
	}
	if u, ok := config.User.Get(); ok {
		checkUsername(protocol.Root("user"), u, diags)
	}
	if d, ok := config.Department.Get(); ok {
		checkDepartmentID(protocol.Root("department"), d, diags)
	}
	groups, _ := config.Groups.Get()
	for id, e := range groups {
		at := protocol.Root("groups").WithElementKeyString(id)
		if n, err := strconv.ParseInt(id, 10, 64); err != nil || n <= 0 {
			diags.AddAttributeError(at, "Invalid group id",
				fmt.Sprintf("%s: the keys of groups are user groups' numeric ids, such as bkiam_group.dev.id or \"42\"; got %q.", protocol.PathString(at), id))
		}
		checkMemberExpiry(at, e, diags)
	}
	rolling.Check(config.RollingAttrs(), diags)
	followers, known := groupFollowers(config)
	f := rolling.Followers{Noun: "group", Count: len(followers), Known: known}
	if len(followers) > 0 {
		f.First = protocol.Root("groups").WithElementKeyString(followers[0])
	}
	rolling.CheckFollowers(config.RollingAttrs(), f, diags)
	protocol.CheckTimeouts(config.Timeouts, diags)
}

// CheckModel refuses, for a create or a change, a provider that cannot
// reach the management API.
func (UserGroups) CheckModel(_ context.Context, data *conns.Data, _ UserGroupsModel, diags *protocol.Diagnostics) {
	if summary, detail, ok := managementNeedsGateway(data, "bkiam_user_groups"); ok {
		diags.AddError(summary, detail)
	}
}

func (UserGroups) Plan(_ context.Context, req protocol.PlanRequest[UserGroupsModel], diags *protocol.Diagnostics) protocol.PlanResponse[UserGroupsModel] {
	planned := req.Proposed
	var out protocol.PlanResponse[UserGroupsModel]
	planned.ID = protocol.Unknown[string]()
	if system, ok := planned.System.Get(); ok {
		if k := memberOf(planned); k.Type != "" {
			planned.ID = protocol.Known(system + "/" + k.Type + "/" + k.ID)
		}
	}
	var prior *UserGroupsModel
	var held map[int64]int64
	if req.Prior != nil {
		for _, attr := range []struct {
			name        string
			now, before protocol.StringValue
		}{{"system", planned.System, req.Prior.System}, {"user", planned.User, req.Prior.User}, {"department", planned.Department, req.Prior.Department}} {
			if attr.now != attr.before {
				out.RequiresReplace = append(out.RequiresReplace, protocol.Root(attr.name))
			}
		}
		if len(out.RequiresReplace) == 0 {
			prior = req.Prior
			held = viewUserGroups(*prior).groups
		}
	}
	roll := rolling.PlanOf(prior, planned, req.Time())
	planned.ExpiresAt = roll.ExpiresAt
	// An expires_at known only after the apply is estimated as now +
	// expires_in, which the apply's later time can only raise.
	estimated := planned
	estimated.ExpiresAt = roll.Estimated()
	next := viewUserGroups(estimated)
	if next.groups != nil {
		checkNewGroupExpiries(estimated, held, time.Now(), diags)
	}
	if next.groups != nil && held != nil {
		var lowered []string
		for g, exp := range next.groups {
			if old, ok := held[g]; ok && exp < old {
				lowered = append(lowered, strconv.FormatInt(g, 10))
			}
		}
		if len(lowered) > 0 {
			slices.Sort(lowered)
			diags.AddWarning("Expiries lowered by removing and adding again",
				fmt.Sprintf("IAM can raise a membership's expiry but not lower it, so the apply removes %s from %s and adds "+
					"them again with the new expiry. Between the two calls they are not members of the group.",
					describePerson(memberOf(planned)), describeGroups(lowered)))
		}
	}
	if roll.Decision.Kind == renewal.Renew {
		if ids, _ := groupFollowers(planned); len(ids) > 0 {
			b, _ := planned.RenewBefore.Get()
			diags.AddAttributeWarning(protocol.Root("renew_before"), "Renewing memberships",
				fmt.Sprintf("Less than renew_before (%s) is left before expires_at (%s), or will be within %s: the apply renews "+
					"%s's membership in %s following expires_in %s. IAM raises the expiry in place, one call per group; the person "+
					"leaves no group, and a membership renewed in IAM to a later date keeps it.",
					b, formatExpiry(roll.Decision.Recorded), renewal.Describe(roll.Rolling.Margin()), describePerson(memberOf(planned)),
					describeGroups(ids), renewal.Until(roll.Rolling, roll.Decision, req.Time())))
		}
	}
	out.Planned = planned
	return out
}

// checkNewGroupExpiries refuses an expiry that has passed on a
// membership the plan adds or changes: IAM refuses it.
func checkNewGroupExpiries(planned UserGroupsModel, held map[int64]int64, now time.Time, diags *protocol.Diagnostics) {
	eachSentGroup(planned, held, func(at *tftypes.AttributePath, e protocol.StringValue, exp int64) {
		if exp <= now.Unix() {
			refusePassedExpiry(at, e, exp, planned.RollingAttrs(), diags)
		}
	})
}

// eachSentGroup visits the memberships of planned whose expiry the apply
// sends (exp, in unix seconds: known, and not the one held), at their
// attribute paths.
func eachSentGroup(planned UserGroupsModel, held map[int64]int64, visit func(at *tftypes.AttributePath, e protocol.StringValue, exp int64)) {
	follows := expiryAt(planned.ExpiresAt)
	elems, _ := planned.Groups.Get()
	for id, e := range elems {
		exp, ok := memberExpiry(e, follows)
		if !ok {
			continue
		}
		if n, err := strconv.ParseInt(id, 10, 64); err == nil {
			if old, was := held[n]; was && old == exp {
				continue
			}
		}
		visit(protocol.Root("groups").WithElementKeyString(id), e, exp)
	}
}

// CheckPlan refuses what the site's cap on membership expiries
// (max_member_expiry) will refuse of the memberships the plan sends
// (checkMemberCap).
func (UserGroups) CheckPlan(_ context.Context, data *conns.Data, req protocol.PlanRequest[UserGroupsModel], diags *protocol.Diagnostics) {
	planned := req.Proposed
	var held map[int64]int64
	if p := req.Prior; p != nil && p.System == planned.System && p.User == planned.User && p.Department == planned.Department {
		held = viewUserGroups(*p).groups
	}
	ids, _ := groupFollowers(planned)
	checkMemberCap(data, planned.RollingAttrs(), len(ids), 0, func(visit func(*tftypes.AttributePath, protocol.StringValue, int64)) {
		eachSentGroup(planned, held, visit)
	}, diags)
}

var _ protocol.PlanChecker[UserGroupsModel, *conns.Data] = UserGroups{}

// describePerson renders "user alice" or "department 12".
func describePerson(k memberplan.Key) string { return k.Type + " " + k.ID }

// describeGroups renders "group 42" or "3 groups (42, 43, 44)", naming at
// most ten.
func describeGroups(ids []string) string {
	if len(ids) == 1 {
		return "group " + ids[0]
	}
	names := ids[:min(len(ids), 10)]
	more := ""
	if len(ids) > 10 {
		more = ", …"
	}
	return fmt.Sprintf("%d groups (%s%s)", len(ids), strings.Join(names, ", "), more)
}

// RenewDue reports whether a plan as of asOf renews (protocol.Renewer).
func (UserGroups) RenewDue(private protocol.PrivateState, asOf time.Time) bool {
	return protocol.RenewDueAfter(private, asOf)
}

var _ protocol.Renewer = UserGroups{}

func (r UserGroups) Apply(ctx context.Context, data *conns.Data, req protocol.ApplyRequest[UserGroupsModel], diags *protocol.Diagnostics) (*UserGroupsModel, protocol.PrivateState) {
	rolling.Settle(&req, time.Now(), func(m *UserGroupsModel, at protocol.StringValue) { m.ExpiresAt = at })
	current, next := protocol.ViewsOf(req, viewUserGroups)
	if next != nil && (next.groups == nil || next.member.Type == "") {
		diags.AddError("Unknown memberships at apply", "Terraform asked to apply memberships that are not fully known. This is a bug in Terraform or the provider.")
		return req.Prior, nil
	}
	from, last := current, next
	if from == nil {
		from = next
	}
	if last == nil {
		last = current
	}
	runner := &userGroupsRunner{client: data.Client, system: from.system, member: from.member, resource: r,
		prior: req.Prior, current: current, next: next, from: from, diags: diags}
	state, private := applyrun.Run(ctx, sharedgrants.HandleOf(ctx), runner, protocol.TimeoutOf(last.model.Timeouts, req.Operation()), current == nil, next == nil, diags)
	if renewedFrom, renewedTo, ok := rolling.Renewed(req.Prior, state); ok && !diags.HasError() {
		ids, _ := groupFollowers(*state)
		diags.AddWarning("Renewed the memberships of "+describePerson(from.member),
			fmt.Sprintf("%s following expires_in now expire at %s, renewed from %s.", describeGroups(ids), formatExpiry(renewedTo), formatExpiry(renewedFrom)))
	}
	return state, rolling.WithRenewal(private, state)
}

// readGroups reads the person's memberships in groups: one call per 100
// groups. A batch IAM refuses whole (a group in it is not the app's,
// or is gone) is read again group by group, and the groups refused alone
// are returned in refused.
func readGroups(ctx context.Context, c *bkiam.Client, system string, member memberplan.Key, groups []int64) (held map[int64]int64, refused []int64, err error) {
	held = map[int64]int64{}
	for batch := range slices.Chunk(slices.Sorted(slices.Values(groups)), bkiam.MemberGroupDetailLimit) {
		rows, err := c.MemberGroupDetails(ctx, system, member.Type, member.ID, batch)
		if errors.Is(err, bkiam.ErrNotOwned) || errors.Is(err, bkiam.ErrForbidden) {
			for _, g := range batch {
				one, err := c.MemberGroupDetails(ctx, system, member.Type, member.ID, []int64{g})
				switch {
				case errors.Is(err, bkiam.ErrNotOwned) || errors.Is(err, bkiam.ErrForbidden):
					refused = append(refused, g)
				case err != nil:
					return nil, nil, err
				}
				for _, row := range one {
					held[row.ID] = row.ExpiredAt
				}
			}
			continue
		}
		if err != nil {
			return nil, nil, err
		}
		for _, row := range rows {
			held[row.ID] = row.ExpiredAt
		}
	}
	return held, refused, nil
}

// Refreshes: the memberships are exactly readable, so every refresh reads
// them.
func (UserGroups) Refreshes(data *conns.Data) bool { return data != nil && data.Client != nil }

// Read sets state to the memberships IAM holds in the listed groups: one
// removed outside Terraform shows in the plan, which adds it again. A
// group that is gone (IAM refuses it alone, and its lists confirm it)
// leaves the map with a warning; one refused but not confirmed gone is an
// error.
func (r UserGroups) Read(ctx context.Context, data *conns.Data, req protocol.ReadRequest[UserGroupsModel], diags *protocol.Diagnostics) (*UserGroupsModel, protocol.PrivateState, bool) {
	state := req.State
	v := viewUserGroups(state)
	if v.system == "" || v.member.Type == "" || v.groups == nil {
		return &state, req.Private, false
	}
	held, refused, err := readGroups(ctx, data.Client, v.system, v.member, slices.Collect(maps.Keys(v.groups)))
	if err != nil {
		diags.AddError("Cannot read the memberships", managementError(fmt.Sprintf("Reading the groups of %s in %s", describePerson(v.member), v.system), err))
		return &state, req.Private, false
	}
	for _, g := range refused {
		gone, checkErr := goneCheck{client: data.Client, system: v.system}.groupGone(ctx, g)
		summary, detail, ok := goneOrUnconfirmed("bkiam_user_groups "+r.Label(state), fmt.Sprintf("group %d in %s", g, v.system), gone, checkErr)
		if !ok {
			diags.AddError(summary, detail)
			return &state, req.Private, false
		}
		diags.AddWarning(summary, detail+" The group leaves groups in state; the plan adds it again if the configuration still lists it.")
	}
	if maps.Equal(held, v.groups) {
		return &state, req.Private, false
	}
	m := state
	m.Groups = groupsValue(held, expiryAt(state.ExpiresAt), keepsLater(state.Enforce), state.Groups, protocol.StringMapValue{})
	return &m, req.Private, true
}

// groupsValue is the groups attribute of held: each membership's expiry
// as memberValue writes it, for the rolling expiry follows.
func groupsValue(held map[int64]int64, follows int64, keepsLater bool, like, alt protocol.StringMapValue) protocol.StringMapValue {
	likeElems, _ := like.Get()
	altElems, _ := alt.Get()
	out := make(map[string]protocol.StringValue, len(held))
	for g, exp := range held {
		id := strconv.FormatInt(g, 10)
		out[id] = memberValue(exp, follows, keepsLater, likeElems[id], altElems[id])
	}
	return protocol.Known(out)
}

// Claims: group membership is not a policy path; the ledger of shared
// grants does not cover it. The ownership of memberships is OwnsParts'.
func (UserGroups) Claims(UserGroupsModel) ledger.Claims { return ledger.Claims{} }

func (UserGroups) Label(m UserGroupsModel) string {
	system, _ := m.System.Get()
	k := memberOf(m)
	return fmt.Sprintf("%q", system+"/"+k.Type+"/"+k.ID)
}

func (UserGroups) Reassert(planned UserGroupsModel) UserGroupsModel { return planned }

// OwnsParts: the resource owns the person's membership in each group it
// lists, a part of "the members of group G" that bkiam_group_members owns
// whole (sharedgrants.PartOwner).
func (UserGroups) OwnsParts(m UserGroupsModel) ([]sharedgrants.Part, bool) {
	k := memberOf(m)
	if k.Type == "" || m.Groups.IsUnknown() {
		return nil, false
	}
	elems, _ := m.Groups.Get()
	parts := make([]sharedgrants.Part, 0, len(elems))
	for _, g := range slices.Sorted(maps.Keys(elems)) {
		parts = append(parts, sharedgrants.Part{Object: "the members of group " + g, Part: describePerson(k)})
	}
	return parts, true
}

// groupCall is one member call to one group.
type groupCall struct {
	group int64
	memberplan.Call
}

// userGroupsRunner sends the calls group by group and keeps what IAM
// holds after each, so that a run that stops midway leaves state that
// says so.
type userGroupsRunner struct {
	client *bkiam.Client
	system string
	member memberplan.Key
	held   map[int64]int64
	// added are the groups an add was carried out in.
	added []int64
	applyrun.NoLedger

	resource            UserGroups
	prior               *UserGroupsModel
	current, next, from *userGroupsView
	diags               *protocol.Diagnostics
}

// Load starts a create from what IAM holds of the listed groups (the
// person may be a member already: the create then changes only what
// differs).
func (r *userGroupsRunner) Load(ctx context.Context, diags *protocol.Diagnostics) (*UserGroupsModel, protocol.PrivateState, bool) {
	switch {
	case r.current == nil:
		held, refused, err := readGroups(ctx, r.client, r.system, r.member, slices.Collect(maps.Keys(r.next.groups)))
		if err == nil && len(refused) > 0 {
			err = fmt.Errorf("%w: IAM refuses %s to this app: %s", bkiam.ErrNotOwned, describeGroups(int64Strings(refused)),
				"a group must be one that a grade manager the system created holds")
		}
		if err != nil {
			diags.AddError("Cannot read the memberships", managementError(fmt.Sprintf("Reading the groups of %s in %s", describePerson(r.member), r.system), err))
			return nil, nil, true
		}
		r.held = held
	case r.current.groups == nil:
		diags.AddError("Unknown memberships in state", "The state of this resource holds unknown memberships. This is a bug in the provider.")
		return r.prior, nil, true
	default:
		r.held = maps.Clone(r.current.groups)
	}
	return nil, nil, false
}

func int64Strings(ids []int64) []string {
	out := make([]string, len(ids))
	for i, id := range ids {
		out[i] = strconv.FormatInt(id, 10)
	}
	return out
}

func (r *userGroupsRunner) Plan() ([]groupCall, error) {
	var wanted map[int64]int64
	if r.next != nil {
		wanted = r.next.groups
	}
	var calls []groupCall
	groups := slices.Sorted(maps.Keys(r.held))
	for g := range wanted {
		if _, ok := r.held[g]; !ok {
			groups = append(groups, g)
		}
	}
	slices.Sort(groups)
	for _, g := range groups {
		have, want := memberplan.Members{}, memberplan.Members{}
		if exp, ok := r.held[g]; ok {
			have[r.member] = exp
		}
		if exp, ok := wanted[g]; ok {
			want[r.member] = exp
		}
		for _, c := range memberplan.Make(have, want).Calls {
			calls = append(calls, groupCall{group: g, Call: c})
		}
	}
	return calls, nil
}

// Gone: the run never fails for a group that is gone: a destroy's delete
// in a deleted group is refused like any other, and stands.
func (r *userGroupsRunner) Gone(context.Context, error) bool { return false }

// After checks, after an add, that IAM kept the person: it drops an
// unknown user or department from an add without an error.
func (r *userGroupsRunner) After(ctx context.Context, ok bool, diags *protocol.Diagnostics) bool {
	if !ok || len(r.added) == 0 {
		return ok
	}
	held, _, err := readGroups(ctx, r.client, r.system, r.member, r.added)
	if err != nil {
		diags.AddWarning("Cannot read the memberships back",
			managementError("The person was added, but reading the groups back to check that IAM kept them failed", err)+
				". State records what was sent; the next refresh reads the groups again.")
		return ok
	}
	var dropped []string
	for _, g := range r.added {
		if _, kept := held[g]; !kept {
			dropped = append(dropped, strconv.FormatInt(g, 10))
			delete(r.held, g)
		}
	}
	if len(dropped) > 0 {
		slices.Sort(dropped)
		diags.AddError("IAM dropped the member",
			fmt.Sprintf("IAM accepted the add but did not add %s to %s: it drops, without an error, users and departments its "+
				"organisation does not know (and admin). Check the id against IAM's user directory. State records the groups "+
				"the person is in.", describePerson(r.member), describeGroups(dropped)))
		return false
	}
	return ok
}

func (r *userGroupsRunner) Empty() bool { return len(r.held) == 0 }

func (r *userGroupsRunner) Record(ok bool, _ *protocol.Diagnostics) (*UserGroupsModel, protocol.PrivateState) {
	result := r.from.model
	if r.next != nil {
		result = r.next.model
	}
	if ok {
		return &result, nil
	}
	m := result
	m.Groups = groupsValue(r.held, expiryAt(result.ExpiresAt), keepsLater(result.Enforce), result.Groups, r.from.model.Groups)
	if r.next == nil {
		m.ID, m.System, m.User, m.Department = r.current.model.ID, r.current.model.System, r.current.model.User, r.current.model.Department
	}
	return &m, nil
}

func (r *userGroupsRunner) Describe(c groupCall) (string, map[string]any) {
	return "sending planned membership call", map[string]any{"operation": c.Op.String(), "group": c.group}
}

func (r *userGroupsRunner) Send(_, callCtx context.Context, c groupCall) error {
	refs := []bkiam.MemberRef{{Type: r.member.Type, ID: r.member.ID}}
	var err error
	switch c.Op {
	case memberplan.Add:
		err = r.client.AddMembers(callCtx, r.system, c.group, refs, c.ExpiredAt)
	case memberplan.Raise:
		err = r.client.RaiseMemberExpiry(callCtx, r.system, c.group, refs, c.ExpiredAt)
	default:
		err = r.client.DeleteMembers(callCtx, r.system, c.group, r.member.Type, []string{r.member.ID})
	}
	if err != nil {
		return err
	}
	r.apply(c)
	return nil
}

// apply records what IAM holds after c.
func (r *userGroupsRunner) apply(c groupCall) {
	if c.Op == memberplan.Delete {
		delete(r.held, c.group)
		return
	}
	r.held[c.group] = c.ExpiredAt
	if c.Op == memberplan.Add && !slices.Contains(r.added, c.group) {
		r.added = append(r.added, c.group)
	}
}

func (r *userGroupsRunner) Failed(c groupCall, err error, unknown bool) applyrun.Failure {
	what := describeMemberCall(c.Call) + fmt.Sprintf(" in group %d", c.group)
	f := applyrun.Failure{What: what, Err: errors.New(managementError(fmt.Sprintf("group %d in %s", c.group, r.system), err))}
	if unknown {
		if c.Op != memberplan.Delete {
			r.apply(c)
			f.DoubtNote = "state counts it as done, and the next refresh reads what IAM holds."
		} else {
			f.DoubtNote = "state still counts the membership, and the next refresh reads what IAM holds."
		}
	}
	return f
}

func (r *userGroupsRunner) Again(context.Context) ([]groupCall, error) { return nil, nil }

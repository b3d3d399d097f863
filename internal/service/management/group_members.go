package management

import (
	"context"
	"errors"
	"fmt"
	"hash/fnv"
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"github.com/hashicorp/terraform-plugin-go/tftypes"
	"github.com/hashicorp/terraform-plugin-log/tflog"

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

// GroupMembers is bkiam_group_members: the exact members of one user
// group, through the management API (management.go). It is served on
// protocol values because a group of 10 000 members is a 10 000-entry map,
// which the framework takes over a second to plan (DESIGN.md). The maps
// are of strings (id → expiry), not objects: Terraform's own conversion
// of a 10 000-object configuration value to map(object) costs seconds
// before the provider is called (BENCHMARKS.md). Its model and
// codec are in group_members_codec.go; the calls come from
// internal/memberplan.
type GroupMembers struct{}

const (
	memberUser       = "user"
	memberDepartment = "department"
)

func (GroupMembers) Name() string { return "group_members" }

// permanentMember is the expiry of a permanent membership.
const permanentMember = "permanent"

// followsExpiresIn is the expiry of a member that follows the resource's
// rolling expiry (expires_in, expires_at).
const followsExpiresIn = "expires_in"

func membersAttribute(what, key, example string) schema.Attribute {
	return schema.MapAttribute{
		Optional:    true,
		ElementType: types.StringType,
		MarkdownDescription: fmt.Sprintf("The %s of the group: %s → when the membership expires, `\"permanent\"`, an "+
			"RFC 3339 time such as `\"2027-06-30T00:00:00Z\"` (no later than `2100-01-01T00:00:00Z`, IAM's permanent), or "+
			"`\"expires_in\"` to follow the rolling expiry of `expires_in` (the date is `expires_at`), e.g. "+
			"`%s`. Leaving the attribute out, or `{}`, means none. IAM raises an expiry in place but cannot lower one: a "+
			"lowered expiry is applied by removing the member and adding it again, and the plan says so.", what, key, example),
	}
}

func (GroupMembers) Schema(context.Context) schema.Schema {
	return schema.Schema{
		MarkdownDescription: "The exact members of one BlueKing IAM user group: users and departments, each with an " +
			"optional expiry, through IAM's management API (API gateway only). The resource is authoritative: after an " +
			"apply the group holds exactly the configured members, and members added outside Terraform are removed. " +
			"A change is sent as the fewest add and delete calls (at most 1 000 members each).",
		Attributes: map[string]schema.Attribute{
			"id": schema.StringAttribute{
				Computed:            true,
				MarkdownDescription: "`SYSTEM/GROUP_ID`, the form `terraform import` takes.",
			},
			"system": schema.StringAttribute{
				Required: true,
				MarkdownDescription: "The system whose management API manages the group: the system that created the " +
					"group's grade manager (or, for a system manager's group, that system). Changing it replaces the resource.",
			},
			"group_id": schema.StringAttribute{
				Required:            true,
				MarkdownDescription: "The group's numeric id, e.g. `bkiam_group.dev.id`. Changing it replaces the resource.",
			},
			"users":       membersAttribute("users", "username", `{ alice = "permanent", bob = "2027-06-30T00:00:00Z", carol = "expires_in" }`),
			"departments": membersAttribute("departments", "department id", `{ "12" = "permanent" }`),
			"expires_in": schema.StringAttribute{
				Optional: true,
				MarkdownDescription: "A rolling expiry for the members whose value in `users` or `departments` is " +
					"`\"expires_in\"`: a duration such as `\"90d\"`, `\"1w\"` or `\"12h\"` (units `s`, `m`, `h`, `d` for " +
					"24 hours and `w` for 7 days, combined as in `\"1d12h\"`; a whole number of seconds). The apply that " +
					"sets it, or changes it, gives those members the expiry `expires_at` = the apply's time + `expires_in` " +
					"(at most `2100-01-01T00:00:00Z`, IAM's permanent); a member added later gets the current `expires_at`. " +
					"Without `renew_before` that date stays. A change of `expires_in` starts a new period at the apply: when " +
					"it ends before the recorded `expires_at`, the apply lowers the members' expiry, which IAM does only by " +
					"removing them and adding them again, and the plan says so.",
			},
			"renew_before": schema.StringAttribute{
				Optional: true,
				MarkdownDescription: "Renews the rolling expiry when less than this duration is left before `expires_at` " +
					"(same form as `expires_in`, which it needs and must be shorter than), or will be within a margin (a " +
					"day, or half the gap between `expires_in` and `renew_before` when shorter): such a plan leaves " +
					"`expires_at` known after apply, and the apply moves it to the recorded `expires_at` + `expires_in` (as " +
					"many periods more as it takes to leave the window, when the apply comes late). Anchored on the recorded " +
					"expiry, the cadence stays the same whatever day the plan runs; a plan goes by the time the state was " +
					"last read or written, so that a saved plan's apply, however late, agrees with it. A plan outside the " +
					"window changes nothing. The plan warns `Renewing members`, with how many and the new date, and the " +
					"apply raises their expiry in place through IAM's member-expiry route, one call " +
					"per 1 000 members (never a removal). Renewals happen only when Terraform plans: plan and apply at " +
					"least once every `renew_before` (a scheduled run), or the members expire.",
			},
			"renew_jitter": schema.StringAttribute{
				Optional: true,
				MarkdownDescription: "Spreads the expiries of the members valued `\"expires_in\"` over this many whole days " +
					"after `expires_at`, e.g. `\"3d\"`, so that a team's memberships (and IAM's reminder mails, and the " +
					"renewals people make themselves) do not all fall on one morning. Each member gets `expires_at` plus " +
					"0 to that many days, by a hash of the group and the member: the same at every apply, so a renewal " +
					"keeps each member's own remaining time. The members are added and renewed in one call per distinct " +
					"day (at most 1 000 members each). Whole days, shorter than `expires_in`; needs `expires_in`.",
			},
			"enforce_expiry": schema.BoolAttribute{
				Optional: true,
				MarkdownDescription: "What a later expiry in IAM of a member valued `\"expires_in\"` means. IAM mails members " +
					"before they lapse, and people renew in its web UI or through an ITSM ticket, which raises their expiry past " +
					"`expires_at`. By default (`false`) a later expiry satisfies the configuration: it is kept, never lowered, and " +
					"the plan stays empty. `true` holds those members at exactly `expires_at`: a later expiry shows in the plan " +
					"and the apply lowers it, which IAM does only by removing the member and adding it again. Members given an " +
					"RFC 3339 time are always held at that time. The refresh reads members by the recorded setting: a change of " +
					"`enforce_expiry` takes effect from the refresh after the apply that records it.",
			},
			"expires_at": schema.StringAttribute{
				Computed: true,
				MarkdownDescription: "The rolling expiry of the members valued `\"expires_in\"`, in RFC 3339 (UTC): set by " +
					"the apply that sets or changes `expires_in`, moved on by renewals (`renew_before`). Null without `expires_in`.",
			},
			"timeouts": protocol.TimeoutsAttribute(),
		},
	}
}

// membersView is a bkiam_group_members model in the planner's terms.
type membersView struct {
	model  GroupMembersModel
	system string
	group  int64 // 0 when unknown
	// members is nil when any part is unknown.
	members memberplan.Members
}

func viewMembers(m GroupMembersModel) membersView {
	v := membersView{model: m}
	follow := followerExpiry(m)
	v.system, _ = m.System.Get()
	if s, ok := m.GroupID.Get(); ok {
		v.group, _ = strconv.ParseInt(s, 10, 64)
	}
	members := memberplan.Members{}
	for _, part := range []struct {
		typ string
		x   protocol.StringMapValue
	}{{memberUser, m.Users}, {memberDepartment, m.Departments}} {
		if part.x.IsUnknown() {
			return v
		}
		elems, _ := part.x.Get()
		for id, e := range elems {
			exp, ok := memberExpiry(e, follow(memberplan.Key{Type: part.typ, ID: id}))
			if !ok {
				return v
			}
			members[memberplan.Key{Type: part.typ, ID: id}] = exp
		}
	}
	v.members = members
	return v
}

// memberExpiry is the expired_at of a member's expiry: "permanent" is
// IAM's permanent expiry, "expires_in" the member's rolling expiry,
// follows (followerExpiry; 0: not known).
func memberExpiry(x protocol.StringValue, follows int64) (int64, bool) {
	s, ok := x.Get()
	switch {
	case !ok:
		return 0, false
	case s == permanentMember:
		return bkiam.PermanentExpiry, true
	case s == followsExpiresIn:
		return follows, follows != 0
	}
	t, err := time.Parse(time.RFC3339, s)
	if err != nil {
		return 0, false
	}
	return t.Unix(), true
}

// expiryAt is an expires_at in unix seconds: 0 when it is null or
// unknown.
func expiryAt(x protocol.StringValue) int64 { return rolling.Unix(x) }

// followerExpiry returns, for a member of m, when it expires if it
// follows expires_in: expires_at plus its share of renew_jitter
// (memberOffset), capped at permanent; 0 while expires_at is not known.
func followerExpiry(m GroupMembersModel) func(memberplan.Key) int64 {
	at, days := expiryAt(m.ExpiresAt), jitterDays(m)
	system, _ := m.System.Get()
	group, _ := m.GroupID.Get()
	return func(k memberplan.Key) int64 {
		if at == 0 {
			return 0
		}
		return min(at+memberOffset(system, group, k, days), bkiam.PermanentExpiry)
	}
}

// jitterDays is renew_jitter in whole days: 0 when it is not set, not
// known, or not a whole number of days (Validate says why).
func jitterDays(m GroupMembersModel) int64 {
	s, ok := m.Jitter.Get()
	if !ok {
		return 0
	}
	d, err := renewal.ParseDuration(s)
	if err != nil || d%renewal.Day != 0 {
		return 0
	}
	return int64(d / renewal.Day)
}

// memberOffset is how much later than expires_at a member following it
// expires, in seconds: a whole number of days from 0 to days, by a hash
// of the group and the member, so that it is the same at every apply
// and a renewal keeps it.
func memberOffset(system, group string, k memberplan.Key, days int64) int64 {
	if days <= 0 {
		return 0
	}
	h := fnv.New32a()
	_, _ = h.Write([]byte(system + "/" + group + "/" + k.Type + "/" + k.ID))
	return (int64(h.Sum32()) % (days + 1)) * int64(renewal.Day/time.Second)
}

// formatExpiry is an expiry as expires_at and the members' values write
// it: RFC 3339 in UTC.
func formatExpiry(exp int64) string { return rolling.Format(exp) }

// followers are the members of m valued "expires_in", users then
// departments, each by id; known is false when a part of either map is
// unknown (it might be one more).
func followers(m GroupMembersModel) (users, departments []string, known bool) {
	users, knownUsers := followersIn(m.Users)
	departments, knownDepartments := followersIn(m.Departments)
	return users, departments, knownUsers && knownDepartments
}

// followersIn are the keys of x valued "expires_in", sorted; known is
// false when x or a value is unknown.
func followersIn(x protocol.StringMapValue) (ids []string, known bool) {
	if x.IsUnknown() {
		return nil, false
	}
	known = true
	elems, _ := x.Get()
	for _, id := range slices.Sorted(maps.Keys(elems)) {
		s, ok := elems[id].Get()
		switch {
		case !ok && elems[id].IsUnknown():
			known = false
		case s == followsExpiresIn:
			ids = append(ids, id)
		}
	}
	return ids, known
}

// ImportState takes SYSTEM/GROUP_ID; the read that follows fills the
// members from IAM.
func (GroupMembers) ImportState(_ context.Context, id string, diags *protocol.Diagnostics) (GroupMembersModel, protocol.PrivateState) {
	var m GroupMembersModel
	system, group, ok := strings.Cut(id, "/")
	if n, err := strconv.ParseInt(group, 10, 64); !ok || strings.TrimSpace(system) == "" || err != nil || n <= 0 {
		diags.AddError("Invalid import ID", fmt.Sprintf("Expected SYSTEM/GROUP_ID, e.g. bk_cmdb/42; got %q.", id))
		return m, nil
	}
	m.ID, m.System, m.GroupID = protocol.Known(id), protocol.Known(system), protocol.Known(group)
	return m, nil
}

func (GroupMembers) Validate(_ context.Context, config GroupMembersModel, diags *protocol.Diagnostics) {
	verify.CheckID(protocol.Root("system"), config.System, diags)
	if s, ok := config.GroupID.Get(); ok {
		if n, err := strconv.ParseInt(s, 10, 64); err != nil || n <= 0 {
			diags.AddAttributeError(protocol.Root("group_id"), "Invalid group id",
				fmt.Sprintf("group_id must be a user group's numeric id, such as bkiam_group.dev.id or \"42\"; got %q.", s))
		}
	}
	users, _ := config.Users.Get()
	for id, e := range users {
		at := protocol.Root("users").WithElementKeyString(id)
		checkUsername(at, id, diags)
		checkMemberExpiry(at, e, diags)
	}
	departments, _ := config.Departments.Get()
	for id, e := range departments {
		at := protocol.Root("departments").WithElementKeyString(id)
		checkDepartmentID(at, id, diags)
		checkMemberExpiry(at, e, diags)
	}
	checkRolling(config, diags)
	protocol.CheckTimeouts(config.Timeouts, diags)
}

// checkUsername refuses a username IAM's member routes cannot take.
func checkUsername(at *tftypes.AttributePath, id string, diags *protocol.Diagnostics) {
	switch {
	case strings.TrimSpace(id) == "" || verify.IDProblem(id) != "":
		diags.AddAttributeError(at, "Invalid username",
			fmt.Sprintf("%s: %q is not a username IAM knows: it is blank, or has white space around it or control characters.", protocol.PathString(at), id))
	case strings.Contains(id, ","):
		diags.AddAttributeError(at, "Invalid username",
			fmt.Sprintf("%s: %q holds a comma, which IAM's member delete uses to separate ids, so the member could never be removed.", protocol.PathString(at), id))
	case id == "admin":
		diags.AddAttributeError(at, "IAM does not add admin to groups",
			"admin is IAM's super user: IAM drops it from a member add without an error, so it would never be a member. Remove it.")
	}
}

// checkDepartmentID refuses a department id that is not a positive number.
func checkDepartmentID(at *tftypes.AttributePath, id string, diags *protocol.Diagnostics) {
	if n, err := strconv.ParseInt(id, 10, 64); err != nil || n <= 0 {
		diags.AddAttributeError(at, "Invalid department id",
			fmt.Sprintf("%s: department ids are the numeric ids of IAM's organisation, such as \"12\"; got %q.", protocol.PathString(at), id))
	}
}

// RollingAttrs are the members' rolling expiry attributes (rolling.Model).
func (m GroupMembersModel) RollingAttrs() rolling.Attrs {
	return rolling.Attrs{ExpiresIn: m.ExpiresIn, RenewBefore: m.RenewBefore, ExpiresAt: m.ExpiresAt}
}

// checkRolling checks expires_in, renew_before and the members that
// follow them.
func checkRolling(config GroupMembersModel, diags *protocol.Diagnostics) {
	r, ok := rolling.Check(config.RollingAttrs(), diags)
	checkJitter(config, r.Every, ok && !config.ExpiresIn.IsNull(), diags)
	users, departments, known := followers(config)
	f := rolling.Followers{Noun: "member", Where: " in users or departments", Count: len(users) + len(departments), Known: known}
	switch {
	case len(users) > 0:
		f.First = protocol.Root("users").WithElementKeyString(users[0])
	case len(departments) > 0:
		f.First = protocol.Root("departments").WithElementKeyString(departments[0])
	}
	rolling.CheckFollowers(config.RollingAttrs(), f, diags)
}

// checkJitter refuses a renew_jitter that is not a whole number of days
// shorter than expires_in (every, when known), or that no expires_in
// spreads.
func checkJitter(config GroupMembersModel, every time.Duration, everyKnown bool, diags *protocol.Diagnostics) {
	s, ok := config.Jitter.Get()
	if !ok {
		return
	}
	at := protocol.Root("renew_jitter")
	d, err := renewal.ParseDuration(s)
	switch {
	case config.ExpiresIn.IsNull():
		diags.AddAttributeError(at, "renew_jitter without expires_in",
			"renew_jitter spreads the expiries of the members that follow expires_in, and expires_in is not set. Set expires_in "+
				"(for example expires_in = \"90d\" with renew_jitter = \"3d\"), or remove renew_jitter.")
	case err != nil:
		diags.AddAttributeError(at, "Invalid duration", fmt.Sprintf("renew_jitter: %v. Write a whole number of days, such as \"3d\" or \"1w\".", err))
	case d%renewal.Day != 0:
		diags.AddAttributeError(at, "renew_jitter not in whole days",
			fmt.Sprintf("renew_jitter (%s) must be a whole number of days, such as \"3d\": members are spread over days, and added "+
				"and renewed in one call per day.", s))
	case everyKnown && d >= every:
		e, _ := config.ExpiresIn.Get()
		diags.AddAttributeError(at, "renew_jitter not shorter than expires_in",
			fmt.Sprintf("renew_jitter (%s) must be shorter than expires_in (%s): a member would expire after the next renewal's date.", s, e))
	}
}

func checkMemberExpiry(at *tftypes.AttributePath, e protocol.StringValue, diags *protocol.Diagnostics) {
	s, ok := e.Get()
	if !ok || s == permanentMember || s == followsExpiresIn {
		return
	}
	t, err := time.Parse(time.RFC3339, s)
	switch {
	case err != nil:
		diags.AddAttributeError(at, "Invalid member expiry",
			fmt.Sprintf("%s must be \"permanent\", \"expires_in\" or an RFC 3339 time such as \"2027-06-30T00:00:00Z\", got %q.", protocol.PathString(at), s))
	case t.Unix() > bkiam.PermanentExpiry:
		diags.AddAttributeError(at, "Expiry too late",
			fmt.Sprintf("%s must be no later than 2100-01-01T00:00:00Z, IAM's permanent, got %s. Write \"permanent\" for a permanent membership.", protocol.PathString(at), s))
	}
}

// CheckModel refuses, for a create or a change, a provider that cannot
// reach the management API. The members are not checked against the
// organisation: IAM drops unknown ones, which the apply reports.
func (GroupMembers) CheckModel(_ context.Context, data *conns.Data, _ GroupMembersModel, diags *protocol.Diagnostics) {
	if summary, detail, ok := managementNeedsGateway(data, "bkiam_group_members"); ok {
		diags.AddError(summary, detail)
	}
}

func (GroupMembers) Plan(_ context.Context, req protocol.PlanRequest[GroupMembersModel], diags *protocol.Diagnostics) protocol.PlanResponse[GroupMembersModel] {
	planned := req.Proposed
	var out protocol.PlanResponse[GroupMembersModel]
	system, okSystem := planned.System.Get()
	group, okGroup := planned.GroupID.Get()
	planned.ID = protocol.Unknown[string]()
	if okSystem && okGroup {
		planned.ID = protocol.Known(system + "/" + group)
	}
	var prior *GroupMembersModel
	var held memberplan.Members
	if req.Prior != nil {
		if planned.System != req.Prior.System {
			out.RequiresReplace = append(out.RequiresReplace, protocol.Root("system"))
		}
		if planned.GroupID != req.Prior.GroupID {
			out.RequiresReplace = append(out.RequiresReplace, protocol.Root("group_id"))
		}
		if len(out.RequiresReplace) == 0 {
			prior = req.Prior
			held = viewMembers(*prior).members
		}
	}
	roll := rolling.PlanOf(prior, planned, req.Time())
	planned.ExpiresAt = roll.ExpiresAt
	// The members as the apply will send them. An expires_at known only
	// after the apply is estimated as now + expires_in, which the apply's
	// later time can only raise: an expiry the plan does not find lowered
	// is not lowered.
	estimated := planned
	estimated.ExpiresAt = roll.Estimated()
	next := viewMembers(estimated)
	if next.members != nil {
		checkNewExpiries(estimated, held, time.Now(), diags)
	}
	if next.members != nil && held != nil {
		if lowered := memberplan.Make(held, next.members).Lowered; len(lowered) > 0 {
			detail := fmt.Sprintf("IAM can raise a member's expiry but not lower it, so the apply removes %s from the group and adds "+
				"them again with the new expiry. Between the two calls they are not members of the group.", describeMembers(lowered))
			if d := roll.Decision; d.Restarts() && d.Estimate < d.Recorded {
				e, _ := planned.ExpiresIn.Get()
				detail += fmt.Sprintf(" The new expires_in (%s) starts a period that ends at about %s, before the recorded expires_at "+
					"(%s), for every member valued \"expires_in\".", e, formatExpiry(d.Estimate), formatExpiry(d.Recorded))
			}
			diags.AddWarning("Expiries lowered by removing and adding again", detail)
		}
	}
	if roll.Decision.Kind == renewal.Renew {
		warnRenewal(planned, roll, req.Time(), diags)
	}
	out.Planned = planned
	return out
}

// warnRenewal says what a renewal does: how many members it renews, to
// when, and how.
func warnRenewal(planned GroupMembersModel, roll rolling.Plan, asOf time.Time, diags *protocol.Diagnostics) {
	users, departments, _ := followers(planned)
	if len(users)+len(departments) == 0 {
		return // Validate warns that no member follows expires_in
	}
	count := fmt.Sprintf("%d members", len(users)+len(departments))
	if len(users)+len(departments) == 1 {
		count = "1 member"
	}
	b, _ := planned.RenewBefore.Get()
	spread := ""
	if days := jitterDays(planned); days > 0 {
		spread = fmt.Sprintf(" (each member up to %d days later, as renew_jitter spreads them, keeping its own remaining time; one call per day)", days)
	}
	diags.AddAttributeWarning(protocol.Root("renew_before"), "Renewing members",
		fmt.Sprintf("Less than renew_before (%s) is left before expires_at (%s), or will be within %s: the apply renews %s "+
			"following expires_in (%d users, %d departments) %s%s. IAM raises their expiry in place through its member-expiry "+
			"route, one call per 1 000 members; no member leaves the group, and a member renewed in IAM to a later date keeps it.",
			b, formatExpiry(roll.Decision.Recorded), renewal.Describe(roll.Rolling.Margin()), count, len(users), len(departments),
			renewal.Until(roll.Rolling, roll.Decision, asOf), spread))
}

// checkNewExpiries refuses an expiry that has passed on a member the
// plan adds or changes: IAM refuses it. An unchanged member whose expiry
// has passed stays as it is.
func checkNewExpiries(planned GroupMembersModel, held memberplan.Members, now time.Time, diags *protocol.Diagnostics) {
	eachSentMember(planned, held, func(at *tftypes.AttributePath, e protocol.StringValue, exp int64) {
		if exp <= now.Unix() {
			refusePassedExpiry(at, e, exp, planned.RollingAttrs(), diags)
		}
	})
}

// eachSentMember visits the members of planned whose expiry the apply
// sends (exp, in unix seconds: known, and not the one held, as IAM holds
// it), at their attribute paths.
func eachSentMember(planned GroupMembersModel, held memberplan.Members, visit func(at *tftypes.AttributePath, e protocol.StringValue, exp int64)) {
	follow := followerExpiry(planned)
	for _, part := range []struct {
		name, typ string
		x         protocol.StringMapValue
	}{{"users", memberUser, planned.Users}, {"departments", memberDepartment, planned.Departments}} {
		elems, _ := part.x.Get()
		for id, e := range elems {
			k := memberplan.Key{Type: part.typ, ID: id}
			exp, ok := memberExpiry(e, follow(k))
			if old, was := held[k]; !ok || was && old == exp {
				continue
			}
			visit(protocol.Root(part.name).WithElementKeyString(id), e, exp)
		}
	}
}

// CheckPlan refuses what the site's cap on membership expiries
// (max_member_expiry) will refuse of the members the plan sends
// (checkMemberCap).
func (GroupMembers) CheckPlan(_ context.Context, data *conns.Data, req protocol.PlanRequest[GroupMembersModel], diags *protocol.Diagnostics) {
	planned := req.Proposed
	var held memberplan.Members
	if p := req.Prior; p != nil && p.System == planned.System && p.GroupID == planned.GroupID {
		held = viewMembers(*p).members
	}
	users, departments, _ := followers(planned)
	spread := time.Duration(jitterDays(planned)) * renewal.Day
	checkMemberCap(data, planned.RollingAttrs(), len(users)+len(departments), spread, func(visit func(*tftypes.AttributePath, protocol.StringValue, int64)) {
		eachSentMember(planned, held, visit)
	}, diags)
}

var _ protocol.PlanChecker[GroupMembersModel, *conns.Data] = GroupMembers{}

// checkMemberCap refuses, of the memberships a plan sends (each visits
// them, as eachSentMember does), the fixed expiries past the site's cap
// (conns.Data.MaxMemberExpiry, rolling.Cap), and, when followers
// memberships follow it, a rolling expiry an apply would set past it
// (spread: renew_jitter).
func checkMemberCap(data *conns.Data, a rolling.Attrs, followers int, spread time.Duration,
	each func(visit func(*tftypes.AttributePath, protocol.StringValue, int64)), diags *protocol.Diagnostics) {
	if data == nil || data.MaxMemberExpiry <= 0 {
		return
	}
	limit, now := rolling.Cap(data.MaxMemberExpiry), time.Now()
	if followers > 0 {
		limit.CheckRolling(a, spread, diags)
	}
	each(func(at *tftypes.AttributePath, e protocol.StringValue, exp int64) {
		if s, _ := e.Get(); s != followsExpiresIn {
			limit.CheckFixed(at, s, exp, now, diags)
		}
	})
}

// refusePassedExpiry refuses a membership's expiry e (exp in unix
// seconds, the rolling expiry for "expires_in") that a plan would send
// after it passed: IAM adds and renews members only with an expiry in the
// future. a is the resource's rolling expiry.
func refusePassedExpiry(at *tftypes.AttributePath, e protocol.StringValue, exp int64, a rolling.Attrs, diags *protocol.Diagnostics) {
	s, _ := e.Get()
	if s == followsExpiresIn {
		diags.AddAttributeError(at, "Rolling expiry passed",
			fmt.Sprintf("%s follows expires_in, whose expiry (expires_at %s) has passed, and IAM adds members only with an expiry "+
				"in the future. %s", protocol.PathString(at), formatExpiry(exp), rolling.PassedFix(a)))
		return
	}
	diags.AddAttributeError(at, "Expiry in the past",
		fmt.Sprintf("%s is %s, which has passed; IAM adds members only with an expiry in the future. Set a later time, "+
			"or \"permanent\".", protocol.PathString(at), s))
}

// RenewDue reports whether a plan as of asOf renews (protocol.Renewer).
// Nothing in the configuration or the state changes when the window
// opens, so the apply records when it will (rolling.WithRenewal) and the seam
// plans the resource then, though it otherwise answers a plan that
// changes nothing without decoding it.
func (GroupMembers) RenewDue(private protocol.PrivateState, asOf time.Time) bool {
	return protocol.RenewDueAfter(private, asOf)
}

var _ protocol.Renewer = GroupMembers{}

func (r GroupMembers) Apply(ctx context.Context, data *conns.Data, req protocol.ApplyRequest[GroupMembersModel], diags *protocol.Diagnostics) (*GroupMembersModel, protocol.PrivateState) {
	rolling.Settle(&req, time.Now(), func(m *GroupMembersModel, at protocol.StringValue) { m.ExpiresAt = at })
	current, next := protocol.ViewsOf(req, viewMembers)
	if next != nil && (next.members == nil || next.group == 0) {
		diags.AddError("Unknown members at apply", "Terraform asked to apply members that are not fully known. This is a bug in Terraform or the provider.")
		return req.Prior, nil
	}
	from, last := current, next
	if from == nil {
		from = next
	}
	if last == nil {
		last = current
	}
	runner := &memberRunner{client: data.Client, system: from.system, group: from.group,
		resource: r, prior: req.Prior, current: current, next: next, from: from, diags: diags}
	state, private := applyrun.Run(ctx, sharedgrants.HandleOf(ctx), runner, protocol.TimeoutOf(last.model.Timeouts, req.Operation()), current == nil, next == nil, diags)
	if !diags.HasError() {
		reportRenewal(r.Label(last.model), req.Prior, state, diags)
	}
	return state, rolling.WithRenewal(private, state)
}

// reportRenewal tells, after an apply that renewed the members following
// expires_in, which group it renewed and to when: an apply that renews
// many groups reports each (a summary of its own, which Terraform does
// not fold into "similar warnings").
func reportRenewal(label string, prior, state *GroupMembersModel, diags *protocol.Diagnostics) {
	from, to, ok := rolling.Renewed(prior, state)
	if !ok {
		return
	}
	users, departments, _ := followers(*state)
	diags.AddWarning("Renewed the members of group "+label,
		fmt.Sprintf("%d members following expires_in (%d users, %d departments) now expire at %s, renewed from %s.",
			len(users)+len(departments), len(users), len(departments), formatExpiry(to), formatExpiry(from)))
}

// readMembers reads what IAM holds of a group's members.
func (GroupMembers) readMembers(ctx context.Context, c *bkiam.Client, system string, group int64) (memberplan.Members, error) {
	ms, err := c.GroupMembers(ctx, system, group)
	if err != nil {
		return nil, err
	}
	held := make(memberplan.Members, len(ms))
	for _, m := range ms {
		if m.Type == memberUser || m.Type == memberDepartment {
			held[memberplan.Key{Type: m.Type, ID: m.ID}] = m.ExpiredAt
		}
	}
	return held, nil
}

// membersValue is the users or departments attribute of held: each
// member's expiry as memberValue writes it (follow: the rolling expiry of
// each, what the state records, 0 for none); null when held has none of
// the type and like is null.
func membersValue(held memberplan.Members, typ string, follow func(memberplan.Key) int64, keepsLater bool, like, alt protocol.StringMapValue) protocol.StringMapValue {
	likeElems, _ := like.Get()
	altElems, _ := alt.Get()
	out := map[string]protocol.StringValue{}
	for k, exp := range held {
		if k.Type == typ {
			out[k.ID] = memberValue(exp, follow(k), keepsLater, likeElems[k.ID], altElems[k.ID])
		}
	}
	if len(out) == 0 && like.IsNull() {
		return protocol.StringMapValue{}
	}
	return protocol.Known(out)
}

// memberValue is how a membership held until exp reads: as like (then
// alt) writes it when it is the same instant, so that an expiry written
// with an offset reads back unchanged, and "expires_in" when it is the
// rolling expiry follows, or later, unless the resource enforces it
// (keepsLater); else "permanent" or the date.
func memberValue(exp, follows int64, keepsLater bool, like, alt protocol.StringValue) protocol.StringValue {
	switch {
	case sameExpiry(like, follows, keepsLater, exp):
		return like
	case sameExpiry(alt, follows, keepsLater, exp):
		return alt
	case exp == bkiam.PermanentExpiry:
		return protocol.Known(permanentMember)
	}
	return protocol.Known(formatExpiry(exp))
}

// sameExpiry reports whether a member valued e, held until exp, is as e
// says: at the instant e names, or, for a member that follows the
// rolling expiry, later when keepsLater (renewed in IAM).
func sameExpiry(e protocol.StringValue, follows int64, keepsLater bool, exp int64) bool {
	have, ok := memberExpiry(e, follows)
	if !ok {
		return false
	}
	s, _ := e.Get()
	return have == exp || keepsLater && s == followsExpiresIn && exp > have
}

// keepsLater reports whether a resource with enforce_expiry = enforce
// keeps a later expiry that IAM holds for a membership valued
// "expires_in" (enforce_expiry is not true).
func keepsLater(enforce protocol.BoolValue) bool {
	v, _ := enforce.Get()
	return !v
}

// Refreshes: a group's members are exactly readable, so every refresh
// reads them.
func (GroupMembers) Refreshes(data *conns.Data) bool { return data != nil && data.Client != nil }

// Read sets state to the members IAM holds: members added or removed
// outside Terraform show in the plan. A group that is gone (IAM answers
// it is not the system's) removes the resource from state.
func (r GroupMembers) Read(ctx context.Context, data *conns.Data, req protocol.ReadRequest[GroupMembersModel], diags *protocol.Diagnostics) (*GroupMembersModel, protocol.PrivateState, bool) {
	state := req.State
	v := viewMembers(state)
	if v.group == 0 || v.system == "" {
		return &state, req.Private, false
	}
	held, err := r.readMembers(ctx, data.Client, v.system, v.group)
	if errors.Is(err, bkiam.ErrNotOwned) {
		// Gone, if IAM's lists confirm it (management.go).
		gone, checkErr := goneCheck{client: data.Client, system: v.system}.groupGone(ctx, v.group)
		summary, detail, ok := goneOrUnconfirmed("bkiam_group_members "+r.Label(state),
			fmt.Sprintf("group %d in %s", v.group, v.system), gone, checkErr)
		if !ok {
			diags.AddError(summary, detail)
			return &state, req.Private, false
		}
		diags.AddWarning(summary, detail)
		return nil, nil, true
	}
	if err != nil {
		diags.AddError("Cannot read the group's members", managementError(fmt.Sprintf("Reading the members of group %d in %s", v.group, v.system), err))
		return &state, req.Private, false
	}
	if v.members != nil && maps.Equal(held, v.members) {
		return &state, req.Private, false
	}
	// A member that follows expires_in stays so while IAM holds expires_at
	// for it; otherwise it reads as what IAM holds, and the plan restores it.
	m := state
	follow := followerExpiry(state)
	m.Users = membersValue(held, memberUser, follow, keepsLater(state.Enforce), state.Users, protocol.StringMapValue{})
	m.Departments = membersValue(held, memberDepartment, follow, keepsLater(state.Enforce), state.Departments, protocol.StringMapValue{})
	return &m, req.Private, true
}

// Claims: group membership is not a policy path; the ledger of shared
// grants does not cover it.
func (GroupMembers) Claims(GroupMembersModel) ledger.Claims { return ledger.Claims{} }

func (GroupMembers) Label(m GroupMembersModel) string {
	v := viewMembers(m)
	return fmt.Sprintf("%q", v.system+"/"+strconv.FormatInt(v.group, 10))
}

func (GroupMembers) Reassert(planned GroupMembersModel) GroupMembersModel { return planned }

// memberRunner sends member calls one by one and keeps what IAM holds
// after each, so that a run that stops midway leaves state that says so.
type memberRunner struct {
	client *bkiam.Client
	system string
	group  int64
	held   memberplan.Members
	// added says an add was carried out; err is the failed call's error.
	added bool
	err   error
	applyrun.NoLedger

	// The apply the runner serves: current and next are the state's and
	// the plan's members (nil on create and destroy), from is current, or
	// next on a create; prior is the state as it came.
	resource            GroupMembers
	prior               *GroupMembersModel
	current, next, from *membersView
	// diags are the apply's, for Gone's warnings.
	diags *protocol.Diagnostics
}

// The members' part of applyrun.Run. They claim no paths: a group's
// members are the group's alone.

// Load starts a create from what IAM holds: it owns the whole group.
func (r *memberRunner) Load(ctx context.Context, diags *protocol.Diagnostics) (*GroupMembersModel, protocol.PrivateState, bool) {
	switch {
	case r.current == nil:
		held, err := r.resource.readMembers(ctx, r.client, r.system, r.group)
		if err != nil {
			diags.AddError("Cannot read the group's members", managementError(fmt.Sprintf("Reading the members of group %d in %s", r.group, r.system), err))
			return nil, nil, true
		}
		r.held = held
	case r.current.members == nil:
		diags.AddError("Unknown members in state", "The state of this resource holds unknown members. This is a bug in the provider.")
		return r.prior, nil, true
	default:
		r.held = r.current.members
	}
	return nil, nil, false
}

func (r *memberRunner) wanted() memberplan.Members {
	if r.next == nil {
		return nil
	}
	return r.next.members
}

func (r *memberRunner) Plan() ([]memberplan.Call, error) {
	return memberplan.Make(r.held, r.wanted()).Calls, nil
}

// Gone: a destroy of a group that is gone; its members went with it.
// The ownership 403 alone does not say so (a web-UI group answers it
// too): IAM's lists must confirm it (management.go).
func (r *memberRunner) Gone(ctx context.Context, err error) bool {
	owned := errors.Is(r.err, bkiam.ErrNotOwned)
	if !owned && !goneMayExplain(ctx, err) {
		return false
	}
	label := "bkiam_group_members " + r.resource.Label(r.from.model)
	object := fmt.Sprintf("group %d in %s", r.group, r.system)
	gone, checkErr := goneCheck{client: r.client, system: r.system}.groupGone(ctx, r.group)
	fields := map[string]any{"system": r.system, "group": r.group}
	if checkErr != nil || !gone {
		if !owned {
			return false // IAM's error stands: the group is there, or cannot be told gone
		}
		fields["check_error"] = fmt.Sprint(checkErr)
		tflog.Warn(ctx, "the group answers the ownership 403, but IAM's lists do not confirm it gone: the destroy fails", fields)
		if r.diags != nil {
			r.diags.AddWarning(unconfirmedOnDestroy(label, object, checkErr))
		}
		return false
	}
	tflog.Warn(ctx, "the group is gone, confirmed by IAM's lists: its members went with it", fields)
	if r.diags != nil {
		r.diags.AddWarning(goneOnDestroy(label, object, "its members", owned))
	}
	return true
}

// After checks the group after an add: IAM drops unknown users and
// departments (and admin) from an add without an error. A group of more
// than one page is first counted, in one call: only when the count is not
// the members the run leaves is the whole group read (a page per 500
// members), to name the dropped ones. A smaller group is read at once, in
// the one call the count would take.
func (r *memberRunner) After(ctx context.Context, ok bool, diags *protocol.Diagnostics) bool {
	if !ok || !r.added || r.next == nil {
		return ok
	}
	if len(r.wanted()) > bkiam.ManagementPageSize {
		if n, err := r.client.GroupMemberCount(ctx, r.system, r.group); err == nil && n == len(r.wanted()) {
			return ok
		}
	}
	held, err := r.resource.readMembers(ctx, r.client, r.system, r.group)
	if err != nil {
		diags.AddWarning("Cannot read the group's members back",
			managementError("The members were added, but reading them back to check that IAM kept them failed", err)+
				". State records what was sent; the next refresh reads the group again.")
		return ok
	}
	var dropped []memberplan.Key
	for k := range r.wanted() {
		if _, kept := held[k]; !kept {
			dropped = append(dropped, k)
		}
	}
	if len(dropped) > 0 {
		diags.AddError("IAM dropped members",
			fmt.Sprintf("IAM accepted the add but did not add %s to group %d: it drops, without an error, users "+
				"and departments its organisation does not know (and admin). Check the ids against IAM's user directory, "+
				"and remove or correct them in the configuration. State records the members the group has.",
				describeMembers(dropped), r.group))
		ok = false
	}
	r.held = held
	return ok
}

func (r *memberRunner) Empty() bool { return len(r.held) == 0 }

func (r *memberRunner) Record(ok bool, _ *protocol.Diagnostics) (*GroupMembersModel, protocol.PrivateState) {
	result := r.from.model
	if r.next != nil {
		result = r.next.model
	}
	if ok {
		return &result, nil
	}
	// "expires_in" stands for the expires_at recorded, the plan's: a
	// member IAM holds at another expiry (one a failed renewal did not
	// reach) reads as that expiry.
	m := result
	follow := followerExpiry(result)
	m.Users = membersValue(r.held, memberUser, follow, keepsLater(result.Enforce), result.Users, r.from.model.Users)
	m.Departments = membersValue(r.held, memberDepartment, follow, keepsLater(result.Enforce), result.Departments, r.from.model.Departments)
	if r.next == nil {
		m.ID, m.System, m.GroupID = r.current.model.ID, r.current.model.System, r.current.model.GroupID
	}
	return &m, nil
}

// The members' part of the loop over calls.

func (r *memberRunner) Describe(call memberplan.Call) (string, map[string]any) {
	return "sending planned member call", map[string]any{"operation": call.Op.String(), "members": len(call.Members)}
}

// Send sends the call with callCtx: it waits on nothing else.
func (r *memberRunner) Send(_, callCtx context.Context, call memberplan.Call) error {
	if err := r.sendCall(callCtx, call); err != nil {
		return err
	}
	r.held = memberplan.Apply(r.held, call)
	if call.Op == memberplan.Add {
		r.added = true
	}
	return nil
}

func (r *memberRunner) Failed(call memberplan.Call, err error, unknown bool) applyrun.Failure {
	r.err = err
	f := applyrun.Failure{What: describeMemberCall(call), Err: errors.New(managementError(fmt.Sprintf("group %d in %s", r.group, r.system), err))}
	if unknown {
		switch call.Op {
		case memberplan.Add:
			r.held = memberplan.Apply(r.held, call)
			r.added = true
			f.DoubtNote = "state counts its members as added, and the next refresh reads what the group holds."
		case memberplan.Raise:
			r.held = memberplan.Apply(r.held, call)
			f.DoubtNote = "state counts their expiry as raised, and the next refresh reads what the group holds."
		default:
			f.DoubtNote = "state still counts its members, and the next refresh reads what the group holds."
		}
	}
	return f
}

func (r *memberRunner) Again(context.Context) ([]memberplan.Call, error) { return nil, nil }

func (r *memberRunner) sendCall(ctx context.Context, call memberplan.Call) error {
	if call.Op == memberplan.Add || call.Op == memberplan.Raise {
		refs := make([]bkiam.MemberRef, len(call.Members))
		for i, k := range call.Members {
			refs[i] = bkiam.MemberRef{Type: k.Type, ID: k.ID}
		}
		if call.Op == memberplan.Raise {
			return r.client.RaiseMemberExpiry(ctx, r.system, r.group, refs, call.ExpiredAt)
		}
		return r.client.AddMembers(ctx, r.system, r.group, refs, call.ExpiredAt)
	}
	ids := make([]string, len(call.Members))
	for i, k := range call.Members {
		ids[i] = k.ID
	}
	return r.client.DeleteMembers(ctx, r.system, r.group, call.Members[0].Type, ids)
}

// describeMemberCall renders "adding 1000 members (expiring 2027-06-30T00:00:00Z)".
func describeMemberCall(c memberplan.Call) string {
	if c.Op == memberplan.Delete {
		return fmt.Sprintf("removing %s", describeMembers(c.Members))
	}
	expiry := "permanent"
	if c.ExpiredAt != bkiam.PermanentExpiry {
		expiry = "expiring " + time.Unix(c.ExpiredAt, 0).UTC().Format(time.RFC3339)
	}
	if c.Op == memberplan.Raise {
		return fmt.Sprintf("renewing %s (%s)", describeMembers(c.Members), expiry)
	}
	return fmt.Sprintf("adding %s (%s)", describeMembers(c.Members), expiry)
}

// describeMembers renders "3 members (user alice, user bob, department 12)",
// naming at most ten.
func describeMembers(keys []memberplan.Key) string {
	keys = slices.Clone(keys)
	slices.SortFunc(keys, func(a, b memberplan.Key) int { return strings.Compare(a.Type+" "+a.ID, b.Type+" "+b.ID) })
	names := make([]string, 0, min(len(keys), 10))
	for _, k := range keys[:min(len(keys), 10)] {
		names = append(names, k.Type+" "+k.ID)
	}
	if len(keys) > 10 {
		names = append(names, "…")
	}
	noun := "members"
	if len(keys) == 1 {
		noun = "member"
	}
	return fmt.Sprintf("%d %s (%s)", len(keys), noun, strings.Join(names, ", "))
}

// Owns: the resource owns its group's membership whole
// (sharedgrants.Owner).
func (GroupMembers) Owns(m GroupMembersModel) (string, bool) {
	group, ok := m.GroupID.Get()
	if !ok {
		return "", false
	}
	return "the members of group " + group, true
}

// noRollingExpiry is followerExpiry of a model without expires_at: an
// import, a listed group.
func noRollingExpiry(memberplan.Key) int64 { return 0 }

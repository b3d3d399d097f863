package management_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/terraform-plugin-go/tfprotov6"

	"github.com/bkiam/terraform-provider-bkiam/internal/acctest"
	"github.com/bkiam/terraform-provider-bkiam/internal/bkiam"
	"github.com/bkiam/terraform-provider-bkiam/internal/protocol"
	"github.com/bkiam/terraform-provider-bkiam/internal/sandbox"
	"github.com/bkiam/terraform-provider-bkiam/internal/service/management"
	"github.com/bkiam/terraform-provider-bkiam/internal/testutil"
)

// rollingModel is membersModel with a rolling expiry: users valued
// "expires_in" follow it; renewBefore "" leaves renew_before out.
func rollingModel(group int64, users map[string]string, expiresIn, renewBefore string) management.GroupMembersModel {
	m := membersModel(group, users)
	m.ExpiresIn = protocol.Known(expiresIn)
	if renewBefore != "" {
		m.RenewBefore = protocol.Known(renewBefore)
	}
	return m
}

// plannedExpiresAt is the expires_at a plan answered: its value, or
// "unknown" or "null".
func plannedExpiresAt(t *testing.T, plan *tfprotov6.PlanResourceChangeResponse) string {
	t.Helper()
	if len(plan.Diagnostics) > 0 && testutil.HasError(plan.Diagnostics) {
		t.Fatalf("plan: %s", testutil.RenderDiags(plan.Diagnostics))
	}
	m := membersResource.Model(t, plan.PlannedState)
	switch {
	case m.ExpiresAt.IsUnknown():
		return "unknown"
	case m.ExpiresAt.IsNull():
		return "null"
	}
	s, _ := m.ExpiresAt.Get()
	return s
}

// heldExpiries is what the sandbox's group holds: user id → expiry.
func heldExpiries(env *acctest.ProtoEnv, group int64) map[string]int64 {
	out := map[string]int64{}
	for _, m := range env.Sandbox.Members(group) {
		out[m.ID] = m.ExpiredAt
	}
	return out
}

// samePlanAsState reports whether a plan changes nothing: the planned
// state is the prior state.
func samePlanAsState(t *testing.T, plan *tfprotov6.PlanResourceChangeResponse, state *tfprotov6.DynamicValue) bool {
	t.Helper()
	typ := acctest.ObjectTypeOf(membersResource.TypeName())
	planned, err := plan.PlannedState.Unmarshal(typ)
	if err != nil {
		t.Fatal(err)
	}
	prior, err := state.Unmarshal(typ)
	if err != nil {
		t.Fatal(err)
	}
	return planned.Equal(prior)
}

func rfc(unix int64) string { return time.Unix(unix, 0).UTC().Format(time.RFC3339) }

// TestProtocolGroupMembersRollingCreate: a create plans expires_at
// unknown ("known after apply") and the apply sets it to the apply's time
// plus expires_in, for the members that follow it; a plan outside the
// renewal window is empty; a member added mid-cycle gets the recorded
// expires_at; a shorter expires_in that ends before it warns that the
// members are removed and added again; a refresh keeps "expires_in" while
// IAM holds expires_at, and reads what IAM holds otherwise.
func TestProtocolGroupMembersRollingCreate(t *testing.T) {
	env := acctest.NewProtoEnv(t, nil)
	client := acctest.OutsideClient(t, env.Sandbox)
	group := newGroup(t, client, "dev")
	config := rollingModel(group, map[string]string{"alice": management.FollowsExpiresIn, "bob": ""}, "1h", "10m")

	plan := membersResource.Plan(t, env.Server, nil, nil, &config)
	acctest.ExpectDiags(t, plan.Diagnostics)
	if got := plannedExpiresAt(t, plan); got != "unknown" {
		t.Fatalf("a create plans expires_at %s, want unknown (known after apply)", got)
	}
	before := time.Now().Unix()
	created := membersResource.Apply(t, env.Server, nil, plan, &config)
	after := time.Now().Unix()
	acctest.ExpectDiags(t, created.Diagnostics)
	state := membersResource.Model(t, created.NewState)
	recorded, _ := state.ExpiresAt.Get()
	at, err := time.Parse(time.RFC3339, recorded)
	if err != nil || at.Unix() < before+3600 || at.Unix() > after+3600 {
		t.Fatalf("the create recorded expires_at %q, want the apply's time plus 1h (%s to %s)", recorded, rfc(before+3600), rfc(after+3600))
	}
	if held := heldExpiries(env, group); held["alice"] != at.Unix() || held["bob"] != bkiam.PermanentExpiry {
		t.Fatalf("the group holds %v, want alice until %s and bob for good", held, recorded)
	}
	if users, _ := protocol.StringMapOf(state.Users); users["alice"] != management.FollowsExpiresIn {
		t.Errorf("state records alice as %q, want %q", users["alice"], management.FollowsExpiresIn)
	}

	// Outside the window: nothing to do, and nothing read or sent.
	env.Calls.Reset()
	same := membersResource.Plan(t, env.Server, created.NewState, created.Private, &config)
	acctest.ExpectDiags(t, same.Diagnostics)
	if !samePlanAsState(t, same, created.NewState) {
		t.Errorf("a plan outside the renewal window changes the state: expires_at %s", plannedExpiresAt(t, same))
	}
	env.ExpectCalls(t, map[string]int{})

	// A refresh of a group that holds what state says keeps "expires_in".
	read := membersResource.Read(t, env.Server, created.NewState, created.Private)
	acctest.ExpectDiags(t, read.Diagnostics)
	if read.NewState != created.NewState {
		t.Errorf("a refresh of an unchanged rolling group changed the state: %v", membersResource.Model(t, read.NewState).Users)
	}

	// carol joins mid-cycle: she gets the recorded expiry.
	joined := rollingModel(group, map[string]string{"alice": management.FollowsExpiresIn, "bob": "", "carol": management.FollowsExpiresIn}, "1h", "10m")
	plan = membersResource.Plan(t, env.Server, created.NewState, created.Private, &joined)
	acctest.ExpectDiags(t, plan.Diagnostics)
	if got := plannedExpiresAt(t, plan); got != recorded {
		t.Fatalf("adding carol plans expires_at %s, want the recorded %s", got, recorded)
	}
	applied := membersResource.Apply(t, env.Server, created.NewState, plan, &joined)
	acctest.ExpectDiags(t, applied.Diagnostics)
	if held := heldExpiries(env, group); held["carol"] != at.Unix() || held["alice"] != at.Unix() {
		t.Fatalf("the group holds %v, want carol and alice until %s", held, recorded)
	}

	// A shorter expires_in ends before the recorded expiry: lowered.
	shorter := joined
	shorter.ExpiresIn = protocol.Known("30m")
	plan = membersResource.Plan(t, env.Server, applied.NewState, applied.Private, &shorter)
	acctest.ExpectDiags(t, plan.Diagnostics, acctest.ProtoWarning("removes 2 members (user alice, user carol) from the group and adds them "+
		"again with the new expiry. Between the two calls they are not members of the group. The new expires_in (30m) starts a period "+
		"that ends at about", nil))
	if got := plannedExpiresAt(t, plan); got != "unknown" {
		t.Errorf("a new expires_in plans expires_at %s, want unknown: the apply starts the period", got)
	}
	// A longer one raises it in place, without a warning.
	longer := joined
	longer.ExpiresIn = protocol.Known("2h")
	acctest.ExpectDiags(t, membersResource.Plan(t, env.Server, applied.NewState, applied.Private, &longer).Diagnostics)

	// alice renewed in IAM (its web UI, an ITSM ticket): a later expiry
	// satisfies "expires_in". The refresh keeps it so, and the plan is
	// empty: nothing lowers her renewal.
	raised := at.Unix() + 86400
	if err := client.RaiseMemberExpiry(context.Background(), "bk_cmdb", group, []bkiam.MemberRef{{Type: "user", ID: "alice"}}, raised); err != nil {
		t.Fatal(err)
	}
	read = membersResource.Read(t, env.Server, applied.NewState, applied.Private)
	acctest.ExpectDiags(t, read.Diagnostics)
	users, _ := protocol.StringMapOf(membersResource.Model(t, read.NewState).Users)
	if users["alice"] != management.FollowsExpiresIn || users["carol"] != management.FollowsExpiresIn {
		t.Errorf("after alice's renewal in IAM the refresh reads alice as %q and carol as %q, want both %q",
			users["alice"], users["carol"], management.FollowsExpiresIn)
	}
	plan = membersResource.Plan(t, env.Server, read.NewState, read.Private, &joined)
	acctest.ExpectDiags(t, plan.Diagnostics)
	if !samePlanAsState(t, plan, read.NewState) {
		t.Errorf("the plan after alice's renewal in IAM is not empty")
	}

	// enforce_expiry = true holds her at expires_at: the refresh reads
	// her expiry as IAM holds it, and the plan lowers it back.
	enforced := joined
	enforced.Enforce = protocol.Known(true)
	enforcedState := *membersResource.Model(t, applied.NewState)
	enforcedState.Enforce = protocol.Known(true)
	read = membersResource.Read(t, env.Server, membersResource.Value(t, &enforcedState), applied.Private)
	acctest.ExpectDiags(t, read.Diagnostics)
	users, _ = protocol.StringMapOf(membersResource.Model(t, read.NewState).Users)
	if users["alice"] != rfc(raised) || users["carol"] != management.FollowsExpiresIn {
		t.Errorf("with enforce_expiry the refresh reads alice as %q and carol as %q, want %q and %q",
			users["alice"], users["carol"], rfc(raised), management.FollowsExpiresIn)
	}
	plan = membersResource.Plan(t, env.Server, read.NewState, read.Private, &enforced)
	acctest.ExpectDiags(t, plan.Diagnostics, acctest.ProtoWarning("removes 1 member (user alice) from the group and adds them again", nil))
}

// TestProtocolGroupMembersRenewal: a group whose rolling expiry was
// recorded 55 minutes ago (expires_in 1h, renew_before 10m: 5 minutes
// left) is renewed by a plan with nothing changed: expires_at is unknown
// until the apply, with a warning that counts the members and gives the
// date; the same state read before the window renews nothing; the apply
// raises their expiry to the recorded expiry plus 1h in one member-expiry
// call, and the plan after it is empty.
func TestProtocolGroupMembersRenewal(t *testing.T) {
	env := acctest.NewProtoEnv(t, nil)
	client := acctest.OutsideClient(t, env.Sandbox)
	group := newGroup(t, client, "dev")
	recorded := time.Now().Add(5 * time.Minute).Unix()
	ctx := context.Background()
	if err := client.AddMembers(ctx, "bk_cmdb", group, []bkiam.MemberRef{{Type: "user", ID: "alice"}, {Type: "user", ID: "carol"}}, recorded); err != nil {
		t.Fatal(err)
	}
	if err := client.AddMembers(ctx, "bk_cmdb", group, []bkiam.MemberRef{{Type: "user", ID: "bob"}}, bkiam.PermanentExpiry); err != nil {
		t.Fatal(err)
	}
	config := rollingModel(group, map[string]string{"alice": management.FollowsExpiresIn, "bob": "", "carol": management.FollowsExpiresIn}, "1h", "10m")
	config.Departments = protocol.KnownStringMap(map[string]string{"1": management.FollowsExpiresIn})
	if err := client.AddMembers(ctx, "bk_cmdb", group, []bkiam.MemberRef{{Type: "department", ID: "1"}}, recorded); err != nil {
		t.Fatal(err)
	}
	state := config
	state.ID = protocol.Known(fmt.Sprintf("bk_cmdb/%d", group))
	state.ExpiresAt = protocol.Known(rfc(recorded))
	var diags protocol.Diagnostics
	private := management.RenewalPrivate(state).Bytes(&diags)
	prior := membersResource.Value(t, &state)

	renewed := rfc(recorded + 3600)
	first := membersResource.Plan(t, env.Server, prior, private, &config)
	acctest.ExpectDiags(t, first.Diagnostics, acctest.ProtoWarning(fmt.Sprintf("Renewing members: Less than renew_before (10m) is left before "+
		"expires_at (%s), or will be within 25m: the apply renews 3 members following expires_in (2 users, 1 departments) until %s, "+
		"the recorded expiry plus expires_in (1h); an apply after %s renews it a period further.", rfc(recorded), renewed,
		rfc(recorded+3600-35*60)), protocol.Root("renew_before")))
	if got := plannedExpiresAt(t, first); got != "unknown" {
		t.Fatalf("the plan renews expires_at to %s, want unknown: the apply sets it", got)
	}
	// A plan goes by the time the state was read, not by the clock: read
	// an hour ago, before the window opened, it renews nothing (as the
	// apply of a plan saved then plans again, later).
	readEarlier := protocol.WithReadAt(management.RenewalPrivate(state), time.Now().Add(-time.Hour)).Bytes(&diags)
	earlier := membersResource.Plan(t, env.Server, prior, readEarlier, &config)
	acctest.ExpectDiags(t, earlier.Diagnostics)
	if got := plannedExpiresAt(t, earlier); got != rfc(recorded) {
		t.Fatalf("a plan over state read before the window plans expires_at %s, want the recorded %s", got, rfc(recorded))
	}

	env.Calls.Reset()
	applied := membersResource.Apply(t, env.Server, prior, first, &config)
	acctest.ExpectDiags(t, applied.Diagnostics, acctest.ProtoWarning(fmt.Sprintf("Renewed the members of group \"bk_cmdb/%d\": 3 members "+
		"following expires_in (2 users, 1 departments) now expire at %s, renewed from %s.", group, renewed, rfc(recorded)), nil))
	env.ExpectCalls(t, map[string]int{"member:expiry": 1})
	if held := heldExpiries(env, group); held["alice"] != recorded+3600 || held["carol"] != recorded+3600 || held["1"] != recorded+3600 ||
		held["bob"] != bkiam.PermanentExpiry {
		t.Errorf("after the renewal the group holds %v, want alice, carol and department 1 until %s, bob for good", held, renewed)
	}
	if got, _ := membersResource.Model(t, applied.NewState).ExpiresAt.Get(); got != renewed {
		t.Errorf("state records expires_at %s, want %s", got, renewed)
	}
	after := membersResource.Plan(t, env.Server, applied.NewState, applied.Private, &config)
	acctest.ExpectDiags(t, after.Diagnostics)
	if !samePlanAsState(t, after, applied.NewState) {
		t.Errorf("the plan after the renewal is not empty: expires_at %s", plannedExpiresAt(t, after))
	}
}

// TestProtocolGroupMembersRollingImport: an import reads the members as
// IAM holds them, none as "expires_in", and no rolling expiry.
func TestProtocolGroupMembersRollingImport(t *testing.T) {
	env := acctest.NewProtoEnv(t, nil)
	group := newGroup(t, acctest.OutsideClient(t, env.Sandbox), "dev")
	config := rollingModel(group, map[string]string{"alice": management.FollowsExpiresIn}, "1h", "10m")
	created := membersResource.MustChange(t, env.Server, nil, nil, &config)
	recorded, _ := membersResource.Model(t, created.NewState).ExpiresAt.Get()

	imported := membersResource.ImportState(t, env.Server, fmt.Sprintf("bk_cmdb/%d", group))
	acctest.ExpectDiags(t, imported.Diagnostics)
	read := membersResource.Read(t, env.Server, imported.ImportedResources[0].State, imported.ImportedResources[0].Private)
	acctest.ExpectDiags(t, read.Diagnostics)
	m := membersResource.Model(t, read.NewState)
	users, _ := protocol.StringMapOf(m.Users)
	if users["alice"] != recorded || !m.ExpiresAt.IsNull() || !m.ExpiresIn.IsNull() {
		t.Errorf("the import reads alice as %q with expires_in %v and expires_at %v; want %q, both null", users["alice"], m.ExpiresIn, m.ExpiresAt, recorded)
	}
}

// TestProtocolGroupMembersStateWithoutRolling: state written before the
// rolling expiry existed (no expires_in, renew_before or expires_at)
// upgrades, and the unchanged configuration plans nothing.
func TestProtocolGroupMembersStateWithoutRolling(t *testing.T) {
	env := acctest.NewProtoEnv(t, nil)
	group := newGroup(t, acctest.OutsideClient(t, env.Sandbox), "dev")
	config := membersModel(group, map[string]string{"alice": "", "bob": "2030-06-30T00:00:00Z"})
	membersResource.MustChange(t, env.Server, nil, nil, &config)
	// As the provider before this version wrote it.
	old := fmt.Sprintf(`{"id":"bk_cmdb/%d","system":"bk_cmdb","group_id":"%d","users":{"alice":"permanent","bob":"2030-06-30T00:00:00Z"},`+
		`"departments":null,"timeouts":null}`, group, group)
	resp, err := env.Server.UpgradeResourceState(context.Background(), &tfprotov6.UpgradeResourceStateRequest{
		TypeName: membersResource.TypeName(), Version: 0, RawState: &tfprotov6.RawState{JSON: []byte(old)},
	})
	if err != nil {
		t.Fatal(err)
	}
	acctest.ExpectDiags(t, resp.Diagnostics)
	upgraded := membersResource.Model(t, resp.UpgradedState)
	if !upgraded.ExpiresIn.IsNull() || !upgraded.RenewBefore.IsNull() || !upgraded.ExpiresAt.IsNull() {
		t.Fatalf("the upgraded state has expires_in %v, renew_before %v, expires_at %v; want all null", upgraded.ExpiresIn, upgraded.RenewBefore, upgraded.ExpiresAt)
	}
	read := membersResource.Read(t, env.Server, resp.UpgradedState, nil)
	acctest.ExpectDiags(t, read.Diagnostics)
	plan := membersResource.Plan(t, env.Server, read.NewState, read.Private, &config)
	acctest.ExpectDiags(t, plan.Diagnostics)
	if !samePlanAsState(t, plan, read.NewState) {
		t.Errorf("the plan of an upgraded state changes it: %v", plan.PlannedState)
	}
}

// TestProtocolGroupMembersRollingValidation: a member that follows an
// unset expires_in is refused on the member (one error, however many
// follow), and expires_in with no member following it warns.
func TestProtocolGroupMembersRollingValidation(t *testing.T) {
	env := acctest.NewProtoEnv(t, nil)
	users := map[string]string{}
	for i := range 500 {
		users[fmt.Sprintf("u%03d", i)] = management.FollowsExpiresIn
	}
	config := membersModel(42, users)
	acctest.ExpectDiags(t, membersResource.Validate(t, env.Server, config),
		acctest.ProtoError(`users["u000"] (and 499 other members) is "expires_in", which follows the resource's rolling expiry, but expires_in is not set.`,
			protocol.Root("users").WithElementKeyString("u000")))
	alone := rollingModel(42, map[string]string{"alice": ""}, "90d", "7d")
	acctest.ExpectDiags(t, membersResource.Validate(t, env.Server, alone), acctest.ProtoWarning("No member follows expires_in", protocol.Root("expires_in")))
	// An unknown map may hold followers: no warning.
	unknown := alone
	unknown.Users = protocol.Unknown[map[string]protocol.StringValue]()
	acctest.ExpectDiags(t, membersResource.Validate(t, env.Server, unknown))
}

// TestProtocolGroupMembersRollingPassed: without renew_before the rolling
// expiry is never renewed; once it has passed, a member that starts
// following it is refused at plan time, naming the fix, while the members
// that already follow it stay as they are.
func TestProtocolGroupMembersRollingPassed(t *testing.T) {
	env := acctest.NewProtoEnv(t, nil)
	group := newGroup(t, acctest.OutsideClient(t, env.Sandbox), "dev")
	state := rollingModel(group, map[string]string{"alice": management.FollowsExpiresIn}, "1h", "")
	state.ID = protocol.Known(fmt.Sprintf("bk_cmdb/%d", group))
	// Recorded an hour ago, it passed a minute ago.
	state.ExpiresAt = protocol.Known(rfc(time.Now().Add(-time.Minute).Unix()))
	prior := membersResource.Value(t, &state)
	joined := rollingModel(group, map[string]string{"alice": management.FollowsExpiresIn, "carol": management.FollowsExpiresIn}, "1h", "")
	acctest.ExpectDiags(t, membersResource.Plan(t, env.Server, prior, nil, &joined).Diagnostics,
		acctest.ProtoError(`users["carol"] follows expires_in, whose expiry (expires_at `, protocol.Root("users").WithElementKeyString("carol")))

	// With renew_before, a plan over state last read before the expiry
	// passed (-refresh=false) does not renew: it says to refresh.
	state.RenewBefore, joined.RenewBefore = protocol.Known("10m"), protocol.Known("10m")
	prior = membersResource.Value(t, &state)
	var diags protocol.Diagnostics
	stale := protocol.WithReadAt(management.RenewalPrivate(state), time.Now().Add(-time.Hour)).Bytes(&diags)
	acctest.ExpectDiags(t, membersResource.Plan(t, env.Server, prior, stale, &joined).Diagnostics,
		acctest.ProtoError("A plan goes by the time the state was last refreshed or applied, and this one's state was not refreshed "+
			"since the expiry passed (-refresh=false): plan with a refresh, which renews it.", protocol.Root("users").WithElementKeyString("carol")))
}

// TestProtocolGroupMembersRenewJitter: 40 users follow expires_in = "30d"
// with renew_jitter = "3d". The create gives each expires_at plus 0 to 3
// whole days, every one of the four used, in one add call per day; the
// plan after is empty and a refresh keeps every one "expires_in". A
// renewal keeps each member's own offset, in one expiry call per day.
// renew_jitter must be whole days shorter than expires_in.
func TestProtocolGroupMembersRenewJitter(t *testing.T) {
	env := acctest.NewProtoEnvWith(t, nil, sandbox.WithModel(acctest.ModelWithUsers(t, 40, 2000)))
	client := acctest.OutsideClient(t, env.Sandbox)
	group := newGroup(t, client, "spread")
	users := map[string]string{}
	for i := range 40 {
		users[fmt.Sprintf("u%05d", i)] = management.FollowsExpiresIn
	}
	config := rollingModel(group, users, "30d", "7d")
	config.Jitter = protocol.Known("3d")

	plan := membersResource.Plan(t, env.Server, nil, nil, &config)
	acctest.ExpectDiags(t, plan.Diagnostics)
	env.Calls.Reset()
	created := membersResource.Apply(t, env.Server, nil, plan, &config)
	acctest.ExpectDiags(t, created.Diagnostics)
	recorded, _ := membersResource.Model(t, created.NewState).ExpiresAt.Get()
	at, err := time.Parse(time.RFC3339, recorded)
	if err != nil {
		t.Fatal(err)
	}
	offsets := func(base int64) map[int64]int {
		t.Helper()
		count := map[int64]int{}
		for id, exp := range heldExpiries(env, group) {
			days := (exp - base) / 86400
			if (exp-base)%86400 != 0 || days < 0 || days > 3 {
				t.Fatalf("%s expires at %s, not expires_at (%s) plus 0 to 3 days", id, rfc(exp), rfc(base))
			}
			count[days]++
		}
		return count
	}
	before := heldExpiries(env, group)
	if spread := offsets(at.Unix()); len(spread) != 4 {
		t.Errorf("the 40 members expire expires_at plus %v days (days: members), want all four of 0 to 3 days used", spread)
	}
	if got := env.Calls.SinceLast()["member:add"]; got != 4 {
		t.Errorf("the create sent %d member adds, want 4: one per day", got)
	}
	same := membersResource.Plan(t, env.Server, created.NewState, created.Private, &config)
	acctest.ExpectDiags(t, same.Diagnostics)
	if !samePlanAsState(t, same, created.NewState) {
		t.Error("the plan after the create is not empty")
	}
	read := membersResource.Read(t, env.Server, created.NewState, created.Private)
	acctest.ExpectDiags(t, read.Diagnostics)
	if read.NewState != created.NewState {
		t.Errorf("a refresh changed the state: %v", membersResource.Model(t, read.NewState).Users)
	}

	// Renewal (state recorded three weeks ago): each member keeps its offset.
	state := *membersResource.Model(t, created.NewState)
	old := at.Add(-23 * 24 * time.Hour).Unix()
	state.ExpiresAt = protocol.Known(rfc(old))
	var diags protocol.Diagnostics
	prior := membersResource.Value(t, &state)
	private := management.RenewalPrivate(state).Bytes(&diags)
	renew := membersResource.Plan(t, env.Server, prior, private, &config)
	env.Calls.Reset()
	renewed := membersResource.Apply(t, env.Server, prior, renew, &config)
	if got := env.Calls.SinceLast()["member:expiry"]; got != 4 {
		t.Errorf("the renewal sent %d member-expiry calls, want 4: one per day", got)
	}
	next, _ := membersResource.Model(t, renewed.NewState).ExpiresAt.Get()
	if next != rfc(old+30*86400) {
		t.Fatalf("the renewal recorded expires_at %s, want %s", next, rfc(old+30*86400))
	}
	for id, exp := range heldExpiries(env, group) {
		if exp-(old+30*86400) != before[id]-at.Unix() {
			t.Errorf("%s was expires_at + %ds, renewed to expires_at + %ds: its offset changed", id, before[id]-at.Unix(), exp-(old+30*86400))
		}
	}

	for _, tc := range []struct{ jitter, expiresIn, want string }{
		{"36h", "30d", "renew_jitter not in whole days"},
		{"30d", "30d", "renew_jitter not shorter than expires_in"},
	} {
		bad := rollingModel(group, users, tc.expiresIn, "7d")
		bad.Jitter = protocol.Known(tc.jitter)
		got := membersResource.Validate(t, env.Server, bad)
		if !testutil.HasError(got) || !strings.Contains(testutil.RenderDiags(got), tc.want) {
			t.Errorf("renew_jitter %q with expires_in %q: %s, want %q", tc.jitter, tc.expiresIn, testutil.RenderDiags(got), tc.want)
		}
	}
}

package management_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/bkiam/terraform-provider-bkiam/internal/acctest"
	"github.com/bkiam/terraform-provider-bkiam/internal/bkiam"
	"github.com/bkiam/terraform-provider-bkiam/internal/sandbox"
	"github.com/bkiam/terraform-provider-bkiam/internal/sandbox/sandboxtest"
	"github.com/bkiam/terraform-provider-bkiam/internal/testutil"
)

// membersState is the attributes of the one bkiam_group_members in the
// workspace's state file.
func membersState(t *testing.T, w *acctest.CLIWorkspace) map[string]any {
	t.Helper()
	return stateAttributes(t, w, "bkiam_group_members")
}

// stateAttributes is the attributes of the one resource of type typeName
// in the workspace's state file.
func stateAttributes(t *testing.T, w *acctest.CLIWorkspace, typeName string) map[string]any {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join(w.Dir, "terraform.tfstate"))
	if err != nil {
		t.Fatal(err)
	}
	var state struct {
		Resources []struct {
			Type      string `json:"type"`
			Instances []struct {
				Attributes map[string]any `json:"attributes"`
			} `json:"instances"`
		} `json:"resources"`
	}
	if err := json.Unmarshal(raw, &state); err != nil {
		t.Fatal(err)
	}
	for _, r := range state.Resources {
		if r.Type == typeName && len(r.Instances) == 1 {
			return r.Instances[0].Attributes
		}
	}
	t.Fatalf("no %s in the state:\n%s", typeName, raw)
	return nil
}

// recordedExpiry is the expires_at the state records, in unix seconds.
func recordedExpiry(t *testing.T, w *acctest.CLIWorkspace) int64 {
	t.Helper()
	return expiresAtOf(t, membersState(t, w))
}

// expiresAtOf is the expires_at of a resource's state attributes, in
// unix seconds.
func expiresAtOf(t *testing.T, attrs map[string]any) int64 {
	t.Helper()
	s, _ := attrs["expires_at"].(string)
	at, err := time.Parse(time.RFC3339, s)
	if err != nil {
		t.Fatalf("state records expires_at %q: %v", s, err)
	}
	return at.Unix()
}

// expectHeld fails unless every user of the group expires at exp, and
// the group holds n of them.
func expectHeld(t *testing.T, sb *sandboxtest.Sandbox, group int64, n int, exp int64) {
	t.Helper()
	members := sb.Members(group)
	if len(members) != n {
		t.Fatalf("the group holds %d members, want %d", len(members), n)
	}
	for _, m := range members {
		if m.ExpiredAt != exp {
			t.Fatalf("%s %s expires at %s, want %s", m.Type, m.ID, rfc(m.ExpiredAt), rfc(exp))
		}
	}
}

// TestAccGroupMembersRollingRenewal: 1 000 users follow expires_in = "1h"
// with renew_before = "59m50s", so that the renewal window opens ten
// seconds after the create. The create records expires_at, the apply's
// time plus 1h, and plans empty after. Once the window is open a plan,
// saved, shows expires_at moving on to the recorded expiry plus 1h and
// warns how many members it renews; its apply (which plans again, later)
// sends one member-expiry call and nothing else, and the plan after it is
// empty. A user added mid-cycle gets the current expires_at.
func TestAccGroupMembersRollingRenewal(t *testing.T) {
	acctest.NeedsSandbox(t)
	testutil.Terraform(t)
	acctest.Parallel(t)
	providerDir := testutil.BuildProvider(t)
	sb := sandboxtest.Start(t, sandbox.WithModel(acctest.ModelWithUsers(t, 1001, 2000)))
	provider := acctest.Transports[acctest.GatewayTransport].Block(sb.URL)
	group := newGroup(t, acctest.OutsideClient(t, sb), "big")
	calls := acctest.NewCallCounter(sb)
	w := acctest.NewCLIWorkspace(t, providerDir)
	users := map[string]string{}
	for _, u := range userRange(0, 1000) {
		users[u] = "expires_in"
	}
	configure := func() {
		w.Configure(provider, acctest.GroupMembersRollingConfig("", group, users, "1h", "59m50s"))
	}
	expectCalls := func(what string, want map[string]int) {
		t.Helper()
		if got := calls.SinceLast(); fmt.Sprint(got) != fmt.Sprint(want) {
			t.Fatalf("%s sent %v, want %v", what, got, want)
		}
	}

	configure()
	calls.Reset()
	start := time.Now().Unix()
	w.MustRun("apply", "-auto-approve")
	recorded := recordedExpiry(t, w)
	if recorded < start+3600 || recorded > time.Now().Unix()+3600 {
		t.Fatalf("the create recorded expires_at %s, want the apply's time plus 1h (after %s)", rfc(recorded), rfc(start+3600))
	}
	expectHeld(t, sb, group, 1000, recorded)
	// The empty group's read, one add, the group's member count (a
	// thousand members: counted in one call, not read back in two pages).
	expectCalls("the create", map[string]int{"member:add": 1, "member:list": 2})
	if !w.PlanIsEmpty() {
		t.Fatal("the plan after the create, outside the renewal window, is not empty")
	}

	// The window opens when less than 59m50s is left: ten seconds on.
	time.Sleep(time.Until(time.Unix(recorded-3590+1, 0)))
	renewed := recorded + 3600
	calls.Reset()
	out := w.MustRun("plan", "-out=renew.tfplan")
	for _, want := range []*regexp.Regexp{
		acctest.PlanErrorPattern(fmt.Sprintf(`~ expires_at = "%s" -> (known after apply)`, rfc(recorded))),
		acctest.PlanErrorPattern("Renewing members", fmt.Sprintf("the apply renews 1000 members following expires_in (1000 users, 0 departments) until %s, "+
			"the recorded expiry plus expires_in (1h); an apply after %s renews it a period further. IAM raises their expiry in place "+
			"through its member-expiry route, one call per 1 000 members", rfc(renewed), rfc(renewed-3595))),
		acctest.PlanErrorPattern("Plan: 0 to add, 1 to change, 0 to destroy."),
	} {
		if !want.MatchString(out) {
			t.Fatalf("the plan inside the renewal window does not match %q:\n%s", want, out)
		}
	}
	expectCalls("the plan's refresh", map[string]int{"member:list": 2})
	w.MustRun("apply", "renew.tfplan")
	expectCalls("the renewal", map[string]int{"member:expiry": 1})
	expectHeld(t, sb, group, 1000, renewed)
	if got := recordedExpiry(t, w); got != renewed {
		t.Fatalf("after the renewal state records expires_at %s, want %s", rfc(got), rfc(renewed))
	}
	if !w.PlanIsEmpty() {
		t.Fatal("the plan after the renewal is not empty")
	}

	// A user added mid-cycle follows the current expires_at.
	users["u01000"] = "expires_in"
	configure()
	calls.Reset()
	w.MustRun("apply", "-auto-approve")
	expectHeld(t, sb, group, 1001, renewed)
	if got := calls.SinceLast(); got["member:add"] != 1 || got["member:expiry"] != 0 || got["member:delete"] != 0 {
		t.Fatalf("adding a user mid-cycle sent %v, want one add and no other write", got)
	}
	if !w.PlanIsEmpty() {
		t.Fatal("the plan after adding a user mid-cycle is not empty")
	}
}

// TestAccGroupMembersStateBeforeRolling: state written by the provider
// before expires_in existed, without expires_in, renew_before and
// expires_at, is read by this one, and the unchanged configuration plans
// nothing.
func TestAccGroupMembersStateBeforeRolling(t *testing.T) {
	acctest.NeedsSandbox(t)
	testutil.Terraform(t)
	acctest.Parallel(t)
	providerDir := testutil.BuildProvider(t)
	sb := sandboxtest.Start(t)
	provider := acctest.Transports[acctest.GatewayTransport].Block(sb.URL)
	group := newGroup(t, acctest.OutsideClient(t, sb), "dev")
	w := acctest.NewCLIWorkspace(t, providerDir)
	w.Configure(provider, acctest.GroupMembersConfig("", group, map[string]string{"alice": "", "bob": "2030-06-30T00:00:00Z"}, nil))
	w.MustRun("apply", "-auto-approve")

	// The state file as the earlier provider left it.
	path := filepath.Join(w.Dir, "terraform.tfstate")
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var state map[string]any
	if err := json.Unmarshal(raw, &state); err != nil {
		t.Fatal(err)
	}
	stripped := 0
	for _, r := range state["resources"].([]any) { //nolint:forcetypeassert // the state file's shape
		for _, in := range r.(map[string]any)["instances"].([]any) { //nolint:forcetypeassert // the state file's shape
			in.(map[string]any)["schema_version"] = 0                   //nolint:forcetypeassert // the state file's shape
			attrs := in.(map[string]any)["attributes"].(map[string]any) //nolint:forcetypeassert // the state file's shape
			for _, name := range []string{"expires_in", "renew_before", "expires_at"} {
				if _, ok := attrs[name]; ok {
					delete(attrs, name)
					stripped++
				}
			}
		}
	}
	if stripped != 3 {
		t.Fatalf("removed %d of the rolling attributes from the state, want 3", stripped)
	}
	if raw, err = json.MarshalIndent(state, "", "  "); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, raw, 0o600); err != nil {
		t.Fatal(err)
	}
	if out, code := w.Run("plan", "-detailed-exitcode"); code != 0 {
		t.Fatalf("the plan of the earlier provider's state exited %d, want 0 (empty):\n%s", code, out)
	}
}

// TestAccGroupMembersSavedPlanAcrossTheWindow: a plan saved for review
// just before the renewal window opens (expires_in "1h", renew_before
// "59m40s": the window opens 20 seconds after the create, the plan renews
// from 10 seconds on), which adds a member, is applied after the window
// opened. The apply plans again, later, and Terraform requires both plans
// to agree: by the clock they did not ("Provider produced inconsistent
// final plan"); both go by the time the state was read. The apply adds
// the member and renews every member following expires_in, and the next
// plan is empty.
func TestAccGroupMembersSavedPlanAcrossTheWindow(t *testing.T) {
	acctest.NeedsSandbox(t)
	testutil.Terraform(t)
	acctest.Parallel(t)
	sb := sandboxtest.Start(t, sandbox.WithModel(acctest.ModelWithUsers(t, 1001, 2000)))
	provider := acctest.Transports[acctest.GatewayTransport].Block(sb.URL)
	group := newGroup(t, acctest.OutsideClient(t, sb), "review")
	w := acctest.NewCLIWorkspace(t, testutil.BuildProvider(t))
	users := map[string]string{"u00000": "expires_in", "u00001": "expires_in", "u00002": "permanent"}
	w.Configure(provider, acctest.GroupMembersRollingConfig("", group, users, "1h", "59m40s"))
	w.MustRun("apply", "-auto-approve")
	recorded := recordedExpiry(t, w)

	users["u00003"] = "expires_in"
	w.Configure(provider, acctest.GroupMembersRollingConfig("", group, users, "1h", "59m40s"))
	time.Sleep(time.Until(time.Unix(recorded-3590+1, 0))) // in the margin, before the window
	out := w.MustRun("plan", "-out=review.tfplan")
	if want := acctest.PlanErrorPattern("Renewing members", "the apply renews 3 members"); !want.MatchString(out) {
		t.Fatalf("the plan saved before the window does not match %q:\n%s", want, out)
	}
	time.Sleep(time.Until(time.Unix(recorded-3580+2, 0))) // the window is open
	w.MustRun("apply", "review.tfplan")
	renewed := recorded + 3600
	if got := recordedExpiry(t, w); got != renewed {
		t.Fatalf("after the apply state records expires_at %s, want %s", rfc(got), rfc(renewed))
	}
	held := map[string]int64{}
	for _, m := range sb.Members(group) {
		held[m.ID] = m.ExpiredAt
	}
	want := map[string]int64{"u00000": renewed, "u00001": renewed, "u00002": bkiam.PermanentExpiry, "u00003": renewed}
	if fmt.Sprint(held) != fmt.Sprint(want) {
		t.Fatalf("after the apply the group holds %v, want %v", held, want)
	}
	if !w.PlanIsEmpty() {
		t.Fatal("the plan after the saved plan's apply is not empty")
	}
}

// TestAccGroupMembersRenewedInIAMKept: a member following expires_in
// renews in IAM (the member-expiry route the web UI's renewal and ITSM
// use) to a date past expires_at. The refresh keeps the member as
// "expires_in", the plan is empty, and an apply of another change leaves
// the renewal alone; the plan used to remove and re-add the member at the
// configured date, taking the renewal back. With enforce_expiry = true
// the plan lowers it, and says so.
func TestAccGroupMembersRenewedInIAMKept(t *testing.T) {
	acctest.NeedsSandbox(t)
	testutil.Terraform(t)
	acctest.Parallel(t)
	sb := sandboxtest.Start(t, sandbox.WithModel(acctest.ModelWithUsers(t, 10, 2000)))
	provider := acctest.Transports[acctest.GatewayTransport].Block(sb.URL)
	client := acctest.OutsideClient(t, sb)
	group := newGroup(t, client, "renewed")
	w := acctest.NewCLIWorkspace(t, testutil.BuildProvider(t))
	users := map[string]string{"u00000": "expires_in", "u00001": "expires_in"}
	config := func(enforce string) string {
		return strings.TrimSuffix(acctest.GroupMembersRollingConfig("", group, users, "30d", "7d"), "}\n") + enforce + "}\n"
	}
	w.Configure(provider, config(""))
	w.MustRun("apply", "-auto-approve")
	recorded := recordedExpiry(t, w)

	later := recorded + 90*86400
	if err := client.RaiseMemberExpiry(context.Background(), "bk_cmdb", group, []bkiam.MemberRef{{Type: "user", ID: "u00000"}}, later); err != nil {
		t.Fatal(err)
	}
	if !w.PlanIsEmpty() {
		t.Fatal("the plan after a member renewed in IAM is not empty")
	}
	users["u00002"] = "expires_in"
	w.Configure(provider, config(""))
	w.MustRun("apply", "-auto-approve")
	held := map[string]int64{}
	for _, m := range sb.Members(group) {
		held[m.ID] = m.ExpiredAt
	}
	if want := map[string]int64{"u00000": later, "u00001": recorded, "u00002": recorded}; fmt.Sprint(held) != fmt.Sprint(want) {
		t.Fatalf("after an apply of another change the group holds %v, want %v", held, want)
	}
	if !w.PlanIsEmpty() {
		t.Fatal("the plan after the apply is not empty")
	}

	// enforce_expiry is read from state: it takes effect at the refresh
	// after the apply that records it.
	w.Configure(provider, config("  enforce_expiry = true\n"))
	w.MustRun("apply", "-auto-approve")
	out := w.MustRun("plan")
	if want := acctest.PlanErrorPattern("Expiries lowered by removing and adding again", "removes 1 member (user u00000)"); !want.MatchString(out) {
		t.Fatalf("with enforce_expiry the plan does not match %q:\n%s", want, out)
	}
}

// TestAccGroupMembersRenewJitter: renew_jitter = "3d" through the CLI:
// 20 users following expires_in = "30d" each expire expires_at plus 0 to
// 3 whole days in IAM, and the plan after the apply is empty, refreshed
// or not.
func TestAccGroupMembersRenewJitter(t *testing.T) {
	acctest.NeedsSandbox(t)
	testutil.Terraform(t)
	acctest.Parallel(t)
	sb := sandboxtest.Start(t, sandbox.WithModel(acctest.ModelWithUsers(t, 20, 2000)))
	provider := acctest.Transports[acctest.GatewayTransport].Block(sb.URL)
	group := newGroup(t, acctest.OutsideClient(t, sb), "spread")
	w := acctest.NewCLIWorkspace(t, testutil.BuildProvider(t))
	users := map[string]string{}
	for _, u := range userRange(0, 20) {
		users[u] = "expires_in"
	}
	w.Configure(provider, strings.TrimSuffix(acctest.GroupMembersRollingConfig("", group, users, "30d", "7d"), "}\n")+"  renew_jitter = \"3d\"\n}\n")
	w.MustRun("apply", "-auto-approve")
	recorded := recordedExpiry(t, w)
	days := map[int64]bool{}
	for _, m := range sb.Members(group) {
		d := (m.ExpiredAt - recorded) / 86400
		if (m.ExpiredAt-recorded)%86400 != 0 || d < 0 || d > 3 {
			t.Fatalf("%s expires at %s, not expires_at (%s) plus 0 to 3 days", m.ID, rfc(m.ExpiredAt), rfc(recorded))
		}
		days[d] = true
	}
	if len(days) < 2 {
		t.Errorf("the 20 members expire on %d distinct days, want them spread", len(days))
	}
	for _, args := range [][]string{{"plan", "-detailed-exitcode"}, {"plan", "-detailed-exitcode", "-refresh=false"}} {
		if out, code := w.Run(args...); code != 0 {
			t.Errorf("terraform %s after the apply exited %d, want an empty plan:\n%s", strings.Join(args, " "), code, out)
		}
	}
}

package management_test

import (
	"context"
	"fmt"
	"maps"
	"regexp"
	"testing"
	"time"

	"github.com/bkiam/terraform-provider-bkiam/internal/acctest"
	"github.com/bkiam/terraform-provider-bkiam/internal/bkiam"
	"github.com/bkiam/terraform-provider-bkiam/internal/sandbox/sandboxtest"
	"github.com/bkiam/terraform-provider-bkiam/internal/testutil"
)

// bobsGroups is what the sandbox's groups hold of user bob: group →
// expiry.
func bobsGroups(sb *sandboxtest.Sandbox, groups ...int64) map[int64]int64 {
	held := map[int64]int64{}
	for _, g := range groups {
		for _, m := range sb.Members(g) {
			if m.Type == "user" && m.ID == "bob" {
				held[g] = m.ExpiredAt
			}
		}
	}
	return held
}

// TestAccUserGroupsRollingRenewal: bob follows expires_in = "1h" with
// renew_before = "59m54s" in two groups and is a member of a third for
// good. The renewal window opens six seconds after the create, and a plan
// renews from three seconds on (the margin, half the gap between the
// two). The create gives both memberships expires_at, the apply's time
// plus 1h. A plan saved in the margin, before the window, warns that it
// renews them and shows expires_at known after apply; its apply, after
// the window opened, raises both in place, one member-expiry call per
// group and no removal, and says so; the plan after it is empty.
func TestAccUserGroupsRollingRenewal(t *testing.T) {
	acctest.NeedsSandbox(t)
	acctest.Parallel(t)
	sb := sandboxtest.Start(t)
	provider := acctest.Transports[acctest.GatewayTransport].Block(sb.URL)
	client := acctest.OutsideClient(t, sb)
	gm, dev := acctest.OutsideGroup(t, client, "rolling-managers", "dev")
	ops := addGroup(t, client, gm, "ops")
	audit := addGroup(t, client, gm, "audit")
	calls := acctest.NewCallCounter(sb)
	w := acctest.NewCLIWorkspace(t, testutil.BuildProvider(t))
	w.Configure(provider, userGroupsConfig("", `user = "bob"`, map[int64]string{dev: "expires_in", ops: "expires_in", audit: ""},
		"  expires_in   = \"1h\"\n  renew_before = \"59m54s\"\n"))

	start := time.Now().Unix()
	w.MustRun("apply", "-auto-approve")
	recorded := expiresAtOf(t, stateAttributes(t, w, "bkiam_user_groups"))
	if recorded < start+3600 || recorded > time.Now().Unix()+3600 {
		t.Fatalf("the create recorded expires_at %s, want the apply's time plus 1h (after %s)", rfc(recorded), rfc(start+3600))
	}
	want := map[int64]int64{dev: recorded, ops: recorded, audit: bkiam.PermanentExpiry}
	if held := bobsGroups(sb, dev, ops, audit); !maps.Equal(held, want) {
		t.Fatalf("after the create bob is in %v, want %v (dev and ops until expires_at %s)", held, want, rfc(recorded))
	}
	// A plan goes by the time its state was written, however late it
	// runs: without a refresh, the plan after the create is empty.
	if out, code := w.Run("plan", "-refresh=false", "-detailed-exitcode"); code != 0 {
		t.Fatalf("the plan after the create exited %d, want 0 (empty):\n%s", code, out)
	}

	windowOpens := recorded - 3594
	time.Sleep(time.Until(time.Unix(windowOpens-2, 0))) // in the margin
	renewed := recorded + 3600
	calls.Reset()
	out := w.MustRun("plan", "-out=renew.tfplan")
	if time.Now().Unix() >= windowOpens {
		t.Logf("the plan ended after the window opened: it was not saved before it")
	}
	for _, want := range []*regexp.Regexp{
		acctest.PlanErrorPattern(fmt.Sprintf(`~ expires_at = "%s" -> (known after apply)`, rfc(recorded))),
		acctest.PlanErrorPattern("Warning: Renewing memberships", fmt.Sprintf("Less than renew_before (59m54s) is left before expires_at (%s), "+
			"or will be within 3s: the apply renews user bob's membership in 2 groups (%d, %d) following expires_in until %s",
			rfc(recorded), min(dev, ops), max(dev, ops), rfc(renewed)),
			"IAM raises the expiry in place, one call per group; the person leaves no group"),
		acctest.PlanErrorPattern("Plan: 0 to add, 1 to change, 0 to destroy."),
	} {
		if !want.MatchString(out) {
			t.Fatalf("the plan in the margin does not match %q:\n%s", want, out)
		}
	}
	if got := calls.SinceLast(); !maps.Equal(got, map[string]int{"member_groups:details": 1}) {
		t.Errorf("the plan sent %v, want one read of the groups", got)
	}

	time.Sleep(time.Until(time.Unix(windowOpens+1, 0))) // the window is open
	out = w.MustRun("apply", "renew.tfplan")
	if want := acctest.PlanErrorPattern("Renewed the memberships of user bob", fmt.Sprintf("2 groups (%d, %d) following expires_in now "+
		"expire at %s, renewed from %s.", min(dev, ops), max(dev, ops), rfc(renewed), rfc(recorded))); !want.MatchString(out) {
		t.Fatalf("the renewal's apply does not match %q:\n%s", want, out)
	}
	if got := calls.SinceLast(); !maps.Equal(got, map[string]int{"member:expiry": 2}) {
		t.Errorf("the renewal sent %v, want one member-expiry call per group (2) and nothing else", got)
	}
	want = map[int64]int64{dev: renewed, ops: renewed, audit: bkiam.PermanentExpiry}
	if held := bobsGroups(sb, dev, ops, audit); !maps.Equal(held, want) {
		t.Fatalf("after the renewal bob is in %v, want %v", held, want)
	}
	if got := expiresAtOf(t, stateAttributes(t, w, "bkiam_user_groups")); got != renewed {
		t.Fatalf("after the renewal state records expires_at %s, want %s", rfc(got), rfc(renewed))
	}
	if !w.PlanIsEmpty() {
		t.Fatal("the plan after the renewal is not empty")
	}
}

// TestAccUserGroupsRenewedInIAMKept: bob's membership in a group
// following expires_in is renewed in IAM (the member-expiry route the
// web UI's renewal and ITSM use) to a date past expires_at. The refresh
// keeps it as "expires_in" and the plan is empty; an apply of another
// change leaves the renewal alone. With enforce_expiry = true (read from
// state, so from the refresh after the apply that records it) the plan
// lowers it, removing bob and adding him again, and says so.
func TestAccUserGroupsRenewedInIAMKept(t *testing.T) {
	acctest.NeedsSandbox(t)
	acctest.Parallel(t)
	sb := sandboxtest.Start(t)
	provider := acctest.Transports[acctest.GatewayTransport].Block(sb.URL)
	client := acctest.OutsideClient(t, sb)
	gm, dev := acctest.OutsideGroup(t, client, "renewed-managers", "dev")
	ops := addGroup(t, client, gm, "ops")
	audit := addGroup(t, client, gm, "audit")
	w := acctest.NewCLIWorkspace(t, testutil.BuildProvider(t))
	groups := map[int64]string{dev: "expires_in", ops: "expires_in"}
	configure := func(enforce string) {
		w.Configure(provider, userGroupsConfig("", `user = "bob"`, groups, "  expires_in   = \"30d\"\n  renew_before = \"7d\"\n"+enforce))
	}
	configure("")
	w.MustRun("apply", "-auto-approve")
	recorded := expiresAtOf(t, stateAttributes(t, w, "bkiam_user_groups"))

	later := recorded + 90*86400
	if err := client.RaiseMemberExpiry(context.Background(), "bk_cmdb", ops, []bkiam.MemberRef{{Type: "user", ID: "bob"}}, later); err != nil {
		t.Fatal(err)
	}
	if !w.PlanIsEmpty() {
		t.Fatal("the plan after bob's membership was renewed in IAM is not empty")
	}
	groups[audit] = "permanent"
	configure("")
	w.MustRun("apply", "-auto-approve")
	want := map[int64]int64{dev: recorded, ops: later, audit: bkiam.PermanentExpiry}
	if held := bobsGroups(sb, dev, ops, audit); !maps.Equal(held, want) {
		t.Fatalf("after an apply of another change bob is in %v, want %v (ops kept at its renewal, %s)", held, want, rfc(later))
	}
	if !w.PlanIsEmpty() {
		t.Fatal("the plan after the apply is not empty")
	}

	configure("  enforce_expiry = true\n")
	w.MustRun("apply", "-auto-approve")
	out, code := w.Run("plan", "-detailed-exitcode")
	if want := acctest.PlanErrorPattern("Expiries lowered by removing and adding again", fmt.Sprintf("the apply removes user bob from group %d "+
		"and adds them again with the new expiry", ops)); code != 2 || !want.MatchString(out) {
		t.Fatalf("with enforce_expiry the plan (exit %d) does not match %q:\n%s", code, want, out)
	}
	w.MustRun("apply", "-auto-approve")
	want[ops] = recorded
	if held := bobsGroups(sb, dev, ops, audit); !maps.Equal(held, want) {
		t.Fatalf("after the apply with enforce_expiry bob is in %v, want %v", held, want)
	}
	if !w.PlanIsEmpty() {
		t.Fatal("the plan after the apply with enforce_expiry is not empty")
	}
}

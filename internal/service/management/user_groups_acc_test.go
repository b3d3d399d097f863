package management_test

import (
	"context"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"
	"github.com/hashicorp/terraform-plugin-testing/terraform"

	"github.com/bkiam/terraform-provider-bkiam/internal/acctest"
	"github.com/bkiam/terraform-provider-bkiam/internal/bkiam"
	"github.com/bkiam/terraform-provider-bkiam/internal/sandbox/sandboxtest"
	"github.com/bkiam/terraform-provider-bkiam/internal/testutil"
)

// userGroupsConfig renders a bkiam_user_groups of person ("user = …" or
// "department = …") in bk_cmdb: group → expiry ("" for permanent).
func userGroupsConfig(provider, person string, groups map[int64]string, extra string) string {
	var b strings.Builder
	b.WriteString(provider)
	fmt.Fprintf(&b, "resource \"bkiam_user_groups\" \"test\" {\n  system = \"bk_cmdb\"\n  %s\n  groups = {\n", person)
	for _, g := range slices.Sorted(maps.Keys(groups)) {
		exp := groups[g]
		if exp == "" {
			exp = "permanent"
		}
		fmt.Fprintf(&b, "    %q = %q\n", fmt.Sprint(g), exp)
	}
	b.WriteString("  }\n" + extra + "}\n")
	return b.String()
}

// checkMembership is a step check: member ("user:bob") is in exactly the
// groups of want among groups, each until its expiry.
func checkMembership(sb *sandboxtest.Sandbox, member string, groups []int64, want map[int64]int64) func(*terraform.State) error {
	return func(*terraform.State) error {
		got := map[int64]int64{}
		for _, g := range groups {
			for _, m := range sb.Members(g) {
				if m.Type+":"+m.ID == member {
					got[g] = m.ExpiredAt
				}
			}
		}
		if !maps.Equal(got, want) {
			return fmt.Errorf("%s is in %v, want %v", member, got, want)
		}
		return nil
	}
}

// TestAccUserGroups is the lifecycle of a person's memberships: a create
// in groups where the person is partly a member already, an expiry
// raised in place and one lowered (said in the plan), a group added and
// one left, memberships outside the resource (another group, a
// department, other users) never touched, a membership removed outside
// Terraform restored, import, and a destroy that removes the person from
// exactly the listed groups.
func TestAccUserGroups(t *testing.T) {
	acctest.Parallel(t)
	acctest.NeedsSandbox(t)
	sb, provider := acctest.Target(t)
	client := acctest.OutsideClient(t, sb)
	gm, dev := acctest.OutsideGroup(t, client, "people-managers", "dev")
	ops := addGroup(t, client, gm, "ops")
	audit := addGroup(t, client, gm, "audit")
	other := addGroup(t, client, gm, "other")
	all := []int64{dev, ops, audit, other}
	ctx := context.Background()
	perm := bkiam.PermanentExpiry
	// Outside the resource: bob in other, carol and department 2 in dev.
	for g, refs := range map[int64][]bkiam.MemberRef{other: {{Type: "user", ID: "bob"}}, dev: {{Type: "user", ID: "carol"}, {Type: "department", ID: "2"}}} {
		if err := client.AddMembers(ctx, "bk_cmdb", g, refs, perm); err != nil {
			t.Fatal(err)
		}
	}
	// bob is already in ops, until soon: the create raises it in place.
	soon := time.Now().Add(time.Hour).Truncate(time.Second).UTC()
	later := soon.Add(24 * time.Hour)
	if err := client.AddMembers(ctx, "bk_cmdb", ops, []bkiam.MemberRef{{Type: "user", ID: "bob"}}, soon.Unix()); err != nil {
		t.Fatal(err)
	}
	rfc := func(t time.Time) string { return t.Format(time.RFC3339) }
	calls := acctest.NewCallCounter(sb)
	bob := `user = "bob"`
	untouched := func() error {
		for g, want := range map[int64][]string{other: {"user:bob"}, dev: {"department:2", "user:carol"}} {
			var got []string
			for _, m := range sb.Members(g) {
				if m.ID != "bob" || g == other {
					got = append(got, m.Type+":"+m.ID)
				}
			}
			slices.Sort(got)
			if !slices.Equal(got, want) {
				return fmt.Errorf("group %d holds %v besides the resource's, want %v", g, got, want)
			}
		}
		return nil
	}
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: acctest.ProtoV6ProviderFactories,
		Steps: []resource.TestStep{
			{
				PreConfig: calls.Reset,
				Config:    userGroupsConfig(provider, bob, map[int64]string{dev: "", ops: rfc(later)}, ""),
				Check: resource.ComposeTestCheckFunc(
					checkMembership(sb, "user:bob", all, map[int64]int64{dev: perm, ops: later.Unix(), other: perm}),
					func(*terraform.State) error { return untouched() },
					resource.TestCheckResourceAttr(acctest.UserGroupsAddr, "id", "bk_cmdb/user/bob"),
					// One read of both groups, an add to dev, a raise in ops, the read-back of dev.
					calls.Expect(map[string]int{"member_groups:details": 2, "member:add": 1, "member:expiry": 1}),
				),
			},
			{
				// ops lowered (delete and add again, said in the plan), audit added, dev left.
				Config: userGroupsConfig(provider, bob, map[int64]string{ops: rfc(soon), audit: ""}, ""),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction(acctest.UserGroupsAddr, plancheck.ResourceActionUpdate),
				}},
				Check: resource.ComposeTestCheckFunc(
					checkMembership(sb, "user:bob", all, map[int64]int64{ops: soon.Unix(), audit: perm, other: perm}),
					func(*terraform.State) error { return untouched() },
				),
			},
			{
				// Removed outside Terraform: the plan adds bob to audit again.
				PreConfig: func() {
					if err := client.DeleteMembers(ctx, "bk_cmdb", audit, "user", []string{"bob"}); err != nil {
						t.Fatal(err)
					}
				},
				Config:             userGroupsConfig(provider, bob, map[int64]string{ops: rfc(soon), audit: ""}, ""),
				PlanOnly:           true,
				ExpectNonEmptyPlan: true,
			},
			{
				Config: userGroupsConfig(provider, bob, map[int64]string{ops: rfc(soon), audit: ""}, ""),
				Check:  checkMembership(sb, "user:bob", all, map[int64]int64{ops: soon.Unix(), audit: perm, other: perm}),
			},
			{
				ResourceName:            acctest.UserGroupsAddr,
				ImportState:             true,
				ImportStateId:           fmt.Sprintf("bk_cmdb/user/bob/%d,%d", ops, audit),
				ImportStateVerify:       true,
				ImportStateVerifyIgnore: []string{"timeouts"},
			},
		},
		CheckDestroy: func(*terraform.State) error {
			if err := checkMembership(sb, "user:bob", all, map[int64]int64{other: perm})(nil); err != nil {
				return fmt.Errorf("after destroy: %w", err)
			}
			return untouched()
		},
	})
}

// addGroup creates, outside Terraform, a group under grade manager gm.
func addGroup(t *testing.T, c *bkiam.Client, gm int64, name string) int64 {
	t.Helper()
	ids, err := c.CreateGroups(context.Background(), "bk_cmdb", fmt.Sprint(gm), []bkiam.GroupSpec{{Name: name, Description: name}})
	if err != nil {
		t.Fatal(err)
	}
	return ids[0]
}

// TestAccUserGroups_planTimeValidation: every mistake, and a membership
// that a bkiam_group_members owns, is refused at plan time, before any
// call.
func TestAccUserGroups_planTimeValidation(t *testing.T) {
	acctest.Parallel(t)
	sb, provider := acctest.Target(t)
	test := acctest.PlanTimeTest(t, provider, acctest.UserGroupsValidationCases())
	test.CheckDestroy = func(*terraform.State) error {
		if sb != nil {
			if n := acctest.IAMCalls(sb); n != 0 {
				return fmt.Errorf("refused configurations sent %d requests", n)
			}
		}
		return nil
	}
	resource.Test(t, test)
}

// TestAccUserGroupsUnknownUser: a user IAM does not know fails the
// create's read of the groups, before any add, with what to do.
func TestAccUserGroupsUnknownUser(t *testing.T) {
	testutil.SameOnEveryCLI(t, "what IAM refuses and how the provider words it")
	acctest.Parallel(t)
	acctest.NeedsSandbox(t)
	sb, provider := acctest.Target(t)
	client := acctest.OutsideClient(t, sb)
	gm, dev := acctest.OutsideGroup(t, client, "ghost-managers", "dev")
	ops := addGroup(t, client, gm, "ops")
	calls := acctest.NewCallCounter(sb)
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: acctest.ProtoV6ProviderFactories,
		Steps: []resource.TestStep{{
			PreConfig:   calls.Reset,
			Config:      userGroupsConfig(provider, `user = "ghost"`, map[int64]string{dev: "", ops: ""}, ""),
			ExpectError: regexp.MustCompile(`(?s)Cannot read the memberships.*Reading the groups of user ghost.*has not synced it`),
		}},
	})
	if n := calls.SinceLast()["member:add"]; n != 0 {
		t.Fatalf("the refused create sent %d member adds", n)
	}
}

// TestAccUserGroupsRefusedGroup: a group that is not the app's (here one
// deleted) fails the create's read, naming IAM's rule, before any add.
func TestAccUserGroupsRefusedGroup(t *testing.T) {
	testutil.SameOnEveryCLI(t, "what IAM refuses and how the provider words it")
	acctest.Parallel(t)
	acctest.NeedsSandbox(t)
	sb, provider := acctest.Target(t)
	client := acctest.OutsideClient(t, sb)
	gm, dev := acctest.OutsideGroup(t, client, "refused-managers", "dev")
	gone := addGroup(t, client, gm, "gone")
	if err := client.DeleteGroup(context.Background(), "bk_cmdb", gone); err != nil {
		t.Fatal(err)
	}
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: acctest.ProtoV6ProviderFactories,
		Steps: []resource.TestStep{{
			Config:      userGroupsConfig(provider, `user = "bob"`, map[int64]string{dev: "", gone: ""}, ""),
			ExpectError: regexp.MustCompile(fmt.Sprintf(`(?s)Cannot read the memberships.*IAM refuses group %d to this app`, gone)),
			Check:       checkMembership(sb, "user:bob", []int64{dev}, map[int64]int64{}),
		}},
	})
	if got := sb.Members(dev); len(got) != 0 {
		t.Fatalf("the refused create added %v to dev", got)
	}
}

// TestAccUserGroupsOwnedByGroupMembers: a person's membership in a group
// whose members a bkiam_group_members owns is refused on the CLI's paths
// that plan both resources, and nothing reaches IAM: a plan, a plan
// without refresh, a saved plan (none is written), -target naming both,
// an apply. -target naming only the bkiam_user_groups never shows the
// provider the other resource: its apply adds the person, and the next
// plan of both is refused before either undoes the other.
func TestAccUserGroupsOwnedByGroupMembers(t *testing.T) {
	acctest.NeedsSandbox(t)
	acctest.Parallel(t)
	sb, _ := acctest.Target(t)
	provider := acctest.Transports[acctest.GatewayTransport].Block(sb.URL)
	client := acctest.OutsideClient(t, sb)
	gm, team := acctest.OutsideGroup(t, client, "owned-managers", "team")
	ops := addGroup(t, client, gm, "ops")
	members := fmt.Sprintf("resource \"bkiam_group_members\" \"team\" {\n  system   = \"bk_cmdb\"\n  group_id = \"%d\"\n  users    = { alice = \"permanent\" }\n}\n", team)
	w := acctest.NewCLIWorkspace(t, testutil.BuildProvider(t))
	w.Configure(provider, members)
	w.MustRun("apply", "-auto-approve")
	w.Configure(provider, members+strings.TrimPrefix(userGroupsConfig("", `user = "bob"`, map[int64]string{team: "", ops: ""}, ""), ""))
	calls := acctest.NewCallCounter(sb)
	calls.Reset()
	// Whichever of the two is planned second is refused, naming the other.
	refused := regexp.MustCompile(`(?s)Owned by another resource.*user\s+bob's\s+membership`)
	for _, args := range [][]string{
		{"plan"},
		{"plan", "-refresh=false"},
		{"plan", "-out=owned.tfplan"},
		{"plan", "-target=bkiam_user_groups.test", "-target=bkiam_group_members.team"},
		{"apply", "-auto-approve"},
	} {
		out, code := w.Run(args...)
		if code == 0 || !refused.MatchString(out) {
			t.Fatalf("terraform %s (exit %d) does not refuse the membership:\n%s", strings.Join(args, " "), code, out)
		}
	}
	// The CLIs write an errored plan file, and refuse to apply it.
	if _, err := os.Stat(filepath.Join(w.Dir, "owned.tfplan")); err == nil {
		if out, code := w.Run("apply", "owned.tfplan"); code == 0 {
			t.Fatalf("the refused plan, saved, applied:\n%s", out)
		}
	}
	if n := calls.SinceLast(); n["member:add"]+n["member:delete"]+n["member:expiry"] != 0 {
		t.Fatalf("the refused commands sent member calls: %v", n)
	}
	if err := checkMembership(sb, "user:bob", []int64{team, ops}, map[int64]int64{})(nil); err != nil {
		t.Fatal(err)
	}
	// -target of the bkiam_user_groups alone: the provider sees nothing of the other.
	w.MustRun("apply", "-auto-approve", "-target=bkiam_user_groups.test")
	out, code := w.Run("plan")
	if code == 0 || !refused.MatchString(out) {
		t.Fatalf("the plan after a -target apply does not refuse the membership (exit %d):\n%s", code, out)
	}
	if err := checkMembership(sb, "user:bob", []int64{team, ops}, map[int64]int64{team: bkiam.PermanentExpiry, ops: bkiam.PermanentExpiry})(nil); err != nil {
		t.Fatal(err)
	}
}
